// Package regions names the content regions whose most-popular charts
// YouTube serves: ISO 3166-1 alpha-2 codes, as the i18nRegions.list method
// lists them, embedded from regions.tsv.
//
// The key decision: Parse accepts codes only, never names or aliases, so a
// configuration means exactly what the API will be sent; but it answers a
// near miss ("UK", "USA", "GER", "Germany", "Deutschland", "SU") with the
// code the user most likely meant, because the person reading that error is
// fixing a config file, and the right code is more use to them than a link
// to a list.
package regions

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ErrUnknown is wrapped by every error Parse returns: the input names no
// region YouTube accepts (or is empty).
var ErrUnknown = errors.New("unknown region code")

// Code is an ISO 3166-1 alpha-2 region code that YouTube accepts, in upper
// case ("US"). Build one with Parse; a Code converted from an arbitrary
// string may not be Valid.
type Code string

// String returns the code itself ("US").
func (c Code) String() string { return string(c) }

// Name returns the English display name ("United States"), or the code
// itself when it is not a region YouTube accepts.
func (c Code) Name() string {
	if r, ok := table().byCode[c]; ok {
		return r.name
	}
	return string(c)
}

// defaults are the regions ytrend fetches when the configuration names none:
// YouTube's largest markets across its main languages.
var defaults = []Code{"US", "GB", "DE", "FR", "IN", "BR", "AU", "CA"}

// Default returns the regions fetched when the configuration names none:
// US GB DE FR IN BR AU CA, in that order. The slice is the caller's.
func Default() []Code { return slices.Clone(defaults) }

// All returns every region code YouTube accepts, sorted. The slice is the
// caller's.
func All() []Code { return slices.Clone(table().codes) }

// Valid reports whether c is a region code YouTube accepts. It is exact:
// lower case and surrounding space are Parse's business.
func Valid(c Code) bool {
	_, ok := table().byCode[c]
	return ok
}

// Parse turns user input into a Code. It trims space and accepts any case
// ("us" -> "US"). Anything else fails with an error that wraps ErrUnknown and,
// when it can tell, suggests the code meant:
//
//	"UK" is not a region code; did you mean "GB"?
func Parse(s string) (Code, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return "", &parseError{}
	}
	if c := Code(strings.ToUpper(in)); len(c) == 2 && Valid(c) {
		return c, nil
	}
	if country, ok := unlisted[strings.ToUpper(in)]; ok {
		return "", &parseError{input: in, country: country}
	}
	return "", &parseError{input: in, suggest: suggest(in)}
}

// unlisted are real ISO codes people try that YouTube has no chart for; a
// "did you mean" guess would only mislead there.
var unlisted = map[string]string{
	"CN": "China", "CU": "Cuba", "IR": "Iran", "KP": "North Korea", "SY": "Syria",
}

// MustParse is Parse for constants and tests; it panics on an invalid code.
func MustParse(s string) Code {
	c, err := Parse(s)
	if err != nil {
		panic("regions.MustParse: " + err.Error())
	}
	return c
}

// parseError is what Parse returns. The type stays unexported: callers need
// only errors.Is(err, ErrUnknown) and the message.
type parseError struct {
	input   string // trimmed, as typed; "" when the input was empty
	suggest []Code // best first; at most three
	country string // set when input is a real country YouTube does not list
}

func (e *parseError) Unwrap() error { return ErrUnknown }

func (e *parseError) Error() string {
	if e.input == "" {
		return `empty region code; want an ISO 3166-1 alpha-2 code such as "US"`
	}
	if e.country != "" {
		return fmt.Sprintf("%q is %s, which YouTube does not list as a content region", e.input, e.country)
	}
	switch len(e.suggest) {
	case 0:
		return fmt.Sprintf(`%q is not a region code YouTube accepts; want an ISO 3166-1 alpha-2 code such as "US"`, e.input)
	case 1:
		return fmt.Sprintf("%q is not a region code; did you mean %q?", e.input, string(e.suggest[0]))
	}
	quoted := make([]string, len(e.suggest))
	for i, c := range e.suggest {
		quoted[i] = fmt.Sprintf("%q", string(c))
	}
	last := len(quoted) - 1
	return fmt.Sprintf("%q is not a region code; did you mean %s or %s?", e.input, strings.Join(quoted[:last], ", "), quoted[last])
}

const maxSuggestions = 3

// suggest finds the codes the user probably meant by in, best first: an alias
// or name or alpha-3 code typed exactly (up to case, accents and
// punctuation), then a code with two letters swapped, then codes one edit
// away, then names a typo or two away.
func suggest(in string) []Code {
	t := table()
	key := normalize(in)
	if c, ok := t.aliases().byAlias[key]; ok {
		return []Code{c}
	}
	if key == "" {
		return nil
	}
	if utf8.RuneCountInString(key) <= 3 && isASCIILetters(key) {
		up := Code(strings.ToUpper(key))
		if Valid(up) {
			return []Code{up} // "U.S.", "g b": the code hidden in punctuation
		}
		if len(up) == 2 {
			if sw := Code([]byte{up[1], up[0]}); Valid(sw) {
				return []Code{sw}
			}
		}
		if cs := t.codesWithin1(string(up)); len(cs) > 0 {
			return cs
		}
		return nil
	}
	return t.namesNear(key)
}

// codesWithin1 returns the codes one substitution, insertion or deletion away
// from s (upper case, 1-3 letters), the default regions first, then
// alphabetical; at most maxSuggestions.
func (t *regionTable) codesWithin1(s string) []Code {
	var out []Code
	for _, c := range t.codes {
		if editDistance(s, string(c)) == 1 {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Code) int {
		ai, bi := slices.Index(defaults, a), slices.Index(defaults, b)
		switch {
		case ai >= 0 && bi >= 0:
			return ai - bi
		case ai >= 0:
			return -1
		case bi >= 0:
			return 1
		}
		return strings.Compare(string(a), string(b))
	})
	if len(out) > maxSuggestions {
		out = out[:maxSuggestions]
	}
	return out
}

// namesNear returns the codes whose name or alias is closest to key (already
// normalized), within a tolerance that grows with the length of the input.
func (t *regionTable) namesNear(key string) []Code {
	n := utf8.RuneCountInString(key)
	limit := 1
	if n >= 7 {
		limit = 2
	}
	if n < 4 {
		return nil
	}
	best := limit + 1
	var out []Code
	for _, a := range t.aliases().list {
		d := editDistance(key, a.key)
		switch {
		case d < best:
			best, out = d, []Code{a.code}
		case d == best && !slices.Contains(out, a.code):
			out = append(out, a.code)
		}
	}
	if len(out) > maxSuggestions {
		out = out[:maxSuggestions]
	}
	return out
}

// region is one line of regions.tsv.
type region struct {
	code    Code
	alpha3  string
	name    string
	aliases []string
}

type alias struct {
	key  string // normalized
	code Code
}

type regionTable struct {
	codes  []Code // sorted
	byCode map[Code]region
	// aliases is built when a suggestion first needs it: normalizing every
	// name was most of the table's cost, paid by every process that checks
	// a code.
	aliases func() *aliasIndex
}

type aliasIndex struct {
	byAlias map[string]Code // normalized alias, name or alpha-3 -> code
	list    []alias         // the same, in file order, for fuzzy matching
}

//go:embed regions.tsv
var regionsTSV string

var table = sync.OnceValue(func() *regionTable {
	t, err := parseCodes(regionsTSV)
	if err != nil {
		panic("regions: embedded regions.tsv: " + err.Error())
	}
	t.aliases = sync.OnceValue(func() *aliasIndex {
		a, err := t.indexAliases()
		if err != nil {
			panic("regions: embedded regions.tsv: " + err.Error())
		}
		return a
	})
	return t
})

// parseTable reads the regions.tsv format: '#' comments, a header line, then
// code, alpha3, name and comma-separated aliases separated by single TABs.
func parseTable(src string) (*regionTable, error) {
	t, err := parseCodes(src)
	if err != nil {
		return nil, err
	}
	a, err := t.indexAliases()
	if err != nil {
		return nil, err
	}
	t.aliases = func() *aliasIndex { return a }
	return t, nil
}

// parseCodes is parseTable without the alias index.
func parseCodes(src string) (*regionTable, error) {
	t := &regionTable{byCode: map[Code]region{}}
	sc := bufio.NewScanner(strings.NewReader(src))
	line, header := 0, false
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "#") || strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: want 4 tab-separated fields, got %d", line, len(f))
		}
		if !header {
			if f[0] != "code" || f[1] != "alpha3" || f[2] != "name" || f[3] != "aliases" {
				return nil, fmt.Errorf("line %d: want the header code, alpha3, name, aliases", line)
			}
			header = true
			continue
		}
		r := region{code: Code(f[0]), alpha3: f[1], name: f[2]}
		if len(f[0]) != 2 || !isUpperASCII(f[0]) {
			return nil, fmt.Errorf("line %d: code %q is not two upper-case letters", line, f[0])
		}
		if len(f[1]) != 3 || !isUpperASCII(f[1]) {
			return nil, fmt.Errorf("line %d: alpha3 %q is not three upper-case letters", line, f[1])
		}
		if r.name == "" {
			return nil, fmt.Errorf("line %d: %s has no name", line, r.code)
		}
		if _, dup := t.byCode[r.code]; dup {
			return nil, fmt.Errorf("line %d: %s listed twice", line, r.code)
		}
		if f[3] != "" {
			r.aliases = strings.Split(f[3], ",")
		}
		t.byCode[r.code] = r
		t.codes = append(t.codes, r.code)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !header {
		return nil, errors.New("no header line")
	}
	slices.Sort(t.codes)
	return t, nil
}

// indexAliases indexes every region's aliases, name and alpha-3 code once
// every code is known, so that an alias can never shadow a real code (an
// alias equal to a code would be unreachable).
func (t *regionTable) indexAliases() (*aliasIndex, error) {
	a := &aliasIndex{byAlias: map[string]Code{}}
	for _, c := range t.codes {
		r := t.byCode[c]
		for _, name := range append([]string{r.alpha3, r.name}, r.aliases...) {
			key := normalize(name)
			if key == "" {
				return nil, fmt.Errorf("%s: empty alias", c)
			}
			if _, isCode := t.byCode[Code(strings.ToUpper(key))]; isCode {
				return nil, fmt.Errorf("%s: alias %q is itself a region code", c, name)
			}
			if prev, dup := a.byAlias[key]; dup && prev != c {
				return nil, fmt.Errorf("%s: alias %q already names %s", c, name, prev)
			}
			a.byAlias[key] = c
			a.list = append(a.list, alias{key: key, code: c})
		}
	}
	return a, nil
}

// normalize folds s for alias matching: lower case, Latin accents removed,
// and everything but letters and digits dropped ("U.S.A." -> "usa",
// "Österreich" -> "osterreich").
func normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if f, ok := fold[r]; ok {
			b.WriteString(f)
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) {
			// Combining marks stay: Devanagari vowel signs are part of the word.
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fold strips the accents of the Latin letters that appear in region names.
var fold = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a",
	'ç': "c", 'č': "c", 'ć': "c",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ě': "e", 'ē': "e",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i",
	'ñ': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o",
	'ř': "r", 'š': "s", 'ş': "s", 'ș': "s", 'ß': "ss", 'ț': "t", 'ţ': "t",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ů': "u",
	'ý': "y", 'ÿ': "y", 'ž': "z", 'ğ': "g", 'ı': "i",
	'ạ': "a", 'ệ': "e", 'ơ': "o", 'ư': "u",
}

func isUpperASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// editDistance is the optimal-string-alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two neighbours each
// count one ("Frnace" is one edit from "France").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
