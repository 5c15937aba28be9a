package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
)

// SavePage stores one fetched page in one transaction: the videos (inserted,
// or updated when seen before), their chart snapshots and per-region
// aggregates, the run's progress, and the full-text index changes. A crash
// loses at most this page, never part of it. A re-seen video whose indexed
// text is unchanged is not re-indexed (nor re-tokenized). A video listed
// twice in the page is stored once, at its first (best) position.
func (db *DB) SavePage(ctx context.Context, p Page) (PageResult, error) {
	return db.savePage(ctx, p, nil, nil, nil)
}

// savePage is SavePage, inside the caller's transaction when outer is not
// nil: the caller then commits, and adds learned to the channel cache after
// its commit. The page's statements must have been prepared (pageStatements)
// before outer began: it holds the only writer connection.
//
// It runs in three phases: classify the page's rows against what the archive
// holds, write the rows, then reindex what changed.
//
// pending, when not nil, defers the full-text index's inserts to the caller,
// who indexes pending's ids once at the end of its transaction
// (ImportCharts): a video is then indexed once per batch however often it
// changed in it, and FTS5 writes one segment per batch instead of one per
// page. Videos already pending are not removed from the index again (they
// are not in it).
func (db *DB) savePage(ctx context.Context, p Page, outer *sql.Tx, learnedOut *[]channelEntry, pending *ftsPending) (PageResult, error) {
	if p.Kind == "" {
		p.Kind = PageChart
	}
	if err := p.check(); err != nil {
		return PageResult{}, err
	}
	rows, err := p.rows()
	if err != nil {
		return PageResult{}, err
	}
	// Every statement is prepared before the transaction takes the only
	// writer connection (preparing on the pool would wait for it forever).
	st, err := db.pageStatements(ctx, len(rows))
	if err != nil {
		return PageResult{}, fmt.Errorf("store: save page: prepare: %w", err)
	}
	tx := outer
	if tx == nil {
		if tx, err = db.writer.BeginTx(ctx, nil); err != nil {
			return PageResult{}, fmt.Errorf("store: save page: begin: %w", err)
		}
		defer tx.Rollback()
	}
	var learned []channelEntry
	w := writeTx{tx: tx, ctx: ctx, st: st, ftsWrites: &db.ftsWrites, chans: &db.channels, learned: &learned,
		pending: pending, owner: db.self.id}

	plan, err := w.classify(p, rows)
	if err != nil {
		return PageResult{}, err
	}
	if err := w.writeRows(p, plan); err != nil {
		return PageResult{}, err
	}
	// Last: index new and changed rows in one statement, so FTS5 writes one
	// segment for the page instead of one per row (or for the whole batch,
	// when the caller defers it).
	if pending != nil {
		pending.add(plan.fresh)
		pending.add(plan.changed)
	} else if err := w.ftsInsert(append(plan.fresh, plan.changed...)); err != nil {
		return PageResult{}, err
	}
	if hook := db.pageTxHook; hook != nil {
		hook()
	}
	if outer != nil {
		*learnedOut = append(*learnedOut, learned...)
		return plan.res, nil
	}
	if err := tx.Commit(); err != nil {
		return PageResult{}, fmt.Errorf("store: save page: commit: %w", err)
	}
	db.commits.Add(1)
	db.channels.remember(learned)
	return plan.res, nil
}

// check refuses a page that cannot be stored, before anything is written.
func (p Page) check() error {
	switch {
	case p.Region != "" && !regions.Valid(p.Region):
		return fmt.Errorf("store: save page: %q is not a region code (parse it with regions.Parse)", p.Region)
	case p.RunID <= 0:
		return errors.New("store: save page: no run id")
	case p.Kind != PageChart && p.Kind != PageSearch:
		return fmt.Errorf("store: save page: unknown page kind %q", p.Kind)
	case p.FetchedAt.IsZero():
		return errors.New("store: save page: zero FetchedAt")
	case p.Kind == PageChart && p.Region == "":
		return errors.New("store: save page: chart page without a region")
	case p.Kind == PageChart && p.FirstRank < 1:
		return fmt.Errorf("store: save page: chart page with FirstRank %d (ranks start at 1)", p.FirstRank)
	}
	return nil
}

// rows normalises the page's videos, each once, at its first (best) rank.
func (p Page) rows() ([]videoRow, error) {
	rows := make([]videoRow, 0, len(p.Videos))
	seen := make(map[string]bool, len(p.Videos))
	for i, v := range p.Videos {
		rank := 0
		if p.Kind == PageChart {
			rank = p.FirstRank + i
		}
		r := prepareVideo(v, rank)
		if r.v.ID == "" {
			return nil, fmt.Errorf("store: save page: video %d has no id", i)
		}
		if !seen[r.v.ID] {
			seen[r.v.ID] = true
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// sightedRegion is the region a page sights its videos in: none for a
// search page.
func (p Page) sightedRegion() regions.Code {
	if p.Kind == PageChart {
		return p.Region
	}
	return ""
}

// pagePlan is what classify found about a page's rows, and what writeRows
// and the reindex act on.
type pagePlan struct {
	at         int64 // FetchedAt, unix µs
	rows       []videoRow
	ids        []int64 // videos.id per row; 0 until a new row is inserted
	existing   map[string]existingVideo
	metaOnly   []int         // rows whose stored metadata changes (text or not)
	changed    []int64       // videos to reindex: new text, or new facets
	refaceted  []int64       // videos that gain facets: a region, rank tiers
	facets     []facetsAdded // what each of them gains
	fresh      []int64       // videos new to the archive, once inserted
	anyNew     bool
	tokenDelta int64 // change of the index's token count
	res        PageResult
}

// classify compares each row with what the archive holds: new, changed
// text, changed metadata, or nothing but statistics. Rows whose text
// changed are tokenized here; the others never are.
func (w writeTx) classify(p Page, rows []videoRow) (*pagePlan, error) {
	plan := &pagePlan{at: p.FetchedAt.UnixMicro(), rows: rows, ids: make([]int64, len(rows))}
	if len(rows) == 0 {
		return plan, nil
	}
	existing, err := w.existing(rows, p.sightedRegion())
	if err != nil {
		return nil, err
	}
	plan.existing = existing
	for i := range rows {
		r := &rows[i]
		e, ok := existing[r.v.ID]
		switch {
		case !ok:
			plan.res.New++
			plan.anyNew = true
			r.derive()
			plan.tokenDelta += int64(r.docLen)
			continue
		case plan.at < e.lastSeen || e.metaHash == r.metaHash:
			// Older than what is stored, or nothing but statistics changed.
			plan.res.Unchanged++
		case e.textHash == r.textHash:
			plan.res.Unchanged++ // metadata other than the text changed
			plan.metaOnly = append(plan.metaOnly, i)
		default:
			plan.res.Updated++
			r.derive()
			plan.changed = append(plan.changed, e.id)
			plan.tokenDelta += int64(r.docLen) - e.docLen
			plan.metaOnly = append(plan.metaOnly, i)
		}
		plan.ids[i] = e.id
		if p.Kind != PageChart {
			continue
		}
		// A first sighting in the region, or a best rank within a rank
		// tier the video was not in (the walk relies on every video of a
		// tier carrying its facet: search.RankTiers).
		add := search.TierFacets(int(e.bestRank), r.rank)
		if !e.inRegion {
			add = " " + search.RegionFacet(p.Region) + add
		}
		if add != "" {
			plan.refaceted = append(plan.refaceted, e.id)
			plan.addFacets(add, e.id)
		}
	}
	return plan, nil
}

// facetsAdded are the videos that gain the same facets.
type facetsAdded struct {
	facets string // each after a space
	ids    []int64
}

func (p *pagePlan) addFacets(facets string, id int64) {
	for i := range p.facets {
		if p.facets[i].facets == facets {
			p.facets[i].ids = append(p.facets[i].ids, id)
			return
		}
	}
	p.facets = append(p.facets, facetsAdded{facets: facets, ids: []int64{id}})
}

// writeRows writes a classified page: the run's progress first (a page for
// a run that is not running is refused before anything is written), then
// channels, the index's deletions, updated and new videos, statistics,
// snapshots, region aggregates and the archive's totals.
func (w writeTx) writeRows(p Page, plan *pagePlan) error {
	rows, ids := plan.rows, plan.ids
	if len(rows) == 0 {
		return w.runProgress(p, 0, plan.res, math.MaxInt64)
	}
	minID := int64(math.MaxInt64)
	for _, id := range ids {
		if id > 0 {
			minID = min(minID, id)
		}
	}
	if err := w.runProgress(p, len(rows), plan.res, minID); err != nil {
		return err
	}
	channels, err := w.channels(rows)
	if err != nil {
		return err
	}
	// The index must forget the old text and facets before the row
	// changes: the 'delete' command needs the values that were indexed.
	reindex := union(plan.changed, plan.refaceted)
	if err := w.ftsDelete(w.pending.notIn(reindex)); err != nil {
		return err
	}
	for _, i := range plan.metaOnly {
		if err := w.updateVideo(ids[i], rows[i], channels); err != nil {
			return err
		}
	}
	for _, a := range plan.facets {
		if err := w.exec(w.st.addFacets, a.facets, jsonIDs(a.ids)); err != nil {
			return fmt.Errorf("store: save page: facets: %w", err)
		}
	}
	plan.changed = reindex
	if plan.anyNew {
		got, err := w.insertVideos(rows, plan.at, channels, p.sightedRegion())
		if err != nil {
			return err
		}
		for i, r := range rows {
			if _, ok := plan.existing[r.v.ID]; !ok {
				ids[i] = got[r.v.ID]
				plan.fresh = append(plan.fresh, ids[i])
			}
		}
	}
	if err := w.upsertStats(rows, ids, channels, plan.at); err != nil {
		return err
	}
	snapshots := 0
	if p.Kind == PageChart {
		snapshots = len(rows)
		if err := w.insertSnapshots(p, rows, ids, plan.at); err != nil {
			return err
		}
		if err := w.upsertRegions(p.Region, rows, ids, plan.at); err != nil {
			return err
		}
	}
	if plan.res.New > 0 || plan.tokenDelta != 0 || snapshots > 0 {
		if err := w.exec(w.st.totals, plan.res.New, plan.tokenDelta, snapshots); err != nil {
			return fmt.Errorf("store: save page: totals: %w", err)
		}
	}
	return nil
}

// ftsPending are videos written in a transaction and not yet indexed.
type ftsPending struct {
	ids  []int64
	seen map[int64]bool
}

func (f *ftsPending) add(ids []int64) {
	if f.seen == nil {
		f.seen = map[int64]bool{}
	}
	for _, id := range ids {
		if !f.seen[id] {
			f.seen[id] = true
			f.ids = append(f.ids, id)
		}
	}
}

// notIn returns the ids of ids that are not pending (all of them when f is
// nil).
func (f *ftsPending) notIn(ids []int64) []int64 {
	if f == nil || len(f.seen) == 0 {
		return ids
	}
	var out []int64
	for _, id := range ids {
		if !f.seen[id] {
			out = append(out, id)
		}
	}
	return out
}

// union returns the ids of a and b, each once.
func union(a, b []int64) []int64 {
	out := append([]int64(nil), a...)
	for _, id := range b {
		if !slices.Contains(a, id) {
			out = append(out, id)
		}
	}
	return out
}

// writeTx groups the statements of one write transaction.
type writeTx struct {
	tx        *sql.Tx
	ctx       context.Context
	st        *pageStatements
	ftsWrites *atomic.Int64
	chans     *channelCache
	learned   *[]channelEntry // channel ids to cache once the transaction commits
	pending   *ftsPending     // nil: index at the end of each page (see savePage)
	owner     string          // this process's instance id, for runProgress
}

func (w writeTx) exec(st *sql.Stmt, args ...any) error {
	_, err := w.tx.StmtContext(w.ctx, st).ExecContext(w.ctx, args...)
	return err
}

func (w writeTx) query(st *sql.Stmt, args ...any) (*sql.Rows, error) {
	return w.tx.StmtContext(w.ctx, st).QueryContext(w.ctx, args...)
}
