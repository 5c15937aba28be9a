package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ytrend/ytrend/store"
)

// segments decodes the number of segments from FTS5's structure record
// (fts5_index.c: a 4-byte cookie, an optional 4-byte version-2 marker, then
// varints nLevel, nSegment, ...).
func segments(tb testing.TB, db *store.DB) int {
	tb.Helper()
	var b []byte
	if err := db.Reader().QueryRow(`SELECT block FROM video_fts_data WHERE id = 10`).Scan(&b); err != nil {
		tb.Fatal(err)
	}
	p := 4
	if len(b) >= 8 && b[4] == 0xff && b[5] == 0 && b[6] == 0 && b[7] == 1 {
		p += 4
	}
	varint := func() int {
		v := 0
		for i := 0; i < 9; i++ {
			c := b[p]
			p++
			v = v<<7 | int(c&0x7f)
			if c&0x80 == 0 {
				break
			}
		}
		return v
	}
	varint() // levels
	return varint()
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
	before := search(t, db, store.Query{Text: "optimize", Limit: 500})
	if err := db.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	if n := segments(t, db); n != 1 {
		t.Errorf("%d segments after Optimize, want 1", n)
	}
	ftsIntegrity(t, db)
	after := search(t, db, store.Query{Text: "optimize", Limit: 500})
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
