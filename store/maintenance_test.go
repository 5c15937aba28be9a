package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/store"
)

// segments is IndexSegments or a failed test.
func segments(tb testing.TB, db *store.DB) int {
	tb.Helper()
	n, err := db.IndexSegments(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestOptimize(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	// Each page's index insert writes a segment; automerge keeps a few.
	for p := 0; p < 12; p++ {
		vs := make([]store.Video, 20)
		for i := range vs {
			vs[i] = store.Video{ID: fmt.Sprintf("p%dv%d", p, i), Title: fmt.Sprintf("optimize page%d", p), Description: "some words here"}
		}
		saveChart(t, db, "US", t0.Add(time.Duration(p)*time.Minute), 1, vs...)
	}
	if n := segments(t, db); n < 2 {
		t.Fatalf("%d segments before Optimize; the test needs several", n)
	}
	before := find(t, db, store.Query{Text: "optimize", Limit: 500})
	if err := db.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	if n := segments(t, db); n != 1 {
		t.Errorf("%d segments after Optimize, want 1", n)
	}
	ftsIntegrity(t, db)
	after := find(t, db, store.Query{Text: "optimize", Limit: 500})
	if len(after) != 240 || !slices.Equal(ids(before), ids(after)) {
		t.Errorf("results changed: %d before, %d after", len(before), len(after))
	}
	// Idempotent, and the archive keeps taking pages.
	if err := db.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	saveChart(t, db, "US", t0.Add(time.Hour), 1, store.Video{ID: "late", Title: "optimize late"})
	ftsIntegrity(t, db)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.Optimize(cancelled); err == nil {
		t.Error("Optimize with a cancelled context succeeded")
	}
}

// freePages is the archive's count of pages on SQLite's free list.
func freePages(tb testing.TB, db *store.DB) int {
	tb.Helper()
	var n int
	if err := db.Reader().QueryRow(`PRAGMA freelist_count`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestCompact(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	for p := 0; p < 12; p++ {
		vs := make([]store.Video, 20)
		for i := range vs {
			vs[i] = store.Video{ID: fmt.Sprintf("c%dv%d", p, i), Title: fmt.Sprintf("compact page%d", p), Description: "some words here"}
		}
		saveChart(t, db, "US", t0.Add(time.Duration(p)*time.Minute), 1, vs...)
	}
	// A dropped table leaves its pages free, as a merge leaves the
	// segments it replaced.
	if _, err := db.Writer().Exec(`CREATE TABLE scratch (b BLOB);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO scratch SELECT randomblob(4000) FROM n;
		DROP TABLE scratch`); err != nil {
		t.Fatal(err)
	}
	if n := freePages(t, db); n == 0 {
		t.Fatal("no free page after the merge; the test needs some")
	}
	before := find(t, db, store.Query{Text: "compact", Limit: 500})
	chart, err := db.Chart(ctx, "US", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.Compact(cancelled); err == nil {
		t.Error("Compact with a cancelled context succeeded")
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if n := freePages(t, db); n != 0 {
		t.Errorf("%d free pages after Compact, want 0", n)
	}
	var check string
	if err := db.Reader().QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check after Compact: %q, %v", check, err)
	}
	ftsIntegrity(t, db)
	after := find(t, db, store.Query{Text: "compact", Limit: 500})
	if len(after) != 240 || !slices.Equal(ids(before), ids(after)) {
		t.Errorf("search results changed: %d before, %d after", len(before), len(after))
	}
	again, err := db.Chart(ctx, "US", time.Time{}, 0)
	if err != nil || again.RunID != chart.RunID || len(again.Entries) != len(chart.Entries) {
		t.Errorf("the chart changed: run %d, %d entries; was run %d, %d entries (%v)",
			again.RunID, len(again.Entries), chart.RunID, len(chart.Entries), err)
	}
	// The archive keeps taking pages.
	saveChart(t, db, "US", t0.Add(time.Hour), 1, store.Video{ID: "late", Title: "compact late"})
	ftsIntegrity(t, db)
}

// Compact refuses while another process keeps a heartbeat in the archive:
// it would hold the write lock longer than that process waits for it.
func TestCompactRefusesWhileAnotherProcessWrites(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	saveChart(t, db, "US", t0, 1, store.Video{ID: "a", Title: "compact refused"})

	// A second handle on the file stands for another process: it started a
	// run, so it keeps a heartbeat until it closes.
	other, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.StartRun(ctx, "DE", store.TriggerCLI, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	ids, err := db.OtherWriters(ctx)
	if err != nil || len(ids) != 1 || ids[0] != other.Instance() {
		t.Fatalf("OtherWriters = %v, %v; want [%s]", ids, err, other.Instance())
	}
	if err := db.Compact(ctx); !errors.Is(err, store.ErrArchiveInUse) || !strings.Contains(err.Error(), other.Instance()) {
		t.Fatalf("Compact beside a writer: %v; want ErrArchiveInUse naming %s", err, other.Instance())
	}
	// Each names the other, never itself; a writer that has closed is
	// named by no one.
	if ids, err := other.OtherWriters(ctx); err != nil || len(ids) != 1 || ids[0] != db.Instance() {
		t.Errorf("the other's OtherWriters = %v, %v; want [%s]", ids, err, db.Instance())
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatalf("Compact after the writer closed: %v", err)
	}
}

// An import is a writer too: "ytrend import" stores a batch every moment
// for minutes, and a batch that waits on a compaction's write lock past
// the busy timeout stops the import (SQLITE_BUSY, seen with two real
// processes and a compaction paused for 15 s, as a million-video VACUUM
// takes 30-60 s). So a process that has imported a chart is named by
// OtherWriters, and Compact refuses beside it, as beside a fetch.
func TestCompactRefusesWhileAnotherProcessImports(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	saveChart(t, db, "US", t0, 1, store.Video{ID: "a", Title: "compact refused"})

	importer, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { importer.Close() })
	res, err := importer.ImportChart(ctx, store.ImportedChart{Region: "DE", Pages: []store.Page{{FetchedAt: t0.Add(-24 * time.Hour), FirstRank: 1,
		Videos: []store.Video{{ID: "imported", Title: "an imported day"}}}}})
	if err != nil || res.Skipped {
		t.Fatalf("ImportChart = %+v, %v", res, err)
	}
	if ids, err := db.OtherWriters(ctx); err != nil || len(ids) != 1 || ids[0] != importer.Instance() {
		t.Fatalf("OtherWriters beside an import = %v, %v; want [%s]", ids, err, importer.Instance())
	}
	if err := db.Compact(ctx); !errors.Is(err, store.ErrArchiveInUse) {
		t.Fatalf("Compact beside an import: %v; want ErrArchiveInUse", err)
	}
}
