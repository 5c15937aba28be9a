package search

import (
	"sync"
	"testing"
)

// Every search finds its own rankState by its id, concurrently, past the
// table's slots too; a released id finds nothing, even once another search
// has its slot.
func TestRankStatesByID(t *testing.T) {
	const n = 3 << rankSlotBits // three times the slots: most go to the map
	states := make([]*rankState, n)
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		states[i] = &rankState{limit: i}
		wg.Go(func() { ids[i] = registerRankState(states[i]) })
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, id := range ids {
		if seen[id] {
			t.Fatalf("id %d given twice", id)
		}
		seen[id] = true
		if got := rankStateOf(id); got != states[i] {
			t.Fatalf("state %d (id %d): found %p, want %p", i, id, got, states[i])
		}
	}
	for _, id := range ids {
		wg.Go(func() { releaseRankState(id) })
	}
	wg.Wait()
	for _, id := range ids {
		if got := rankStateOf(id); got != nil {
			t.Fatalf("released id %d still finds a state", id)
		}
	}
	// The slots are reused: the old ids still find nothing.
	again := &rankState{}
	id := registerRankState(again)
	defer releaseRankState(id)
	if id <= 0 {
		t.Fatalf("a search after all were released got a map id %d, not a slot", id)
	}
	for _, old := range ids {
		if got := rankStateOf(old); got != nil {
			t.Fatalf("released id %d finds the state of id %d", old, id)
		}
	}
	if rankStateOf(id) != again || rankStateOf(nil) != nil || rankStateOf("x") != nil {
		t.Fatal("lookup of a live id, NULL or a text")
	}
}

// The table boost reads is the formula's, at every rank a chart holds and
// past it.
func TestChartTableIsTheFormula(t *testing.T) {
	for r := -2; r < 400; r++ {
		if got, want := chartOf(r), chartTerm(r); got != want {
			t.Fatalf("rank %d: %v, want %v", r, got, want)
		}
	}
	if chartOf(1) != 1 || chartOf(0) != 0 || chartOf(200) != 0 || chartOf(14) <= chartOf(15) {
		t.Fatalf("chart terms: 1 %v, 0 %v, 200 %v", chartOf(1), chartOf(0), chartOf(200))
	}
}
