package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

func cat(id, title string, assignable bool) store.Category {
	return store.Category{ID: id, Title: title, Assignable: &assignable}
}

func saveCategories(tb testing.TB, db *store.DB, region regions.Code, at time.Time, cats ...store.Category) {
	tb.Helper()
	if err := db.SaveCategories(context.Background(), region, at, cats); err != nil {
		tb.Fatal(err)
	}
}

func categoryStrings(cs []store.Category) []string {
	var out []string
	for _, c := range cs {
		a := "nil"
		if c.Assignable != nil {
			a = fmt.Sprint(*c.Assignable)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s %s", c.Region, c.ID, c.Title, a, c.FetchedAt.Format(time.RFC3339)))
	}
	return out
}

// A newer answer replaces a region's list whole; other regions keep theirs;
// names an import taught fill only the ids the API did not name.
func TestSaveCategories(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	if at, err := db.CategoriesFetchedAt(ctx, "US"); err != nil || !at.IsZero() {
		t.Fatalf("never fetched: %v, %v", at, err)
	}
	saveCategories(t, db, "US", t0, cat("1", "Film & Animation", true), cat("10", "Music", true), cat("2", "Autos & Vehicles", true))
	saveCategories(t, db, "DE", t0, cat("10", "Music", true))
	// An import names 10 (the API did: ignored) and 99 (a gap: learned).
	res, err := db.ImportChart(ctx, store.ImportedChart{Region: "US", Pages: []store.Page{{FetchedAt: t0.Add(time.Hour), FirstRank: 1,
		Videos: []store.Video{vid("aaa", "Alpha", 1)}}}, Categories: map[string]string{"10": "Musik", "99": "Imported"}})
	if err != nil || res.Skipped {
		t.Fatal(res, err)
	}
	later := t0.Add(24 * time.Hour)
	saveCategories(t, db, "US", later, cat("10", "Music", true), cat("18", "Short Movies", false))
	got, err := db.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"DE 10 Music true 2026-03-01T12:00:00Z",
		"US 10 Music true 2026-03-02T12:00:00Z",
		"US 18 Short Movies false 2026-03-02T12:00:00Z",
		"US 99 Imported nil 2026-03-01T13:00:00Z",
	}
	if s := categoryStrings(got); !slices.Equal(s, want) {
		t.Errorf("categories:\n%q\nwant\n%q", s, want)
	}
	if us, _ := db.Categories(ctx, "US"); len(us) != 3 {
		t.Errorf("US only: %v", categoryStrings(us))
	}
	if at, err := db.CategoriesFetchedAt(ctx, "US"); err != nil || !at.Equal(later) {
		t.Errorf("US fetched at %v, %v; want %v", at, err, later)
	}
	if err := db.SaveCategories(ctx, "XX", t0, nil); err == nil {
		t.Error("saved categories of region XX")
	}
}

func TestCategoryIDs(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	if _, err := db.CategoryIDs(ctx, "Music", "US"); !errors.Is(err, store.ErrUnknownCategory) ||
		err.Error() != `store: unknown category: "Music": the archive has no category names for US yet (a fetch stores them); give a category id instead` {
		t.Errorf("no names cached: %v", err)
	}
	saveCategories(t, db, "US", t0, cat("10", "Music", true), cat("23", "Comedy", true), cat("34", "Comedy", false),
		cat("1", "Film & Animation", true))
	saveCategories(t, db, "DE", t0, cat("17", "Sports", true))
	saveCategories(t, db, "BR", t0, cat("1", "Cat\x1b]0;pwned\x07", true), cat("2", "Cat\n   1\tNEW\tforged", true),
		cat("3", `Odd, but "printable"`, true))
	for _, c := range []struct {
		arg     string
		regions []regions.Code
		want    []string
		err     string
	}{
		{"music", []regions.Code{"US"}, []string{"10"}, ""},
		{"  FILM & animation ", nil, []string{"1"}, ""},
		{"Comedy", []regions.Code{"US"}, []string{"23", "34"}, ""},
		{"10", []regions.Code{"DE"}, []string{"10"}, ""}, // an id is taken as it is
		{"Sports", nil, []string{"17"}, ""},
		{"Sports", []regions.Code{"US"}, nil, `store: unknown category: "Sports" is no category name known for US; known: Comedy, Film & Animation, Music`},
		{"Muzak", []regions.Code{"US", "DE"}, nil, `store: unknown category: "Muzak" is no category name known for US, DE; known: Comedy, Film & Animation, Music, Sports`},
		{"", nil, nil, "store: unknown category: empty category"},
		// Names that are not plain text are quoted, escapes and all: the
		// list cannot forge a line or act on a terminal (red team).
		{"x", []regions.Code{"BR"}, nil, `store: unknown category: "x" is no category name known for BR; known: "Cat\n   1\tNEW\tforged", "Cat\x1b]0;pwned\a", "Odd, but \"printable\""`},
	} {
		got, err := db.CategoryIDs(ctx, c.arg, c.regions...)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err || !errors.Is(err, store.ErrUnknownCategory)):
			t.Errorf("%q in %v: %v, %v; want error %q", c.arg, c.regions, got, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%q in %v: %v, %v; want %v", c.arg, c.regions, got, err, c.want)
		}
	}
}

// Chart, history, search and export name each video's category from the
// cache, and filter by category id.
func TestCategoryNamesAndFilters(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	music := func(id, title string, views int64) store.Video { return vid(id, title, views) } // vid is category 10
	sport := func(id, title string, views int64) store.Video {
		v := vid(id, title, views)
		v.CategoryID = "17"
		return v
	}
	saveChart(t, db, "US", t0, 1, music("aaa", "Alpha song", 10), sport("bbb", "Bravo match", 20), music("ccc", "Charlie song", 30))
	saveChart(t, db, "US", t0.Add(time.Hour), 1, sport("bbb", "Bravo match", 21), music("ccc", "Charlie song", 31), sport("ddd", "Delta match", 40))
	saveChart(t, db, "DE", t0.Add(time.Hour), 1, sport("ddd", "Delta match", 41))
	saveCategories(t, db, "US", t0, cat("10", "Music", true), cat("17", "Sports", true))
	saveCategories(t, db, "DE", t0, cat("17", "Sport", true))

	c, err := db.ChartOf(ctx, store.ChartQuery{Region: "US", Categories: []string{"17"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Entries {
		got = append(got, fmt.Sprintf("%d %s %s %s %s", e.Rank, e.VideoID, e.CategoryID, e.Category, e.Movement))
	}
	// Entries keep their rank in the whole chart, and their movement.
	if want := []string{"1 bbb 17 Sports up", "3 ddd 17 Sports new"}; !slices.Equal(got, want) {
		t.Errorf("US sports chart: %q, want %q", got, want)
	}
	c, err = db.ChartOf(ctx, store.ChartQuery{Region: "US", Categories: []string{"10", "17"}, Limit: 2})
	if err != nil || len(c.Entries) != 2 || c.Entries[1].Category != "Music" {
		t.Errorf("two categories, limit 2: %+v, %v", c.Entries, err)
	}
	if de, _ := db.Chart(ctx, "DE", time.Time{}, 0); de.Entries[0].Category != "Sport" {
		t.Errorf("DE's own name for 17: %q", de.Entries[0].Category)
	}

	h, err := db.History(ctx, "ddd")
	if err != nil || h.CategoryID != "17" || h.Category != "Sport" { // DE comes first of its regions
		t.Errorf("history of ddd: %q %q, %v", h.CategoryID, h.Category, err)
	}
	saveChart(t, db, "JP", t0.Add(time.Hour), 1, music("eee", "Echo song", 1))
	if h, _ := db.History(ctx, "eee"); h.Category != "Music" { // JP has no names: another region's
		t.Errorf("history of eee: %q", h.Category)
	}

	hits, err := db.Search(ctx, store.Query{Text: "match", Categories: []string{"17"}})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, h := range hits {
		got = append(got, fmt.Sprintf("%s %s %s", h.VideoID, h.CategoryID, h.Category))
	}
	slices.Sort(got)
	if want := []string{"bbb 17 Sports", "ddd 17 Sport"}; !slices.Equal(got, want) {
		t.Errorf("search match in 17: %q, want %q", got, want)
	}
	// A hit in regions without names for its id: another region's, as in
	// its history.
	if hits, err := db.Search(ctx, store.Query{Text: "echo"}); err != nil || len(hits) != 1 || hits[0].Category != "Music" {
		t.Errorf("search echo: %+v, %v", hits, err)
	}
	if hits, _ := db.Search(ctx, store.Query{Text: "match", Categories: []string{"10"}}); len(hits) != 0 {
		t.Errorf("search match in 10: %d hits", len(hits))
	}
	if hits, _ := db.Search(ctx, store.Query{Text: "song", Categories: []string{"10"}, Regions: []regions.Code{"US"}}); len(hits) != 2 {
		t.Errorf("search song in 10 in US: %d hits", len(hits))
	}

	var rows []string
	err = db.Snapshots(ctx, store.SnapshotFilter{Categories: []string{"17"}, Regions: []regions.Code{"US", "DE"}}, func(s *store.Snapshot) error {
		rows = append(rows, fmt.Sprintf("%s %d %s %s", s.Region, s.Rank, s.Video.ID, s.Category))
		return nil
	})
	if want := []string{"US 2 bbb Sports", "US 1 bbb Sports", "US 3 ddd Sports", "DE 1 ddd Sport"}; err != nil || !slices.Equal(rows, want) {
		t.Errorf("export of 17: %q, %v; want %q", rows, err, want)
	}
}

// A category id that is not UTF-8 (an archive another program wrote:
// ytrend cleans what it stores) is named in search as in history: the ids
// are compared as stored, never passed through JSON, which would make
// U+FFFD of the bad byte.
func TestCategoryNameOfBytesNotUTF8(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	saveChart(t, db, "US", t0, 1, vid("fff", "Foxtrot song", 10))
	if _, err := db.Writer().ExecContext(ctx, `UPDATE videos SET category_id = CAST(X'31ff' AS TEXT) WHERE video_id = 'fff'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().ExecContext(ctx, `INSERT INTO categories (region, category_id, title, assignable, fetched_at)
		VALUES ('US', CAST(X'31ff' AS TEXT), 'Odd', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	h, err := db.History(ctx, "fff")
	if err != nil || h.Category != "Odd" {
		t.Fatalf("history: %q, %v", h.Category, err)
	}
	hits, err := db.Search(ctx, store.Query{Text: "foxtrot"})
	if err != nil || len(hits) != 1 || hits[0].Category != "Odd" {
		t.Fatalf("search: %+v, %v", hits, err)
	}
}
