package search

import (
	"math/rand/v2"
	"testing"
)

// idRanges covers exactly the blocks asked for and the gaps it closes, never
// closes a gap over a block already ranked or wider than maxGap, and closes
// every other gap.
func TestIDRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		var blocks []int64
		want := map[int64]bool{}
		for i := r.IntN(40); i >= 0; i-- {
			b := r.Int64N(200)
			blocks = append(blocks, b)
			want[b] = true
		}
		done := map[int64]bool{}
		if iter%2 == 1 {
			for i := r.IntN(30); i >= 0; i-- {
				if b := r.Int64N(200); !want[b] {
					done[b] = true
				}
			}
		}
		maxGap := int64(r.IntN(12))
		ranges, filled := idRanges(blocks, maxGap, func(b int64) bool { return done[b] })
		for _, b := range filled {
			if want[b] || done[b] {
				t.Fatalf("filled block %d was asked for or done", b)
			}
			want[b] = true
		}
		covered := map[int64]bool{}
		for i, rg := range ranges {
			if rg[0] > rg[1] || (-rg[1])%(1<<blockShift) != 0 || (-rg[0]+1)%(1<<blockShift) != 0 {
				t.Fatalf("range %v is not whole blocks", rg)
			}
			if i > 0 && ranges[i-1][0] <= rg[1] {
				t.Fatalf("ranges %v overlap or are out of order", ranges)
			}
			for id := -rg[1]; id <= -rg[0]; id += 1 << blockShift {
				covered[id>>blockShift] = true
			}
		}
		if len(covered) != len(want) {
			t.Fatalf("covered %d blocks, want %d", len(covered), len(want))
		}
		for b := range want {
			if !covered[b] {
				t.Fatalf("block %d not covered", b)
			}
		}
		for i := 1; i < len(ranges); i++ {
			// The gap between two ranges, in blocks: left open only if
			// wide or holding a block already ranked.
			first, last := (-ranges[i-1][0]+1)>>blockShift, (-ranges[i][1])>>blockShift-1
			if first > last {
				t.Fatalf("ranges %v touch: not merged", ranges)
			}
			holdsDone := false
			for b := first; b <= last; b++ {
				holdsDone = holdsDone || done[b]
			}
			if last-first+1 <= maxGap && !holdsDone {
				t.Fatalf("gap %d-%d (maxGap %d) left open: %v", first, last, maxGap, ranges)
			}
		}
	}
}

// viewsIndexFrom is where viewsIndexPays starts to hold, and it holds from
// there on: a walk in several regions counts matches only up to it, and
// reads the views index once the count reaches it.
func TestViewsIndexFrom(t *testing.T) {
	for _, videos := range []int64{0, 500, 8000, 1_000_000} {
		for _, share := range []float64{0.01, 0.1, 0.5, 1} {
			inRegions := share * float64(videos)
			for _, limit := range []int{1, 20, 500} {
				from := viewsIndexFrom(inRegions, limit, videos)
				if from < walkProbe {
					t.Fatalf("videos %d, in regions %g, limit %d: from %d is under walkProbe", videos, inRegions, limit, from)
				}
				for _, n := range []int{from - 1, from, from + 1, 2 * from, int(videos)} {
					if want := n >= from; n >= walkProbe && n <= int(videos) && viewsIndexPays(float64(n), inRegions, limit, videos) != want {
						t.Errorf("videos %d, in regions %g, limit %d, n %d: pays %v, from %d", videos, inRegions, limit, n, !want, from)
					}
				}
			}
		}
	}
	// Fewer videos in the regions, fewer MATCH tests: the index pays sooner.
	if a, b := viewsIndexFrom(10_000, 20, 1_000_000), viewsIndexFrom(1_000_000, 20, 1_000_000); a >= b {
		t.Errorf("from %d with 1%% of the videos in the regions, %d with all of them", a, b)
	}
}
