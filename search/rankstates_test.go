package search_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/synth"
)

// The three SQL functions find a search's rankState by its id: in the
// table's slots, or past its 1,024 searches at once in the map (negative
// ids). A search whose state is not found is still answered (every match
// kept, scored 0): only the page tells. So with every slot held, searches
// run concurrently must give the pages they gave with slots free, and
// their walks must test as many matches on their bounds (ytrend_pass found
// the state); and again while the slots are freed under them.
func TestSearchesPastTheRankTable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an archive of 1,200 videos")
	}
	ctx := context.Background()
	g := synth.New(synth.Config{Seed: 11, RunEvery: 24 * time.Hour})
	path := filepath.Join(t.TempDir(), "a.db")
	if _, err := archivetest.Build(ctx, path, g, 1200, nil); err != nil {
		t.Fatal(err)
	}
	var tested atomic.Int64
	probe := &search.WalkProbe{Tested: func(n, _ int) { tested.Add(int64(n)) }}
	db, err := store.Open(ctx, path, store.ReadOnly(), store.WithSearchers(8), store.WithSearch(search.WithWalkProbe(probe)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	var qs []store.Query
	for _, w := range g.Words()[:12] {
		for _, sort := range []store.SortOrder{store.SortRelevance, store.SortRecent, store.SortViews} {
			qs = append(qs, store.Query{Text: w, Sort: sort, Limit: 5})
		}
	}
	runAll := func() [][]store.Hit {
		t.Helper()
		out := make([][]store.Hit, len(qs))
		var wg sync.WaitGroup
		for i, q := range qs {
			wg.Go(func() {
				h, err := db.Search(ctx, q)
				if err != nil {
					t.Error(err)
				}
				out[i] = h
			})
		}
		wg.Wait()
		return out
	}
	compare := func(when string, got, want [][]store.Hit) {
		t.Helper()
		for i := range qs {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: %q by %s: %s, want %s", when, qs[i].Text, qs[i].Sort, page(got[i]), page(want[i]))
			}
		}
	}

	tested.Store(0)
	want := runAll()
	base := tested.Load()
	if base == 0 {
		t.Fatal("no walk tested a match on its bounds: the test cannot tell a state not found")
	}
	for i, q := range qs {
		ex := q
		ex.Exhaustive = true
		if h := find(t, db, ex); !reflect.DeepEqual(h, want[i]) {
			t.Fatalf("%q by %s: %s, exhaustive %s", q.Text, q.Sort, page(want[i]), page(h))
		}
	}

	release := search.HoldRankStates(100)
	tested.Store(0)
	compare("every slot held", runAll(), want)
	if got := tested.Load(); got != base {
		t.Errorf("every slot held: %d matches tested on their bounds, %d with slots free", got, base)
	}

	// Slots freed while searches past the table run.
	tested.Store(0)
	var got [][]store.Hit
	done := make(chan struct{})
	go func() { defer close(done); got = runAll() }()
	release()
	<-done
	compare("slots freed under way", got, want)
	if n := tested.Load(); n != base {
		t.Errorf("slots freed under way: %d matches tested on their bounds, %d with slots free", n, base)
	}
}

func page(hs []store.Hit) string {
	s := ""
	for _, h := range hs {
		s += fmt.Sprintf(" %s/%.6g", h.VideoID, h.Score)
	}
	return "[" + s + " ]"
}
