package search

import (
	"math/rand/v2"
	"testing"
)

// idRanges covers exactly the blocks asked for and the gaps it closes, never
// closes a gap over a block already ranked, and keeps to the limit when it
// may close any gap.
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
		limit := 1 + r.IntN(8)
		ranges, filled := idRanges(blocks, limit, func(b int64) bool { return done[b] })
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
		if len(done) == 0 && len(ranges) > limit {
			t.Fatalf("%d ranges, limit %d", len(ranges), limit)
		}
	}
}
