package sim

import (
	"math"
	"math/rand/v2"
	"strings"
)

// Video IDs encode (day, cohort, index) through a keyed Feistel permutation,
// so that they look like YouTube's 11-character IDs, never repeat, and
// decode back to what generates the video; below, the seeded hashing and
// random helpers every generator uses.

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func (w *world) encodeID(key uint64) string {
	x := w.feistel(key, false)
	var b [11]byte
	for i := range 10 {
		b[i] = idAlphabet[(x>>(58-6*i))&63]
	}
	b[10] = idAlphabet[(x&15)<<2]
	return string(b[:])
}

func (w *world) decodeID(id string) (day, cohort, index int, ok bool) {
	if len(id) != 11 {
		return 0, 0, 0, false
	}
	var x uint64
	for i := range 11 {
		p := strings.IndexByte(idAlphabet, id[i])
		if p < 0 {
			return 0, 0, 0, false
		}
		if i < 10 {
			x = x<<6 | uint64(p)
		} else {
			if p&3 != 0 {
				return 0, 0, 0, false
			}
			x = x<<4 | uint64(p>>2)
		}
	}
	key := w.feistel(x, true)
	if uint32(key) != uint32(mix(w.seed^(key&^0xffffffff))) {
		return 0, 0, 0, false
	}
	day, cohort, index = int(key>>48), int(key>>44&0xf), int(key>>32&0xfff)
	if cohort >= len(cohorts) || index >= cohorts[cohort].perDay {
		return 0, 0, 0, false
	}
	return day, cohort, index, true
}

func (w *world) feistel(x uint64, inverse bool) uint64 {
	l, r := uint32(x>>32), uint32(x)
	const rounds = 4
	for i := range rounds {
		round := i
		if inverse {
			round = rounds - 1 - i
		}
		f := func(v uint32) uint32 { return uint32(mix(uint64(v) ^ w.seed ^ uint64(round+1)*0x9e3779b97f4a7c15)) }
		if !inverse {
			l, r = r, l^f(r)
		} else {
			l, r = r^f(l), l
		}
	}
	return uint64(l)<<32 | uint64(r)
}

// rng is a generator for one thing, seeded from the world's seed and the
// thing's coordinates.
func (w *world) rng(parts ...uint64) *rand.Rand {
	h := w.seed
	for _, p := range parts {
		h = mix(h ^ p)
	}
	return rand.New(rand.NewPCG(h, mix(h^0xda942042e4dd58b5)))
}

// mix is SplitMix64's finalizer: a bijective scramble of 64 bits.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// hashString is FNV-1a.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// gauss maps a hash to a standard normal draw (Box-Muller).
func gauss(h uint64) float64 {
	u1 := max(unit(h), 1e-12)
	u2 := unit(mix(h))
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func pickWeighted(r *rand.Rand, ws []weight) string {
	var total float64
	for _, w := range ws {
		total += w.w
	}
	u := r.Float64() * total
	for _, w := range ws {
		if u < w.w {
			return w.v
		}
		u -= w.w
	}
	return ws[len(ws)-1].v
}

func clamp(x, lo, hi float64) float64 { return max(lo, min(hi, x)) }
