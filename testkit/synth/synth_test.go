package synth_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/synth"
)

// The n-th video is a pure function of the seed and n, whatever was asked
// before; another seed gives other videos.
func TestDeterministic(t *testing.T) {
	a, b := synth.New(synth.Config{Seed: 7}), synth.New(synth.Config{Seed: 7})
	for _, n := range []int{500, 3, 0, 99999} {
		if va, vb := a.Video(n), b.Video(n); !reflect.DeepEqual(va, vb) {
			t.Errorf("video %d differs between two generators of one seed", n)
		}
	}
	if reflect.DeepEqual(a.Video(1), synth.New(synth.Config{Seed: 8}).Video(1)) {
		t.Error("seeds 7 and 8 give the same video")
	}
	if !reflect.DeepEqual(a.Queries(50), b.Queries(50)) {
		t.Error("queries differ")
	}
	var ra, rb []synth.Run
	for r := range a.Runs(2000) {
		ra = append(ra, r)
	}
	for r := range b.Runs(2000) {
		rb = append(rb, r)
	}
	if !reflect.DeepEqual(ra, rb) {
		t.Error("runs differ")
	}
	if a.String() != b.String() || !strings.Contains(a.String(), fmt.Sprintf("v%d-", synth.Version)) {
		t.Errorf("cache key %q", a.String())
	}
}

func TestVideoShape(t *testing.T) {
	g := synth.New(synth.Config{Seed: 1})
	if n := len(g.Words()); n != 20000 {
		t.Errorf("%d words", n)
	}
	var scripts [4]int
	ids := map[string]bool{}
	const n = 5000
	for i := 0; i < n; i++ {
		v := g.Video(i)
		s := g.ScriptOf(i)
		scripts[s]++
		if len(v.ID) != 11 || ids[v.ID] {
			t.Fatalf("video %d id %q (dup %v)", i, v.ID, ids[v.ID])
		}
		ids[v.ID] = true
		if len(v.Tags) != 5 || v.ChannelID == "" || v.ChannelTitle == "" || v.Views == nil || v.PublishedAt.IsZero() {
			t.Fatalf("video %d incomplete: %+v", i, v)
		}
		words := len(strings.Fields(v.Title))
		if s == synth.Latin && (words < 5 || words > 12) {
			t.Errorf("title of %d words: %q", words, v.Title)
		}
		unspaced := s == synth.Japanese || s == synth.Chinese
		if d := len(strings.Fields(v.Description)); !unspaced && (d < 30 || d > 150) || unspaced && (d < 10 || d > 50) {
			t.Errorf("description of %d space-separated parts (script %d)", d, s)
		}
		if unspaced && !strings.Contains(v.Description, "。") {
			t.Errorf("script %d description without sentences: %q", s, v.Description)
		}
		if unspaced && !strings.ContainsFunc(v.Tags[0], func(r rune) bool { return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Katakana, r) }) {
			t.Errorf("script %d tag %q", s, v.Tags[0])
		}
		switch s {
		case synth.Devanagari:
			if !strings.ContainsFunc(v.Title, func(r rune) bool { return unicode.Is(unicode.Devanagari, r) }) {
				t.Errorf("Devanagari video title %q", v.Title)
			}
		case synth.Japanese:
			if strings.Contains(v.Title, " ") || !strings.ContainsFunc(v.Title, func(r rune) bool { return unicode.In(r, unicode.Han, unicode.Katakana) }) {
				t.Errorf("Japanese video title %q", v.Title)
			}
		case synth.Chinese:
			if strings.Contains(v.Title, " ") || !strings.ContainsFunc(v.Title, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
				t.Errorf("Chinese video title %q", v.Title)
			}
		}
	}
	// 8%, 8% and 4%, within sampling noise.
	for s, want := range map[synth.Script]float64{synth.Devanagari: 0.08, synth.Japanese: 0.08, synth.Chinese: 0.04} {
		if share := float64(scripts[s]) / n; share < want-0.02 || share > want+0.02 {
			t.Errorf("script %d share %.3f, want about %.2f", s, share, want)
		}
	}
	// Zipf: the most frequent word is far more common than the 1000th.
	count := func(w string) int {
		c := 0
		for i := 0; i < 2000; i++ {
			for _, f := range strings.Fields(g.Video(i).Description) {
				if f == w {
					c++
				}
			}
		}
		return c
	}
	if top, mid := count(g.Word(0)), count(g.Word(1000)); top < 50*max(mid, 1) {
		t.Errorf("word 0 appears %d times, word 1000 %d: not Zipf-like", top, mid)
	}
}

func TestRuns(t *testing.T) {
	g := synth.New(synth.Config{Seed: 1})
	seen := map[string]bool{}
	newVideos, runs := 0, 0
	for r := range g.Runs(3000) {
		runs++
		if len(r.Pages) == 0 || len(r.Pages) > 4 {
			t.Fatalf("run with %d pages", len(r.Pages))
		}
		inRun := map[string]bool{}
		for i, p := range r.Pages {
			if p.Kind != store.PageChart || p.Region != r.Region || p.FirstRank != 1+50*i || len(p.Videos) > 50 || p.FetchedAt.Before(r.At) {
				t.Fatalf("page %d of run %d: %+v", i, runs, p)
			}
			for _, v := range p.Videos {
				if inRun[v.ID] {
					t.Fatalf("video %s twice in one run", v.ID)
				}
				inRun[v.ID] = true
				if !seen[v.ID] {
					seen[v.ID] = true
					newVideos++
				}
			}
		}
	}
	if newVideos != 3000 {
		t.Errorf("%d distinct videos, want 3000", newVideos)
	}
	if runs < 15 || runs > 25 { // 200 per chart, ~70% new
		t.Errorf("%d runs for 3000 videos", runs)
	}
}
