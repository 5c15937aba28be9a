package sim

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

var slotRE = regexp.MustCompile(`\{[a-zA-Z0-9]+\}`)

// Every slot of every template resolves to a word: no "{team}" or slot name
// ever reaches a title.
func TestTemplatesResolve(t *testing.T) {
	special := map[string]bool{"n": true, "year": true, "amount": true, "artist": true, "artist2": true, "slug": true,
		"handle": true, "title": true, "channel": true, "first2": true, "last2": true, "team2": true}
	for lang, lex := range lexicons() {
		var templates []string
		for _, ts := range lex.titles {
			templates = append(templates, ts...)
		}
		for _, ts := range lex.channels {
			templates = append(templates, ts...)
		}
		for _, ts := range lex.descs {
			templates = append(templates, ts...)
		}
		templates = append(templates, lex.follow...)
		for _, tmpl := range templates {
			for _, slot := range slotRE.FindAllString(tmpl, -1) {
				name := strings.Trim(slot, "{}")
				_, inLex := lex.words[name]
				_, inShared := shared[name]
				if !special[name] && !inLex && !inShared {
					t.Errorf("%s: %q uses {%s}, which no list fills", lang, tmpl, name)
				}
			}
		}
		for _, cat := range []string{catFilm, catMusic, catSports, catGaming, catPeople, catComedy, catEntertainment, catNews, catHowto, catScience} {
			if len(lex.titles[cat]) == 0 {
				t.Errorf("%s has no titles for category %s", lang, cat)
			}
		}
		if len(lex.amounts) == 0 || len(lex.audio) == 0 || len(lex.descs[""]) == 0 {
			t.Errorf("%s lacks amounts, audio languages or descriptions", lang)
		}
	}
	w := newWorld(3, time.Hour)
	d := dayNumber(t0)
	for _, v := range w.dayLocked(d) {
		for _, text := range append([]string{v.title, v.description, v.ch.title}, v.tags...) {
			if strings.ContainsAny(text, "{}") {
				t.Errorf("%s: unfilled template in %q", v.id, text)
			}
		}
		if v.title == "" || len([]rune(v.title)) > 100 || len([]rune(v.description)) > 5000 {
			t.Errorf("%s: title %q (%d runes)", v.id, v.title, len([]rune(v.title)))
		}
		if v.ch.handle == "" || strings.Trim(v.ch.handle, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
			t.Errorf("%s: handle %q is not a lower-case ASCII slug", v.ch.title, v.ch.handle)
		}
	}
}

// IDs look like YouTube's and decode back to their video; nothing else
// decodes.
func TestVideoIDs(t *testing.T) {
	w := newWorld(11, time.Hour)
	last := regexp.MustCompile(`^[A-Za-z0-9_-]{10}[AEIMQUYcgkosw048]$`)
	d := dayNumber(t0)
	vs := w.dayLocked(d)
	seen := map[string]bool{}
	for _, v := range vs {
		if !last.MatchString(v.id) {
			t.Errorf("ID %q is not shaped like YouTube's", v.id)
		}
		if seen[v.id] {
			t.Errorf("ID %q issued twice", v.id)
		}
		seen[v.id] = true
		day, k, i, ok := w.decodeID(v.id)
		if !ok || day != d || k != v.cohort || w.lookup(v.id, t0.Add(24*time.Hour)) != v {
			t.Errorf("%q decodes to day %d cohort %d index %d ok %v", v.id, day, k, i, ok)
		}
		if !strings.HasPrefix(v.ch.id, "UC") || len(v.ch.id) != 24 || !strings.ContainsAny(v.ch.id[23:], "AQgw") {
			t.Errorf("channel ID %q is not shaped like YouTube's", v.ch.id)
		}
	}
	other := newWorld(12, time.Hour)
	if _, _, _, ok := other.decodeID(vs[0].id); ok {
		t.Error("another seed's world accepts the ID")
	}
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 20000 {
		b := make([]byte, 11)
		for j := range b {
			b[j] = idAlphabet[r.IntN(64)]
		}
		if _, _, _, ok := w.decodeID(string(b)); ok {
			accepted++
		}
	}
	if accepted > 0 {
		t.Errorf("%d of 20000 random IDs decode", accepted)
	}
	for _, bad := range []string{"", "short", "dQw4w9WgXcQ", "ÄÄÄÄÄÄÄÄÄÄÄ", vs[0].id + "A"} {
		if _, _, _, ok := w.decodeID(bad); ok {
			t.Errorf("%q decodes", bad)
		}
	}
}

func TestISODuration(t *testing.T) {
	for sec, want := range map[int]string{
		0: "P0D", 5: "PT5S", 60: "PT1M", 175: "PT2M55S", 3600: "PT1H", 3605: "PT1H5S", 4 * 3600: "PT4H", 3661: "PT1H1M1S",
	} {
		if got := isoDuration(sec); got != want {
			t.Errorf("isoDuration(%d) = %q, want %q", sec, got, want)
		}
	}
}

// Statistics only grow, and views stay in YouTube's realistic range.
func TestStatisticsGrow(t *testing.T) {
	w := newWorld(5, time.Hour)
	for _, v := range w.dayLocked(dayNumber(t0) - 2)[:100] {
		var pv, pl, pc uint64
		for h := 0; h < 24*10; h += 7 {
			views, likes, comments := v.stats(v.published.Add(time.Duration(h) * time.Hour))
			if views < pv || likes < pl || comments < pc {
				t.Fatalf("%s: counts fell at hour %d", v.id, h)
			}
			pv, pl, pc = views, likes, comments
		}
		if pv < 1000 || pv > 2e8 {
			t.Errorf("%s: %d views after ten days", v.id, pv)
		}
	}
}

func TestLRU(t *testing.T) {
	c := newLRU[int, string](2)
	c.put(1, "a")
	c.put(2, "b")
	c.get(1) // 1 is now the most recent
	c.put(3, "c")
	if _, ok := c.get(2); ok {
		t.Error("2 survived eviction")
	}
	if v, ok := c.get(1); !ok || v != "a" {
		t.Error("1 was evicted")
	}
	if v, ok := c.get(3); !ok || v != "c" {
		t.Error("3 missing")
	}
}
