package search_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/synth"
)

func openGlued(tb testing.TB) *store.DB {
	tb.Helper()
	db, _ := openDB(tb)
	saveChart(tb, db, "RU", t0, 1, synth.Glued()...)
	return db
}

func TestGluedWordsFound(t *testing.T) {
	db := openGlued(t)
	for _, tc := range []struct {
		text string
		want []string // sorted
	}{
		{"Дорого", []string{"ru1"}},
		{"идеальные", []string{"plain", "ru1"}},
		{`"дорого идеальные"`, []string{"ru1"}},
		{"навсегда", []string{"ru1"}},
		{`"отношения навсегда"`, []string{"ru1"}},
		{"EP", []string{"ko1"}},
		{"os", []string{"plain", "pt1"}},
		{"まとめ", []string{"ja1"}},
		{"ゲーム実況", []string{"ja1"}},
		{"alpha", []string{"en1"}},
		{`"alpha bravo"`, []string{"en1"}},
		{`"delta echo"`, []string{"en1"}},
		// Not adjacent in the text: neither across a plain word, nor across
		// two columns.
		{`"bravo delta"`, []string{"plain"}},
		{`"echo foxtrot"`, []string{}},
		{`"идеальные отношения"`, []string{"plain"}},
		// An emoji is not a word; a query of one finds nothing.
		{"🤍", []string{}},
	} {
		got := ids(find(t, db, store.Query{Text: tc.text, Exhaustive: true}))
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.text, got, tc.want)
		}
		// The default walk finds the same.
		walk := ids(find(t, db, store.Query{Text: tc.text}))
		slices.Sort(walk)
		if !slices.Equal(walk, tc.want) {
			t.Errorf("%s (walk): %v, want %v", tc.text, walk, tc.want)
		}
	}
	archivetest.Integrity(t, db)
}

// The snippet marks the word the index matched, not the emoji or the word
// glued to it.
func TestGluedWordsSnippet(t *testing.T) {
	db := openGlued(t)
	for _, tc := range []struct{ text, id, want string }{
		{"дорого", "ru1", "[Дорого]🤍Идеальные"},
		{`"дорого идеальные"`, "ru1", "[Дорого🤍Идеальные]"},
		{"ep", "ko1", "🥔[EP].3-1 감자 캠핑"},
		{"os", "pt1", "[Os]🤩 gols e as defesas"},
		{"まとめ", "ja1", "ゲーム実況🫶[まとめ]"},
	} {
		hits := find(t, db, store.Query{Text: tc.text})
		i := slices.IndexFunc(hits, func(h store.Hit) bool { return h.VideoID == tc.id })
		if i < 0 {
			t.Errorf("%s: %s not found (%v)", tc.text, tc.id, ids(hits))
			continue
		}
		if got := hits[i].Snippet; got != tc.want {
			t.Errorf("%s: snippet %q, want %q", tc.text, got, tc.want)
		}
	}
}

// A glued word scores as the same word unglued in the same column: the term
// counts are the Go tokenizer's either way. ru1's and plain's titles hold
// "идеальные" once each; plain's title is longer (4 words against 2), so
// ru1 ranks first, with the score bm25 gives a two-word title.
func TestGluedWordsRankAsWords(t *testing.T) {
	db := openGlued(t)
	ctx := context.Background()
	scores, err := search.TextScores(ctx, db.Reader(), "идеальные")
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 2 || scores["ru1"] <= scores["plain"] {
		t.Fatalf("scores %v: want ru1 (two-word title) above plain (four words)", scores)
	}
	// The same title written with a space scores the same.
	db2, _ := openDB(t)
	vs := synth.Glued()
	vs[0].Title, vs[0].Description = "Дорого Идеальные", "Отношения навсегда"
	saveChart(t, db2, "RU", t0, 1, vs...)
	spaced, err := search.TextScores(ctx, db2.Reader(), "идеальные")
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range spaced {
		if scores[id] != s {
			t.Errorf("%s: glued %v, spaced %v", id, scores[id], s)
		}
	}
}
