package dataset_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/store"
)

func fixes(rep dataset.Report) []string {
	var out []string
	for _, f := range rep.Fixes {
		out = append(out, f.String())
	}
	return out
}

// hostileRow is rows2020[1] (one line) with its id, trending_date and one more column
// changed.
func hostileRow(id, date string, col int, value string) []string {
	r := slices.Clone(rows2020[1])
	r[0], r[6] = id, date
	if col >= 0 {
		r[col] = value
	}
	return r
}

// Rows dated where no chart can be are skipped with their line, and every
// other row of the file (and of its batch) is read; fields YouTube would
// never send are cut or dropped, and each change is reported.
func TestHostileRows(t *testing.T) {
	long := strings.Repeat("é", 150)
	desc := strings.Repeat("a", 4999) + "€" + strings.Repeat("b", 100) // € straddles byte 5,000
	tags := make([]string, 60)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag%05d", i) // 8 characters: 55 fit in 500 with their commas
	}
	rows := [][]string{
		hostileRow("future00001", "9999-12-30T00:00:00Z", -1, ""),
		hostileRow("ok000000001", "2020-08-12T00:00:00Z", -1, ""),
		hostileRow("zero0000001", "0001-01-01T00:00:00Z", -1, ""),
		hostileRow("early000001", "2004-12-31", -1, ""),
		hostileRow("title000001", "2020-08-12T00:00:00Z", 1, long),
		hostileRow("desc0000001", "2020-08-12T00:00:00Z", 15, desc),
		hostileRow("tags0000001", "2020-08-12T00:00:00Z", 7, strings.Join(tags, "|")),
		hostileRow("thumbrel001", "2020-08-12T00:00:00Z", 12, "/api/v1/search?q=a&sort=views"),
		hostileRow("thumbjs0001", "2020-08-12T00:00:00Z", 12, "javascript:alert(1)"),
		hostileRow("thumbdata01", "2020-08-12T00:00:00Z", 12, "data:image/png;base64,AAAA"),
		hostileRow("thumbhttp01", "2020-08-12T00:00:00Z", 12, "http://i.ytimg.com/vi/x/default.jpg"),
		hostileRow("thumbhost01", "2020-08-12T00:00:00Z", 12, "https://i.ytimg.com.example.net/x.jpg"),
		hostileRow("thumbok0001", "2020-08-12T00:00:00Z", 12, "https://i9.ytimg.com/vi/x/default.jpg"),
		hostileRow("thumbnone01", "2020-08-12T00:00:00Z", 12, ""),
		hostileRow("ok000000002", "2020-08-13T00:00:00Z", -1, ""),
	}
	// The day's rows together, with the bad dates among them.
	rows = append(rows[:1:1], append(rows[4:14:14], rows[1], rows[2], rows[3], rows[14])...)
	charts, rep := readAll(t, "JP_youtube_trending_data.csv", file2020(t, columns2020, rows, style{}), "JP")
	want := []string{
		"JP 2020-08-12T00:00:00Z #1: title000001 desc0000001 tags0000001 thumbrel001 thumbjs0001 thumbdata01 thumbhttp01 thumbhost01 thumbok0001 thumbnone01 ok000000001",
		"JP 2020-08-13T00:00:00Z #1: ok000000002",
	}
	if got := chartIDs(charts); !slices.Equal(got, want) {
		t.Errorf("charts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantSkips := []string{
		`line 2: out of range: trending_date: 9999-12-30 is in the future (the latest a chart can be is ` + latest() + `)`,
		`line 14: out of range: trending_date: 0001-01-01 is before YouTube's first year (2005)`,
		`line 15: out of range: trending_date: 2004-12-31 is before YouTube's first year (2005)`,
	}
	if got := skips(rep); !slices.Equal(got, wantSkips) {
		t.Errorf("skips:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSkips, "\n"))
	}
	wantFixes := []string{
		`line 3: cut: title: longer than YouTube's 100 characters`,
		`line 4: cut: description: longer than YouTube's 5000 bytes`,
		`line 5: cut: tags: longer than YouTube's 500 characters in all: the tags that fit are kept`,
		`line 6: dropped: thumbnail_link: "/api/v1/search?q=a&sort=views" is not an https URL on ytimg.com`,
		`line 7: dropped: thumbnail_link: "javascript:alert(1)" is not an https URL on ytimg.com`,
		`line 8: dropped: thumbnail_link: "data:image/png;base64,AAAA" is not an https URL on ytimg.com`,
		`line 9: dropped: thumbnail_link: "http://i.ytimg.com/vi/x/default.jpg" is not an https URL on ytimg.com`,
		`line 10: dropped: thumbnail_link: "https://i.ytimg.com.example.net/x.jpg" is not an https URL on ytimg.com`,
	}
	if got := fixes(rep); !slices.Equal(got, wantFixes) {
		t.Errorf("fixes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantFixes, "\n"))
	}
	if rep.Rows != 15 || rep.Skipped != 3 || rep.ByKind[dataset.SkipOutOfRange] != 3 || rep.Fixed != 8 ||
		rep.FixedBy[dataset.FixCut] != 3 || rep.FixedBy[dataset.FixDropped] != 5 {
		t.Errorf("report: %+v", rep)
	}
	if len(charts) == 0 {
		return
	}
	vs := charts[0].Pages[0].Videos
	if got := vs[0].Title; got != strings.Repeat("é", 100) {
		t.Errorf("title cut to %d characters: %q", len([]rune(got)), got)
	}
	if got := vs[1].Description; got != strings.Repeat("a", 4999) {
		t.Errorf("description cut to %d bytes, want 4999 (before the € that straddles byte 5,000)", len(got))
	}
	if got := vs[2].Tags; !slices.Equal(got, tags[:55]) {
		t.Errorf("tags kept: %d, want the first 55", len(got))
	}
	for i, v := range vs[3:8] {
		if v.ThumbnailURL != "" {
			t.Errorf("row %d: thumbnail %q kept", i+6, v.ThumbnailURL)
		}
	}
	if got := vs[8].ThumbnailURL; got != "https://i9.ytimg.com/vi/x/default.jpg" {
		t.Errorf("a YouTube thumbnail: %q", got)
	}
}

// A record far larger than any real one is skipped, and the records after
// it are read with their own line numbers; the reader holds no more than a
// bounded part of it, whatever its size.
func TestOversizedRecord(t *testing.T) {
	big := strings.Repeat("word \n", 100_000) // 600 kB over 100,000 lines, quoted
	rows := [][]string{
		hostileRow("before00001", "2020-08-12T00:00:00Z", -1, ""),
		hostileRow("big00000001", "2020-08-12T00:00:00Z", 15, big),
		hostileRow("after000001", "2020-08-12T00:00:00Z", -1, ""),
		hostileRow("after000002", "2020-08-13T00:00:00Z", -1, ""),
	}
	for _, st := range []style{{}, {quoteAll: true, crlf: true}} {
		content := file2020(t, columns2020, rows, st)
		charts, rep := readAll(t, "JP_youtube_trending_data.csv", content, "JP")
		want := []string{
			"JP 2020-08-12T00:00:00Z #1: before00001 after000001",
			"JP 2020-08-13T00:00:00Z #1: after000002",
		}
		if got := chartIDs(charts); !slices.Equal(got, want) {
			t.Errorf("%+v: charts %v, want %v", st, got, want)
		}
		wantSkips := []string{"line 3: too large: the record is larger than 64 KiB: no row of a real dataset is"}
		if got := skips(rep); !slices.Equal(got, wantSkips) {
			t.Errorf("%+v: skips %q, want %q", st, got, wantSkips)
		}
		// The row after it is where the file has it: a malformed one there
		// would be reported at its own line.
		if rep.Rows != 4 || rep.Skipped != 1 || rep.CutOff {
			t.Errorf("%+v: report %+v", st, rep)
		}
	}
}

// repeat is an io.Reader of n copies of s, never held whole.
type repeat struct {
	s string
	n int
	i int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.s[r.i:])
	r.i += k
	if r.i == len(r.s) {
		r.i, r.n = 0, r.n-1
	}
	return k, nil
}

// A 48 MB description costs the reader a bounded amount of memory (it cost
// the import 557 MB of RSS before records were bounded).
func TestOversizedRecordMemory(t *testing.T) {
	for _, form := range []string{"csv", "jsonl"} {
		var head, tail string
		row := hostileRow("big00000001", "2020-08-12T00:00:00Z", 15, "x")
		if form == "csv" {
			head = strings.TrimSuffix(file2020(t, columns2020, [][]string{row}, style{}), "\n")
			head = head[:strings.LastIndex(head, ",")] + `,"`
			tail = "\"\n" + strings.SplitN(file2020(t, columns2020, [][]string{hostileRow("after000001", "2020-08-12T00:00:00Z", -1, "")}, style{}), "\n", 2)[1]
		} else {
			head = `{"video_id":"big00000001","title":"t","publishedAt":"2020-08-11T19:20:14Z","channelId":"UC","channelTitle":"c","categoryId":"22","trending_date":"2020-08-12T00:00:00Z","tags":[],"view_count":1,"likes":1,"dislikes":1,"comment_count":1,"thumbnail_link":"","comments_disabled":false,"ratings_disabled":false,"region":"JP","rank":1,"fetched_at":"2020-08-12T00:00:00Z","description":"`
			tail = "\"}\n" + strings.Replace(strings.Replace(head, "big00000001", "after000001", 1), `"rank":1`, `"rank":2`, 1) + "x\"}\n"
			// The first line must be readable to tell the layout.
			head = strings.Replace(strings.Replace(tail[3:], "after000001", "first000001", 1), `"rank":2`, `"rank":1`, 1) + strings.Replace(head, `"rank":1`, `"rank":2`, 1)
			tail = strings.Replace(tail, `"rank":2`, `"rank":3`, 1)
		}
		r := io.MultiReader(strings.NewReader(head), &repeat{s: strings.Repeat("spam ", 1000), n: 48 * 200}, strings.NewReader(tail))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d, err := dataset.NewReader(r, "JP_youtube_trending_data."+form, "JP")
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		charts := 0
		for {
			_, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", form, err)
			}
			charts++
		}
		runtime.ReadMemStats(&after)
		rep := d.Report()
		if rep.ByKind[dataset.SkipTooLarge] != 1 || charts != 1 {
			t.Errorf("%s: %d charts, report %+v", form, charts, rep)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("%s: reading a 48 MB record allocated %d MB, want under 8", form, alloc>>20)
		}
	}
}

// A file that puts every row on one date is read a bounded chart at a
// time.
func TestChartFull(t *testing.T) {
	var rows [][]string
	for i := range 1003 {
		rows = append(rows, hostileRow(fmt.Sprintf("v%010d", i), "2020-08-12T00:00:00Z", -1, ""))
	}
	charts, rep := readAll(t, "JP_youtube_trending_data.csv", file2020(t, columns2020, rows, style{}), "JP")
	if len(charts) != 1 || len(charts[0].Pages[0].Videos) != 1000 {
		t.Fatalf("%d charts", len(charts))
	}
	if rep.Skipped != 3 || rep.ByKind[dataset.SkipChartFull] != 3 {
		t.Errorf("report: %+v", rep)
	}
}

// A row dated 0001-01-01 used to abort its whole batch (the store refuses a
// page with no fetch time): now it is skipped, and its neighbours land.
func TestBadDateSkipsItsRowNotItsBatch(t *testing.T) {
	db := openDB(t)
	rows := [][]string{
		hostileRow("ok000000001", "2020-08-12T00:00:00Z", -1, ""),
		hostileRow("zero0000001", "0001-01-01T00:00:00Z", -1, ""),
		hostileRow("future00001", "9999-12-30T00:00:00Z", -1, ""),
		hostileRow("ok000000002", "2020-08-13T00:00:00Z", -1, ""),
	}
	r, err := dataset.NewReader(strings.NewReader(file2020(t, columns2020, rows, style{})), "JP_youtube_trending_data.csv", "JP")
	if err != nil {
		t.Fatal(err)
	}
	var batch []store.ImportedChart
	for {
		c, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, c)
	}
	res, err := db.ImportCharts(context.Background(), batch)
	if err != nil {
		t.Fatalf("the batch was refused: %v", err)
	}
	if len(res) != 2 || res[0].New != 1 || res[1].New != 1 {
		t.Errorf("imported %+v", res)
	}
	if rep := r.Report(); rep.ByKind[dataset.SkipOutOfRange] != 2 {
		t.Errorf("report %+v", rep)
	}
}

func latest() string { return store.LatestSighting(time.Now()).Format(time.DateOnly) }

// Control characters a terminal would act on (ESC, BEL, BS, CR, DEL, C1
// such as U+009B CSI) are removed from the text of imported rows, tab and
// line feed kept; a channel's name is cut to YouTube's 100 characters.
// Each change is reported.
func TestControlsAndChannelTitle(t *testing.T) {
	esc := "a\x1b[2J\x1b]0;pwned\x07b\bc\u009b31m\x7fd\te"
	rows := [][]string{
		hostileRow("ctltitle001", "2020-08-12T00:00:00Z", 1, esc),
		hostileRow("ctlchan0001", "2020-08-12T00:00:00Z", 4, esc),
		hostileRow("ctltags0001", "2020-08-12T00:00:00Z", 7, "x\x1b[5m|y"),
		hostileRow("ctldesc0001", "2020-08-12T00:00:00Z", 15, "one\r\ntwo\rthree\x1b]52;c;ZXZpbA==\x07\nfour"),
		hostileRow("longchan001", "2020-08-12T00:00:00Z", 4, strings.Repeat("é", 150)),
	}
	charts, rep := readAll(t, "JP_youtube_trending_data.csv", file2020(t, columns2020, rows, style{}), "JP")
	if len(charts) != 1 {
		t.Fatalf("%d charts", len(charts))
	}
	vs := charts[0].Pages[0].Videos
	want := "a[2J]0;pwnedbc31md\te"
	if vs[0].Title != want || vs[1].ChannelTitle != want {
		t.Errorf("title %q, channel %q, want %q", vs[0].Title, vs[1].ChannelTitle, want)
	}
	if !slices.Equal(vs[2].Tags, []string{"x[5m", "y"}) {
		t.Errorf("tags %q", vs[2].Tags)
	}
	if got := vs[3].Description; got != "one\ntwo\nthree]52;c;ZXZpbA==\nfour" {
		t.Errorf("description %q", got)
	}
	if got := vs[4].ChannelTitle; got != strings.Repeat("é", 100) {
		t.Errorf("channel title of %d characters", len([]rune(got)))
	}
	if rep.FixedBy[dataset.FixControls] != 4 || rep.FixedBy[dataset.FixCut] != 1 {
		t.Errorf("fixes %v: %v", rep.FixedBy, rep.Fixes)
	}
}
