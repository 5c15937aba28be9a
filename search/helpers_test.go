package search_test

import (
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// The engine is tested through the archive it searches: a real store in
// t.TempDir(), written as a fetch writes it (testkit/archivetest).

// t0 is the fixtures' clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openDB(tb testing.TB) (*store.DB, string) { tb.Helper(); return archivetest.Open(tb) }

func saveChart(tb testing.TB, db *store.DB, region regions.Code, at time.Time, firstRank int, vs ...store.Video) {
	tb.Helper()
	archivetest.SaveChart(tb, db, region, at, firstRank, vs...)
}

func find(tb testing.TB, db *store.DB, q store.Query) []store.Hit {
	tb.Helper()
	return archivetest.Search(tb, db, q)
}

func ids(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.VideoID
	}
	return out
}
