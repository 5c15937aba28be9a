package search_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// The engine is tested through the archive it searches: a real store in
// t.TempDir(), written as a fetch writes it.

// t0 is the fixtures' clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openDB(tb testing.TB, opts ...store.Option) (*store.DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "archive.db")
	db, err := store.Open(context.Background(), path, opts...)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, path
}

// saveChart saves videos as one chart page of a new run in region at time at
// and finishes the run.
func saveChart(tb testing.TB, db *store.DB, region regions.Code, at time.Time, firstRank int, vs ...store.Video) {
	tb.Helper()
	ctx := context.Background()
	run, err := db.StartRun(ctx, region, store.TriggerSchedule, at)
	if err != nil {
		tb.Fatalf("start run %s: %v", region, err)
	}
	if _, err := db.SavePage(ctx, store.Page{RunID: run, Region: region, FetchedAt: at, Kind: store.PageChart, FirstRank: firstRank, Videos: vs}); err != nil {
		tb.Fatalf("save page: %v", err)
	}
	if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: at.Add(time.Minute)}); err != nil {
		tb.Fatal(err)
	}
}

// ftsIntegrity runs FTS5's own check of the index against the videos table.
func ftsIntegrity(tb testing.TB, db *store.DB) {
	tb.Helper()
	if _, err := db.Writer().ExecContext(context.Background(), `INSERT INTO video_fts(video_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		tb.Fatalf("fts integrity-check: %v", err)
	}
}

func ids(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.VideoID
	}
	return out
}

// find searches db through the store's front door.
func find(tb testing.TB, db *store.DB, q store.Query) []store.Hit {
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
