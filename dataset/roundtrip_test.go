package dataset_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// importFile imports every chart of content; it returns how many were
// imported and how many the archive already had.
func importFile(t *testing.T, db *store.DB, name, content string, region regions.Code) (imported, had int, rep dataset.Report) {
	t.Helper()
	r, err := dataset.NewReader(strings.NewReader(content), name, region)
	if err != nil {
		t.Fatal(err)
	}
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		res, err := db.ImportChart(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Skipped {
			had++
		} else {
			imported++
		}
	}
	return imported, had, r.Report()
}

func export(t *testing.T, db *store.DB, jsonl bool, f store.SnapshotFilter) string {
	t.Helper()
	var b bytes.Buffer
	var w dataset.Writer
	if jsonl {
		w = dataset.NewJSONLWriter(&b)
	} else {
		cw, err := dataset.NewCSVWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w = cw
	}
	if err := db.Snapshots(context.Background(), f, w.Write); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func i64(n int64) *int64 { return &n }

// liveArchive holds what ytrend's own fetches store: several pages a run,
// fetched seconds apart, hidden counts, a video on two pages of one run,
// text that CSV must quote, and both public datasets imported.
func liveArchive(t *testing.T) *store.DB {
	t.Helper()
	ctx := context.Background()
	db := openDB(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	v := func(id, title string, views int64) store.Video {
		return store.Video{ID: id, Title: title, ChannelID: "UC" + id, ChannelTitle: "Kanal, \"" + id + "\"", CategoryID: "24",
			Tags: []string{"tag one", "tag|two"}, PublishedAt: at.Add(-time.Hour), Duration: time.Minute, DefaultLanguage: "de",
			ThumbnailURL: "https://i.ytimg.com/vi/" + id + "/hqdefault.jpg", Description: "Zeile 1\r\nZeile 2, \"zitiert\"\n",
			Views: i64(views), Likes: i64(views / 10), Comments: i64(views / 100)}
	}
	hidden := v("hid", "Versteckt", 5)
	hidden.Likes, hidden.Comments, hidden.Tags = nil, nil, nil
	for i, run := range []struct {
		region regions.Code
		pages  [][]store.Video
	}{
		{"DE", [][]store.Video{{v("aaa", "Alpha", 100), hidden}, {v("bbb", "Bravo", 50), v("aaa", "Alpha", 100)}}},
		{"GB", [][]store.Video{{v("bbb", "Bravo", 60)}}},
		{"DE", [][]store.Video{{v("bbb", "Bravo", 70), v("ccc", "東京の天気", 1)}}},
	} {
		start := at.Add(time.Duration(i) * time.Hour)
		id, err := db.StartRun(ctx, run.region, store.TriggerSchedule, start)
		if err != nil {
			t.Fatal(err)
		}
		rank := 1
		for j, p := range run.pages {
			if _, err := db.SavePage(ctx, store.Page{RunID: id, Region: run.region, FetchedAt: start.Add(time.Duration(j) * 1500 * time.Millisecond),
				FirstRank: rank, Videos: p}); err != nil {
				t.Fatal(err)
			}
			rank += len(p)
		}
		if err := db.FinishRun(ctx, id, store.RunEnd{Status: store.StatusOK, At: start.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	importFile(t, db, "USvideos.csv", file2017(rows2017), "US")
	importFile(t, db, "JP_youtube_trending_data.csv", file2020(t, columns2020, rows2020, style{quoteAll: true}), "JP")
	// Names as videoCategories.list gave them; US has none for 22, and GB
	// none at all.
	yes := true
	for region, cats := range map[regions.Code][]store.Category{
		"DE": {{ID: "24", Title: "Entertainment", Assignable: &yes}, {ID: "10", Title: "Music", Assignable: &yes}},
		"US": {{ID: "24", Title: "Entertainment", Assignable: &yes}, {ID: "10", Title: "Music", Assignable: &yes}},
	} {
		if err := db.SaveCategories(ctx, region, at, cats); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// Export, import into a fresh archive, export again: the same rows, byte
// for byte, in both forms; and importing the export again changes nothing.
func TestExportImportRoundTrip(t *testing.T) {
	src := liveArchive(t)
	for _, jsonl := range []bool{false, true} {
		first := export(t, src, jsonl, store.SnapshotFilter{})
		lines := strings.Count(first, "\n")
		dst := openDB(t)
		imported, had, rep := importFile(t, dst, "export", first, "")
		if rep.Skipped != 0 || had != 0 || imported != 3+2+2 {
			t.Errorf("jsonl=%v: import of the export: %d imported, %d had, %+v", jsonl, imported, had, rep)
		}
		second := export(t, dst, jsonl, store.SnapshotFilter{})
		if first != second {
			t.Errorf("jsonl=%v: export -> import -> export differs:\n%s\n---\n%s", jsonl, first, second)
		}
		if c, _ := dst.Counts(context.Background()); c.Snapshots != 4+1+2+8+6 || (jsonl && lines != 21) || rep.Rows != 21 {
			t.Errorf("jsonl=%v: %d snapshots, %d lines, %d rows read", jsonl, c.Snapshots, lines, rep.Rows)
		}
		_, had, _ = importFile(t, dst, "export", first, "")
		if had != imported || export(t, dst, jsonl, store.SnapshotFilter{}) != first {
			t.Errorf("jsonl=%v: a second import changed the archive (%d of %d charts already there)", jsonl, had, imported)
		}
	}
}

func TestCSVExportColumns(t *testing.T) {
	db := liveArchive(t)
	out := export(t, db, false, store.SnapshotFilter{Regions: []regions.Code{"DE", "US"}})
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes," +
		"comment_count,thumbnail_link,comments_disabled,ratings_disabled,description,region,rank,fetched_at,category"
	if strings.Join(recs[0], ",") != want {
		t.Fatalf("header %q", recs[0])
	}
	get := func(videoID, region, rank string) map[string]string {
		for _, r := range recs[1:] {
			if r[0] == videoID && r[16] == region && r[17] == rank {
				m := map[string]string{}
				for i, c := range recs[0] {
					m[c] = r[i]
				}
				return m
			}
		}
		t.Fatalf("no row %s %s #%s", videoID, region, rank)
		return nil
	}
	a := get("aaa", "DE", "1")
	for col, w := range map[string]string{
		"title": "Alpha", "publishedAt": "2026-03-01T11:00:00Z", "channelId": "UCaaa", "channelTitle": `Kanal, "aaa"`,
		"categoryId": "24", "trending_date": "2026-03-01T00:00:00Z", "tags": "tag one|tag|two", "view_count": "100",
		"likes": "10", "dislikes": "", "comment_count": "1", "thumbnail_link": "https://i.ytimg.com/vi/aaa/hqdefault.jpg",
		"comments_disabled": "False", "ratings_disabled": "False", "description": "Zeile 1\nZeile 2, \"zitiert\"\n",
		"fetched_at": "2026-03-01T12:00:00.123456Z", "category": "Entertainment",
	} {
		if a[col] != w {
			t.Errorf("aaa %s = %q, want %q", col, a[col], w)
		}
	}
	if a2 := get("aaa", "DE", "4"); a2["fetched_at"] != "2026-03-01T12:00:01.623456Z" {
		t.Errorf("the same video on the run's second page: %q", a2["fetched_at"])
	}
	h := get("hid", "DE", "2")
	if h["tags"] != "[None]" || h["likes"] != "" || h["comment_count"] != "" || h["view_count"] != "5" ||
		h["ratings_disabled"] != "True" || h["comments_disabled"] != "True" {
		t.Errorf("hidden counts: %v", h)
	}
	d := get("d380meD0W0M", "US", "5") // ratings disabled in the 2017-18 file
	if d["likes"] != "" || d["dislikes"] != "" || d["ratings_disabled"] != "True" || d["comment_count"] != "17518" || d["channelId"] != "" ||
		d["trending_date"] != "2017-11-14T00:00:00Z" || d["fetched_at"] != "2017-11-14T00:00:00Z" || d["tags"] != "[None]" {
		t.Errorf("imported 2017-18 row: %v", d)
	}
	if w := get("2kyS6SvSYSE", "US", "1"); w["dislikes"] != "2966" || w["publishedAt"] != "2017-11-13T17:13:01Z" {
		t.Errorf("imported dislikes: %v", w)
	}
	if d["category"] != "Entertainment" || get("2kyS6SvSYSE", "US", "1")["category"] != "" {
		t.Errorf("category names: 24 in US is %q, 22 (no name cached) is %q", d["category"], get("2kyS6SvSYSE", "US", "1")["category"])
	}
	var regionsSeen []string
	for _, r := range recs[1:] {
		if !slices.Contains(regionsSeen, r[16]) {
			regionsSeen = append(regionsSeen, r[16])
		}
	}
	if !slices.Equal(regionsSeen, []string{"US", "DE"}) || len(recs) != 1+8+6 {
		t.Errorf("DE and US only, in fetch order: %v, %d rows", regionsSeen, len(recs)-1)
	}
}

func TestJSONLCutOffAndBrokenLines(t *testing.T) {
	full := export(t, liveArchive(t), true, store.SnapshotFilter{Regions: []regions.Code{"US"}})
	lines := strings.SplitAfter(full, "\n")
	if len(lines) != 9 || lines[8] != "" {
		t.Fatalf("%d lines", len(lines))
	}
	// A line that is not JSON in the middle, and the last one cut off.
	broken := strings.Join(lines[:3], "") + "{\"video_id\": oops}\n\n" + strings.Join(lines[3:7], "") + lines[7][:40]
	charts, rep := readAll(t, "US.jsonl", broken, "")
	got := videosIn(charts)
	want := []string{
		"line 4: malformed: not a JSON object of the export: invalid character 'o' looking for beginning of value",
		"line 10: cut off: the file ends in the middle of this record",
	}
	if got != 7 || !rep.CutOff || !slices.Equal(skips(rep), want) {
		t.Errorf("%d rows read; skips %q, want %q", got, skips(rep), want)
	}
}

// The export names categories in a last column; the importing archive
// learns those names (without the API's assignable flag, which the file
// does not carry), and an export written before the column existed is
// read all the same.
func TestExportCategoryColumn(t *testing.T) {
	ctx := context.Background()
	src := liveArchive(t)
	out := export(t, src, false, store.SnapshotFilter{Categories: []string{"24"}})
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	byCategory := map[string]int{}
	for _, r := range recs[1:] {
		byCategory[r[5]+" "+r[16]+" "+r[19]]++
	}
	// Every category-24 position: DE's 6 (names cached), GB's 1 (none
	// cached), the 2017-18 file's 5 in US; JP's file has no 24.
	want := map[string]int{"24 DE Entertainment": 6, "24 GB ": 1, "24 US Entertainment": 5}
	if !maps.Equal(byCategory, want) {
		t.Errorf("--category 24 rows: %v, want %v", byCategory, want)
	}

	dst := openDB(t)
	importFile(t, dst, "export", export(t, src, false, store.SnapshotFilter{}), "")
	cats, err := dst.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cats {
		got = append(got, fmt.Sprintf("%s %s %s %v", c.Region, c.ID, c.Title, c.Assignable))
	}
	// Only the ids the exported rows used: DE and US name 24, nobody 10.
	if w := []string{"DE 24 Entertainment <nil>", "US 24 Entertainment <nil>"}; !slices.Equal(got, w) {
		t.Errorf("learned names %q, want %q", got, w)
	}
	if at, _ := dst.CategoriesFetchedAt(ctx, "DE"); !at.IsZero() {
		t.Errorf("names from an import count as fetched at %v", at)
	}

	// An export from before the category column: the same rows, no names.
	var old bytes.Buffer
	cw := csv.NewWriter(&old)
	all, _ := csv.NewReader(strings.NewReader(export(t, src, false, store.SnapshotFilter{}))).ReadAll()
	for _, r := range all {
		cw.Write(r[:19])
	}
	cw.Flush()
	legacy := openDB(t)
	imported, _, rep := importFile(t, legacy, "old-export.csv", old.String(), "")
	if imported != 7 || rep.Skipped != 0 || rep.Rows != len(all)-1 {
		t.Errorf("old export: %d charts imported, report %+v", imported, rep)
	}
	if cats, _ := legacy.Categories(ctx); len(cats) != 0 {
		t.Errorf("names from a file without them: %v", cats)
	}
}

// SafeForSpreadsheets defuses every cell a spreadsheet could run as a
// formula: one beginning with =, +, -, @, or a tab or carriage return
// (which some programs skip before reading a formula; OWASP's CSV
// injection guidance lists all six). Other cells are written as they are.
func TestSafeForSpreadsheetsDefusesEveryFormulaStart(t *testing.T) {
	for _, tc := range []struct{ title, want string }{
		{"=1+1", "'=1+1"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"@SUM(1+1)", "'@SUM(1+1)"},
		{"\t=HYPERLINK(\"http://evil.example\")", "'\t=HYPERLINK(\"http://evil.example\")"},
		{"\r=HYPERLINK(\"http://evil.example\")", "'\r=HYPERLINK(\"http://evil.example\")"},
		{"a title", "a title"},
		{" =1+1", " =1+1"},
	} {
		var buf bytes.Buffer
		w, err := dataset.NewCSVWriter(&buf, dataset.SafeForSpreadsheets())
		if err != nil {
			t.Fatal(err)
		}
		s := &store.Snapshot{Video: store.Video{ID: "abcdefghijk", Title: tc.title}, Region: "US", Rank: 1,
			FetchedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if got := rows[1][1]; got != tc.want {
			t.Errorf("title %q written as %q, want %q", tc.title, got, tc.want)
		}
	}
}

// JSON lines write DEL, C1 controls and bidirectional overrides as \u
// escapes, which json.Unmarshal reads back as the same text: an export
// printed to a terminal cannot act on it (red team).
func TestJSONLEscapesTerminalControls(t *testing.T) {
	const title = "csi \u009b31m del\x7f rlo\u202e rlm\u200f end"
	var b bytes.Buffer
	w := dataset.NewJSONLWriter(&b)
	s := &store.Snapshot{Region: "US", Rank: 1, FetchedAt: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC),
		Video: store.Video{ID: "json0000001", Title: title, ChannelTitle: "Chan\u2066", CategoryID: "22"}}
	for range 2 {
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\u009b\x7f\u202e\u2066") || !strings.Contains(out, `csi \u009b31m del\u007f rlo\u202e rlm`+"\u200f"+` end`) {
		t.Errorf("controls not escaped: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, line := range lines {
		var row struct {
			Title        string `json:"title"`
			ChannelTitle string `json:"channelTitle"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil || row.Title != title || row.ChannelTitle != "Chan\u2066" {
			t.Errorf("line %q read back as %+v (%v)", line, row, err)
		}
	}
	if len(lines) != 2 {
		t.Errorf("%d lines, want 2: %q", len(lines), out)
	}
}
