package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what a query may cost, whatever a person types.
const (
	maxQueryBytes   = 4096 // longer text is cut (at a rune boundary)
	maxQueryPhrases = 16   // further words are ignored
	maxPhraseTokens = 16   // a quoted phrase longer than this is cut
)

// phrase is one unit of a plain-words query: a word, a "quoted phrase", or a
// word in a script without spaces. All phrases must match (AND).
type phrase struct {
	tokens []string // folded tokens, as FTS5 tokenizes the unit
	runs   []string // the unit's CJK/Thai runs, matched through the gram column
	expr   string   // FTS5 expression for this phrase alone
}

// parsedQuery is user text turned into FTS5 syntax that cannot fail to parse.
type parsedQuery struct {
	phrases []phrase
	expr    string // the MATCH expression; "" when the text has no words
	raw     bool   // expr is the user's own FTS5 syntax
}

// parseQuery turns what a person typed into an FTS5 MATCH expression. In the
// default (plain) mode every word is a term that must appear: FTS5 operators
// (AND, OR, NOT, NEAR), column filters, '*', '^', '-' and stray quotes are
// ordinary text. The expression is built only from folded tokens — runs of
// letters, digits and marks — each inside double quotes, so nothing the user
// typed reaches the FTS5 parser as syntax. Balanced "double quotes" keep a
// phrase; an unbalanced quote is closed at the end of the text. Text that
// holds no word at all yields an empty expression (no hits).
//
// In raw mode the text is passed to MATCH unchanged; syntax errors come back
// from Search as ErrBadQuery.
func parseQuery(text string, raw bool) parsedQuery {
	text = cleanQueryText(text)
	if raw {
		pq := parsedQuery{raw: true, expr: strings.TrimSpace(text)}
		// Words for highlighting only: the raw text minus operators.
		for _, t := range tokenize(text) {
			switch t.text {
			case "and", "or", "not", "near":
				continue
			}
			if len(pq.phrases) < maxQueryPhrases {
				pq.phrases = append(pq.phrases, phrase{tokens: []string{t.text}, runs: gramRuns(text[t.start:t.end])})
			}
		}
		return pq
	}

	var pq parsedQuery
	seen := map[string]bool{}
	add := func(unit string) {
		if len(pq.phrases) >= maxQueryPhrases {
			return
		}
		p, ok := newPhrase(unit)
		if !ok || seen[p.expr] {
			return
		}
		seen[p.expr] = true
		pq.phrases = append(pq.phrases, p)
	}
	for len(text) > 0 {
		i := strings.IndexByte(text, '"')
		if i < 0 {
			for _, w := range strings.Fields(text) {
				add(w)
			}
			break
		}
		for _, w := range strings.Fields(text[:i]) {
			add(w)
		}
		rest := text[i+1:]
		j := strings.IndexByte(rest, '"')
		if j < 0 { // unbalanced: the phrase runs to the end
			add(rest)
			break
		}
		add(rest[:j])
		text = rest[j+1:]
	}
	exprs := make([]string, len(pq.phrases))
	for i, p := range pq.phrases {
		exprs[i] = p.expr
	}
	pq.expr = strings.Join(exprs, " AND ")
	return pq
}

// newPhrase builds the FTS5 expression for one unit of text. ok is false when
// the unit holds no word (punctuation, symbols, emoji).
func newPhrase(unit string) (phrase, bool) {
	var p phrase
	for _, t := range tokenize(unit) {
		if len(p.tokens) == maxPhraseTokens {
			break
		}
		p.tokens = append(p.tokens, t.text)
	}
	if len(p.tokens) == 0 {
		return p, false
	}
	// Tokens are runs of letters, digits and marks: they cannot contain a
	// double quote or anything else FTS5 would read as syntax.
	p.expr = `"` + strings.Join(p.tokens, " ") + `"`
	for _, run := range gramRuns(unit) {
		p.runs = append(p.runs, Fold(run))
	}
	if len(p.runs) > 0 {
		// A unit with CJK/Thai text also matches any column containing its
		// runs anywhere, through the bigram column; a one-rune run is a
		// prefix query there (the bigrams it starts, or a run's final rune).
		alts := make([]string, len(p.runs))
		for i, run := range p.runs {
			if utf8.RuneCountInString(run) == 1 {
				alts[i] = `title_grams : "` + run + `" *`
			} else {
				alts[i] = `title_grams : "` + strings.Join(bigrams(run), " ") + `"`
			}
		}
		p.expr = "(" + p.expr + " OR (" + strings.Join(alts, " AND ") + "))"
	}
	return p, true
}

// cleanQueryText makes any input safe to tokenize and bounded in size:
// invalid UTF-8 and control characters become spaces, and text beyond
// maxQueryBytes is dropped.
func cleanQueryText(s string) string {
	if len(s) > maxQueryBytes {
		cut := maxQueryBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	s = strings.ToValidUTF8(s, " ")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
