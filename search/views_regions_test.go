package search_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Sorted by views over several regions, the page is exactly what ranking
// every match gives: whatever the number of regions, with regions that
// hold nothing, regions whose videos cluster in ids (one region's charts
// written after another's, as `ytrend import` of one file per region
// does), view counts that tie across the page's edge and hidden ones. The
// search counts the regions' matches through their facets, ranks only
// the most viewed of them in one pass, or walks the blocks in views
// order: each way must agree with Query.Exhaustive.
func TestViewsOverRegionsEqualsExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an archive")
	}
	db, _ := openDB(t)
	rng := rand.New(rand.NewSource(7))
	populated := []regions.Code{"US", "DE", "JP", "FR", "GB"}
	views := func() *int64 {
		switch rng.Intn(8) {
		case 0:
			return nil
		case 1, 2:
			v := int64(rng.Intn(4)) * 1000 // ties
			return &v
		default:
			v := int64(rng.Intn(1_000_000))
			return &v
		}
	}
	n := 0
	for ri, r := range populated {
		// Regions of different sizes, one after another in ids.
		for day := range 2 + ri {
			at := t0.Add(time.Duration(ri*10+day) * 24 * time.Hour)
			vs := make([]store.Video, 200)
			for i := range vs {
				desc := "desc common words"
				if n%17 == 0 {
					desc += " rare"
				}
				vs[i] = store.Video{ID: fmt.Sprintf("v%010d", n), Title: fmt.Sprintf("music video %d", n),
					Description: desc, ChannelID: fmt.Sprintf("UC%d", n%40), ChannelTitle: "c", Views: views()}
				n++
			}
			saveChart(t, db, r, at, 1, vs...)
		}
	}
	// A video charted in two regions: its best rank and last sighting are
	// those of the regions asked for.
	for _, r := range []regions.Code{"US", "JP"} {
		v := int64(999_999_999)
		saveChart(t, db, r, t0.Add(90*24*time.Hour), 1, store.Video{ID: "both0000001", Title: "music video both",
			Description: "desc rare", ChannelID: "UC1", ChannelTitle: "c", Views: &v})
	}
	pool := append([]regions.Code{"AE", "AT", "BR", "ZA"}, populated...) // the first four hold nothing
	queries := 300
	if raceDetector {
		queries = 30
	}
	for i := range queries {
		q := store.Query{Sort: store.SortViews}
		q.Text = []string{"desc", "rare", "music desc", "nothing"}[rng.Intn(4)]
		q.Limit = []int{1, 2, 5, 20, 50, 200}[rng.Intn(6)]
		perm := rng.Perm(len(pool))
		for _, j := range perm[:1+rng.Intn(len(pool))] {
			q.Regions = append(q.Regions, pool[j])
		}
		switch rng.Intn(6) {
		case 0:
			q.Since = t0.Add(time.Duration(rng.Intn(60)) * 24 * time.Hour)
		case 1:
			q.Channel = "UC1" + fmt.Sprint(rng.Intn(4))
		}
		got := find(t, db, q)
		q.Exhaustive = true
		want := find(t, db, q)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d %+v:\n got %v\nwant %v", i, q, ids(got), ids(want))
		}
	}
}
