package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// ImportedChart is one chart fetched in the past, read from a dataset file:
// a day of a public trending dataset, or one run of a ytrend export. It is
// stored as a run of its own with trigger "import".
type ImportedChart struct {
	Region regions.Code
	// Pages hold the positions: FetchedAt, FirstRank and Videos are used
	// (RunID, Region, Kind and Units are ImportChart's business). A public
	// dataset's day is one page fetched at its trending_date; a ytrend
	// export's run has one page per fetch time it recorded.
	Pages []Page
	// Categories are names for category ids the file carries (ytrend's
	// export does, in its category column): id -> name in Region. They fill
	// the archive's cached names where the API gave none (see Category).
	Categories map[string]string
}

// ImportResult says what ImportChart did.
type ImportResult struct {
	RunID int64 // the run created; 0 when Skipped
	// Skipped: the archive already holds a chart of this region fetched at
	// this time (imported before, or fetched by this archive), and nothing
	// was written.
	Skipped bool
	PageResult
}

// ErrBadChart is wrapped by ImportChart's errors about the chart itself
// (as opposed to the database).
var ErrBadChart = errors.New("store: bad imported chart")

const (
	sqlChartExists = `SELECT id FROM runs
		WHERE region = ?1 AND last_page_at = ?2 AND pages > 0 AND status <> 'running' LIMIT 1`
	sqlImportRun = `INSERT INTO runs (region, triggered_by, owner, started_at) VALUES (?, 'import', ?, ?) RETURNING id`
	// What the datasets do not carry is kept from the archive: duration and
	// language always, the channel id when the file has none (2017-18).
	sqlImportKnown = `SELECT video_id, duration_s, default_language, channel_id FROM videos
		WHERE video_id IN (SELECT value FROM json_each(?))`
	// A video first seen by this archive after the imported day was on a
	// chart: the imported sighting is its first.
	sqlImportFirstSeen = `UPDATE videos SET first_seen = ?1
		WHERE video_id IN (SELECT value FROM json_each(?2)) AND first_seen > ?1`
	sqlImportFinish = `UPDATE runs SET status = 'ok', finished_at = last_page_at WHERE id = ?`
)

// ImportBatchRows is how many chart positions ytrend import stores per
// ImportCharts transaction: large enough that the commit and the full-text
// index's flush cost little per row, small enough that a batch is a moment
// of work and of memory.
const ImportBatchRows = 5000

// maxIndexChunk bounds the ids one index statement reads (a JSON array, so
// only its size matters).
const maxIndexChunk = 5000

// maxImportPage bounds the rows of one page statement (14 parameters a row
// for the videos insert, under SQLite's 32,766).
const maxImportPage = 500

// ImportChart stores a chart from the past in one transaction: its run, its
// positions, the videos merged with what the archive has (older metadata
// never replaces newer: a video's text and metadata change only if this
// chart is newer than its latest sighting, and the full-text index only if
// its text did), and the run finished. A chart the archive already has —
// same region, same fetch time — is skipped, so importing a file again
// changes nothing. A video listed twice in the chart keeps its first
// position.
func (db *DB) ImportChart(ctx context.Context, c ImportedChart) (ImportResult, error) {
	res, err := db.ImportCharts(ctx, []ImportedChart{c})
	if err != nil {
		return ImportResult{}, err
	}
	return res[0], nil
}

// ImportCharts stores several charts as ImportChart does, all in one
// transaction: a dataset's days are imported in batches, so that the commit
// and the full-text index's flush are paid once per batch rather than once
// per day. Either every chart of the batch is stored (or skipped as already
// there) or, on an error, none is. A chart that repeats an earlier one of the
// same batch (same region and fetch time) is skipped like one already in the
// archive.
func (db *DB) ImportCharts(ctx context.Context, cs []ImportedChart) ([]ImportResult, error) {
	charts := make([][]Page, len(cs))
	st, err := db.pageStatements(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("store: import chart: prepare: %w", err)
	}
	for i, c := range cs {
		pages, err := importPages(c)
		if err != nil {
			return nil, err
		}
		charts[i] = pages
		// Every statement is prepared before the transaction takes the
		// only writer connection.
		for _, p := range pages {
			if _, err := db.pageStatements(ctx, len(p.Videos)); err != nil {
				return nil, fmt.Errorf("store: import chart: prepare: %w", err)
			}
		}
	}
	// An import writes for minutes, batch after batch, as a fetch does: it
	// keeps a heartbeat too, so that OtherWriters names it and a Compact
	// elsewhere does not hold the write lock past its busy timeout.
	if err := db.Register(ctx); err != nil {
		return nil, fmt.Errorf("store: import chart: %w", err)
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: import chart: begin: %w", err)
	}
	defer tx.Rollback()
	var learned []channelEntry
	var pending ftsPending
	out := make([]ImportResult, len(cs))
	for i, c := range cs {
		if out[i], err = db.importChart(ctx, tx, c, charts[i], &learned, &pending); err != nil {
			return nil, err
		}
	}
	// The batch's new and changed videos, indexed once each as they are at
	// its end.
	w := writeTx{tx: tx, ctx: ctx, st: st, ftsWrites: &db.ftsWrites}
	for chunk := range slices.Chunk(pending.ids, maxIndexChunk) {
		if err := w.ftsInsert(chunk); err != nil {
			return nil, fmt.Errorf("store: import chart: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: import chart: commit: %w", err)
	}
	db.commits.Add(1)
	db.channels.remember(learned)
	return out, nil
}

// importChart stores one chart inside tx.
func (db *DB) importChart(ctx context.Context, tx *sql.Tx, c ImportedChart, pages []Page, learned *[]channelEntry, pending *ftsPending) (ImportResult, error) {
	var res ImportResult
	first, last := pages[0].FetchedAt, pages[0].FetchedAt
	var ids []string
	for _, p := range pages {
		first, last = minTime(first, p.FetchedAt), maxTime(last, p.FetchedAt)
		for _, v := range p.Videos {
			ids = append(ids, v.ID)
		}
	}
	var existing int64
	switch err := tx.QueryRowContext(ctx, sqlChartExists, string(c.Region), last.UnixMicro()).Scan(&existing); {
	case err == nil:
		res.Skipped = true
		return res, nil
	case !errors.Is(err, sql.ErrNoRows):
		return res, fmt.Errorf("store: import chart: %w", err)
	}
	if err := fillKnown(ctx, tx, pages, ids); err != nil {
		return res, err
	}
	if err := tx.QueryRowContext(ctx, sqlImportRun, string(c.Region), db.self.id, first.UnixMicro()).Scan(&res.RunID); err != nil {
		return res, fmt.Errorf("store: import chart: start run: %w", err)
	}
	for _, p := range pages {
		p.RunID, p.Region, p.Kind = res.RunID, c.Region, PageChart
		r, err := db.savePage(ctx, p, tx, learned, pending)
		if err != nil {
			return res, fmt.Errorf("store: import chart %s %s: %w", c.Region, p.FetchedAt.Format(time.RFC3339), err)
		}
		res.New += r.New
		res.Updated += r.Updated
		res.Unchanged += r.Unchanged
		pageIDs := make([]string, len(p.Videos))
		for i, v := range p.Videos {
			pageIDs[i] = v.ID
		}
		if _, err := tx.ExecContext(ctx, sqlImportFirstSeen, p.FetchedAt.UnixMicro(), jsonIDs(pageIDs)); err != nil {
			return res, fmt.Errorf("store: import chart: first seen: %w", err)
		}
	}
	if len(c.Categories) > 0 {
		cats := make([]Category, 0, len(c.Categories))
		for id, title := range c.Categories {
			cats = append(cats, Category{Region: c.Region, ID: id, Title: title, FetchedAt: last})
		}
		if err := upsertCategories(ctx, tx, cats); err != nil {
			return res, fmt.Errorf("store: import chart: category names: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, sqlImportFinish, res.RunID); err != nil {
		return res, fmt.Errorf("store: import chart: finish run: %w", err)
	}
	return res, nil
}

// importPages checks a chart and returns its pages with each video's id
// cleaned, a video listed twice kept at its first position, and pages
// longer than maxImportPage split.
func importPages(c ImportedChart) ([]Page, error) {
	if !regions.Valid(c.Region) {
		return nil, fmt.Errorf("%w: %q is not a region code", ErrBadChart, c.Region)
	}
	if len(c.Pages) == 0 {
		return nil, fmt.Errorf("%w: no pages", ErrBadChart)
	}
	ranks := map[int]bool{}
	var out []Page
	for i, p := range c.Pages {
		switch {
		case p.FetchedAt.IsZero():
			return nil, fmt.Errorf("%w: page %d has no fetch time", ErrBadChart, i+1)
		case p.FirstRank < 1:
			return nil, fmt.Errorf("%w: page %d starts at rank %d (ranks start at 1)", ErrBadChart, i+1, p.FirstRank)
		}
		// As in SavePage, a video listed twice in a page keeps its first
		// position and leaves the second's rank empty: the page is cut
		// there, so every other video keeps the rank the source gave it.
		seen := map[string]bool{}
		cur := Page{FetchedAt: p.FetchedAt}
		cut := func() {
			if len(cur.Videos) > 0 {
				out = append(out, cur)
			}
			cur = Page{FetchedAt: p.FetchedAt}
		}
		for j, v := range p.Videos {
			rank := p.FirstRank + j
			v.ID = strings.TrimSpace(clean(v.ID))
			switch {
			case v.ID == "":
				return nil, fmt.Errorf("%w: page %d, rank %d: video without an id", ErrBadChart, i+1, rank)
			case ranks[rank]:
				return nil, fmt.Errorf("%w: rank %d appears twice", ErrBadChart, rank)
			}
			ranks[rank] = true
			if seen[v.ID] {
				cut()
				continue
			}
			seen[v.ID] = true
			if len(cur.Videos) == 0 {
				cur.FirstRank = rank
			}
			cur.Videos = append(cur.Videos, v)
			if len(cur.Videos) == maxImportPage {
				cut()
			}
		}
		cut()
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no videos", ErrBadChart)
	}
	return out, nil
}

// fillKnown gives the chart's videos what the archive knows and the file
// does not: their duration and language, and their channel id when the file
// has none. Without it, a newer dataset row would blank them.
func fillKnown(ctx context.Context, q querier, pages []Page, ids []string) error {
	rows, err := q.QueryContext(ctx, sqlImportKnown, jsonIDs(ids))
	if err != nil {
		return fmt.Errorf("store: import chart: read known videos: %w", err)
	}
	defer rows.Close()
	type known struct {
		duration        int64
		lang, channelID string
	}
	have := map[string]known{}
	for rows.Next() {
		var id string
		var k known
		if err := rows.Scan(&id, &k.duration, &k.lang, &k.channelID); err != nil {
			return fmt.Errorf("store: import chart: read known videos: %w", err)
		}
		have[id] = k
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: import chart: read known videos: %w", err)
	}
	for _, p := range pages {
		for i := range p.Videos {
			v := &p.Videos[i]
			k, ok := have[v.ID]
			if !ok {
				continue
			}
			if v.Duration == 0 {
				v.Duration = time.Duration(k.duration) * time.Second
			}
			if v.DefaultLanguage == "" {
				v.DefaultLanguage = k.lang
			}
			if v.ChannelID == "" {
				v.ChannelID = k.channelID
			}
		}
	}
	return nil
}

// channelKey is the channels row a video belongs to: its channel id, or for
// a video whose source carried none (the 2017-18 dataset), its channel
// title, marked so that it can be no channel id (those never hold ':').
func channelKey(v Video) string {
	if v.ChannelID != "" {
		return v.ChannelID
	}
	return "title:" + v.ChannelTitle
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
