package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// day is a fixture day; the fixture's newest sighting is t0+10 days.
const day = 24 * time.Hour

type sighting struct {
	region regions.Code
	rank   int
	at     time.Duration // after t0
}

type fixtureVideo struct {
	v     store.Video
	seen  []sighting
	query bool // found by a search page, never on a chart
}

var fixture = []fixtureVideo{
	// English. "eclipse" is in four titles and one description.
	{v: store.Video{ID: "en1", Title: "Solar eclipse live from Texas", Description: "Watch the moon cover the sun.",
		ChannelID: "UCsky", ChannelTitle: "Sky News", Tags: []string{"astronomy"}, Views: i64(900_000)},
		seen: []sighting{{"US", 1, 10 * day}}},
	{v: store.Video{ID: "en2", Title: "Eclipse glasses review", Description: "Are cheap glasses safe?",
		ChannelID: "UCgadget", ChannelTitle: "Gadget Lab", Tags: []string{"review"}, Views: i64(20_000)},
		seen: []sighting{{"US", 150, 0}}},
	{v: store.Video{ID: "en3", Title: "Morning news roundup", Description: "Traffic, weather and the eclipse tomorrow.",
		ChannelID: "UCsky", ChannelTitle: "Sky News", Tags: []string{"news"}, Views: nil},
		seen: []sighting{{"US", 1, 10 * day}}},
	{v: store.Video{ID: "en4", Title: "Solar eclipse live from Texas", Description: "Watch the moon cover the sun.",
		ChannelID: "UCskyarchive", ChannelTitle: "Sky News Archive", Tags: []string{"astronomy"}, Views: i64(5_000)},
		seen: []sighting{{"US", 80, 3 * day}}},
	{v: store.Video{ID: "s1", Title: "Eclipse photography tips", Description: "Lenses and filters.",
		ChannelID: "UCphoto", ChannelTitle: "Photo School", Views: i64(100)},
		seen: []sighting{{"US", 0, 10 * day}}, query: true},
	// One video on three charts: one hit, three regions.
	{v: store.Video{ID: "multi", Title: "World Cup final highlights", Description: "Goals and celebrations.",
		ChannelID: "UCfifa", ChannelTitle: "FIFA", Views: i64(5_000_000)},
		seen: []sighting{{"US", 5, 9 * day}, {"GB", 2, 9 * day}, {"BR", 1, 10 * day}}},
	// German, French, Portuguese: accents fold.
	{v: store.Video{ID: "de1", Title: "Nachrichten über München", Description: "Wetter und Verkehr in Bayern.",
		ChannelID: "UCbr24", ChannelTitle: "BR24", Views: i64(40_000)},
		seen: []sighting{{"DE", 3, 10 * day}}},
	{v: store.Video{ID: "fr1", Title: "Météo à Paris : été caniculaire", Description: "Les prévisions de la semaine.",
		ChannelID: "UCmeteo", ChannelTitle: "Météo France", Views: i64(70_000)},
		seen: []sighting{{"FR", 4, 10 * day}}},
	{v: store.Video{ID: "pt1", Title: "Notícias do futebol: São Paulo vence", Description: "Resumo da rodada.",
		ChannelID: "UCglobo", ChannelTitle: "Globo Esporte", Views: i64(80_000)},
		seen: []sighting{{"BR", 6, 10 * day}}},
	// Hindi: vowel signs and viramas inside words.
	{v: store.Video{ID: "hi1", Title: "क्रिकेट मैच हाइलाइट्स: भारत बनाम ऑस्ट्रेलिया", Description: "पूरा मैच देखें",
		ChannelID: "UCsports", ChannelTitle: "स्पोर्ट्स तक", Views: i64(1_000_000)},
		seen: []sighting{{"IN", 1, 10 * day}}},
	{v: store.Video{ID: "hi2", Title: "क्रिकेट विश्व कप का इतिहास", Description: "A documentary",
		ChannelID: "UChistory", ChannelTitle: "History India", Views: i64(30_000)},
		seen: []sighting{{"IN", 30, 5 * day}}},
	// Japanese and Chinese: no spaces; found by any part of any column.
	{v: store.Video{ID: "ja1", Title: "東京の天気予報", Description: "明日は晴れ",
		ChannelID: "UCweather", ChannelTitle: "ウェザーニュース", Views: i64(60_000)},
		seen: []sighting{{"JP", 2, 10 * day}}},
	{v: store.Video{ID: "ja2", Title: "大阪グルメ旅", Description: "東京からの日帰りで名物のたこ焼きを食べ歩き",
		ChannelID: "UCtabi", ChannelTitle: "旅チャンネル", Tags: []string{"食べ歩きグルメ", "関西旅行"}, Views: i64(10_000)},
		seen: []sighting{{"JP", 10, 10 * day}}},
	{v: store.Video{ID: "zh1", Title: "Shanghai street food", Description: "我们在上海品尝了小笼包和生煎包",
		ChannelID: "UCchi", ChannelTitle: "美食中国频道", Tags: []string{"上海美食"}, Views: i64(20_000)},
		seen: []sighting{{"TW", 5, 10 * day}}},
}

// openFixture stores the fixture, one page per sighting.
func openFixture(tb testing.TB) *store.DB {
	tb.Helper()
	db, _ := openDB(tb)
	for _, f := range fixture {
		for _, s := range f.seen {
			at := t0.Add(s.at)
			if f.query {
				run := startRun(tb, db, s.region, at)
				savePage(tb, db, store.Page{RunID: run, Region: s.region, FetchedAt: at, Kind: store.PageSearch, Videos: []store.Video{f.v}})
				continue
			}
			saveChart(tb, db, s.region, at, s.rank, f.v)
		}
	}
	return db
}

func find(tb testing.TB, db *store.DB, q store.Query) []store.Hit {
	tb.Helper()
	return archivetest.Search(tb, db, q)
}

// Exact orderings. The comments give the reasoning from the formula in
// rank.go: a title match weighs about twice a description match; among
// equal text, the trend factor (1 + fresh·(0.5 + 0.5·chart)) decides.
func TestSearchOrdering(t *testing.T) {
	db := openFixture(t)
	for _, tc := range []struct {
		q    store.Query
		want []string
	}{
		// en1: title, #1 today (×2.0). s1: shortest title match, seen today
		// but never charted (×1.5). en4: en1's text, #80 a week ago
		// (×1.29). en2: title, #150 ten days ago (×1.20). en3: today's #1,
		// but only a description mention.
		{store.Query{Text: "eclipse"}, []string{"en1", "s1", "en4", "en2", "en3"}},
		{store.Query{Text: "ECLIPSE"}, []string{"en1", "s1", "en4", "en2", "en3"}},
		// Both words must match; "solar" is only in en1/en4's titles.
		{store.Query{Text: "solar eclipse"}, []string{"en1", "en4"}},
		{store.Query{Text: `"eclipse live"`}, []string{"en1", "en4"}},
		{store.Query{Text: `"live eclipse"`}, []string{}},
		// Accents fold both ways.
		{store.Query{Text: "uber munchen"}, []string{"de1"}},
		{store.Query{Text: "Über MÜNCHEN"}, []string{"de1"}},
		{store.Query{Text: "meteo ete"}, []string{"fr1"}},
		{store.Query{Text: "previsions"}, []string{"fr1"}},
		{store.Query{Text: "noticias futebol"}, []string{"pt1"}},
		{store.Query{Text: `"sao paulo"`}, []string{"pt1"}},
		{store.Query{Text: `"paulo sao"`}, []string{}},
		// Hindi: whole words with their vowel signs; hi1 is today's #1,
		// hi2 #30 five days ago.
		{store.Query{Text: "क्रिकेट"}, []string{"hi1", "hi2"}},
		{store.Query{Text: "भारत क्रिकेट"}, []string{"hi1"}},
		{store.Query{Text: "मैच"}, []string{"hi1"}},
		// Japanese: any part of any column; a title match first.
		{store.Query{Text: "東京"}, []string{"ja1", "ja2"}},
		{store.Query{Text: "天気"}, []string{"ja1"}},
		{store.Query{Text: "天気予報"}, []string{"ja1"}},
		{store.Query{Text: "東"}, []string{"ja1", "ja2"}},
		{store.Query{Text: "報"}, []string{"ja1"}},
		{store.Query{Text: "グルメ"}, []string{"ja2"}},
		{store.Query{Text: "東京 天気"}, []string{"ja1"}},
		{store.Query{Text: "京都"}, []string{}},
		// Channel titles are indexed too (weight 3).
		{store.Query{Text: "gadget lab"}, []string{"en2"}},
		{store.Query{Text: "nothingmatchesthis"}, []string{}},
		{store.Query{Text: "eclipse", Limit: 2}, []string{"en1", "s1"}},
		{store.Query{Text: "eclipse", Exhaustive: true}, []string{"en1", "s1", "en4", "en2", "en3"}},
	} {
		got := ids(find(t, db, tc.q))
		if !slices.Equal(got, tc.want) {
			t.Errorf("Search(%q limit %d) = %v, want %v", tc.q.Text, tc.q.Limit, got, tc.want)
		}
	}
}

// CJK text is found by any part of any column: a description's, a tag's
// or a channel title's fragment, not only the whole run, and not across two
// runs or two columns.
func TestSearchCJKInEveryColumn(t *testing.T) {
	db := openFixture(t)
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"日帰り", []string{"ja2"}},      // description, inside 東京からの日帰りで...
		{"たこ焼き", []string{"ja2"}},     // description
		{"東京からの日帰り", []string{"ja2"}}, // the whole run still matches
		{"食べ歩き", []string{"ja2"}},     // a tag fragment (and the description)
		{"関西", []string{"ja2"}},       // a tag fragment only
		{"チャンネル", []string{"ja2"}},    // channel title fragment
		{"小笼包", []string{"zh1"}},      // Chinese description
		{"上海", []string{"zh1"}},       // Chinese tag and description
		{"美食", []string{"zh1"}},       // tag and channel title
		{"中国", []string{"zh1"}},       // channel title only
		{"焼き食べ", []string{}},          // not a substring of any run
		{"グルメ関西", []string{}},         // spans two tags
		{"日帰り たこ焼き", []string{"ja2"}}, // two fragments, both required
		{"日帰り 小笼包", []string{}},       // in two different videos
	} {
		if got := ids(find(t, db, store.Query{Text: c.q})); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.q, got, c.want)
		}
	}
}

func TestSearchHitFields(t *testing.T) {
	db := openFixture(t)
	hits := find(t, db, store.Query{Text: "world cup"})
	if len(hits) != 1 {
		t.Fatalf("world cup: %v", ids(hits))
	}
	h := hits[0]
	want := store.Hit{VideoID: "multi", Title: "World Cup final highlights", ChannelTitle: "FIFA",
		Regions: []regions.Code{"BR", "GB", "US"}, BestRank: 1, LastSeen: t0.Add(10 * day), Views: i64(5_000_000),
		Snippet: "[World] [Cup] final highlights", PublishedAt: time.Time{}, Score: h.Score}
	want.PublishedAt = h.PublishedAt
	if !reflect.DeepEqual(h, want) {
		t.Errorf("hit:\n got %+v\nwant %+v", h, want)
	}
	if h.Score <= 0 {
		t.Errorf("score %v", h.Score)
	}
	// A search-page video: no region, no rank.
	s1 := find(t, db, store.Query{Text: "photography"})
	if len(s1) != 1 || len(s1[0].Regions) != 0 || s1[0].Regions == nil || s1[0].BestRank != 0 || !s1[0].LastSeen.Equal(t0.Add(10*day)) {
		t.Errorf("search-page hit: %+v", s1)
	}
}

func TestSearchFilters(t *testing.T) {
	db := openFixture(t)
	for _, tc := range []struct {
		name string
		q    store.Query
		want []string
	}{
		{"region US", store.Query{Text: "eclipse", Regions: []regions.Code{"US"}}, []string{"en1", "en4", "en2", "en3"}},
		{"region", store.Query{Text: "eclipse", Regions: []regions.Code{"US"}}, []string{"en1", "en4", "en2", "en3"}},
		{"region without match", store.Query{Text: "eclipse", Regions: []regions.Code{"JP"}}, []string{}},
		{"two regions", store.Query{Text: "world cup", Regions: []regions.Code{"GB", "JP"}}, []string{"multi"}},
		{"since", store.Query{Text: "eclipse", Since: t0.Add(5 * day)}, []string{"en1", "s1", "en3"}},
		{"since, nothing that recent", store.Query{Text: "eclipse", Since: t0.Add(11 * day)}, []string{}},
		{"since per region", store.Query{Text: "world cup", Regions: []regions.Code{"US"}, Since: t0.Add(9*day + time.Hour)}, []string{}},
		{"since per region, BR", store.Query{Text: "world cup", Regions: []regions.Code{"BR"}, Since: t0.Add(9*day + time.Hour)}, []string{"multi"}},
		{"channel substring", store.Query{Text: "eclipse", Channel: "sky news"}, []string{"en1", "en4", "en3"}},
		{"channel case", store.Query{Text: "eclipse", Channel: "SKY NEWS ARCHIVE"}, []string{"en4"}},
		{"channel id", store.Query{Text: "eclipse", Channel: "UCgadget"}, []string{"en2"}},
		{"channel id is exact", store.Query{Text: "eclipse", Channel: "ucgadget"}, []string{}},
		{"channel accents", store.Query{Text: "paris", Channel: "METEO"}, []string{"fr1"}},
		{"channel Japanese", store.Query{Text: "東京", Channel: "ウェザー"}, []string{"ja1"}},
		{"channel unknown", store.Query{Text: "eclipse", Channel: "nobody"}, []string{}},
		{"all filters", store.Query{Text: "eclipse", Regions: []regions.Code{"US"}, Since: t0.Add(2 * day), Channel: "sky"}, []string{"en1", "en4", "en3"}},
	} {
		got := ids(find(t, db, tc.q))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// With a region filter a hit shows that region's rank and sighting only.
	hits := find(t, db, store.Query{Text: "world cup", Regions: []regions.Code{"GB"}})
	if len(hits) != 1 || !reflect.DeepEqual(hits[0].Regions, []regions.Code{"GB"}) || hits[0].BestRank != 2 || !hits[0].LastSeen.Equal(t0.Add(9*day)) {
		t.Errorf("world cup in GB: %+v", hits)
	}
	hits = find(t, db, store.Query{Text: "world cup", Regions: []regions.Code{"US", "GB"}})
	if len(hits) != 1 || !reflect.DeepEqual(hits[0].Regions, []regions.Code{"GB", "US"}) || hits[0].BestRank != 2 {
		t.Errorf("world cup in US+GB: %+v", hits)
	}
}

func TestSearchSortOrders(t *testing.T) {
	db := openFixture(t)
	for _, tc := range []struct {
		sort store.SortOrder
		want []string
	}{
		// Last seen today: en1, s1, en3 (ties by relevance); then en4 (day
		// 3), en2 (day 0).
		{store.SortRecent, []string{"en1", "s1", "en3", "en4", "en2"}},
		// Views; en3 hides its count, so it comes last.
		{store.SortViews, []string{"en1", "en2", "en4", "s1", "en3"}},
		{store.SortRelevance, []string{"en1", "s1", "en4", "en2", "en3"}},
	} {
		got := ids(find(t, db, store.Query{Text: "eclipse", Sort: tc.sort}))
		if !slices.Equal(got, tc.want) {
			t.Errorf("sort %s: %v, want %v", tc.sort, got, tc.want)
		}
	}
	if _, err := db.Search(context.Background(), store.Query{Text: "eclipse", Sort: "alphabetical"}); err == nil {
		t.Error("unknown sort order accepted")
	}
}

func TestSearchSnippets(t *testing.T) {
	db := openFixture(t)
	for _, tc := range []struct {
		q    store.Query
		want map[string]string
	}{
		{store.Query{Text: "eclipse", MarkOpen: "<mark>", MarkClose: "</mark>"}, map[string]string{
			// The description when it matches; the title otherwise.
			"en3": "Traffic, weather and the <mark>eclipse</mark> tomorrow.",
			"en1": "Solar <mark>eclipse</mark> live from Texas",
		}},
		{store.Query{Text: "cafe"}, map[string]string{}},
		{store.Query{Text: "ete meteo"}, map[string]string{"fr1": "[Météo] à Paris : [été] caniculaire"}},
		{store.Query{Text: "東京", MarkOpen: "\x1b[1m", MarkClose: "\x1b[0m"}, map[string]string{"ja1": "\x1b[1m東京\x1b[0mの天気予報"}},
		{store.Query{Text: "क्रिकेट"}, map[string]string{"hi2": "[क्रिकेट] विश्व कप का इतिहास"}},
		{store.Query{Text: "sky"}, map[string]string{"en3": "[Sky] News"}},
		// A description fragment in Japanese: highlighted where the index
		// matched it, inside the run.
		{store.Query{Text: "日帰り"}, map[string]string{"ja2": "東京からの[日帰り]で名物のたこ焼きを食べ歩き"}},
		{store.Query{Text: "小笼包"}, map[string]string{"zh1": "我们在上海品尝了[小笼包]和生煎包"}},
	} {
		hits := find(t, db, tc.q)
		got := map[string]string{}
		for _, h := range hits {
			if _, ok := tc.want[h.VideoID]; ok {
				got[h.VideoID] = h.Snippet
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("snippets for %q:\n got %q\nwant %q", tc.q.Text, got, tc.want)
		}
	}
}

// A long description is cut to a window around the matches.
func TestSnippetWindow(t *testing.T) {
	db, _ := openDB(t)
	words := make([]string, 200)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	words[120] = "needle"
	saveChart(t, db, "US", t0, 1, store.Video{ID: "long", Title: "Long one", Description: strings.Join(words, " ")})
	hits := find(t, db, store.Query{Text: "needle"})
	if len(hits) != 1 {
		t.Fatal(ids(hits))
	}
	want := "…w117 w118 w119 [needle] w121 w122 w123 w124 w125 w126 w127 w128 w129 w130 w131 w132 w133 w134 w135 w136 w137 w138 w139 w140…"
	if hits[0].Snippet != want {
		t.Errorf("snippet\n got %q\nwant %q", hits[0].Snippet, want)
	}
}

// A snippet is at most about 160 characters, even where a "word" is a
// whole clause: it keeps 40 characters before the first match, and cuts
// Latin text between words.
func TestSnippetClipsLongRuns(t *testing.T) {
	db, _ := openDB(t)
	run := strings.Repeat("あいうえおかきくけこ", 30) // 300 characters, one token
	latin := make([]string, 40)
	for i := range latin {
		latin[i] = fmt.Sprintf("longerword%02d", i) // 24 words are 311 characters
	}
	latin[10] = "needle"
	saveChart(t, db, "JP", t0, 1,
		store.Video{ID: "cjk", Title: "x", Description: run[:150*3] + "東京タワー" + run[150*3:]},
		store.Video{ID: "lat", Title: "y", Description: strings.Join(latin, " ")})
	for _, c := range []struct {
		q, id, want string
	}{
		{"東京タワー", "cjk", "…" + run[110*3:150*3] + "[東京タワー]" + run[150*3:265*3] + "…"},
		{"needle", "lat", "…longerword07 longerword08 longerword09 [needle] longerword11 longerword12 longerword13 longerword14 longerword15 longerword16 longerword17 longerword18…"},
	} {
		hits := find(t, db, store.Query{Text: c.q})
		if len(hits) != 1 || hits[0].VideoID != c.id {
			t.Fatalf("%s: %v", c.q, ids(hits))
		}
		got := hits[0].Snippet
		if got != c.want {
			t.Errorf("%s: snippet\n got %q\nwant %q", c.q, got, c.want)
		}
		if n := utf8.RuneCountInString(strings.NewReplacer("[", "", "]", "", "…", "").Replace(got)); n > 160 {
			t.Errorf("%s: %d characters", c.q, n)
		}
	}
}

// Filters apply inside the scan: a filtered search finds its one match
// however many newer unfiltered matches there are, and an old match that
// outranks every newer one is first without --exhaustive.
func TestFiltersAndOldBestMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 3,100 videos")
	}
	db, _ := openDB(t)
	saveChart(t, db, "JP", t0, 1,
		store.Video{ID: "old-best", Title: "common common", ChannelID: "UCrare", ChannelTitle: "Rare Channel"},
		store.Video{ID: "old-jp", Title: "common word", ChannelID: "UCrare", ChannelTitle: "Rare Channel"})
	run := startRun(t, db, "US", t0.Add(day))
	n := 3100 // three blocks of ids and more
	for p := 0; p*50 < n; p++ {
		vs := make([]store.Video, 50)
		for i := range vs {
			vs[i] = store.Video{ID: fmt.Sprintf("us%d-%d", p, i), Title: "common word " + strings.Repeat("filler ", 8),
				ChannelID: "UCbusy", ChannelTitle: "Busy Channel"}
		}
		savePage(t, db, store.Page{RunID: run, Region: "US", FetchedAt: t0.Add(day + time.Duration(p)*time.Second), FirstRank: 1 + 50*p, Videos: vs})
	}
	for _, q := range []store.Query{
		{Text: "word", Regions: []regions.Code{"JP"}},
		{Text: "word", Channel: "rare"},
		{Text: "word", Since: t0.Add(-time.Hour), Channel: "UCrare"},
	} {
		if got := ids(find(t, db, q)); !slices.Equal(got, []string{"old-jp"}) {
			t.Errorf("%+v: %v, want [old-jp]", q, got)
		}
	}
	// "common" twice in a short title, rank 1, a day older than 3,100
	// longer titles: it is the best match, and the walk must reach it.
	for _, exhaustive := range []bool{false, true} {
		got := find(t, db, store.Query{Text: "common", Limit: store.MaxLimit, Exhaustive: exhaustive})
		if len(got) != store.MaxLimit || got[0].VideoID != "old-best" {
			t.Errorf("exhaustive=%v: %d hits, first %v", exhaustive, len(got), ids(got[:1]))
		}
	}
}
