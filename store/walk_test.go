package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/synth"
)

// The default search walks blocks of ids best bound first and stops early;
// --exhaustive scores every match. They must return the same page, scores
// and tie order included, for every sort order and filter: here on 8,000
// synthetic videos charted once a day for two months (eight blocks, and
// freshness that falls by a factor of 300 from the newest to the oldest).
func TestWalkEqualsExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an archive of 8,000 videos")
	}
	ctx := context.Background()
	g := synth.New(synth.Config{Seed: 7, RunEvery: 24 * time.Hour})
	path := filepath.Join(t.TempDir(), "walk.db")
	if raceDetector {
		// Building the archive alone takes a minute under the detector;
		// make test runs this without it, after the race run.
		t.Skip("run without -race (make test does)")
	}
	t.Parallel() // each full-size check builds its own archive
	if _, err := archivetest.Build(ctx, path, g, 8000, nil); err != nil {
		t.Fatal(err)
	}
	probe := &search.WalkProbe{}
	db, err := store.Open(ctx, path, store.WithSearch(search.WithWalkProbe(probe)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	var ranked, total, walks int
	probe.Walked = func(r, b int) { ranked, total, walks = ranked+r, total+b, walks+1 }
	var tested, dropped int
	probe.Tested = func(t, d int) { tested, dropped = tested+t, dropped+d }
	var byIndex [2][2]int // reads of the views index: [in regions][found the page]
	probe.ByIndex = func(regions, found bool) { byIndex[boolIndex(regions)][boolIndex(found)]++ }

	queries := g.Queries(30)
	for i := 0; i < 5; i++ {
		queries = append(queries, g.Word(i), g.Word(i)+" "+g.Word(i+1))
	}
	var newest int64
	if err := db.Reader().QueryRowContext(ctx, `SELECT max(last_seen) FROM video_stats`).Scan(&newest); err != nil {
		t.Fatal(err)
	}
	var channel string
	if err := db.Reader().QueryRowContext(ctx, `SELECT channel_title FROM videos ORDER BY id LIMIT 1`).Scan(&channel); err != nil {
		t.Fatal(err)
	}
	filters := []struct {
		name string
		mod  func(*store.Query)
	}{
		{"none", func(*store.Query) {}},
		{"region", func(q *store.Query) { q.Regions = []regions.Code{"DE", "US"} }},
		{"since", func(q *store.Query) { q.Since = time.UnixMicro(newest).Add(-10 * 24 * time.Hour) }},
		{"channel", func(q *store.Query) { q.Channel = channel }},
		{"category", func(q *store.Query) { q.Categories = []string{"10", "24"} }},
	}
	// One block per range query, so that every skip shows; then the walk's
	// own growing groups.
	stats := map[store.SortOrder][2]int{}
	bounds := map[store.SortOrder][2]int{} // matches tested on their bounds, and dropped
	for _, order := range []store.SortOrder{store.SortRelevance, store.SortRecent, store.SortViews} {
		for _, f := range filters {
			for i, text := range queries {
				probe.Group = 1 - i%2
				q := store.Query{Text: text, Sort: order, Limit: []int{20, 5, 100}[i%3]}
				f.mod(&q)
				before := [4]int{ranked, total, tested, dropped}
				got, err := db.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				st := stats[order]
				stats[order] = [2]int{st[0] + ranked - before[0], st[1] + total - before[1]}
				bt := bounds[order]
				bounds[order] = [2]int{bt[0] + tested - before[2], bt[1] + dropped - before[3]}
				q.Exhaustive = true
				want, err := db.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s, %q, limit %d: walk and exhaustive differ\n walk %v\n  all %v", order, f.name, text, q.Limit, ids(got), ids(want))
				}
			}
		}
	}
	// In views order, a since past every sighting leaves no block to walk:
	// the walk reads none, where ranking in one pass (what weighing the
	// walk against every block of the archive chose) reads every match.
	walksBefore, rankedBefore := walks, ranked
	late, err := db.Search(ctx, store.Query{Text: g.Word(0), Sort: store.SortViews, Limit: 100, Since: time.UnixMicro(newest).Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(late) != 0 || walks != walksBefore+1 || ranked != rankedBefore {
		t.Errorf("views order since past every sighting: %d hits, %d walks ranking %d blocks; want none, one walk, no block",
			len(late), walks-walksBefore, ranked-rankedBefore)
	}
	if walks == 0 {
		t.Fatal("no search walked the blocks")
	}
	// The comparison means something only if the walk skips blocks, and
	// drops matches on their bounds.
	// And the views index read in regions, a page found by it.
	t.Logf("views index: %d reads found the page in regions, %d gave up; without regions %d and %d",
		byIndex[1][1], byIndex[1][0], byIndex[0][1], byIndex[0][0])
	if byIndex[1][1] == 0 {
		t.Error("no search in views order found its page in the views index with regions")
	}
	for order, st := range stats {
		bt := bounds[order]
		t.Logf("%s: ranked %d of %d blocks; dropped %d of %d matches on their bounds", order, st[0], st[1], bt[1], bt[0])
		if st[0] >= st[1] {
			t.Errorf("%s: the walk ranked every block (%d of %d): it never stopped early", order, st[0], st[1])
		}
		if bt[1] == 0 {
			t.Errorf("%s: the walk dropped no match on its bounds (of %d tested)", order, bt[0])
		}
	}
}

// blockBoundsViolated counts videos whose block's bounds do not hold them
// (or that have no block row).
func blockBoundsViolated(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM video_stats s LEFT JOIN video_blocks b ON b.block = s.video >> 10
		WHERE b.block IS NULL OR s.last_seen > b.max_seen OR coalesce(s.views, -1) > b.max_views
		OR (s.best_rank IS NOT NULL AND (b.min_rank IS NULL OR s.best_rank < b.min_rank))`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// video_blocks bounds every video of its block, as pages add videos, re-see
// them higher on a chart, with more views and then fewer, hidden or shown;
// and migration 0008 derives the same bounds for an archive built before it
// (and 0014 the same video_cuts).
func TestVideoBlocksBoundEveryVideo(t *testing.T) {
	db, path := openDB(t)
	var total int
	for d := 0; d < 60; d++ {
		vs := make([]store.Video, 50)
		for i := range vs {
			n := (d*47 + i*61) % 3000 // re-sees some, adds others
			v := store.Video{ID: fmt.Sprintf("v%04d", n), Title: "t", Views: views(int64(1000 + n*(d%3)))}
			if (n+d)%7 == 0 {
				v.Views = nil // hidden
			}
			vs[i] = v
		}
		total += saveChart(t, db, "US", t0.Add(time.Duration(d)*time.Hour+time.Duration(d%5)*time.Minute), 1+d%4*50, vs...).New
	}
	if total < 2100 { // three blocks
		t.Fatalf("only %d videos", total)
	}
	if n := blockBoundsViolated(t, db); n != 0 {
		t.Fatalf("%d videos outside their block's bounds", n)
	}
	// Sightings and ranks only grow better, so the triggers' bounds are the
	// extremes of today's values, as the migration computes them.
	const seenRank = `SELECT block, max_seen, min_rank FROM video_blocks ORDER BY block`
	want := dumpRows(t, db, seenRank)
	if len(want) < 3 {
		t.Fatalf("%d blocks", len(want))
	}
	// video_cuts' entries are a function of today's values: the triggers'
	// and migration 0014's are the same bytes.
	const cutRows = `SELECT part, cuts FROM video_cuts ORDER BY part`
	wantCuts := dumpRows(t, db, cutRows)
	if len(wantCuts) < 8 {
		t.Fatalf("%d parts", len(wantCuts))
	}
	// As an archive from before migration 0008 (and so every later one: 0010's,
	// 0011's and 0012's tables, 0013's index and 0014's table go too).
	if _, err := db.Writer().Exec(`DROP TRIGGER video_blocks_insert; DROP TRIGGER video_blocks_update; DROP TABLE video_blocks;
		DELETE FROM index_upgrades WHERE name = 'glued_words'; DROP TABLE quota_mirror; DROP TABLE data_repairs;
		DROP TRIGGER quota_log_window_insert; DROP TRIGGER quota_log_window_delete; DROP TRIGGER quota_log_window_update;
		DROP TABLE quota_window; DROP INDEX video_stats_views;
		DROP TRIGGER video_cuts_insert; DROP TRIGGER video_cuts_update; DROP TRIGGER video_cuts_delete; DROP TABLE video_cuts;
		DELETE FROM schema_migrations WHERE version >= 8`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := blockBoundsViolated(t, db); n != 0 {
		t.Fatalf("after the migration: %d videos outside their block's bounds", n)
	}
	if got := dumpRows(t, db, seenRank); !slices.Equal(got, want) {
		t.Errorf("the migration's bounds\n%v\nthe triggers'\n%v", got, want)
	}
	if got := dumpRows(t, db, cutRows); !slices.Equal(got, wantCuts) {
		t.Errorf("migration 0014's video_cuts differ from the triggers'")
	}
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
