package search_test

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
)

// ftsTokens returns how FTS5 itself tokenizes each text, with the archive's
// tokenizer settings, using an in-memory table.
func ftsTokens(tb testing.TB, texts []string) [][]string {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co M*'");
		CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)`); err != nil {
		tb.Fatal(err)
	}
	tx, _ := db.Begin()
	for i, s := range texts {
		if _, err := tx.Exec(`INSERT INTO t(rowid, x) VALUES (?, ?)`, i+1, s); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	out := make([][]string, len(texts))
	rows, err := db.Query(`SELECT doc, term FROM v ORDER BY doc, offset`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc int
		var term sql.NullString // NULL: a token of dropped diacritics only
		if err := rows.Scan(&doc, &term); err != nil {
			tb.Fatal(err)
		}
		out[doc-1] = append(out[doc-1], term.String)
	}
	return out
}

// The Go tokenizer must see the words FTS5 indexes: it counts them for
// ranking and finds them for snippets.
func TestTokenizerMatchesFTS5(t *testing.T) {
	texts := []string{
		"Café crème brûlée à la Noël — ÉTÉ",
		"cafe\u0301 x\u0303 decomposed marks",
		"क्रिकेट मैच हाइलाइट्स: भारत बनाम ऑस्ट्रेलिया",
		"東京の天気予報 ニュース 2026年",
		"서울 날씨 예보",
		"ข่าวด่วนวันนี้",
		"Straße ÆØÅ æøå Œuvre ǅ ß İstanbul ıi",
		"Привет МИР ΑΘΗΝΑ Ωμέγα",
		"c++ don't e-mail foo_bar 3.14 #hashtag @user",
		"emoji 😀 mid😀word tab\there\nnewline",
		"µ ﬁ ① ²",
		"\u00a0non-breaking\u2009thin\u200bzero-width\u200djoiner",
	}
	// Every letter, digit and mark of the scripts the regions use, one per
	// document, checks the fold table code point by code point.
	for _, r := range [][2]rune{{0x80, 0x2af}, {0x370, 0x52f}, {0x900, 0x97f}, {0x1e00, 0x1fff}, {0x3040, 0x30ff}, {0xff00, 0xffef}} {
		for c := r[0]; c <= r[1]; c++ {
			if unicode.In(c, unicode.L, unicode.N, unicode.M) && utf8.ValidRune(c) {
				texts = append(texts, "q"+string(c)+"q")
			}
		}
	}
	want := ftsTokens(t, texts)
	bad := 0
	for i, s := range texts {
		got := search.Tokens(s)
		if !slices.Equal(got, want[i]) {
			bad++
			if bad <= 10 {
				t.Errorf("tokens of %q (%U):\n got %q\nwant %q", s, []rune(s), got, want[i])
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d texts differ in all, of %d", bad, len(texts))
	}
}

func TestTitleGrams(t *testing.T) {
	for _, tc := range []struct{ title, want string }{
		{"東京の天気予報", "東京 京の の天 天気 気予 予報 報"},
		{"Tokyo 東京 vlog", "東京 京"},
		{"猫", "猫"},
		{"東京とソウル 서울 2026 ข่าว", "東京 京と とソ ソウ ウル ル 서울 울 ข่ ่า าว ว"},
		{"English only", ""},
		{"क्रिकेट मैच", ""}, // Devanagari has spaces: words are tokens already
		{"ラーメン々", "ラー ーメ メン ン々 々"},
	} {
		if got := search.TitleGrams(tc.title); got != tc.want {
			t.Errorf("TitleGrams(%q) = %q, want %q", tc.title, got, tc.want)
		}
	}
}

// The store ranks with its own bm25 (FTS5's bm25() reads every query term's
// whole doclist on every query). Where its inputs are exact — no phrase that
// is both in a short column and only once in the description — it must equal
// FTS5's bm25 with the same column weights.
func TestTextScoreEqualsFTS5BM25(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	vs := []store.Video{
		{ID: "v1", Title: "Solar eclipse live", Description: "Watch the total darkness from three cities.", ChannelTitle: "Sky News", Tags: []string{"eclipse", "astronomy"}},
		{ID: "v2", Title: "Cooking pasta at home", Description: "An eclipse of flavours: pasta, pasta and more pasta with basil.", ChannelTitle: "Chef Anna", Tags: []string{"food"}},
		{ID: "v3", Title: "Eclipse chasers documentary", Description: "A long film about people who travel the world. It follows five families for ten years, across deserts and oceans.", ChannelTitle: "Docs", Tags: []string{"travel", "film"}},
		{ID: "v4", Title: "Morning news", Description: "Headlines: markets, weather, sports.", ChannelTitle: "Eclipse Media", Tags: []string{"news"}},
		{ID: "v5", Title: "Basil pesto", Description: "Fresh basil, garlic, pine nuts. Basil basil basil.", ChannelTitle: "Chef Anna", Tags: []string{"food", "basil"}},
		{ID: "v6", Title: "Total solar eclipse 2026 explained", Description: "Why the moon covers the sun.", ChannelTitle: "Science Now", Tags: []string{"solar", "science"}},
	}
	saveChart(t, db, "US", t0, 1, vs...)
	// FTS5 itself, over the same five text columns (the archive's index also
	// holds facets, which do not score but would count in FTS5's length).
	ref, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ref.SetMaxOpenConns(1)
	if _, err := ref.Exec(`CREATE VIRTUAL TABLE video_fts USING fts5(id UNINDEXED, title, tags, channel_title, description, title_grams,
		tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co M*'")`); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if _, err := ref.Exec(`INSERT INTO video_fts VALUES (?, ?, ?, ?, ?, NULL)`, v.ID, v.Title, strings.Join(v.Tags, "\n"), v.ChannelTitle, v.Description); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"eclipse", "basil", "pasta", "solar eclipse", "chef anna", "\"total solar\"", "news"} {
		got, err := search.TextScores(ctx, db.Reader(), q)
		if err != nil {
			t.Fatal(err)
		}
		// The UNINDEXED id column takes weight 0 and no tokens.
		rows, err := ref.QueryContext(ctx, `SELECT id, bm25(video_fts, 0, 10, 4, 3, 1, 10) FROM video_fts WHERE video_fts MATCH ?`, search.MatchExpr(q))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{}
		for rows.Next() {
			var id string
			var s float64
			if err := rows.Scan(&id, &s); err != nil {
				t.Fatal(err)
			}
			want[id] = -s
		}
		rows.Close()
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("%q: store scored %v, FTS5 matched %v", q, got, want)
		}
		for id, w := range want {
			if g := got[id]; math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
				t.Errorf("%q %s: store bm25 %.12f, FTS5 bm25 %.12f", q, id, g, w)
			}
		}
	}
	// A phrase in the title and once in the description counts 0 there: the
	// documented approximation, a few percent of the score.
	got, _ := search.TextScores(ctx, db.Reader(), "basil")
	if got["v5"] <= got["v2"] {
		t.Errorf("basil: title+tags+description match %v should outrank description-only %v", got["v5"], got["v2"])
	}
}

func TestMatchExpr(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"cats", `"cats"`},
		{"Cats DOGS", `"cats" AND "dogs"`},
		{`"cat videos" funny`, `"cat videos" AND "funny"`},
		{`"unbalanced phrase`, `"unbalanced phrase"`},
		{"c++", `"c"`},
		{"don't", `"don t"`},
		{"AND OR NOT NEAR", `"and" AND "or" AND "not" AND "near"`},
		{"-foo *bar title:baz", `"foo" AND "bar" AND "title baz"`},
		{"cats cats", `"cats"`},
		{"* - : ( ) ^ + 😀", ``},
		{"café", `"cafe"`},
		{"東京", `("東京" OR (title_grams : "東京"))`},
		{"東京の天気", `("東京の天気" OR (title_grams : "東京 京の の天 天気"))`},
		{"猫", `("猫" OR (title_grams : "猫" *))`},
		{"iPhone東京", `("iphone東京" OR (title_grams : "東京"))`},
		{"क्रिकेट", `"क्रिकेट"`},
	} {
		if got := search.MatchExpr(tc.text); got != tc.want {
			t.Errorf("MatchExpr(%q)\n got %s\nwant %s", tc.text, got, tc.want)
		}
	}
	// At most 16 phrases.
	if got := strings.Count(search.MatchExpr(strings.Repeat("word ", 5)+strings.Join(strings.Fields("a b c d e f g h i j k l m n o p q r s t"), " ")), " AND "); got != 15 {
		t.Errorf("%d ANDs, want 15 (16 phrases)", got)
	}
}

// Every token FTS5 makes of a text that the Go tokenizer splits (it holds a
// glue rune: an emoji newer than FTS5's tables, say) is in the gram column
// as the Go tokens it holds, and nothing else is.
func TestGluedWordsMatchFTS5(t *testing.T) {
	texts := []string{
		"Дорого🤍Идеальные",
		"🥔EP.3-1 감자 캠핑",
		"Os🤩 gols",
		"ゲーム実況🫶まとめ",
		"Alpha🫠Bravo charlie Delta🫠Echo",
		"plain text without glue 😀 mid😀word",
		"🤍🤍 alone 🤍",
		"100₽ and 50₺, ₽100",
		"a🤍b🤍c d🥰 🥰e",
		"cafe\u0301🤍x\u0303",
		"\u2068عربي\u2069 title",
		"東京🤍天気 ข่าว🤩วันนี้",
	}
	// Random mixtures of letters, marks, glue runes, separators and
	// letters FTS5 splits at.
	palette := []rune{'a', 'B', '7', 'ж', 'é', '\u0301', '東', 'の', '한', 'ก', '่', ' ', '.', '-', '😀', '🤍', '🥔', '🫠', '₽', '\u2069', '\uFDD1', '\u0378'}
	seed := uint32(1)
	for i := 0; i < 400; i++ {
		var b strings.Builder
		for j := 0; j < 12; j++ {
			seed = seed*1664525 + 1013904223
			b.WriteRune(palette[int(seed>>16)%len(palette)])
		}
		texts = append(texts, b.String())
	}
	fts := ftsTokens(t, texts)
	bad := 0
	for i, s := range texts {
		var want []string
		for _, tok := range fts[i] {
			words := search.Tokens(tok)
			if len(words) == 0 || slices.Equal(words, []string{tok}) {
				continue
			}
			want = append(want, search.GluedMark)
			want = append(want, words...)
		}
		if got := search.GluedWords(s); !slices.Equal(got, want) {
			bad++
			if bad <= 10 {
				t.Errorf("glued words of %q (FTS5 tokens %q):\n got %q\nwant %q", s, fts[i], got, want)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d texts differ in all, of %d", bad, len(texts))
	}
}
