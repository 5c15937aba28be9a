package archivetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ytrend/ytrend/store"
)

// SmallAt is when Small's one chart was fetched.
var SmallAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Small opens a fresh archive in tb.TempDir() holding one finished US chart
// of two videos (cricket1 at #1, cooking2 at #2), for the HTTP adapters'
// tests; it is closed at cleanup.
func Small(tb testing.TB) *store.DB {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(tb.TempDir(), "small.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	views := func(n int64) *int64 { return &n }
	run, err := db.StartRun(ctx, "US", store.TriggerSchedule, SmallAt)
	if err != nil {
		tb.Fatal(err)
	}
	page := store.Page{RunID: run, Region: "US", FetchedAt: SmallAt, Kind: store.PageChart, FirstRank: 1, Videos: []store.Video{
		{ID: "cricket1", Title: "Cricket final highlights", ChannelID: "UCsport", ChannelTitle: "Sport Daily",
			CategoryID: "17", PublishedAt: SmallAt.Add(-time.Hour), Views: views(1000)},
		{ID: "cooking2", Title: "Five minute pasta", ChannelID: "UCfood", ChannelTitle: "Kitchen",
			CategoryID: "26", PublishedAt: SmallAt.Add(-2 * time.Hour), Views: views(500)},
	}}
	if _, err := db.SavePage(ctx, page); err != nil {
		tb.Fatal(err)
	}
	if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: SmallAt.Add(time.Minute)}); err != nil {
		tb.Fatal(err)
	}
	return db
}
