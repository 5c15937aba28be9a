package search

import (
	"slices"
	"strings"
	"unicode/utf8"
)

const (
	// snippetTokens is how many words a snippet shows around the matches,
	// and snippetRunes how many characters at most: a line and a half of a
	// terminal, even in a script without spaces, where one "word" is a
	// whole clause.
	snippetTokens = 24
	snippetRunes  = 160
	// snippetLead is how much text a clipped snippet keeps before its first
	// match.
	snippetLead = 40
	// snippetScanBytes bounds the part of a description searched for a
	// snippet (YouTube allows 5,000 characters).
	snippetScanBytes = 8192
)

type span struct {
	start, end int // byte offsets
	phrase     int
}

// snippet picks, of a video's description, title, tags and channel title, the
// one where most of the query's phrases match (the description on a tie: the
// title is shown anyway), and returns up to snippetTokens words of it around
// the matches with each match between open and close. It is computed in Go
// for the final page of hits only, with the tokenizer that mirrors FTS5's.
func snippet(pq parsedQuery, fields [4]string, open, close string) string {
	dict := map[string]int{} // query token -> id
	phrases := make([][]int, len(pq.phrases))
	for i, p := range pq.phrases {
		for _, t := range p.tokens {
			id, ok := dict[t]
			if !ok {
				id = len(dict)
				dict[t] = id
			}
			phrases[i] = append(phrases[i], id)
		}
	}
	// A very long description is searched for matches in its first
	// snippetScanBytes only.
	if len(fields[0]) > snippetScanBytes {
		cut := snippetScanBytes
		for cut > 0 && !utf8.RuneStart(fields[0][cut]) {
			cut--
		}
		fields[0] = fields[0][:cut]
	}
	best, bestN := -1, 0
	var bestSpans []span
	var bestToks []token
	var sc scratch
	for i, text := range fields {
		toks, spans := matchSpans(&sc, pq, phrases, dict, text)
		if n := distinctPhrases(spans); n > bestN {
			best, bestN, bestSpans, bestToks = i, n, spans, toks
			sc = scratch{} // keep these; the next field gets new buffers
		}
	}
	if best < 0 { // nothing to show as a match: the description's start
		toks, _ := matchSpans(&sc, pq, nil, nil, fields[0])
		return window(fields[0], toks, nil, 0, open, close)
	}
	// The window of snippetTokens words covering the most distinct phrases,
	// starting a few words before its first match.
	startTok := 0
	if len(bestToks) > snippetTokens {
		bestCover := -1
		for _, s := range bestSpans {
			first := tokenAt(bestToks, s.start)
			from := max(0, min(first-3, len(bestToks)-snippetTokens))
			end := bestToks[min(len(bestToks), from+snippetTokens)-1].end
			cover := coveredPhrases(bestSpans, bestToks[from].start, end)
			if cover > bestCover {
				bestCover, startTok = cover, from
			}
		}
	}
	return window(fields[best], bestToks, bestSpans, startTok, open, close)
}

// matchSpans tokenizes text (positions only) and finds where the query's
// phrases occur: token sequences for words, substrings for CJK/Thai runs
// (which are not words).
func matchSpans(sc *scratch, pq parsedQuery, phrases [][]int, dict map[string]int, text string) ([]token, []span) {
	if c := len(text)/5 + 1; cap(sc.toks) < c {
		sc.toks, sc.ids = make([]token, 0, c), make([]int, 0, c)
	}
	toks, ids := sc.toks[:0], sc.ids[:0]
	scanTokens(text, func(start, end int, folded []byte) {
		toks = append(toks, token{start: start, end: end})
		id, ok := dict[string(folded)]
		if !ok {
			id = -1
		}
		ids = append(ids, id)
	})
	sc.toks, sc.ids = toks, ids
	spans := sc.spans[:0]
	for pi, seq := range phrases {
		n := len(seq)
		for i := 0; n > 0 && i+n <= len(ids); i++ {
			if ids[i] != seq[0] {
				continue
			}
			ok := true
			for j := 1; j < n; j++ {
				if ids[i+j] != seq[j] {
					ok = false
					break
				}
			}
			if ok {
				spans = append(spans, span{toks[i].start, toks[i+n-1].end, pi})
			}
		}
		for _, run := range pq.phrases[pi].runs {
			for off := 0; ; {
				k := strings.Index(text[off:], run)
				if k < 0 {
					break
				}
				spans = append(spans, span{off + k, off + k + len(run), pi})
				off += k + len(run)
			}
		}
	}
	sc.spans = spans
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	// Drop spans overlapping an earlier one (a run inside a matched token).
	out := spans[:0]
	end := -1
	for _, s := range spans {
		if s.start >= end {
			out = append(out, s)
			end = s.end
		}
	}
	return toks, out
}

// scratch holds buffers matchSpans reuses from one field to the next.
type scratch struct {
	toks  []token
	ids   []int
	spans []span
}

func distinctPhrases(spans []span) int {
	var seen [maxQueryPhrases]bool
	n := 0
	for _, s := range spans {
		if !seen[s.phrase] {
			seen[s.phrase] = true
			n++
		}
	}
	return n
}

// coveredPhrases counts the distinct phrases of the spans inside [start, end).
func coveredPhrases(spans []span, start, end int) int {
	var seen [maxQueryPhrases]bool
	n := 0
	for _, s := range spans {
		if s.start >= start && s.end <= end && !seen[s.phrase] {
			seen[s.phrase] = true
			n++
		}
	}
	return n
}

// tokenAt is the index of the token containing byte offset off (or the
// first token after it).
func tokenAt(toks []token, off int) int {
	i, _ := slices.BinarySearchFunc(toks, off, func(t token, off int) int {
		switch {
		case t.end <= off:
			return -1
		case t.start > off:
			return 1
		}
		return 0
	})
	return min(i, max(0, len(toks)-1))
}

// window renders snippetTokens words of text from token from, marking spans,
// with "…" where it cuts, and whitespace (newlines included) collapsed.
func window(text string, toks []token, spans []span, from int, open, close string) string {
	if len(toks) == 0 {
		return collapseSpace(text)
	}
	start, end := 0, len(text)
	if from > 0 {
		start = toks[from].start
	}
	if last := from + snippetTokens; last < len(toks) {
		end = toks[last-1].end
	}
	start, end = clip(text, toks, spans, start, end)
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := start
	for _, s := range spans {
		if s.start < start || s.end > end {
			continue
		}
		b.WriteString(collapseSpace(text[pos:s.start]))
		b.WriteString(open)
		b.WriteString(collapseSpace(text[s.start:s.end]))
		b.WriteString(close)
		pos = s.end
	}
	b.WriteString(collapseSpace(text[pos:end]))
	if end < len(text) {
		b.WriteString("…")
	}
	return strings.TrimSpace(b.String())
}

// clip narrows [start, end) of text to at most snippetRunes characters
// around the first span inside it (snippetLead characters before it), so
// that a snippet stays readable when a "word" is a long run of Japanese or
// Chinese. It cuts at a word's edge when one is close, else between two
// characters, and never inside a span.
func clip(text string, toks []token, spans []span, start, end int) (int, int) {
	if utf8.RuneCountInString(text[start:end]) <= snippetRunes {
		return start, end
	}
	focus := start
	for _, s := range spans {
		if s.start >= start && s.end <= end {
			focus = s.start
			break
		}
	}
	// Back from the focus by up to snippetLead characters.
	lo := focus
	for n := 0; n < snippetLead && lo > start; n++ {
		_, size := utf8.DecodeLastRuneInString(text[start:lo])
		lo -= size
	}
	if t := toks[tokenAt(toks, lo)]; t.start < lo && t.end > lo && lo-t.start <= 2*snippetLead {
		lo = max(start, t.start) // the word it falls in, if it is short
	}
	// Forward snippetRunes characters.
	hi := lo
	for n := 0; n < snippetRunes && hi < end; n++ {
		_, size := utf8.DecodeRuneInString(text[hi:end])
		hi += size
	}
	if i := tokenAt(toks, hi); i < len(toks) && toks[i].start < hi && toks[i].end > hi {
		// Inside a word: end before it, unless that drops most of the
		// snippet (a long run without spaces).
		if i > 0 && toks[i-1].end > lo && utf8.RuneCountInString(text[toks[i-1].end:hi]) <= snippetLead {
			hi = toks[i-1].end
		}
	}
	// Never cut a span: end after it, or before it.
	for _, s := range spans {
		if s.start < hi && s.end > hi {
			if s.start >= focus && s.start > lo {
				hi = s.start
			} else {
				hi = s.end
			}
		}
	}
	return lo, hi
}

// collapseSpace turns every run of white space into one space.
func collapseSpace(s string) string {
	if !strings.ContainsAny(s, "\n\r\t\v\f\u00a0") && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		switch r {
		case ' ', '\n', '\r', '\t', '\v', '\f', '\u00a0':
			if !space {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteRune(r)
			space = false
		}
	}
	return b.String()
}
