package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// hostileQueries are things people type (or paste) that break a naive MATCH.
var hostileQueries = []string{
	``, ` `, `"`, `""`, `"""`, `"x`, `x"`, `"a" "b`, `'`, `''`, `'x`,
	`AND`, `OR`, `NOT`, `NEAR`, `and or not`, `a AND`, `OR b`, `NOT x`, `x NOT`, `NEAR(a b)`, `NEAR(`, `NEAR/3`, `a NEAR b`,
	`-`, `--`, `-x`, `x-`, `*`, `**`, `x*`, `*x`, `^`, `^x`, `:`, `x:`, `:x`, `title:x`, `title_grams:x`, `{title}: x`, `{x`,
	`(`, `)`, `()`, `(x`, `x)`, `((x))`, `[x]`, `{}`, `+`, `c++`, `C#`, `.NET`, `don't`, `rock'n'roll`, `l'été`,
	`😀`, `🤔`, `👩‍👩‍👧`, `😀x😀`, "\x00", "x\x00y", "\x01\x02\x1f\x7f", "\t\n\r", "x\u2028y", "\ufeff", "\ufffd",
	"\xff\xfe", "a\xc3", "\xe2\x82", `%`, `_`, `\`, `\"`, `;`, `'; DROP TABLE videos; --`, `" OR 1=1 --`,
	`$`, `@`, `#`, `&&`, `||`, `!`, `~`, `?`, `<mark>`, `&quot;`, `0`, `-1`, `1e309`, `NaN`,
	strings.Repeat("a", 10000), strings.Repeat(`"`, 10001), strings.Repeat("x ", 5000), strings.Repeat("AND ", 2500),
	strings.Repeat("東京", 3000), strings.Repeat("क्रिकेट ", 1000), strings.Repeat("é", 5000), strings.Repeat("(", 10000),
	strings.Repeat("😀", 2500),
}

// fixtureForHostile is a small archive every hostile query runs against.
func fixtureForHostile(tb testing.TB) *store.DB {
	db, _ := openDB(tb)
	saveChart(tb, db, "US", t0, 1,
		store.Video{ID: "h1", Title: "C++ tutorial: don't panic", Description: "AND OR NOT NEAR are words here. c# and .net too", ChannelTitle: "Code", Tags: []string{"c++"}},
		store.Video{ID: "h2", Title: "L'été à Paris 😀", Description: "rock'n'roll title:x", ChannelTitle: "Voyage"},
		store.Video{ID: "h3", Title: "東京の天気予報", Description: "क्रिकेट मैच", ChannelTitle: "ニュース"},
	)
	return db
}

// Any text a person types is plain words: never an SQL error, never a
// panic, and a result that is a non-nil slice.
func TestSearchHostileInput(t *testing.T) {
	db := fixtureForHostile(t)
	ctx := context.Background()
	for _, text := range hostileQueries {
		name := text
		if len(name) > 20 {
			name = name[:20] + "..."
		}
		for _, sort := range []store.SortOrder{store.SortRelevance, store.SortRecent, store.SortViews} {
			hits, err := db.Search(ctx, store.Query{Text: text, Sort: sort, Regions: []regions.Code{"US"}, Channel: text,
				MarkOpen: text, MarkClose: text})
			if err != nil {
				t.Errorf("Search(%q, %s): %v", name, sort, err)
			}
			if _, err := db.Search(ctx, store.Query{Text: "x", Regions: []regions.Code{regions.Code(text)}}); err == nil && !regions.Valid(regions.Code(text)) {
				t.Errorf("Search with region %q: no error; the store takes parsed codes only", name)
			}
			if hits == nil {
				t.Errorf("Search(%q, %s): nil slice", name, sort)
			}
		}
		if _, err := db.Search(ctx, store.Query{Text: text}); err != nil {
			t.Errorf("Search(%q): %v", name, err)
		}
	}
	// Words that are FTS5 operators or punctuation-laden still find what
	// contains them as words.
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"c++", []string{"h1"}},
		{"don't", []string{"h1"}},
		{"AND", []string{"h1"}},
		{"NEAR", []string{"h1"}},
		{"title:x", []string{"h2"}},
		{"rock'n'roll", []string{"h2"}},
		{"l'ete", []string{"h2"}},
		{`"x`, []string{"h2"}},
		{"-panic", []string{"h1"}},
		{"tutorial*", []string{"h1"}},
	} {
		hits, err := db.Search(ctx, store.Query{Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); !slices.Equal(got, tc.want) {
			t.Errorf("Search(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// Raw mode passes FTS5 syntax through; what FTS5 rejects is ErrBadQuery,
// never a crash or another error.
func TestSearchRaw(t *testing.T) {
	db := fixtureForHostile(t)
	ctx := context.Background()
	for _, tc := range []struct {
		text string
		want []string // nil: ErrBadQuery
	}{
		{`tutorial OR paris`, []string{"h1", "h2"}},
		{`tutorial NOT panic`, []string{}},
		{`title : paris`, []string{"h2"}},
		{`tut*`, []string{"h1"}},
		{`NEAR(tutorial panic, 3)`, []string{"h1"}},
		{`"x`, nil},
		{`AND`, nil},
		{`NEAR(`, nil},
		{`nosuchcolumn : x`, nil},
		{`*`, nil},
		{`c++`, nil},
	} {
		hits, err := db.Search(ctx, store.Query{Text: tc.text, Raw: true})
		if tc.want == nil {
			if !errors.Is(err, store.ErrBadQuery) {
				t.Errorf("raw %q: err %v, want ErrBadQuery", tc.text, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("raw %q: %v", tc.text, err)
			continue
		}
		got := ids(hits)
		if !sameSet(got, tc.want) {
			t.Errorf("raw %q = %v, want %v", tc.text, got, tc.want)
		}
	}
	for _, text := range hostileQueries {
		if _, err := db.Search(ctx, store.Query{Text: text, Raw: true}); err != nil && !errors.Is(err, store.ErrBadQuery) {
			t.Errorf("raw %.20q: %v", text, err)
		}
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

var (
	fuzzOnce sync.Once
	fuzzDB   *store.DB
)

// FuzzSearchQuery: no query text may produce an error or a panic, in plain
// mode; in raw mode only ErrBadQuery. The fixture archive is built once per
// fuzzing process so each execution costs one search.
//
//	go test -run '^$' -fuzz '^FuzzSearchQuery$' -fuzztime 10s ./store
func FuzzSearchQuery(f *testing.F) {
	for _, q := range hostileQueries {
		if len(q) < 200 {
			f.Add(q, false)
		}
	}
	f.Add("tutorial OR paris", true)
	f.Add("東京", false)
	fuzzOnce.Do(func() {
		// Not t.TempDir: the database outlives each fuzz iteration's T.
		dir, err := osMkdirTemp()
		if err != nil {
			f.Fatal(err)
		}
		db, err := store.Open(context.Background(), filepath.Join(dir, "fuzz.db"))
		if err != nil {
			f.Fatal(err)
		}
		run, err := db.StartRun(context.Background(), "US", store.TriggerCLI, t0)
		if err != nil {
			f.Fatal(err)
		}
		_, err = db.SavePage(context.Background(), store.Page{RunID: run, Region: "US", FetchedAt: t0, Kind: store.PageChart, FirstRank: 1,
			Videos: []store.Video{
				{ID: "h1", Title: "C++ tutorial: don't panic", Description: "AND OR NOT NEAR are words here", ChannelTitle: "Code"},
				{ID: "h2", Title: "L'été à Paris 😀", Description: "rock'n'roll title:x", ChannelTitle: "Voyage"},
				{ID: "h3", Title: "東京の天気予報", Description: "क्रिकेट मैच", ChannelTitle: "ニュース"},
			}})
		if err != nil {
			f.Fatal(err)
		}
		fuzzDB = db
	})
	f.Fuzz(func(t *testing.T, text string, raw bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hits, err := fuzzDB.Search(ctx, store.Query{Text: text, Raw: raw, Channel: text, MarkOpen: "<", MarkClose: ">"})
		if raw && errors.Is(err, store.ErrBadQuery) {
			return
		}
		if err != nil {
			t.Fatalf("Search(%q, raw=%v): %v", text, raw, err)
		}
		if hits == nil {
			t.Fatalf("Search(%q): nil slice", text)
		}
		for _, h := range hits {
			if !utf8.ValidString(h.Snippet) {
				t.Fatalf("Search(%q): snippet %q is not UTF-8", text, h.Snippet)
			}
		}
	})
}
