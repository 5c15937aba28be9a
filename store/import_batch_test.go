package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// A batch of charts in one transaction indexes each new or changed video
// once, as it is at the batch's end: a video whose title changes twice in
// the batch and that reaches a second region is found by its last title and
// both regions, not by the titles in between, and the index stays whole.
func TestImportChartsBatchIndexesOnce(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	old := vid("old", "Original ballad", 5)
	saveChart(t, db, "US", t0, 1, old) // indexed before the batch
	day := func(d int) time.Time { return t0.Add(time.Duration(d) * 24 * time.Hour) }
	chart := func(region string, d int, vs ...store.Video) store.ImportedChart {
		return store.ImportedChart{Region: regions.Code(region), Pages: []store.Page{{FetchedAt: day(d), FirstRank: 1, Videos: vs}}}
	}
	v1, v2, v3 := vid("new", "First kazoo title", 1), vid("new", "Second oboe title", 2), vid("new", "Third tuba title", 3)
	o1, o2 := vid("old", "Renamed cello ballad", 6), vid("old", "Renamed again harp ballad", 7)
	batch := []store.ImportedChart{
		chart("US", 1, v1, o1),
		chart("US", 2, v2, o2),
		{Region: "GB", Pages: []store.Page{{FetchedAt: day(3), FirstRank: 1, Videos: []store.Video{v3, o2}}}},
		chart("US", 2, v2), // the same chart twice in a batch: skipped
	}
	before := store.FTSWrites(db)
	res, err := db.ImportCharts(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []bool
	for _, r := range res {
		skipped = append(skipped, r.Skipped)
	}
	if !slices.Equal(skipped, []bool{false, false, false, true}) || res[0].New != 1 || res[1].Updated != 2 {
		t.Errorf("results %+v", res)
	}
	// One removal of "old"'s original text, and one insert for the batch.
	if n := store.FTSWrites(db) - before; n != 2 {
		t.Errorf("%d statements wrote the index, want 2", n)
	}
	ftsIntegrity(t, db)
	for q, want := range map[string][]string{
		"tuba": {"new"}, "kazoo": nil, "oboe": nil,
		"harp": {"old"}, "cello": nil, "original": nil,
	} {
		hits, err := db.Search(ctx, store.Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("search %q: %v, want %v", q, got, want)
		}
	}
	for _, region := range []string{"US", "GB"} {
		hits, err := db.Search(ctx, store.Query{Text: "title", Regions: []regions.Code{regions.Code(region)}})
		if err != nil || len(hits) != 1 || hits[0].VideoID != "new" {
			t.Errorf("search title in %s: %v, %v", region, ids(hits), err)
		}
	}
}
