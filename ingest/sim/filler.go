package sim

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
)

// filler fills template slots for one video or channel, remembering what it
// chose so the description can name the same song as the title.
type filler struct {
	lex   *lexicon
	r     *rand.Rand
	year  int
	ch    *channel
	fixed map[string]string
	used  map[string]string
}

func (f *filler) setFixed(k, v string) {
	if f.fixed == nil {
		f.fixed = map[string]string{}
	}
	f.fixed[k] = v
}

func (f *filler) fill(tmpl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		b.WriteString(f.slot(tmpl[i+1 : i+j]))
		tmpl = tmpl[i+j+1:]
	}
}

func (f *filler) slot(name string) string {
	if v, ok := f.fixed[name]; ok {
		return v
	}
	if v, ok := f.used[name]; ok {
		return v
	}
	var v string
	switch name {
	case "n":
		v = strconv.Itoa(2 + f.r.IntN(29))
	case "year":
		v = strconv.Itoa(f.year)
	case "amount":
		v = pick(f.r, f.lex.amounts)
	case "artist", "artist2":
		v = f.artist()
	case "song":
		if a, b := f.lex.words["songA"], f.lex.words["songB"]; len(a) > 0 && f.r.Float64() < 0.6 {
			v = pick(f.r, a) + " " + pick(f.r, b)
		} else {
			v = f.word(name)
		}
	case "slug":
		v = asciiSlug(f.slot("song"))
		if v == "" {
			v = "listen"
		}
	case "handle":
		if f.ch != nil {
			v = f.ch.handle
		} else {
			v = "official"
		}
	case "first2", "last2", "team2":
		base := strings.TrimSuffix(name, "2")
		avoid := f.slot(base)
		for range 4 {
			if v = f.word(base); v != avoid {
				break
			}
		}
	default:
		v = f.word(name)
	}
	if f.used == nil {
		f.used = map[string]string{}
	}
	f.used[name] = v
	return v
}

// word picks from the slot's list: the language's, else the shared one, else
// English.
func (f *filler) word(name string) string {
	for _, m := range []map[string][]string{f.lex.words, shared, lexicons()["en"].words} {
		if ws, ok := m[name]; ok && len(ws) > 0 {
			return pick(f.r, ws)
		}
	}
	return name
}

// artist invents a performer: a person, a band or a stage name.
func (f *filler) artist() string {
	switch u := f.r.Float64(); {
	case u < 0.5:
		return f.word("first") + " " + f.word("last")
	case u < 0.75:
		return f.word("band")
	case u < 0.9:
		return f.word("prefix") + " " + f.word("first")
	default:
		return f.word("first")
	}
}

// handleFor makes a channel's @handle: its name in ASCII, or romaji-like
// syllables when the name has none.
func handleFor(title string, r *rand.Rand) string {
	h := asciiSlug(title)
	h = strings.ReplaceAll(h, "-", "")
	if len(h) < 3 {
		var b strings.Builder
		for range 3 + r.IntN(3) {
			b.WriteString(pick(r, romaji))
		}
		h = b.String()
	}
	if len(h) > 24 {
		h = h[:24]
	}
	if r.Float64() < 0.3 {
		h += strconv.Itoa(r.IntN(100))
	}
	return h
}

// asciiSlug keeps the ASCII letters and digits of s, lower-cased, with dashes
// between words.
func asciiSlug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range normalizeText(s) {
		switch {
		case c < 128 && (unicode.IsLetter(c) || unicode.IsDigit(c)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		default:
			dash = true
		}
	}
	return b.String()
}

// normalizeText lower-cases s and strips Latin accents, for search matching.
func normalizeText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range strings.ToLower(s) {
		if f, ok := accentFold[c]; ok {
			b.WriteRune(f)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

var accentFold = map[rune]rune{
	'à': 'a', 'á': 'a', 'â': 'a', 'ã': 'a', 'ä': 'a', 'ç': 'c', 'è': 'e', 'é': 'e', 'ê': 'e', 'ë': 'e',
	'ì': 'i', 'í': 'i', 'î': 'i', 'ï': 'i', 'ñ': 'n', 'ò': 'o', 'ó': 'o', 'ô': 'o', 'õ': 'o', 'ö': 'o',
	'ù': 'u', 'ú': 'u', 'û': 'u', 'ü': 'u', 'ß': 's', 'œ': 'o',
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n]))
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if k := strings.ToLower(s); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// Video IDs are 64-bit numbers in eleven base64url characters, as YouTube's
// are (so the last character is one of 16). The number packs the publishing
// day, the cohort, the index and a 32-bit check, scrambled by a keyed Feistel
// network so IDs look random but decode back to the video without a lookup
// table.
