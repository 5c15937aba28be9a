package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// Chart is a region's trending chart as one fetch saw it, with each entry's
// movement against the fetch before it. Storage types carry no JSON tags:
// its wire form is view.Chart.
type Chart struct {
	Region    regions.Code
	RunID     int64
	FetchedAt time.Time // the fetch's newest page
	// PreviousRunID and PreviousFetchedAt name the fetch the movement is
	// measured against; 0 and null for a region's first chart.
	PreviousRunID     int64
	PreviousFetchedAt *time.Time
	// Final says that no fetch can change this chart any more: the region
	// has a later chart, and no run of it that began at or before the time
	// asked for is still in progress. Only an import of older history (or
	// a deletion) still can, and that changes the archive's Version.
	Final   bool
	Entries []ChartEntry
}

// ChartEntry is one position of a chart. Counts are the ones seen at that
// fetch; nil is a count the owner hid (or, for likes and comments, one the
// archive did not record: charts stored before migration 0004 kept views only).
type ChartEntry struct {
	Rank         int
	VideoID      string
	Title        string
	ChannelID    string // "" when the source had none (the 2017-18 dataset)
	ChannelTitle string
	CategoryID   string
	Category     string // the region's name for CategoryID; "" if not cached
	// ThumbnailURL is the video's thumbnail on YouTube's image servers, as
	// the API gave it ("" when it gave none).
	ThumbnailURL string
	Views        *int64
	Likes        *int64
	Comments     *int64
	FetchedAt    time.Time
	// PreviousRank is the video's rank in the previous fetch; nil if it was
	// not on that chart (or there is none).
	PreviousRank *int
	// Change is PreviousRank - Rank: positive moved up; 0 when new.
	Change   int
	Movement Movement
}

// Movement says how an entry moved since the previous fetch.
type Movement string

const (
	MovementNew  Movement = "new"
	MovementUp   Movement = "up"
	MovementDown Movement = "down"
	MovementSame Movement = "same"
)

// A chart is a finished run that stored chart positions (a run may also
// have stored search pages, or only those). A run still in progress is left
// out, so that a chart read while ytrend run is fetching is the last
// complete one, not the first pages of the next. These repeat the partial
// index runs_charts' WHERE terms so that SQLite uses it.
//
// A chart page is two prepared statements: the run and the one before it
// (with whether the chart is final, see Chart.Final), then the entries
// with their previous ranks and their category's name in one pass.
// Movement is computed here rather than stored per snapshot: looking up
// 200 previous ranks is one index range of the previous run, a small part
// of the page (BENCHMARKS.md), while a stored movement would have to be
// rewritten whenever an import inserts a chart into the past.
const (
	sqlChartRuns = `SELECT id, last_page_at,
			EXISTS (SELECT 1 FROM runs r WHERE r.region = ?1 AND r.pages > 0 AND r.status <> 'running'
				AND r.last_page_at > ?2 AND EXISTS (SELECT 1 FROM trending_snapshots t WHERE t.run_id = r.id)),
			EXISTS (SELECT 1 FROM runs r INDEXED BY runs_running WHERE r.status = 'running' AND r.region = ?1
				AND r.started_at <= ?2)
		FROM runs
		WHERE region = ?1 AND pages > 0 AND status <> 'running' AND last_page_at <= ?2
			AND EXISTS (SELECT 1 FROM trending_snapshots t WHERE t.run_id = runs.id)
		ORDER BY last_page_at DESC, id DESC LIMIT 2`
	sqlFirstChart = `SELECT min(last_page_at) FROM runs WHERE region = ?1 AND pages > 0 AND status <> 'running'
		AND EXISTS (SELECT 1 FROM trending_snapshots t WHERE t.run_id = runs.id)`
	// A video may hold two ranks of one chart: the better previous rank is
	// the one compared. The category's name is the region's (Category).
	sqlChartRows = `SELECT t.rank, t.fetched_at, t.views, t.likes, t.comments,
		v.video_id, v.title, v.channel_id, v.channel_title, v.category_id, v.thumbnail_url,
		c.title, p.rank
		FROM trending_snapshots t JOIN videos v ON v.id = t.video
		LEFT JOIN categories c ON c.region = ?4 AND c.category_id = v.category_id
		LEFT JOIN (SELECT video, min(rank) AS rank FROM trending_snapshots WHERE run_id = ?5 GROUP BY video) p
			ON p.video = t.video
		WHERE t.run_id = ?1 AND (?3 IS NULL OR v.category_id IN (SELECT value FROM json_each(?3)))
		ORDER BY t.rank LIMIT ?2`
)

// Chart returns region's chart as it stood at the newest finished fetch at
// or before at (the zero time means now), its first limit entries (0: all).
// A region with no such fetch is ErrNotFound, with the time of its first
// chart in the message when it has one.
func (db *DB) Chart(ctx context.Context, region regions.Code, at time.Time, limit int) (Chart, error) {
	return db.ChartOf(ctx, ChartQuery{Region: region, At: at, Limit: limit})
}

// ChartQuery selects a chart and its entries.
type ChartQuery struct {
	Region regions.Code
	At     time.Time // the zero time means now
	Limit  int       // entries; 0: all
	// Categories keeps only the entries of these category ids (see
	// CategoryIDs); they keep their rank in the whole chart, and Limit
	// counts the entries kept.
	Categories []string
}

// ChartOf is Chart with a category filter.
func (db *DB) ChartOf(ctx context.Context, cq ChartQuery) (Chart, error) {
	region, at, limit := cq.Region, cq.At, cq.Limit
	c := Chart{Region: region, Entries: []ChartEntry{}}
	if !regions.Valid(region) {
		return c, fmt.Errorf("store: chart: %q is not a region code", region)
	}
	if at.IsZero() {
		at = time.Now()
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return c, fmt.Errorf("store: chart %s: %w", region, err)
	}
	defer tx.Rollback()

	runsStmt, err := db.readStmt(ctx, tx, sqlChartRuns)
	if err != nil {
		return c, fmt.Errorf("store: chart %s: %w", region, err)
	}
	rows, err := runsStmt.QueryContext(ctx, string(region), at.UnixMicro())
	if err != nil {
		return c, fmt.Errorf("store: chart %s: %w", region, err)
	}
	var runs [2]int64
	var times [2]int64
	var later, running bool
	n := 0
	for rows.Next() {
		if err := rows.Scan(&runs[n], &times[n], &later, &running); err != nil {
			rows.Close()
			return c, fmt.Errorf("store: chart %s: %w", region, err)
		}
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("store: chart %s: %w", region, err)
	}
	if n == 0 {
		var first sql.NullInt64
		if err := tx.QueryRowContext(ctx, sqlFirstChart, string(region)).Scan(&first); err != nil {
			return c, fmt.Errorf("store: chart %s: %w", region, err)
		}
		if !first.Valid {
			return c, fmt.Errorf("store: chart %s: the archive has no chart of %s: %w", region, region, ErrNotFound)
		}
		return c, fmt.Errorf("store: chart %s: no fetch at or before %s (the first is at %s): %w", region,
			at.UTC().Format(time.RFC3339), micros(first.Int64).Format(time.RFC3339), ErrNotFound)
	}
	c.RunID, c.FetchedAt = runs[0], micros(times[0])
	c.Final = later && !running
	if n == 2 {
		c.PreviousRunID = runs[1]
		t := micros(times[1])
		c.PreviousFetchedAt = &t
	}

	var cats any
	if len(cq.Categories) > 0 {
		cats = jsonIDs(cq.Categories)
	}
	rowsStmt, err := db.readStmt(ctx, tx, sqlChartRows)
	if err != nil {
		return c, fmt.Errorf("store: chart %s: %w", region, err)
	}
	rows, err = rowsStmt.QueryContext(ctx, runs[0], limit, cats, string(region), c.PreviousRunID)
	if err != nil {
		return c, fmt.Errorf("store: chart %s: %w", region, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e ChartEntry
		var fetched int64
		var views, likes, comments, prev sql.NullInt64
		var category sql.NullString
		if err := rows.Scan(&e.Rank, &fetched, &views, &likes, &comments, &e.VideoID, &e.Title,
			&e.ChannelID, &e.ChannelTitle, &e.CategoryID, &e.ThumbnailURL, &category, &prev); err != nil {
			return c, fmt.Errorf("store: chart %s: %w", region, err)
		}
		e.FetchedAt = micros(fetched)
		e.Category = category.String
		e.Views, e.Likes, e.Comments = ptr(views), ptr(likes), ptr(comments)
		e.Movement = MovementNew
		if prev.Valid {
			r := int(prev.Int64)
			e.PreviousRank = &r
			e.Change = r - e.Rank
			switch {
			case e.Change > 0:
				e.Movement = MovementUp
			case e.Change < 0:
				e.Movement = MovementDown
			default:
				e.Movement = MovementSame
			}
		}
		c.Entries = append(c.Entries, e)
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("store: chart %s: %w", region, err)
	}
	return c, nil
}
