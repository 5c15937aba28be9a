package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The statements of a page transaction. Lists of ids travel as one JSON
// array (json_each), so these texts do not depend on the page.
const (
	// Only the video_id index and the narrow video_stats row: never the
	// videos row with its description.
	// in_region: whether the video already trended in the page's region (?2;
	// '' for search pages).
	sqlExisting = `SELECT j.key, v.id, s.text_hash, s.meta_hash, s.doc_len, s.last_seen,
		EXISTS (SELECT 1 FROM video_regions r WHERE r.video = v.id AND r.region = ?2)
		FROM json_each(?1) j JOIN videos v ON v.video_id = j.value JOIN video_stats s ON s.video = v.id`
	sqlChannelIDs = `SELECT channel_id, id, title FROM channels WHERE channel_id IN (SELECT value FROM json_each(?))`
	sqlUpsertChan = `INSERT INTO channels (channel_id, title, title_fold) VALUES (?, ?, ?)
		ON CONFLICT (channel_id) DO UPDATE SET title = excluded.title, title_fold = excluded.title_fold RETURNING id`
	// The channel facet is the first one: replace it, keep the regions'.
	sqlUpdateVideo = `UPDATE videos SET title = ?, tags = ?, channel_title = ?, description = ?, title_grams = ?,
		channel_id = ?, category_id = ?, published_at_s = ?, duration_s = ?, default_language = ?, thumbnail_url = ?,
		facets = ? || substr(facets, instr(facets || ' ', ' ')) WHERE id = ?`
	sqlAddRegionFacet = `UPDATE videos SET facets = facets || ' ' || ? WHERE id IN (SELECT value FROM json_each(?))`
	// The 'delete' command must carry the values that were indexed: it runs
	// before the row changes.
	//
	// Both feed the index in ascending rowid (fkey) order: FTS5 flushes its
	// pending terms to a new segment whenever a write's rowid is lower than
	// the previous one, so descending order would write a segment per video.
	sqlFTSDelete = `INSERT INTO video_fts (video_fts, rowid, title, tags, channel_title, description, title_grams, facets)
		SELECT 'delete', fkey, title, tags, channel_title, description, title_grams, facets FROM videos
		WHERE id IN (SELECT value FROM json_each(?)) ORDER BY fkey`
	sqlFTSInsert = `INSERT INTO video_fts (rowid, title, tags, channel_title, description, title_grams, facets)
		SELECT fkey, title, tags, channel_title, description, title_grams, facets FROM videos
		WHERE id IN (SELECT value FROM json_each(?)) ORDER BY fkey`
	sqlTotals = `UPDATE archive_totals SET videos = videos + ?, tokens = tokens + ?, snapshots = snapshots + ? WHERE id = 1`
	// Progress only for a run still running: a finished (or interrupted) run
	// takes no more pages. min_video is a lower bound of the page's video ids:
	// its smallest stored id, or, for new videos, the next id to be assigned.
	sqlRunProgress = `UPDATE runs SET pages = pages + 1, videos = videos + ?1, new_videos = new_videos + ?2,
		updated_videos = updated_videos + ?3, units = max(units, ?4),
		last_page_at = max(coalesce(last_page_at, ?6), ?6),
		min_video = min(coalesce(min_video, ?7), ?7, (SELECT coalesce(max(id), 0) + 1 FROM videos))
		WHERE id = ?5 AND status = 'running'`

	insertVideoCols = 14
	statsCols       = 11
)

// sqlInsertVideos inserts the page's videos that are new; RETURNING yields
// only those (the others conflict and are left alone).
func sqlInsertVideos(n int) string {
	return `INSERT INTO videos (video_id, title, tags, channel_title, description, title_grams, channel_id, category_id,
		published_at_s, duration_s, default_language, thumbnail_url, first_seen, facets)
		VALUES ` + values(n, insertVideoCols) + ` ON CONFLICT (video_id) DO NOTHING RETURNING video_id, id`
}

// sqlStats upserts statistics. Statistics, channel and hashes come from the
// newest sighting; an older page only lowers best_rank. doc_len and terms
// change only when the text did: a re-seen video passes -1 and an empty blob.
func sqlStats(n int) string {
	return `INSERT INTO video_stats (last_seen, video, channel, best_rank, views, likes, comments, doc_len, terms,
		text_hash, meta_hash)
		VALUES ` + values(n, statsCols) + `
		ON CONFLICT (video) DO UPDATE SET
			best_rank = CASE WHEN best_rank IS NULL THEN excluded.best_rank
				WHEN excluded.best_rank IS NULL THEN best_rank ELSE min(best_rank, excluded.best_rank) END,
			channel   = iif(excluded.last_seen >= last_seen, excluded.channel, channel),
			views     = iif(excluded.last_seen >= last_seen, excluded.views, views),
			likes     = iif(excluded.last_seen >= last_seen, excluded.likes, likes),
			comments  = iif(excluded.last_seen >= last_seen, excluded.comments, comments),
			doc_len   = iif(excluded.doc_len >= 0, excluded.doc_len, doc_len),
			terms     = iif(length(excluded.terms) > 0, excluded.terms, terms),
			text_hash = iif(excluded.last_seen >= last_seen, excluded.text_hash, text_hash),
			meta_hash = iif(excluded.last_seen >= last_seen, excluded.meta_hash, meta_hash),
			last_seen = max(last_seen, excluded.last_seen)`
}

// The multi-row statements use plain ? parameters: modernc looks up every
// parameter's name when binding, and for numbered (?NNN) ones that lookup is
// linear, which makes a 500-parameter statement quadratic.

// Snapshots record the sighting's counts (counted = 1: a NULL count is one
// the owner hid; see 0004_history.sql).
func sqlSnapshots(n int) string {
	return `INSERT INTO trending_snapshots (run_id, region, fetched_at, rank, video, views, likes, dislikes, comments, counted)
		VALUES ` + strings.ReplaceAll(values(n, 9), "?)", "?,1)")
}

func sqlRegions(n int) string {
	return `INSERT INTO video_regions (region, first_seen, last_seen, snapshots, video, best_rank, last_rank)
		VALUES ` + strings.ReplaceAll(values(n, 6), "(?,?,?,", "(?,?,?,1,") + `
		ON CONFLICT (video, region) DO UPDATE SET
			best_rank  = min(best_rank, excluded.best_rank),
			last_rank  = iif(excluded.last_seen >= last_seen, excluded.last_rank, last_rank),
			first_seen = min(first_seen, excluded.first_seen),
			last_seen  = max(last_seen, excluded.last_seen),
			snapshots  = snapshots + 1`
}

// values returns "(?,?,?),(?,?,?)" for n rows of k columns.
func values(n, k int) string {
	row := "(" + placeholders(k) + ")"
	return strings.Repeat(row+",", n-1) + row
}

// videoRow is a Video prepared for the database: normalized text, hashes
// that tell a re-seen video with the same text from a changed one, and —
// computed only for videos whose text is new to the archive — the derived
// search columns.
type videoRow struct {
	v        Video
	tags     string // one per line
	textHash int64
	metaHash int64
	rank     int // chart rank; 0 on search pages

	derived bool
	grams   sql.NullString
	docLen  int
	terms   terms
}

// clean makes text storable: valid UTF-8, no NUL.
func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

func prepareVideo(v Video, rank int) videoRow {
	v.ID = strings.TrimSpace(clean(v.ID))
	v.Title, v.Description = clean(v.Title), clean(v.Description)
	v.ChannelID, v.ChannelTitle = clean(v.ChannelID), clean(v.ChannelTitle)
	v.CategoryID, v.DefaultLanguage, v.ThumbnailURL = clean(v.CategoryID), clean(v.DefaultLanguage), clean(v.ThumbnailURL)
	// Tags are stored one per line: a tag cannot hold a line break.
	var tags []string
	for _, t := range v.Tags {
		t = strings.TrimSpace(strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == '\t' {
				return ' '
			}
			return r
		}, clean(t)))
		if t != "" {
			tags = append(tags, t)
		}
	}
	v.Tags = tags
	r := videoRow{v: v, tags: strings.Join(tags, "\n"), rank: rank}
	// FNV-1a over the fields, each followed by a NUL (which clean removed
	// from the fields themselves).
	h := uint64(14695981039346656037)
	field := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h *= 1099511628211 // the NUL separator: h ^= 0, then multiply
	}
	// The channel id is indexed too, as the channel facet.
	for _, s := range []string{v.Title, r.tags, v.ChannelTitle, v.Description, v.ChannelID} {
		field(s)
	}
	r.textHash = int64(h)
	for _, s := range []string{v.CategoryID, strconv.FormatInt(v.PublishedAt.Unix(), 10),
		strconv.FormatInt(int64(v.Duration/time.Second), 10), v.DefaultLanguage, v.ThumbnailURL} {
		field(s)
	}
	r.metaHash = int64(h)
	return r
}

// derive computes the columns search needs from the text: the title's CJK
// bigrams, the term blob and the document length.
func (r *videoRow) derive() {
	if r.derived {
		return
	}
	r.derived = true
	if g := titleGrams(r.v.Title); g != "" {
		r.grams = sql.NullString{String: g, Valid: true}
	}
	r.terms, r.docLen = buildTerms(r.v.Title, r.tags, r.v.ChannelTitle, r.v.Description, r.grams.String)
}

type existingVideo struct {
	id       int64
	textHash int64
	metaHash int64
	docLen   int64
	lastSeen int64
	inRegion bool
}

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
// pending, when not nil, defers the full-text index's inserts to the caller,
// who indexes *pending once at the end of its transaction (ImportCharts): a
// video is then indexed once per batch however often it changed in it, and
// FTS5 writes one segment per batch instead of one per page. Videos already
// pending are not removed from the index again (they are not in it).
func (db *DB) savePage(ctx context.Context, p Page, outer *sql.Tx, learnedOut *[]channelEntry, pending *ftsPending) (PageResult, error) {
	var res PageResult
	if p.Kind == "" {
		p.Kind = PageChart
	}
	p.Region = normRegion(p.Region)
	switch {
	case p.RunID <= 0:
		return res, errors.New("store: save page: no run id")
	case p.Kind != PageChart && p.Kind != PageSearch:
		return res, fmt.Errorf("store: save page: unknown page kind %q", p.Kind)
	case p.FetchedAt.IsZero():
		return res, errors.New("store: save page: zero FetchedAt")
	case p.Kind == PageChart && p.Region == "":
		return res, errors.New("store: save page: chart page without a region")
	case p.Kind == PageChart && p.FirstRank < 1:
		return res, fmt.Errorf("store: save page: chart page with FirstRank %d (ranks start at 1)", p.FirstRank)
	}
	at := p.FetchedAt.UnixMicro()

	rows := make([]videoRow, 0, len(p.Videos))
	seen := make(map[string]bool, len(p.Videos))
	for i, v := range p.Videos {
		rank := 0
		if p.Kind == PageChart {
			rank = p.FirstRank + i
		}
		r := prepareVideo(v, rank)
		if r.v.ID == "" {
			return res, fmt.Errorf("store: save page: video %d has no id", i)
		}
		if !seen[r.v.ID] {
			seen[r.v.ID] = true
			rows = append(rows, r)
		}
	}

	// Every statement is prepared before the transaction takes the only
	// writer connection (preparing on the pool would wait for it forever).
	st, err := db.pageStatements(ctx, len(rows))
	if err != nil {
		return res, fmt.Errorf("store: save page: prepare: %w", err)
	}
	tx := outer
	if tx == nil {
		if tx, err = db.writer.BeginTx(ctx, nil); err != nil {
			return res, fmt.Errorf("store: save page: begin: %w", err)
		}
		defer tx.Rollback()
	}
	var learned []channelEntry
	w := writeTx{tx: tx, ctx: ctx, st: st, ftsWrites: &db.ftsWrites, chans: &db.channels, learned: &learned}

	ids := make([]int64, len(rows))       // videos.id per row
	var fresh, changed, newRegion []int64 // to (re)index
	var tokenDelta int64
	pageRegion := ""
	if p.Kind == PageChart {
		pageRegion = p.Region
	}
	if len(rows) > 0 {
		existing, err := w.existing(rows, pageRegion)
		if err != nil {
			return res, err
		}
		var metaOnly []int
		anyNew := false
		for i := range rows {
			r := &rows[i]
			e, ok := existing[r.v.ID]
			switch {
			case !ok:
				res.New++
				anyNew = true
				r.derive()
				tokenDelta += int64(r.docLen)
				continue
			case at < e.lastSeen || e.metaHash == r.metaHash:
				// Older than what is stored, or nothing but statistics changed.
				res.Unchanged++
			case e.textHash == r.textHash:
				res.Unchanged++ // metadata other than the text changed
				metaOnly = append(metaOnly, i)
			default:
				res.Updated++
				r.derive()
				changed = append(changed, e.id)
				tokenDelta += int64(r.docLen) - e.docLen
				metaOnly = append(metaOnly, i)
			}
			ids[i] = e.id
			if p.Kind == PageChart && !e.inRegion {
				newRegion = append(newRegion, e.id) // a new region facet
			}
		}
		// The run first: a page for a run that is not running is refused
		// before anything is written.
		minID := int64(math.MaxInt64)
		for _, id := range ids {
			if id > 0 {
				minID = min(minID, id)
			}
		}
		if err := w.runProgress(p, len(rows), res, minID); err != nil {
			return res, err
		}
		channels, err := w.channels(rows)
		if err != nil {
			return res, err
		}
		// The index must forget the old text and facets before the row
		// changes: the 'delete' command needs the values that were indexed.
		reindex := union(changed, newRegion)
		if err := w.ftsDelete(pending.notIn(reindex)); err != nil {
			return res, err
		}
		for _, i := range metaOnly {
			if err := w.updateVideo(ids[i], rows[i], channels); err != nil {
				return res, err
			}
		}
		if len(newRegion) > 0 {
			if err := w.exec(st.addRegionFacet, regionFacet(p.Region), jsonIDs(newRegion)); err != nil {
				return res, fmt.Errorf("store: save page: region facets: %w", err)
			}
		}
		changed = reindex
		if anyNew {
			got, err := w.insertVideos(rows, at, channels, pageRegion)
			if err != nil {
				return res, err
			}
			for i, r := range rows {
				if _, ok := existing[r.v.ID]; !ok {
					ids[i] = got[r.v.ID]
					fresh = append(fresh, ids[i])
				}
			}
		}
		if err := w.upsertStats(rows, ids, channels, at); err != nil {
			return res, err
		}
		if p.Kind == PageChart {
			if err := w.insertSnapshots(p, rows, ids, at); err != nil {
				return res, err
			}
			if err := w.upsertRegions(p.Region, rows, ids, at); err != nil {
				return res, err
			}
		}
	}
	snapshots := 0
	if p.Kind == PageChart {
		snapshots = len(rows)
	}
	if res.New > 0 || tokenDelta != 0 || snapshots > 0 {
		if err := w.exec(st.totals, res.New, tokenDelta, snapshots); err != nil {
			return res, fmt.Errorf("store: save page: totals: %w", err)
		}
	}
	if len(rows) == 0 {
		if err := w.runProgress(p, 0, res, math.MaxInt64); err != nil {
			return res, err
		}
	}
	// Last: index new and changed rows in one statement, so FTS5 writes one
	// segment for the page instead of one per row (or for the whole batch,
	// when the caller defers it).
	if pending != nil {
		pending.add(fresh)
		pending.add(changed)
	} else if err := w.ftsInsert(append(fresh, changed...)); err != nil {
		return res, err
	}
	if hook := testHookInPageTx; hook != nil {
		hook()
	}
	if outer != nil {
		*learnedOut = append(*learnedOut, learned...)
		return res, nil
	}
	if err := tx.Commit(); err != nil {
		return PageResult{}, fmt.Errorf("store: save page: commit: %w", err)
	}
	db.channels.remember(learned)
	return res, nil
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

// testHookInPageTx, when set (by tests only), runs inside SavePage's
// transaction after every write and before the commit.
var testHookInPageTx func()

func normRegion(r string) string { return strings.ToUpper(strings.TrimSpace(r)) }

// writeTx groups the statements of one write transaction.
type writeTx struct {
	tx        *sql.Tx
	ctx       context.Context
	st        *pageStatements
	ftsWrites *atomic.Int64
	chans     *channelCache
	learned   *[]channelEntry // channel ids to cache once the transaction commits
}

func (w writeTx) exec(st *sql.Stmt, args ...any) error {
	_, err := w.tx.StmtContext(w.ctx, st).ExecContext(w.ctx, args...)
	return err
}

func (w writeTx) query(st *sql.Stmt, args ...any) (*sql.Rows, error) {
	return w.tx.StmtContext(w.ctx, st).QueryContext(w.ctx, args...)
}

// pageStatements are the statements of one SavePage.
type pageStatements struct {
	existing, channelIDs, upsertChannel, updateVideo, addRegionFacet, ftsDelete, ftsInsert, totals, runProgress *sql.Stmt
	insertVideos, stats, snapshots, regions                                                                     *sql.Stmt // sized by the page
}

func (db *DB) pageStatements(ctx context.Context, rows int) (*pageStatements, error) {
	var st pageStatements
	var err error
	get := func(key string, build func() string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = db.prepared(ctx, key, build)
		return s
	}
	fixed := func(q string) func() string { return func() string { return q } }
	st.existing = get("existing", fixed(sqlExisting))
	st.channelIDs = get("channelids", fixed(sqlChannelIDs))
	st.upsertChannel = get("upsertchannel", fixed(sqlUpsertChan))
	st.updateVideo = get("updatevideo", fixed(sqlUpdateVideo))
	st.addRegionFacet = get("addregionfacet", fixed(sqlAddRegionFacet))
	st.ftsDelete = get("ftsdelete", fixed(sqlFTSDelete))
	st.ftsInsert = get("ftsinsert", fixed(sqlFTSInsert))
	st.totals = get("totals", fixed(sqlTotals))
	st.runProgress = get("runprogress", fixed(sqlRunProgress))
	if rows > 0 {
		st.insertVideos = get(fmt.Sprintf("insertvideos/%d", rows), func() string { return sqlInsertVideos(rows) })
		st.stats = get(fmt.Sprintf("stats/%d", rows), func() string { return sqlStats(rows) })
		st.snapshots = get(fmt.Sprintf("snapshots/%d", rows), func() string { return sqlSnapshots(rows) })
		st.regions = get(fmt.Sprintf("regions/%d", rows), func() string { return sqlRegions(rows) })
	}
	return &st, err
}

// jsonIDs encodes ids for json_each.
func jsonIDs[T int64 | string](ids []T) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

func (w writeTx) existing(rows []videoRow, region string) (map[string]existingVideo, error) {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.v.ID
	}
	rs, err := w.query(w.st.existing, jsonIDs(ids), region)
	if err != nil {
		return nil, fmt.Errorf("store: save page: look up videos: %w", err)
	}
	defer rs.Close()
	out := make(map[string]existingVideo, len(rows))
	for rs.Next() {
		var i int
		var e existingVideo
		if err := rs.Scan(&i, &e.id, &e.textHash, &e.metaHash, &e.docLen, &e.lastSeen, &e.inRegion); err != nil {
			return nil, fmt.Errorf("store: save page: look up videos: %w", err)
		}
		if i < 0 || i >= len(rows) {
			return nil, fmt.Errorf("store: save page: look up videos: index %d of %d", i, len(rows))
		}
		out[rows[i].v.ID] = e
	}
	return out, rs.Err()
}

// channels returns the row ids of the page's channels, adding the new ones
// and renaming the renamed ones. Channel rows are never deleted, so ids this
// process has committed are cached: a page of known channels with known
// titles reads nothing.
func (w writeTx) channels(rows []videoRow) (map[string]int64, error) {
	titles := map[string]string{}
	var cids []string
	for _, r := range rows {
		k := channelKey(r.v)
		if _, ok := titles[k]; !ok {
			titles[k] = r.v.ChannelTitle
			cids = append(cids, k)
		}
	}
	out := make(map[string]int64, len(cids))
	var unknown []string
	w.chans.mu.Lock()
	for _, cid := range cids {
		if c, ok := w.chans.m[cid]; ok && c.title == titles[cid] {
			out[cid] = c.id
		} else {
			unknown = append(unknown, cid)
		}
	}
	w.chans.mu.Unlock()
	if len(unknown) == 0 {
		return out, nil
	}
	rs, err := w.query(w.st.channelIDs, jsonIDs(unknown))
	if err != nil {
		return nil, fmt.Errorf("store: save page: channels: %w", err)
	}
	var stale []string
	found := map[string]bool{}
	for rs.Next() {
		var cid, title string
		var id int64
		if err := rs.Scan(&cid, &id, &title); err != nil {
			rs.Close()
			return nil, fmt.Errorf("store: save page: channels: %w", err)
		}
		out[cid], found[cid] = id, true
		if title != titles[cid] {
			stale = append(stale, cid)
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: save page: channels: %w", err)
	}
	for _, cid := range unknown {
		if !found[cid] {
			stale = append(stale, cid)
		}
	}
	for _, cid := range stale {
		var id int64
		err := w.tx.StmtContext(w.ctx, w.st.upsertChannel).QueryRowContext(w.ctx, cid, titles[cid], foldString(titles[cid])).Scan(&id)
		if err != nil {
			return nil, fmt.Errorf("store: save page: channel %s: %w", cid, err)
		}
		out[cid] = id
	}
	for _, cid := range unknown {
		*w.learned = append(*w.learned, channelEntry{cid: cid, id: out[cid], title: titles[cid]})
	}
	return out, nil
}

// channelCache maps channel ids to channels.id and the title last stored.
type channelCache struct {
	mu sync.Mutex
	m  map[string]channelEntry
}

type channelEntry struct {
	cid   string
	id    int64
	title string
}

const channelCacheMax = 200_000

// remember adds entries committed by a transaction.
func (c *channelCache) remember(es []channelEntry) {
	if len(es) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > channelCacheMax {
		c.m = map[string]channelEntry{}
	}
	for _, e := range es {
		c.m[e.cid] = e
	}
}

// insertVideos inserts the rows not yet in videos (the others are left
// alone: the statement covers the whole page so that its text depends only on
// the page size) and returns the new rows' ids.
func (w writeTx) insertVideos(rows []videoRow, at int64, channels map[string]int64, region string) (map[string]int64, error) {
	regionFacets := ""
	if region != "" {
		regionFacets = " " + regionFacet(region)
	}
	args := make([]any, 0, len(rows)*insertVideoCols)
	for _, r := range rows {
		v := r.v
		args = append(args, v.ID, v.Title, r.tags, v.ChannelTitle, v.Description, r.grams, v.ChannelID, v.CategoryID,
			v.PublishedAt.Unix(), int64(v.Duration/time.Second), v.DefaultLanguage, v.ThumbnailURL, at,
			channelFacet(channels[channelKey(v)])+regionFacets)
	}
	rs, err := w.query(w.st.insertVideos, args...)
	if err != nil {
		return nil, fmt.Errorf("store: save page: insert videos: %w", err)
	}
	defer rs.Close()
	out := make(map[string]int64, len(rows))
	for rs.Next() {
		var vid string
		var id int64
		if err := rs.Scan(&vid, &id); err != nil {
			return nil, fmt.Errorf("store: save page: insert videos: %w", err)
		}
		out[vid] = id
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: save page: insert videos: %w", err)
	}
	return out, nil
}

func (w writeTx) updateVideo(id int64, r videoRow, channels map[string]int64) error {
	r.derive() // title_grams is a column of videos
	v := r.v
	err := w.exec(w.st.updateVideo, v.Title, r.tags, v.ChannelTitle, v.Description, r.grams, v.ChannelID, v.CategoryID,
		v.PublishedAt.Unix(), int64(v.Duration/time.Second), v.DefaultLanguage, v.ThumbnailURL,
		channelFacet(channels[channelKey(v)]), id)
	if err != nil {
		return fmt.Errorf("store: save page: update video %s: %w", v.ID, err)
	}
	return nil
}

func (w writeTx) upsertStats(rows []videoRow, ids []int64, channels map[string]int64, at int64) error {
	args := make([]any, 0, len(rows)*statsCols)
	for i, r := range rows {
		var rank any
		if r.rank > 0 {
			rank = r.rank
		}
		docLen, blob := int64(-1), []byte{} // unchanged text: keep what is stored
		if r.derived {
			docLen, blob = int64(r.docLen), r.terms
		}
		args = append(args, at, ids[i], channels[channelKey(r.v)], rank, nullable(r.v.Views), nullable(r.v.Likes),
			nullable(r.v.Comments), docLen, blob, r.textHash, r.metaHash)
	}
	if err := w.exec(w.st.stats, args...); err != nil {
		return fmt.Errorf("store: save page: video stats: %w", err)
	}
	return nil
}

func nullable(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func (w writeTx) insertSnapshots(p Page, rows []videoRow, ids []int64, at int64) error {
	args := make([]any, 0, len(rows)*9)
	for i, r := range rows {
		args = append(args, p.RunID, p.Region, at, r.rank, ids[i], nullable(r.v.Views), nullable(r.v.Likes),
			nullable(r.v.Dislikes), nullable(r.v.Comments))
	}
	if err := w.exec(w.st.snapshots, args...); err != nil {
		return fmt.Errorf("store: save page: snapshots: %w", err)
	}
	return nil
}

func (w writeTx) upsertRegions(region string, rows []videoRow, ids []int64, at int64) error {
	args := make([]any, 0, len(rows)*6)
	for i, r := range rows {
		args = append(args, region, at, at, ids[i], r.rank, r.rank)
	}
	if err := w.exec(w.st.regions, args...); err != nil {
		return fmt.Errorf("store: save page: video regions: %w", err)
	}
	return nil
}

// runProgress adds the page to its run, which must still be running. minID
// is the smallest id among the page's stored videos (MaxInt64 if none).
func (w writeTx) runProgress(p Page, videos int, res PageResult, minID int64) error {
	r, err := w.tx.StmtContext(w.ctx, w.st.runProgress).ExecContext(w.ctx, videos, res.New, res.Updated, p.Units, p.RunID,
		p.FetchedAt.UnixMicro(), minID)
	if err != nil {
		return fmt.Errorf("store: save page: run progress: %w", err)
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return nil
	}
	var status string
	err = w.tx.QueryRowContext(w.ctx, `SELECT status FROM runs WHERE id = ?`, p.RunID).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("store: save page: run %d: %w", p.RunID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("store: save page: run %d: %w", p.RunID, err)
	}
	return fmt.Errorf("store: save page: run %d: %w (it is %s)", p.RunID, ErrRunFinished, status)
}

// ftsDelete removes rows from the index, with the values they were indexed
// with (read from videos, so call it before changing or deleting the rows).
func (w writeTx) ftsDelete(ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := w.exec(w.st.ftsDelete, jsonIDs(ids)); err != nil {
		return fmt.Errorf("store: remove from index: %w", err)
	}
	w.ftsWrites.Add(1)
	return nil
}

// ftsInsert indexes rows as they are now in videos.
func (w writeTx) ftsInsert(ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := w.exec(w.st.ftsInsert, jsonIDs(ids)); err != nil {
		return fmt.Errorf("store: index: %w", err)
	}
	w.ftsWrites.Add(1)
	return nil
}

func int64Args(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

// deleteChunk bounds the number of ids bound in one statement.
const deleteChunk = 200

// DeleteVideos removes videos (by YouTube id) with their statistics,
// snapshots and region aggregates, and their index entries, in one
// transaction. Unknown ids are ignored; it returns how many were deleted.
func (db *DB) DeleteVideos(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	st, err := db.pageStatements(ctx, 0)
	if err != nil {
		return 0, fmt.Errorf("store: delete videos: prepare: %w", err)
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: delete videos: begin: %w", err)
	}
	defer tx.Rollback()
	w := writeTx{tx: tx, ctx: ctx, st: st, ftsWrites: &db.ftsWrites, chans: &db.channels}
	deleted := 0
	var tokens, snapshots int64
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), deleteChunk)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rs, err := tx.QueryContext(ctx, `SELECT v.id, s.doc_len, (SELECT count(*) FROM trending_snapshots t WHERE t.video = v.id)
			FROM videos v JOIN video_stats s ON s.video = v.id WHERE v.video_id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return 0, fmt.Errorf("store: delete videos: %w", err)
		}
		var rowIDs []int64
		for rs.Next() {
			var id, docLen, snaps int64
			if err := rs.Scan(&id, &docLen, &snaps); err != nil {
				rs.Close()
				return 0, fmt.Errorf("store: delete videos: %w", err)
			}
			rowIDs = append(rowIDs, id)
			tokens += docLen
			snapshots += snaps
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return 0, fmt.Errorf("store: delete videos: %w", err)
		}
		if len(rowIDs) == 0 {
			continue
		}
		if err := w.ftsDelete(rowIDs); err != nil {
			return 0, err
		}
		// Statistics and region rows go by ON DELETE CASCADE; snapshots
		// have no foreign key (see 0001_init.sql).
		in := `(` + placeholders(len(rowIDs)) + `)`
		if _, err := tx.ExecContext(ctx, `DELETE FROM trending_snapshots WHERE video IN `+in, int64Args(rowIDs)...); err != nil {
			return 0, fmt.Errorf("store: delete videos: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM videos WHERE id IN `+in, int64Args(rowIDs)...); err != nil {
			return 0, fmt.Errorf("store: delete videos: %w", err)
		}
		deleted += len(rowIDs)
	}
	if deleted > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE archive_totals SET videos = videos - ?, tokens = tokens - ?, snapshots = snapshots - ? WHERE id = 1`,
			deleted, tokens, snapshots); err != nil {
			return 0, fmt.Errorf("store: delete videos: totals: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: delete videos: commit: %w", err)
	}
	return deleted, nil
}
