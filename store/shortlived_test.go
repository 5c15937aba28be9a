package store_test

import (
	"context"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/ytrend/ytrend/store"
)

// Every way of opening an archive answers a search alike: a short-lived
// open (one connection, each statement prepared in the transaction of the
// search that runs it) and a server's read-only open with a search pool of
// one connection (a statement a search runs for the first time is prepared
// in its transaction too, where preparing on the pool would wait for the
// connection the transaction holds; the engine then keeps it) answer the
// random queries of TestWalkRandomEqualsExhaustive, of every shape, as the
// open that wrote the archive does. Each query runs twice on each, the
// second time with the statements the first kept.
func TestSearchAlikeThroughEveryOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an archive")
	}
	if raceDetector {
		// One goroutine's searches, one after the other: nothing for the
		// detector (TestSearchDuringWrites runs searches beside writes), and
		// two minutes under it. make test runs it without.
		t.Skip("run without -race (make test does)")
	}
	t.Parallel() // each full-size check builds its own archive
	ctx := context.Background()
	db, path := openDB(t)
	randArchive(t, db, 5, 7000)
	var newestUS int64
	if err := db.Reader().QueryRow(`SELECT max(last_seen) FROM video_stats`).Scan(&newestUS); err != nil {
		t.Fatal(err)
	}
	opens := []struct {
		name string
		opts []store.Option
	}{
		{"short-lived", []store.Option{store.ReadOnly(), store.ShortLived()}},
		{"short-lived, migrating", []store.Option{store.ShortLived()}},
		{"read-only, one searcher", []store.Option{store.ReadOnly(), store.WithSearchers(1)}},
	}
	dbs := make([]*store.DB, len(opens))
	for i, o := range opens {
		d, err := store.Open(ctx, path, o.opts...)
		if err != nil {
			t.Fatalf("open %s: %v", o.name, err)
		}
		t.Cleanup(func() { d.Close() })
		dbs[i] = d
	}
	nq := 150
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < nq; i++ {
		q := randQuery(rng, time.UnixMicro(newestUS))
		q.Exhaustive = rng.Intn(8) == 0
		want, err := db.Search(ctx, q)
		if err != nil {
			t.Fatalf("query %+v: %v", q, err)
		}
		for j, d := range dbs {
			for round := 1; round <= 2; round++ {
				// A search waiting for a connection it holds would never
				// end: the deadline turns that into an error.
				sctx, cancel := context.WithTimeout(ctx, time.Minute)
				got, err := d.Search(sctx, q)
				cancel()
				if err != nil {
					t.Fatalf("%s, round %d, query %+v: %v", opens[j].name, round, q, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, round %d, query %+v:\n got %d %v\nwant %d %v", opens[j].name, round, q, len(got), ids(got), len(want), ids(want))
				}
			}
		}
	}
}
