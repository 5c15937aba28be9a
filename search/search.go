package search

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ytrend/ytrend/regions"

	"modernc.org/sqlite"
)

// SortOrder orders search results.
type SortOrder string

const (
	SortRelevance SortOrder = "relevance" // text relevance blended with trend (the default)
	SortRecent    SortOrder = "recent"    // most recently seen first
	SortViews     SortOrder = "views"     // most viewed first; hidden counts last
)

// Search limits.
const (
	DefaultLimit = 20
	MaxLimit     = 500
)

// Query is a search of the archive.
type Query struct {
	// Text is what the person typed. Every word must match (in the title,
	// tags, channel title or description); "double quotes" keep a phrase.
	// Nothing in it is FTS5 syntax unless Raw is set.
	Text string
	// Regions keeps videos that trended in any of these regions; their
	// regions, best rank and last seen are then those regions' only.
	Regions []regions.Code
	// Since keeps videos seen (in Regions, if given) at or after it.
	Since time.Time
	// Channel keeps videos whose channel title contains it (ignoring case
	// and accents) or whose channel id is exactly it.
	Channel string
	// Categories keeps videos whose category id is one of these (see
	// CategoryIDs to read a name).
	Categories []string
	Sort       SortOrder // default SortRelevance
	Limit      int       // default DefaultLimit, at most MaxLimit

	// Raw passes Text to FTS5 MATCH as query syntax (AND, OR, NOT, NEAR,
	// column filters, prefix*). Syntax errors come back as ErrBadQuery.
	// Raw queries are ranked by FTS5's own bm25(), which has no bound the
	// store can stop early on: every match is scored, and FTS5 reads every
	// query term's whole doclist. Slow on common words in a large archive.
	Raw bool
	// Exhaustive scores every match in one pass instead of walking the
	// archive best bound first. The results are the same (the default walk
	// is exact); this is the reference the tests compare it with, and slow
	// on common words in a large archive (seconds at a million videos).
	Exhaustive bool

	// MarkOpen and MarkClose surround matched words in Hit.Snippet (default
	// "[" and "]"): ANSI bold on a terminal, "<mark>" in JSON.
	MarkOpen, MarkClose string
}

// Hit is one video found by Search.
type Hit struct {
	VideoID      string
	Title        string
	ChannelTitle string
	Regions      []regions.Code // where it trended (within Query.Regions, if given), sorted
	BestRank     int            // best chart rank there; 0 if never on a chart
	LastSeen     time.Time      // last sighting there
	Views        *int64         // nil: hidden by the owner
	CategoryID   string
	// Category names CategoryID as the first of Regions with a cached name
	// does (any region's if none has one); "" if not cached.
	Category    string
	Snippet     string
	PublishedAt time.Time
	Score       float64 // relevance blended with trend; comparable within one search only
}

// ErrBadQuery is returned by Search for a Raw query FTS5 cannot parse.
// Plain (non-raw) queries never produce it.
var ErrBadQuery = errors.New("store: bad search query")

type candidate struct {
	id       int64
	lastSeen int64
	bestRank int
	views    sql.NullInt64
	score    float64
}

// searcher is one search inside its read transaction.
type searcher struct {
	e    *Engine
	ctx  context.Context
	tx   *sql.Tx
	st   *searchStatements
	q    Query
	pq   parsedQuery
	used map[string]*sql.Stmt // the statements run so far, in tx, by query
}

// stmt returns the statement of query in the search's transaction,
// prepared the first time the search runs it (Engine.stmtIn).
func (s searcher) stmt(query string) txStmt {
	if st, ok := s.used[query]; ok {
		return txStmt{st: st}
	}
	st, err := s.e.stmtIn(s.ctx, s.tx, query)
	if err != nil {
		return txStmt{err: prepareError{err}}
	}
	s.used[query] = st
	return txStmt{st: st}
}

// txStmt is a statement of a search's transaction, or why it could not be
// prepared: its methods are *sql.Stmt's, and return that error.
type txStmt struct {
	st  *sql.Stmt
	err error
}

func (t txStmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	if t.err != nil {
		return nil, t.err
	}
	return t.st.QueryContext(ctx, args...)
}

func (t txStmt) QueryRowContext(ctx context.Context, args ...any) row {
	if t.err != nil {
		return row{err: t.err}
	}
	return row{row: t.st.QueryRowContext(ctx, args...)}
}

// row is *sql.Row, or the error of the statement that did not prepare.
type row struct {
	row *sql.Row
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.row.Scan(dest...)
}

// prepareError is a statement's failure to prepare: the store's, never a
// raw query's syntax (that comes when the statement runs with the MATCH
// expression bound).
type prepareError struct{ err error }

func (e prepareError) Error() string { return e.err.Error() }
func (e prepareError) Unwrap() error { return e.err }

func normalizeQuery(q Query) (Query, error) {
	switch {
	case q.Limit <= 0:
		q.Limit = DefaultLimit
	case q.Limit > MaxLimit:
		q.Limit = MaxLimit
	}
	switch q.Sort {
	case "":
		q.Sort = SortRelevance
	case SortRelevance, SortRecent, SortViews:
	default:
		return q, fmt.Errorf("store: unknown sort order %q (want relevance, recent or views)", q.Sort)
	}
	if q.MarkOpen == "" && q.MarkClose == "" {
		q.MarkOpen, q.MarkClose = "[", "]"
	}
	var codes []regions.Code
	for _, r := range q.Regions {
		if !regions.Valid(r) {
			return q, fmt.Errorf("store: search: %q is not a region code (parse it with regions.Parse)", r)
		}
		if !slices.Contains(codes, r) {
			codes = append(codes, r)
		}
	}
	q.Regions = codes
	q.Channel = strings.TrimSpace(q.Channel)
	return q, nil
}

// archiveState is what ranking needs to know about the whole archive.
type archiveState struct {
	videos, tokens int64
	maxID          int64
	newest         int64 // newest sighting, unix µs
}

// maxChannelFacets is how many channels a --channel filter may match and
// still be a term of the MATCH (an OR of that many facets).
const maxChannelFacets = 64

type candidateFilter struct {
	expr string // the MATCH expression, facet terms included
	// regionFree is expr without its region facets, and regionFacets
	// those facets' expression ("" when none).
	regionFree, regionFacets string
	// walkExpr, if set, is the MATCH expression a walk in views order
	// ranks its blocks with: expr without its region facets, which the
	// region join then tests (see run).
	walkExpr string
	regions  string // JSON array; "" = none
	channels string // JSON array of channel row ids; "" = none
	since    int64  // unix µs; 0 = none
	cats     string // JSON array of category ids; "" = none
	// ids, if set, is every match of expr (a JSON array the probe read):
	// a one-pass ranking reads them instead of the index (sqlCandidatesIn).
	ids string
}

func (s searcher) run() ([]Hit, error) {
	var st archiveState
	var newest, maxID sql.NullInt64
	if err := s.stmt(s.st.state).QueryRowContext(s.ctx).Scan(&newest, &maxID, &st.videos, &st.tokens); err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	if st.videos == 0 {
		return []Hit{}, nil
	}
	st.newest, st.maxID = newest.Int64, maxID.Int64

	// Filters become facet terms of the MATCH (FTS5 intersects them with
	// the words, skipping what cannot match), and for regions a join that
	// yields the per-region rank and sighting.
	//
	// Never with raw text: it is the user's FTS5 syntax, and parentheses
	// around it do not contain it ("a) OR (b" would turn the filter into
	// one side of an OR). A raw query's filters are SQL conditions only:
	// the region join, the channel list and the since bound hold whatever
	// the text says.
	var f candidateFilter
	var regionFacets string
	f.expr = s.pq.expr
	if len(s.q.Regions) > 0 {
		f.regions = jsonIDs(s.q.Regions)
		if !s.pq.raw {
			facets := make([]string, len(s.q.Regions))
			for i, r := range s.q.Regions {
				facets[i] = RegionFacet(r)
			}
			regionFacets = facetFilter(facets)
		}
	}
	if s.q.Channel != "" {
		ids, err := s.channelIDs()
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return []Hit{}, nil
		}
		if len(ids) <= maxChannelFacets && !s.pq.raw {
			facets := make([]string, len(ids))
			for i, id := range ids {
				facets[i] = ChannelFacet(id)
			}
			f.expr = "(" + f.expr + ") AND " + facetFilter(facets)
		} else {
			// A filter matching that many channels is not selective: test
			// each candidate's channel instead.
			f.channels = jsonIDs(ids)
		}
	}
	f.regionFree, f.regionFacets = f.expr, regionFacets
	if regionFacets != "" {
		// The region facets make FTS5 intersect the words with the regions'
		// videos, so the probe counts, and a one-pass ranking reads, only
		// the matches in those regions: a region with few of them costs
		// little, whatever their number. A walk in views order (with
		// several regions) ranks its blocks without them: its blocks are
		// many and small, and an OR of facets costs a seek per region in
		// each (10 regions took a deep page 390 ms where one took 27, at
		// 100k videos), where the region join tests each candidate with
		// one seek whatever the number of regions.
		f.walkExpr = f.expr
		f.expr = "(" + f.expr + ") AND " + regionFacets
		if s.q.Sort != SortViews || len(s.q.Regions) == 1 {
			f.walkExpr = ""
		}
	}
	if len(s.q.Categories) > 0 {
		f.cats = jsonIDs(s.q.Categories)
	}
	if !s.q.Since.IsZero() {
		f.since = s.q.Since.UnixMicro()
	}

	rs := &rankState{raw: s.pq.raw, newest: st.newest, avgdl: float64(st.tokens) / float64(st.videos),
		prune: !s.q.Exhaustive, order: s.q.Sort, limit: s.q.Limit, textMax: math.Inf(1)}
	if !s.pq.raw {
		rs.phrases = make([]rankedPhrase, len(s.pq.phrases))
		for i, p := range s.pq.phrases {
			rs.phrases[i] = newRankedPhrase(p)
			df, err := s.docFreq(p.expr, st)
			if err != nil {
				return nil, err
			}
			rs.phrases[i].df, rs.phrases[i].idf = df, idf(float64(st.videos), df)
		}
		rs.textMax = 0
		for _, p := range rs.phrases {
			rs.textMax += p.idf * (bm25K1 + 1)
		}
	}
	id := registerRankState(rs)
	defer releaseRankState(id)
	cands, err := s.rank(f, rs, id, st)
	if err != nil {
		return nil, err
	}
	return s.materialize(cands)
}

// cuts are what a match must reach to place in the walk's page so far.
type cuts struct {
	seen, views, rank int64
	// test: ytrend_pass tests the matches on their bounds first (cuts.go;
	// the walk has set the rankState's cutTest).
	test bool
}

var noCuts = cuts{seen: math.MinInt64, views: -1, rank: math.MaxInt64}

// candidates returns the best page of the matches whose rowids lie in
// [lo, hi] (see sqlCandidates), ranked by the state registered as rankID.
func (s searcher) candidates(f candidateFilter, rankID, lo, hi int64, c cuts) ([]candidate, error) {
	var regions, channels any
	if f.regions != "" {
		regions = f.regions
	}
	st := s.st.candidates
	if f.channels != "" {
		channels = f.channels
		st = s.st.byChannel
	}
	var cats any
	if f.cats != "" {
		cats = f.cats
	}
	var ids any
	if f.ids != "" {
		st = s.st.candidatesIn
		if f.channels != "" {
			st = s.st.byChannelIn
		}
		ids = f.ids
	}
	args := []any{regions, f.since, f.expr, lo, hi, channels, rankID, s.q.Limit, cats, c.seen, c.views, c.rank, ids, !c.test}
	rows, err := s.stmt(st).QueryContext(s.ctx, args...)
	if err != nil {
		return nil, queryError(s.pq, err)
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		var best sql.NullInt64
		if err := rows.Scan(&c.id, &c.score, &c.lastSeen, &best, &c.views); err != nil {
			return nil, queryError(s.pq, err)
		}
		if c.score < 0 { // cannot place in the page (ytrend_score, ytrend_keep)
			continue
		}
		c.bestRank = int(best.Int64)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, queryError(s.pq, err)
	}
	return out, nil
}

// queryError maps an error from a MATCH query: a raw query's syntax error
// is the user's (ErrBadQuery); anything else is the store's.
func queryError(pq parsedQuery, err error) error {
	var se *sqlite.Error
	var pe prepareError
	if pq.raw && !errors.As(err, &pe) && errors.As(err, &se) && se.Code()&0xff == 1 { // SQLITE_ERROR
		return fmt.Errorf("%w: %s", ErrBadQuery, strings.TrimPrefix(se.Error(), "SQL logic error: "))
	}
	return fmt.Errorf("store: search: %w", err)
}

// docFreq returns how many videos match expr: exact up to dfProbe, above
// that extrapolated from the density of its newest dfProbe matches.
func (s searcher) docFreq(expr string, st archiveState) (float64, error) {
	return s.probe(expr, dfProbe, st)
}

// probe returns how many videos match expr: exact up to n, above that
// extrapolated from the density of its newest n matches.
func (s searcher) probe(expr string, probe int, st archiveState) (float64, error) {
	var n int
	var last sql.NullInt64
	if err := s.stmt(s.st.docFreq).QueryRowContext(s.ctx, expr, probe).Scan(&n, &last); err != nil {
		return 0, fmt.Errorf("store: search: %w", err)
	}
	return estimateDocFreq(n, probe, last.Int64, st), nil
}

// probeIDs is probe for a count of up to walkProbe that may end in a
// one-pass ranking: when it read every match (fewer than probe), it
// returns them too, so that the ranking need not read the index again.
func (s searcher) probeIDs(expr string, probe int, st archiveState) (float64, string, error) {
	var n int
	var last sql.NullInt64
	var ids sql.NullString
	if err := s.stmt(s.st.probeIDs).QueryRowContext(s.ctx, expr, probe).Scan(&n, &last, &ids); err != nil {
		return 0, "", fmt.Errorf("store: search: %w", err)
	}
	return estimateDocFreq(n, probe, last.Int64, st), ids.String, nil
}

// estimateDocFreq: the newest n matches lie among the videos with ids
// [last, maxID]; assume the same share of matches among all videos.
func estimateDocFreq(n, probe int, last int64, st archiveState) float64 {
	if n < probe || st.maxID <= 0 {
		return float64(n)
	}
	span := float64(st.maxID-last+1) * float64(st.videos) / float64(st.maxID)
	df := float64(n) / max(span, float64(n)) * float64(st.videos)
	return min(df, float64(st.videos))
}

// channelIDs resolves a --channel filter: an exact channel id, or a
// substring of the channel title ignoring case and accents.
func (s searcher) channelIDs() ([]int64, error) {
	rows, err := s.stmt(s.st.channels).QueryContext(s.ctx, s.q.Channel, Fold(s.q.Channel))
	if err != nil {
		return nil, fmt.Errorf("store: search: channel filter: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: search: channel filter: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// materialize loads what a hit shows for the final page of candidates, and
// builds the snippets (only for these).
func (s searcher) materialize(cands []candidate) ([]Hit, error) {
	hits := make([]Hit, len(cands))
	if len(cands) == 0 {
		return hits, nil
	}
	idx := make(map[int64]int, len(cands))
	ids := make([]int64, len(cands))
	for i, c := range cands {
		idx[c.id] = i
		ids[i] = c.id
		hits[i] = Hit{
			BestRank: c.bestRank,
			LastSeen: micros(c.lastSeen),
			Score:    c.score,
			Regions:  []regions.Code{},
		}
		if c.views.Valid {
			v := c.views.Int64
			hits[i].Views = &v
		}
	}
	idList := jsonIDs(ids)
	rows, err := s.stmt(s.st.videos).QueryContext(s.ctx, idList)
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	found := 0
	for rows.Next() {
		var id, published int64
		var videoID, title, tags, channel, desc, category string
		if err := rows.Scan(&id, &videoID, &title, &tags, &channel, &desc, &published, &category); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: search: %w", err)
		}
		h := &hits[idx[id]]
		h.VideoID, h.Title, h.ChannelTitle, h.CategoryID = videoID, title, channel, category
		h.PublishedAt = time.Unix(published, 0).UTC()
		h.Snippet = snippet(s.pq, [...]string{desc, title, strings.ReplaceAll(tags, "\n", ", "), channel}, s.q.MarkOpen, s.q.MarkClose)
		found++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	if found != len(cands) { // cannot happen inside one snapshot
		return nil, fmt.Errorf("store: search: %d of %d matched videos vanished", len(cands)-found, len(cands))
	}

	var within any
	if len(s.q.Regions) > 0 {
		within = jsonIDs(s.q.Regions)
	}
	rows, err = s.stmt(s.st.regions).QueryContext(s.ctx, idList, within)
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var region regions.Code
		if err := rows.Scan(&id, &region); err != nil {
			return nil, fmt.Errorf("store: search: %w", err)
		}
		h := &hits[idx[id]]
		h.Regions = append(h.Regions, region)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	rows.Close()
	query := func(q string, args ...any) (*sql.Rows, error) { return s.stmt(q).QueryContext(s.ctx, args...) }
	name, err := s.e.names(query, ids)
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	for i := range hits {
		hits[i].Category = name(hits[i].CategoryID, hits[i].Regions...)
	}
	return hits, nil
}

func micros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// jsonIDs encodes ids for json_each.
func jsonIDs[T ~int64 | ~string](ids []T) string {
	b, _ := json.Marshal(ids)
	return string(b)
}
