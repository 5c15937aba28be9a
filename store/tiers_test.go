package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
)

// tierFacetsWrong counts, over every rank tier, the videos the index finds
// by the tier's facet that are not charted within it, and those charted
// within it that it does not find (the walk would skip them: a search
// would miss them). The facets must match the best rank exactly here: only a
// repair, which none of these tests runs, can leave one beyond its rank.
func tierFacetsWrong(t *testing.T, db *store.DB) int {
	t.Helper()
	var wrong int
	for _, tier := range search.RankTiers {
		var n int
		if err := db.Reader().QueryRow(`WITH faceted AS (SELECT -rowid AS video FROM video_fts WHERE video_fts MATCH ?1),
			charted AS (SELECT video FROM video_stats WHERE best_rank <= ?2)
			SELECT (SELECT count(*) FROM faceted WHERE video NOT IN charted) + (SELECT count(*) FROM charted WHERE video NOT IN faceted)`,
			`facets : "`+search.TierFacet(tier)+`"`, tier).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("tier %d: %d videos with the wrong facet", tier, n)
		}
		wrong += n
	}
	return wrong
}

// A video gains the facet of each rank tier when its best rank first falls
// within it, whatever else the page changes: re-seen in the same region,
// first seen in another, on a page older than its newest sighting, with
// new text. A worse rank later takes nothing away.
func TestTierFacetsFollowBestRank(t *testing.T) {
	db, _ := openDB(t)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	filler := func(h, n int) []store.Video {
		vs := make([]store.Video, n)
		for i := range vs {
			vs[i] = vid(fmt.Sprintf("f%d_%d", h, i), "filler song", int64(100+i))
		}
		return vs
	}
	steps := []struct {
		name   string
		region regions.Code
		h      int // hour of the page
		rank   int // of "a" (after rank-1 fillers)
		title  string
	}{
		{"first seen below every tier", "US", 1, 45, "alpha"},
		{"re-seen within 30", "US", 2, 25, "alpha"},
		{"re-seen lower: nothing changes", "US", 3, 40, "alpha"},
		{"first seen in another region, within 10", "DE", 4, 9, "alpha"},
		{"an older page, within 3", "US", 0, 3, "alpha"},
		{"new text, same tiers", "US", 5, 2, "alpha beta"},
	}
	for _, s := range steps {
		vs := append(filler(s.h, s.rank-1), vid("a", s.title, 1000))
		saveChart(t, db, s.region, at(s.h), 1, vs...)
		if tierFacetsWrong(t, db) != 0 {
			t.Fatalf("after %q", s.name)
		}
		ftsIntegrity(t, db)
	}
	// A new video charted high carries its tiers from the start.
	saveChart(t, db, "GB", at(6), 1, vid("b", "gamma", 10))
	if tierFacetsWrong(t, db) != 0 {
		t.Fatal("after a new video at rank 1")
	}
	ftsIntegrity(t, db)
}

// An import's batch indexes its videos once, at its end: a video new in the
// batch and one indexed before it gain their tiers however often their rank
// improves within the batch, and in a later one.
func TestTierFacetsOnImport(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	saveChart(t, db, "US", t0, 40, vid("old", "Original ballad", 5)) // indexed before the batch
	day := func(d int) time.Time { return t0.Add(time.Duration(d) * 24 * time.Hour) }
	chart := func(region string, d, rank int, vs ...store.Video) store.ImportedChart {
		return store.ImportedChart{Region: regions.Code(region), Pages: []store.Page{{FetchedAt: day(d), FirstRank: rank, Videos: vs}}}
	}
	old, nu := vid("old", "Original ballad", 6), vid("new", "Kazoo", 1)
	if _, err := db.ImportCharts(ctx, []store.ImportedChart{
		chart("US", 1, 28, nu, old), // new: 28; old: 29
		chart("US", 2, 9, old, nu),  // old: 9; new: 10
		chart("GB", 3, 2, nu),       // new: 2, in a new region
		chart("US", 4, 50, old, nu), // worse: nothing changes
		chart("DE", 5, 1, vid("x", "Oboe", 1)),
	}); err != nil {
		t.Fatal(err)
	}
	if tierFacetsWrong(t, db) != 0 {
		t.Fatal("after the first batch")
	}
	ftsIntegrity(t, db)
	if _, err := db.ImportCharts(ctx, []store.ImportedChart{chart("US", 6, 1, old)}); err != nil {
		t.Fatal(err)
	}
	if tierFacetsWrong(t, db) != 0 {
		t.Fatal("after the second batch")
	}
	ftsIntegrity(t, db)
}

// Migration 0014 gives the rows stored before it their tiers.
func TestTierFacetsMigration(t *testing.T) {
	db, path := openDB(t)
	for d := 0; d < 30; d++ {
		vs := make([]store.Video, 50)
		for i := range vs {
			n := (d*47 + i*61) % 400 // re-sees some, adds others
			vs[i] = vid(fmt.Sprintf("v%03d", n), fmt.Sprintf("song %d", n%7), int64(n))
		}
		saveChart(t, db, []regions.Code{"US", "DE"}[d%2], t0.Add(time.Duration(d)*time.Hour), 1+d%3*25, vs...)
	}
	if tierFacetsWrong(t, db) != 0 {
		t.Fatal("before the migration")
	}
	// As an archive from before migration 0014: the index and the rows
	// without tier facets (they follow the channel and region facets).
	var tiered int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM video_stats WHERE best_rank <= 30`).Scan(&tiered); err != nil || tiered < 50 {
		t.Fatalf("%d videos within a tier, %v", tiered, err)
	}
	if _, err := db.Writer().Exec(`
		INSERT INTO video_fts (video_fts, rowid, title, tags, channel_title, description, title_grams, facets)
			SELECT 'delete', fkey, title, tags, channel_title, description, title_grams, facets FROM videos ORDER BY fkey;
		UPDATE videos SET facets = substr(facets, 1, instr(facets || ' ' || char(64976) || 't', ' ' || char(64976) || 't') - 1);
		INSERT INTO video_fts (rowid, title, tags, channel_title, description, title_grams, facets)
			SELECT fkey, title, tags, channel_title, description, title_grams, facets FROM videos ORDER BY fkey;
		DELETE FROM schema_migrations WHERE version >= 14`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM videos WHERE instr(facets, char(64976) || 't') > 0`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d rows keep tier facets, %v", left, err)
	}
	db.Close()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if tierFacetsWrong(t, db) != 0 {
		t.Fatal("after the migration")
	}
	ftsIntegrity(t, db)
}
