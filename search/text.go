package search

//go:generate go run gen_fold.go

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ytrend/ytrend/regions"
)

// This file mirrors, in Go, what the FTS5 tokenizer does with text
// (unicode61, remove_diacritics 2, categories 'L* N* Co M*'), so that the
// store can count terms for ranking and highlight matches without asking
// SQLite. fold_table.go is generated from FTS5 itself, and
// TestTokenizerMatchesFTS5 checks the two agree.

// isTokenRune reports whether r is part of a word for unicode61 with
// categories 'L* N* Co M*'. FTS5's older Unicode tables also keep the glue
// runes (isGlueRune) inside a token, many emoji among them; the Go side calls
// them separators, as for every other emoji, and the gram column holds the
// words FTS5 glued together (appendGlued), so that every word the Go
// tokenizer sees is in the index.
func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	if f, ok := foldTable[r]; ok && f == -2 {
		return false
	}
	return unicode.In(r, unicode.L, unicode.N, unicode.M, unicode.Co)
}

// isGlueRune reports whether FTS5 keeps r inside a token although Go's
// tables call it neither letter, digit, mark nor private use: code points
// assigned after FTS5's tables (🤍, 🤩, 🥔, ₽, ...) or never assigned.
func isGlueRune(r rune) bool {
	if r < glueRanges[0][0] {
		return false
	}
	lo, hi := 0, len(glueRanges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if glueRanges[m][1] < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(glueRanges) && glueRanges[lo][0] <= r
}

// foldRune lower-cases r and removes Latin diacritics as unicode61 does; -1
// means r is dropped from the token (a combining diacritic).
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	if f, ok := foldTable[r]; ok {
		return f
	}
	return unicode.ToLower(r)
}

// token is one word of a text: its folded form and where it is in the text.
type token struct {
	text       string // folded
	start, end int    // byte offsets in the original text
}

// scanTokens calls fn for every token of s, as FTS5 tokenizes it, with its
// byte offsets in s and its folded form (valid only during the call).
func scanTokens(s string, fn func(start, end int, folded []byte)) {
	var arr [64]byte
	buf := arr[:0]
	start := -1
	flush := func(end int) {
		if start >= 0 && len(buf) > 0 {
			fn(start, end, buf)
		}
		buf = buf[:0]
		start = -1
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				flush(i)
				i++
				continue
			}
			if start < 0 {
				start = i
			}
			buf = append(buf, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isTokenRune(r) {
			flush(i)
			i += size
			continue
		}
		if start < 0 {
			start = i
		}
		if f := foldRune(r); f >= 0 {
			buf = utf8.AppendRune(buf, f)
		}
		i += size
	}
	flush(len(s))
}

// tokenize splits s into folded tokens, as FTS5 indexes it.
func tokenize(s string) []token {
	var out []token
	scanTokens(s, func(start, end int, folded []byte) {
		out = append(out, token{text: string(folded), start: start, end: end})
	})
	return out
}

// Tokens is s as the index sees it: its words, folded, in order.
func Tokens(s string) []string {
	var out []string
	scanTokens(s, func(_, _ int, folded []byte) { out = append(out, string(folded)) })
	return out
}

// Fold folds s as a whole (case and diacritics) without splitting it;
// channel filters compare folded titles by substring.
func Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if f := foldRune(r); f >= 0 {
			b.WriteRune(f)
		}
	}
	return b.String()
}

// isGramRune reports whether r belongs to a script written without spaces
// between words, where unicode61 would make a whole clause one token:
// Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar.
func isGramRune(r rune) bool {
	if r < 0x0E00 {
		return false
	}
	switch r {
	case 'ー', '々', 'ゝ', 'ゞ', 'ヽ', 'ヾ': // prolonged sound and iteration marks (script Common)
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// gramRuns returns the maximal runs of gram runes in s.
func gramRuns(s string) []string {
	var runs []string
	start := -1
	for i, r := range s {
		if isGramRune(r) && isTokenRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			runs = append(runs, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		runs = append(runs, s[start:])
	}
	return runs
}

// bigrams returns the overlapping two-rune grams of run ("東京の" -> 東京, 京の),
// or the run itself when it is a single rune.
func bigrams(run string) []string {
	rs := []rune(run)
	if len(rs) < 2 {
		return []string{run}
	}
	out := make([]string, 0, len(rs)-1)
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, string(rs[i:i+2]))
	}
	return out
}

// gramText is the indexed gram text of one column's text: for every
// CJK/Thai run, its bigrams followed by its last rune alone, so that a
// one-rune query (as a prefix) finds the rune wherever it is in the run. ""
// when the text has no such run.
//
//	東京の天気 -> "東京 京の の天 天気 気"
func gramText(text string) string {
	var parts []string
	for _, run := range gramRuns(text) {
		rs := []rune(run)
		if len(rs) == 1 {
			parts = append(parts, run)
			continue
		}
		parts = append(parts, bigrams(run)...)
		parts = append(parts, string(rs[len(rs)-1]))
	}
	return strings.Join(parts, " ")
}

// gluedMark begins each group of glued words in the gram column. FTS5
// indexes it as a word (U+FDD1 is a glue rune) that no query can contain
// (the Go tokenizer splits at it), so no phrase matches across two groups.
const gluedMark = "\uFDD1"

// appendGlued appends to dst, for every token of s as FTS5 indexes it that
// holds a glue rune, gluedMark and then the Go tokens (folded) it is made
// of, in order, and returns dst:
//
//	"Дорого🤍Идеальные 🥔EP.3-1" -> gluedMark дорого идеальные gluedMark ep
//
// FTS5 indexes those tokens whole (дорого🤍идеальные), which no query
// matches; with its words in the gram column, a word matches there and a
// quoted phrase of them too. Tokens without glue add nothing: FTS5 indexes
// them as the Go tokenizer sees them.
func appendGlued(dst []string, s string) []string {
	if !hasGlue(s) {
		return dst
	}
	var group []string
	glued := false // the FTS5 token being read holds a glue rune
	flush := func() {
		if glued && len(group) > 0 {
			dst = append(dst, gluedMark)
			dst = append(dst, group...)
		}
		group, glued = group[:0], false
	}
	prevEnd := 0
	scanTokens(s, func(start, end int, folded []byte) {
		// The text between two Go tokens: inside one FTS5 token when FTS5
		// reads all of it as token characters.
		joins, after, before := gapGlue(s[prevEnd:start])
		if prevEnd == 0 || !joins {
			glued = glued || after
			flush()
			glued = before
		} else {
			glued = glued || after
		}
		group = append(group, string(folded))
		prevEnd = end
	})
	if _, after, _ := gapGlue(s[prevEnd:]); after {
		glued = true
	}
	flush()
	return dst
}

// gapGlue reads the text between two Go tokens as FTS5 does. joins: FTS5
// reads all of it as token characters (one token spans the gap); after:
// glue runes follow the first token within its FTS5 token; before: glue
// runes precede the second one within its FTS5 token.
func gapGlue(gap string) (joins, after, before bool) {
	i := 0
	for i < len(gap) {
		r, size := utf8.DecodeRuneInString(gap[i:])
		if r < utf8.RuneSelf || !isTokenRune(r) && !isGlueRune(r) {
			break
		}
		after = after || isGlueRune(r)
		i += size
	}
	if i == len(gap) {
		return true, after, after
	}
	for j := len(gap); j > i; {
		r, size := utf8.DecodeLastRuneInString(gap[:j])
		if r < utf8.RuneSelf || !isTokenRune(r) && !isGlueRune(r) {
			break
		}
		before = before || isGlueRune(r)
		j -= size
	}
	return false, after, before
}

// hasGlue reports whether s holds a glue rune: almost never, so the scan
// for glued words is skipped.
func hasGlue(s string) bool {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isGlueRune(r) {
			return true
		}
		i += size
	}
	return false
}

// Grams is what the gram column holds for a video: gramText of each text
// column (title, tags, channel title, description), and the words of every
// column's glued tokens (appendGlued).
type Grams struct {
	Runs  [4]string
	Glued string
}

// GramsOf is what the gram column holds for a video's text.
func GramsOf(title, tags, channel, description string) Grams {
	var glued []string
	for _, s := range []string{title, tags, channel, description} {
		glued = appendGlued(glued, s)
	}
	return Grams{
		Runs:  [4]string{gramText(title), gramText(tags), gramText(channel), gramText(description)},
		Glued: strings.Join(glued, " "),
	}
}

// Indexed is the text of the index's gram column (still named title_grams,
// from when only titles had grams): every column's grams, one after the
// other, then the glued words. A bigram never spans two runs, and each run
// ends with its last rune alone, so no query phrase matches across two runs
// or two columns; each group of glued words begins with gluedMark, so no
// phrase runs into or out of one either.
func (g Grams) Indexed() string {
	var parts []string
	for _, s := range g.Runs {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if g.Glued != "" {
		parts = append(parts, g.Glued)
	}
	return strings.Join(parts, " ")
}

// termHash identifies a folded term in the per-video term blob (FNV-1a, 32
// bits), for a term held as a string (a query's) or as bytes (the
// tokenizer's buffer, without a copy).
func termHash[T string | []byte](term T) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(term); i++ {
		h ^= uint32(term[i])
		h *= 16777619
	}
	return h
}

// Columns of video_fts, in order, and the bm25 weight of each. The ranker
// (rank.go) and the 'rank' configuration in 0001_init.sql use the same weights.
const (
	colTitle = iota
	colTags
	colChannel
	colDescription
	colGrams
	numCols
)

var columnWeights = [numCols]float64{10, 4, 3, 1, 10}

// Facets are the filter tokens of a video's facets column: its channel,
// every region it trended in, and the rank tiers it charted within. They begin with U+FDD0, a noncharacter that
// FTS5 indexes as part of a word but that the Go tokenizer (so every plain
// query) treats as a separator: no typed text can match a facet, and a
// facet never matches a word of the text.
const facetMark = "\uFDD0"

// ChannelFacet is the facet of the channel with row id id in channels.
func ChannelFacet(id int64) string { return facetMark + "c" + strconv.FormatInt(id, 10) }

// RegionFacet is the facet of a region code. Only ASCII letters and digits
// are kept, so that a region typed on a command line can never carry FTS5
// syntax into the MATCH expression.
func RegionFacet(region regions.Code) string {
	var b strings.Builder
	b.WriteString(facetMark + "r")
	for i := 0; i < len(region); i++ {
		switch c := region[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			b.WriteByte(c)
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		}
	}
	return b.String()
}

// RankTiers are the chart ranks a video's best rank is indexed against:
// a video whose best rank (in any region, ever) is at most T carries
// TierFacet(T) for each such T. Once a walk's page is full, a match must
// have charted high to place in it; the walk then puts the tier that holds
// every such video in the MATCH, and FTS5 skips the other matches inside
// the index instead of the store reading each and looking it up
// (search_walk.go). A facet is never missing for a video within its tier;
// one that outlives its rank (a repair that drops sightings) only makes the
// MATCH let through a video the cuts then refuse.
var RankTiers = [...]int{3, 10, 30}

// TierFacet is the facet of videos charted at rank tier or higher.
func TierFacet(tier int) string { return facetMark + "t" + strconv.Itoa(tier) }

// TierFacets returns the tier facets a video gains when its best rank
// becomes now, having been was (0: never charted), each preceded by a
// space; "" if it gains none.
func TierFacets(was, now int) string {
	var b strings.Builder
	for _, t := range RankTiers {
		if now > 0 && now <= t && (was <= 0 || was > t) {
			b.WriteString(" " + TierFacet(t))
		}
	}
	return b.String()
}

// tierFor returns the smallest tier holding every video of best rank at
// most rank, or 0 if no tier does.
func tierFor(rank int64) int {
	for _, t := range RankTiers {
		if rank <= int64(t) {
			return t
		}
	}
	return 0
}

// facetFilter is an FTS5 expression matching any of the facets.
func facetFilter(facets []string) string {
	return `facets : ("` + strings.Join(facets, `" OR "`) + `")`
}

// Terms is a video's per-term counts in its short columns (title and its
// grams, tags, channel title) plus the description's repeated terms. It is
// what the ranker needs to compute bm25 for a candidate without FTS5's bm25(),
// whose IDF pass reads every query term's whole doclist on every query.
//
// Encoding: a version byte (1), then 6 bytes per distinct term: its FNV-32a
// hash (little endian), then four 4-bit counts capped at 15 — title (grams
// included), tags, channel, description. A description count is stored only
// when it is 2 or more; the ranker infers the rest (see rank.go).
type Terms []byte

const termsVersion = 1

// TermsVersion is the format of the stored term blobs; cached benchmark
// archives (testkit/archivetest) are keyed on it.
const TermsVersion = termsVersion

type termCounts [4]uint8 // title, tags, channel, description

// BuildTerms tokenizes a video's indexed text. It returns the blob and the
// document length in tokens over every indexed column (bm25's D).
//
// A column's CJK/Thai grams count in that column: a word of a Japanese
// description weighs as description text, not as a title. Glued words are
// not counted again: they are the Go tokens of their column, counted there.
func BuildTerms(title, tags, channel, description string, grams Grams) (Terms, int) {
	counts := map[uint32]*termCounts{}
	var order []uint32
	add := func(text string, col int, includeCJKRunes bool) int {
		n := 0
		scanTokens(text, func(_, _ int, folded []byte) {
			bump(counts, &order, termHash(folded), col)
			n++
		})
		if includeCJKRunes {
			// Single runes of CJK runs, so that one-rune queries score as
			// title matches too.
			for _, run := range gramRuns(text) {
				if len([]rune(run)) == 1 {
					continue
				}
				for _, r := range run {
					bump(counts, &order, termHash(string(r)), col)
				}
			}
		}
		return n
	}
	n := add(title, 0, true)
	n += add(tags, 1, true)
	n += add(channel, 2, true)
	for col := 0; col < 3; col++ {
		for _, g := range strings.Fields(grams.Runs[col]) {
			bump(counts, &order, termHash(g), col)
			n++
		}
	}
	desc := map[uint32]int{}
	scanTokens(description, func(_, _ int, folded []byte) {
		desc[termHash(folded)]++
		n++
	})
	for _, g := range strings.Fields(grams.Runs[3]) {
		desc[termHash(g)]++
		n++
	}
	for h, c := range desc {
		if c >= 2 {
			if _, ok := counts[h]; !ok {
				order = append(order, h)
				counts[h] = &termCounts{}
			}
			counts[h][3] = uint8(min(c, 15))
		}
	}
	b := make(Terms, 1, 1+6*len(order))
	b[0] = termsVersion
	for _, h := range order {
		c := counts[h]
		b = binary.LittleEndian.AppendUint32(b, h)
		b = append(b, c[0]<<4|c[1], c[2]<<4|c[3])
	}
	return b, n
}

func bump(counts map[uint32]*termCounts, order *[]uint32, h uint32, col int) {
	c, ok := counts[h]
	if !ok {
		c = &termCounts{}
		counts[h] = c
		*order = append(*order, h)
	}
	if c[col] < 15 {
		c[col]++
	}
}

// lookup returns the counts of the term with hash h (zero if absent).
func (t Terms) lookup(h uint32) termCounts {
	if len(t) < 1 || t[0] != termsVersion {
		return termCounts{}
	}
	for i := 1; i+6 <= len(t); i += 6 {
		if binary.LittleEndian.Uint32(t[i:]) == h {
			return termCounts{t[i+4] >> 4, t[i+4] & 15, t[i+5] >> 4, t[i+5] & 15}
		}
	}
	return termCounts{}
}
