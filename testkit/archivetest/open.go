package archivetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Open opens a fresh archive in tb.TempDir(), closed at cleanup, and
// returns it with its path.
func Open(tb testing.TB, opts ...store.Option) (*store.DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "archive.db")
	db, err := store.Open(context.Background(), path, opts...)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, path
}

// SaveChart saves videos as one chart page of a new run in region at time
// at, as a fetch does, and finishes the run.
func SaveChart(tb testing.TB, db *store.DB, region regions.Code, at time.Time, firstRank int, vs ...store.Video) store.PageResult {
	tb.Helper()
	ctx := context.Background()
	run, err := db.StartRun(ctx, region, store.TriggerSchedule, at)
	if err != nil {
		tb.Fatalf("start run %s: %v", region, err)
	}
	res, err := db.SavePage(ctx, store.Page{RunID: run, Region: region, FetchedAt: at, Kind: store.PageChart, FirstRank: firstRank, Videos: vs})
	if err != nil {
		tb.Fatalf("save page: %v", err)
	}
	if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: at.Add(time.Minute)}); err != nil {
		tb.Fatal(err)
	}
	return res
}

// Search searches db, failing tb on an error or a nil slice.
func Search(tb testing.TB, db *store.DB, q store.Query) []store.Hit {
	tb.Helper()
	hits, err := db.Search(context.Background(), q)
	if err != nil {
		tb.Fatalf("Search(%+v): %v", q, err)
	}
	if hits == nil {
		tb.Fatalf("Search(%+v): nil slice", q)
	}
	return hits
}

// Integrity runs FTS5's own check of the index against the videos table
// and SQLite's check of the whole file.
func Integrity(tb testing.TB, db *store.DB) {
	tb.Helper()
	ctx := context.Background()
	if _, err := db.Writer().ExecContext(ctx, `INSERT INTO video_fts(video_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		tb.Fatalf("fts integrity-check: %v", err)
	}
	var res string
	if err := db.Writer().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		tb.Fatalf("integrity_check: %q %v", res, err)
	}
}

// Grants is the ids in the archive's quota_grants (the budget's record of
// grants), in order.
func Grants(tb testing.TB, db *store.DB) []string {
	tb.Helper()
	rows, err := db.Reader().QueryContext(context.Background(), `SELECT id FROM quota_grants ORDER BY id`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			tb.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// SmallAt is when Small's one chart was fetched.
var SmallAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Small opens a fresh archive in tb.TempDir() holding one finished US chart
// of two videos (cricket1 at #1, cooking2 at #2), for the HTTP adapters'
// tests; it is closed at cleanup.
func Small(tb testing.TB) *store.DB {
	tb.Helper()
	db, _ := Open(tb)
	views := func(n int64) *int64 { return &n }
	SaveChart(tb, db, "US", SmallAt, 1,
		store.Video{ID: "cricket1", Title: "Cricket final highlights", ChannelID: "UCsport", ChannelTitle: "Sport Daily",
			CategoryID: "17", PublishedAt: SmallAt.Add(-time.Hour), Views: views(1000)},
		store.Video{ID: "cooking2", Title: "Five minute pasta", ChannelID: "UCfood", ChannelTitle: "Kitchen",
			CategoryID: "26", PublishedAt: SmallAt.Add(-2 * time.Hour), Views: views(500)})
	return db
}
