package store_test

import (
	"context"
	"fmt"
	"slices"
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
