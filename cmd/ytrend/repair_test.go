package main

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/migrations"
	"github.com/ytrend/ytrend/store"
)

// migrationsBefore is the migration set as a release before version v
// shipped it.
func migrationsBefore(t *testing.T, v string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() >= v {
			continue
		}
		b, err := fs.ReadFile(migrations.FS, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = &fstest.MapFile{Data: b}
	}
	return out
}

// An archive an older ytrend filled with an import dated 9999-12-30 and
// fields past YouTube's limits: `ytrend migrate` repairs it once, and the
// next real chart replaces the text the future row left (before, the
// future sighting stayed the newest for good, and Last-Modified said 9999).
func TestMigrateRepairsHostileRows(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	ctx := context.Background()
	db, err := store.Open(ctx, w.env["YTREND_DB"], store.WithMigrations(migrationsBefore(t, "0011")))
	if err != nil {
		t.Fatal(err)
	}
	real := time.Now().Add(-48 * time.Hour).Truncate(time.Second).UTC()
	future := time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC)
	chart := func(at time.Time, vs ...store.Video) {
		t.Helper()
		if _, err := db.ImportChart(ctx, store.ImportedChart{Region: "US", Pages: []store.Page{{FetchedAt: at, FirstRank: 1, Videos: vs}}}); err != nil {
			t.Fatal(err)
		}
	}
	chart(real, store.Video{ID: "defaced0001", Title: "the real title", ChannelID: "UC1", ChannelTitle: "c"})
	chart(future, store.Video{ID: "defaced0001", Title: "DEFACED", ChannelID: "UC1", ChannelTitle: "c"},
		store.Video{ID: "onlyfuture1", Title: "from the future", ChannelID: "UC1", ChannelTitle: "c"})
	chart(real.Add(time.Hour), store.Video{ID: "oversized01", Title: strings.Repeat("t", 300), Description: strings.Repeat("d", 20000),
		Tags: []string{strings.Repeat("x", 400), strings.Repeat("y", 400)}, ThumbnailURL: "/api/v1/search?q=a&sort=views", ChannelID: "UC1", ChannelTitle: "c"})
	if last, err := db.LastChange(ctx); err != nil || !last.Equal(future) {
		t.Fatalf("before: last change %v, %v", last, err)
	}
	db.Close()

	r := w.mustRun("migrate")
	want := "repaired what older imports stored: 1 runs dated where no chart can be removed (2 snapshots; 1 videos seen only there deleted, 1 given their newest real sighting back), 1 videos cut to YouTube's limits, 1 thumbnails not on ytimg.com emptied"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("migrate:\n%s\nwant %q", r.stdout, want)
	}
	if r := w.mustRun("migrate"); strings.Contains(r.stdout, "repaired") {
		t.Errorf("second migrate repaired again:\n%s", r.stdout)
	}

	db, err = store.Open(ctx, w.env["YTREND_DB"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if last, err := db.LastChange(ctx); err != nil || !last.Equal(real.Add(time.Hour)) {
		t.Errorf("after: last change %v, %v; want %v", last, err, real.Add(time.Hour))
	}
	// The next real chart replaces the defaced text.
	chart(real.Add(2*time.Hour), store.Video{ID: "defaced0001", Title: "the real title, later", ChannelID: "UC1", ChannelTitle: "c"})
	got := map[string]store.Video{}
	for _, id := range []string{"defaced0001", "onlyfuture1", "oversized01"} {
		v, _, err := db.Video(ctx, id)
		if err == nil {
			got[id] = v
		}
	}
	if v := got["defaced0001"]; v.Title != "the real title, later" {
		t.Errorf("defaced video's title: %q", v.Title)
	}
	if _, ok := got["onlyfuture1"]; ok {
		t.Errorf("a video seen only in the future is still there")
	}
	v := got["oversized01"]
	if len([]rune(v.Title)) != 100 || len(v.Description) != 5000 || len(v.Tags) != 1 || v.ThumbnailURL != "" {
		t.Errorf("oversized video: title %d, description %d, %d tags, thumbnail %q", len([]rune(v.Title)), len(v.Description), len(v.Tags), v.ThumbnailURL)
	}
	// The cut row is indexed as it is now: its cut-off tag is not found.
	for q, want := range map[string]int{strings.Repeat("t", 100): 1, strings.Repeat("y", 400): 0, strings.Repeat("x", 400): 1} {
		hits, err := db.Search(ctx, store.Query{Text: q})
		if err != nil || len(hits) != want {
			t.Errorf("search %.10q...: %d hits, %v; want %d", q, len(hits), err, want)
		}
	}
}
