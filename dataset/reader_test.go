package dataset_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// videosIn counts the videos of the charts' pages.
func videosIn(charts []store.ImportedChart) int {
	n := 0
	for _, c := range charts {
		for _, p := range c.Pages {
			n += len(p.Videos)
		}
	}
	return n
}

// readAll reads every chart of a file's content.
func readAll(t *testing.T, name, content string, region regions.Code) ([]store.ImportedChart, dataset.Report) {
	t.Helper()
	r, err := dataset.NewReader(strings.NewReader(content), name, region)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []store.ImportedChart
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, c)
	}
	return out, r.Report()
}

// chartIDs lists each chart as "day: id id id" with the first rank.
func chartIDs(cs []store.ImportedChart) []string {
	var out []string
	for _, c := range cs {
		for _, p := range c.Pages {
			ids := []string{}
			for _, v := range p.Videos {
				ids = append(ids, v.ID)
			}
			out = append(out, fmt.Sprintf("%s %s #%d: %s", c.Region, p.FetchedAt.Format(time.RFC3339), p.FirstRank, strings.Join(ids, " ")))
		}
	}
	return out
}

func skips(rep dataset.Report) []string {
	var out []string
	for _, s := range rep.Skips {
		out = append(out, s.String())
	}
	return out
}

func n(p *int64) string {
	if p == nil {
		return "hidden"
	}
	return fmt.Sprint(*p)
}

// videoString shows every field of v, counts by value.
func videoString(v store.Video) string {
	counts := fmt.Sprintf("views=%s likes=%s dislikes=%s comments=%s", n(v.Views), n(v.Likes), n(v.Dislikes), n(v.Comments))
	v.Views, v.Likes, v.Dislikes, v.Comments = nil, nil, nil, nil
	return fmt.Sprintf("%+v %s", v, counts)
}

func Test2017Dataset(t *testing.T) {
	charts, rep := readAll(t, "USvideos.csv", file2017(rows2017), "US")
	want := []string{
		"US 2017-11-14T00:00:00Z #1: 2kyS6SvSYSE 1ZAPwfrtAFY 5qpjK5DgCt4 CBVGjS_EJok d380meD0W0M",
		"US 2017-11-15T00:00:00Z #1: 1ZAPwfrtAFY 2kyS6SvSYSE puqaWrEC7tY",
	}
	if got := chartIDs(charts); !slices.Equal(got, want) {
		t.Fatalf("charts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantSkips := []string{
		`line 6: malformed: video_id: "#NAME?" is not a video id (a spreadsheet program replaced an id that began with '-')`,
		"line 8: duplicate: video_id: 1ZAPwfrtAFY is on line 3 for 2017-11-14 too",
	}
	if got := skips(rep); !slices.Equal(got, wantSkips) {
		t.Errorf("skips:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSkips, "\n"))
	}
	if rep.Rows != 10 || rep.Charts != 2 || rep.Skipped != 2 || rep.CutOff || rep.ByKind[dataset.SkipMalformed] != 1 || rep.ByKind[dataset.SkipDuplicate] != 1 {
		t.Errorf("report: %+v", rep)
	}

	day := charts[0].Pages[0].Videos
	v := day[0]
	if v.Title != "WE WANT TO TALK ABOUT OUR MARRIAGE" || v.ChannelTitle != "CaseyNeistat" || v.ChannelID != "" || v.CategoryID != "22" ||
		!v.PublishedAt.Equal(time.Date(2017, 11, 13, 17, 13, 1, 0, time.UTC)) || v.ThumbnailURL != "https://i.ytimg.com/vi/2kyS6SvSYSE/default.jpg" ||
		n(v.Views) != "748374" || n(v.Likes) != "57527" || n(v.Dislikes) != "2966" || n(v.Comments) != "15954" {
		t.Errorf("first row: %+v", v)
	}
	if want := "SHANTELL'S CHANNEL - https://www.youtube.com/shantellmartin\nCANDICE - https://www.lovebilly.com\n\nfilmed this video in 4k"; v.Description != want {
		t.Errorf("description with \\n written out: %q", v.Description)
	}
	for i, want := range [][]string{
		{"SHANtell martin"},
		{"last week tonight trump presidency", "last week tonight donald trump", "john oliver trump"},
		{"racist superman", "rudy", "mancuso"},
		{"Amazon", "Amazon Christmas", "Christmas (Holiday)"},
		nil,
	} {
		if !slices.Equal(day[i].Tags, want) {
			t.Errorf("tags of %s: %q, want %q", day[i].ID, day[i].Tags, want)
		}
	}
	if day[2].Title != "Racist Superman | Rudy Mancuso, King Bach & Lele Pons" {
		t.Errorf("quoted title with a comma: %q", day[2].Title)
	}
	// Disabled counts are hidden, not 0.
	if c := day[3]; n(c.Comments) != "hidden" || n(c.Likes) != "119" {
		t.Errorf("comments disabled: likes %s comments %s", n(c.Likes), n(c.Comments))
	}
	if d := day[4]; n(d.Likes) != "hidden" || n(d.Dislikes) != "hidden" || n(d.Comments) != "17518" || n(d.Views) != "2095731" {
		t.Errorf("ratings disabled: likes %s dislikes %s comments %s", n(d.Likes), n(d.Dislikes), n(d.Comments))
	}
	// The duplicate kept its first place and first counts.
	if n(day[1].Views) != "2418783" {
		t.Errorf("duplicate replaced the first: views %s", n(day[1].Views))
	}
}

// tags2017 forms other CSV readers leave behind, re-saved.
func Test2017TagForms(t *testing.T) {
	for _, c := range []struct{ field, want string }{
		{`"a b"|"c"|"d e"`, "a b/c/d e"},
		{`a b|"c"|"d e"`, "a b/c/d e"}, // Python's csv module drops the first quote pair
		{`a b"|"c"|"d e`, "a b/c/d e"},
		{`a b|c|d e`, "a b/c/d e"}, // quotes stripped by a cleaning notebook
		{`"Best Interview | Awkward Puppets"|"lelepons"`, "Best Interview | Awkward Puppets/lelepons"},
		{`[none]`, ""},
		{`[None]`, ""},
		{`one tag`, "one tag"},
	} {
		rows := []row2017{rows2017[0]}
		content := header2017 + "\n" + strings.Replace(rows[0].line(), `"SHANtell martin"`, csvQuote(c.field), 1) + "\n"
		charts, rep := readAll(t, "USvideos.csv", content, "US")
		if len(charts) != 1 || rep.Skipped != 0 {
			t.Fatalf("%s: %v %v", c.field, chartIDs(charts), skips(rep))
		}
		if got := strings.Join(charts[0].Pages[0].Videos[0].Tags, "/"); got != c.want {
			t.Errorf("tags %s: %q, want %q", c.field, got, c.want)
		}
	}
}

// csvQuote quotes a field as a strict CSV writer would (pandas re-saving).
func csvQuote(s string) string {
	if !strings.ContainsAny(s, `",`) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func Test2020DatasetStyles(t *testing.T) {
	want := []string{
		"JP 2020-08-12T00:00:00Z #1: 3C66w5Z0ixs M9Pmf9AB4Mo UYXa8R9vvzA uet14uf9NsE",
		"JP 2020-08-13T00:00:00Z #1: 3C66w5Z0ixs kXLn3HkpjaA",
	}
	var first []store.ImportedChart
	for _, st := range []style{{}, {quoteAll: true}, {crlf: true, bom: true}, {quoteAll: true, crlf: true, bom: true}, {noFinal: true, quoteAll: true}} {
		name := fmt.Sprintf("quoteAll=%v crlf=%v bom=%v", st.quoteAll, st.crlf, st.bom)
		charts, rep := readAll(t, "JP_youtube_trending_data.csv", file2020(t, columns2020, rows2020, st), "JP")
		if got := chartIDs(charts); !slices.Equal(got, want) {
			t.Errorf("%s: charts\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			continue
		}
		if rep.Rows != 6 || rep.Skipped != 0 || rep.CutOff {
			t.Errorf("%s: report %+v %v", name, rep, skips(rep))
		}
		if first == nil {
			first = charts
			continue
		}
		for i := range charts[0].Pages[0].Videos {
			a, b := videoString(first[0].Pages[0].Videos[i]), videoString(charts[0].Pages[0].Videos[i])
			if a != b {
				t.Errorf("%s reads row %d differently:\n%s\n%s", name, i, b, a)
			}
		}
	}
	if first == nil {
		return
	}
	vs := first[0].Pages[0].Videos
	if v := vs[0]; v.ChannelID != "UCvtRTOMP2TqYqu51xNrqAzg" || v.ChannelTitle != "Brawadis" || n(v.Views) != "1514614" ||
		v.Description != "SUBSCRIBE to BRAWADIS ▶ http://bit.ly/SubscribeToBrawadis\n\nFOLLOW ME ON SOCIAL\n▶ Twitter: https://twitter.com/Brawadis" ||
		!slices.Equal(v.Tags, []string{"brawadis", "prank", "basketball", "skits", "ghost", "funny videos"}) ||
		!v.PublishedAt.Equal(time.Date(2020, 8, 11, 19, 20, 14, 0, time.UTC)) {
		t.Errorf("multi-line row: %+v", v)
	}
	if v := vs[1]; !slices.Equal(v.Tags, []string{"Apex Legends", `"Rampart"`, "Season 6 Battle Pass"}) ||
		!strings.Contains(v.Description, `(aka "Rampart") built her rep, in`) || v.Title != "Apex Legends | Stories from the Outlands – “The Endorsement”" {
		t.Errorf("quotes in tags and description: %q %q", v.Tags, v.Description)
	}
	if v := vs[2]; v.Tags != nil || v.Title != "皆からの色々な質問に何も隠さず答える！びっくりさせたらごめん笑" || v.Description != "登録者数30万人ありがとうございます！！！\nご機嫌ようみなさま。" {
		t.Errorf("[None] and Japanese: %q %q %q", v.Tags, v.Title, v.Description)
	}
	if v := vs[3]; n(v.Likes) != "hidden" || n(v.Dislikes) != "hidden" || n(v.Comments) != "hidden" || n(v.Views) != "470446" {
		t.Errorf("disabled counts: %s %s %s", n(v.Likes), n(v.Dislikes), n(v.Comments))
	}
}

// A real copy cut off anywhere in its last record: every complete record
// is read, the broken one is reported as cut off, never imported.
func TestCutOffAnywhere(t *testing.T) {
	files := []struct {
		name, content string
		region        regions.Code
		complete      int // rows before the last record
	}{
		{"USvideos.csv", file2017(rows2017), "US", 7},
		{"JP_youtube_trending_data.csv", file2020(t, columns2020, rows2020, style{}), "JP", 5},
		{"JP_youtube_trending_data.csv", file2020(t, columns2020, rows2020, style{quoteAll: true, crlf: true}), "JP", 5},
	}
	for _, f := range files {
		content := strings.TrimRight(f.content, "\r\n")
		start := strings.LastIndex(content, "\n") + 1 // the last record's first byte
		if strings.Contains(rows2020[len(rows2020)-1][15], "\n") {
			start = strings.LastIndex(content, "kXLn3HkpjaA")
		}
		if f.name == "USvideos.csv" {
			start = strings.LastIndex(content, "puqaWrEC7tY")
		}
		for cut := start + 1; cut < len(content); cut++ {
			charts, rep := readAll(t, f.name, content[:cut], f.region)
			got := 0
			for _, c := range charts {
				got += len(c.Pages[0].Videos)
			}
			if got != f.complete || !rep.CutOff || rep.ByKind[dataset.SkipCutOff] != 1 {
				t.Fatalf("%s cut at %d (%q): %d rows read, report %+v %v", f.name, cut, content[max(start, cut-20):cut], got, rep, skips(rep))
			}
			last := rep.Skips[len(rep.Skips)-1]
			if last.Kind != dataset.SkipCutOff || !strings.Contains(last.Reason, "the file ends in the middle of this record") {
				t.Fatalf("%s cut at %d: last skip %v", f.name, cut, last)
			}
		}
		// Whole, with or without the final line end, the last record is read
		// when its last field is quoted (as the 2017-18 scraper wrote it).
		for _, c := range []string{content + "\n", content} {
			_, rep := readAll(t, f.name, c, f.region)
			quoted := strings.HasSuffix(content, `"`)
			if rep.CutOff == (quoted || strings.HasSuffix(c, "\n")) {
				t.Errorf("%s whole (final line end %v): cut off %v", f.name, strings.HasSuffix(c, "\n"), rep.CutOff)
			}
		}
	}
}

// A 2017-18 copy cut inside its last, quoted description and then given a
// final line end (an editor, or a tool that appends one) is still cut off:
// the lazy reader would otherwise take the unclosed field for a whole one.
// A whole last description ending in a line break is still whole.
func TestCutOffThenLineEnd(t *testing.T) {
	content := strings.TrimRight(file2017(rows2017), "\r\n")
	if !strings.HasSuffix(content, `"`) {
		t.Fatalf("the fixture's last description is not quoted: %q", content[len(content)-20:])
	}
	for _, end := range []string{"\n", "\r\n"} {
		cut := content[:len(content)-8] + end
		charts, rep := readAll(t, "USvideos.csv", cut, "US")
		got := 0
		for _, c := range charts {
			got += len(c.Pages[0].Videos)
		}
		if !rep.CutOff || rep.ByKind[dataset.SkipCutOff] != 1 || got != 7 {
			t.Errorf("cut, then %q: %d rows, report %+v", end, got, rep)
		}
	}
	whole := content[:len(content)-1] + "\nmore\n\"\n"
	if _, rep := readAll(t, "USvideos.csv", whole, "US"); rep.CutOff {
		t.Errorf("a whole last description ending in a line break: cut off %+v", rep)
	}
}

func TestMalformedRows(t *testing.T) {
	rows := slices.Clone(rows2020)
	bad := func(i, col int, value string) {
		r := slices.Clone(rows[i])
		r[col] = value
		rows[i] = r
	}
	bad(1, 6, "2020-13-45") // trending_date
	bad(2, 8, "lots")       // view_count
	bad(3, 13, "maybe")     // comments_disabled
	bad(4, 2, "yesterday")  // publishedAt
	rows = append(rows[:5:5], append([][]string{{"short", "row"}}, rows[5:]...)...)
	content := file2020(t, columns2020, rows, style{})
	// A quote in an unquoted field (strict CSV), and a row with an empty count.
	content += `brokenQuote,Title with "quotes" inside,2020-08-11T19:20:14Z,UC,C,22,2020-08-14T00:00:00Z,[None],1,2,,3,https://x,False,False,x` + "\n"
	content += strings.Join(rows2020[0][:6], ",") + ",2020-08-14T00:00:00Z,[None],1,2,,3,https://x,False,False,last\n"
	charts, rep := readAll(t, "JP_youtube_trending_data.csv", content, "JP")
	wantCharts := []string{
		"JP 2020-08-12T00:00:00Z #1: 3C66w5Z0ixs",
		"JP 2020-08-13T00:00:00Z #1: kXLn3HkpjaA",
		"JP 2020-08-14T00:00:00Z #1: 3C66w5Z0ixs",
	}
	if got := chartIDs(charts); !slices.Equal(got, wantCharts) {
		t.Errorf("charts: %v, want %v", got, wantCharts)
	}
	wantSkips := []string{
		`line 6: malformed: trending_date: "2020-13-45" is not a date (e.g. 2020-08-12T00:00:00Z or 2020-08-12)`,
		`line 7: malformed: view_count: "lots" is not a count`,
		`line 9: malformed: comments_disabled: "maybe" is not True or False`,
		`line 10: malformed: publishedAt: "yesterday" is not a time (e.g. 2020-08-11T19:20:14Z)`,
		`line 14: malformed: 2 fields where the header has 16`,
		`line 17: malformed: broken CSV quoting at line 17, column 24: bare " in non-quoted-field`,
	}
	if got := skips(rep); !slices.Equal(got, wantSkips) {
		t.Errorf("skips:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSkips, "\n"))
	}
	if rep.Rows != 9 || rep.Skipped != 6 || rep.CutOff {
		t.Errorf("report: %+v", rep)
	}
	// An empty dislikes is hidden; the rest of the row is read.
	if v := charts[2].Pages[0].Videos[0]; n(v.Views) != "1" || n(v.Likes) != "2" || n(v.Dislikes) != "hidden" || n(v.Comments) != "3" {
		t.Errorf("row with an empty count: %+v", v)
	}
}

func TestScatteredDay(t *testing.T) {
	rows := [][]string{rows2020[0], rows2020[4], slices.Clone(rows2020[1])}
	charts, rep := readAll(t, "US_youtube_trending_data.csv", file2020(t, columns2020, rows, style{}), "US")
	if got := chartIDs(charts); !slices.Equal(got, []string{"US 2020-08-12T00:00:00Z #1: 3C66w5Z0ixs", "US 2020-08-13T00:00:00Z #1: 3C66w5Z0ixs"}) {
		t.Errorf("charts: %v", got)
	}
	if got := skips(rep); !slices.Equal(got, []string{"line 10: scattered: trending_date: the rows of 2020-08-12 ended at line 2"}) {
		t.Errorf("skips: %v", got)
	}
}

func TestUnknownFormat(t *testing.T) {
	for name, content := range map[string]string{
		// The first, 2017-09 version of the dataset: dates without a year.
		"USvideos.csv": "video_id,title,channel_title,category_id,tags,views,likes,dislikes,comment_total,thumbnail_link,date\n" +
			"XpVt6Z1Gjjo,1 YEAR OF VLOGGING,Logan Paul Vlogs,24,logan paul vlog,4394029,320053,5931,46245,https://i.ytimg.com/vi/XpVt6Z1Gjjo/default.jpg,13.09\n",
		"US_category_id.json": `{"kind": "youtube#videoCategoryListResponse", "items": []}`,
		"empty.csv":           "",
	} {
		_, err := dataset.NewReader(strings.NewReader(content), name, "US")
		if !errors.Is(err, dataset.ErrUnknownFormat) || !strings.HasPrefix(err.Error(), name+": not a trending dataset") {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if content != "" {
			for _, want := range []string{strings.Join(dataset.Columns2017, ","), strings.Join(dataset.Columns2020, ","),
				strings.Join(dataset.ColumnsYtrend, ","), "2017-18, e.g. USvideos.csv"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: the error does not name the expected columns %q:\n%v", name, want, err)
				}
			}
		}
	}
	// A header's names are listed on one line, each cut and quoted when it
	// is not plain text: a quoted field spanning lines cannot forge lines of
	// the message (red team).
	forged := "\"a\nUSvideos.csv (2017-18 US): 40960 rows read; 200 days imported\"," + strings.Repeat("x", 100) + "\nv,w\n"
	_, err := dataset.NewReader(strings.NewReader(forged), "forged.csv", "US")
	if msg := fmt.Sprint(err); !errors.Is(err, dataset.ErrUnknownFormat) || strings.Contains(msg, "\nUSvideos.csv (2017-18 US): 40960") ||
		!strings.Contains(msg, `"a\nUSvideos.csv (2017-18 US): 40960 rows…"`) || strings.Contains(msg, strings.Repeat("x", 40)) {
		t.Errorf("forged header: %v", err)
	}
	// A public file needs a region.
	if _, err := dataset.NewReader(strings.NewReader(header2017+"\n"), "x.csv", ""); !errors.Is(err, dataset.ErrNoRegion) {
		t.Errorf("no region for a public file: %v", err)
	}
}

func TestRegionFromName(t *testing.T) {
	for name, want := range map[string]regions.Code{
		"USvideos.csv": "US", "data/GBvideos.csv": "GB", "US_youtube_trending_data.csv": "US", "/x/jp_youtube_trending_data.csv": "JP",
		"KR_youtube_trending_data (1).csv": "KR",
	} {
		if got, err := dataset.RegionFromName(name); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"trending.csv", "videos.csv", "USA_youtube_trending_data.csv", "UKvideos.csv"} {
		if _, err := dataset.RegionFromName(name); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := dataset.RegionFromName("UKvideos.csv"); err == nil || !strings.Contains(err.Error(), `did you mean "GB"`) {
		t.Errorf("UK: %v", err)
	}
}

// An export's rows come back as the runs they were: a run ends where the
// region changes, the rank starts again, or the fetch times are apart (an
// export filtered by time may start a run in its middle).
func TestExportRunsAndPages(t *testing.T) {
	row := func(id, region string, rank int, at string) []string {
		r := slices.Clone(rows2020[0])
		r[0] = id
		return append(r, region, fmt.Sprint(rank), at)
	}
	rows := [][]string{
		row("a1", "DE", 1, "2026-03-01T10:00:00.5Z"),
		row("a2", "DE", 2, "2026-03-01T10:00:00.5Z"),
		row("a3", "DE", 3, "2026-03-01T10:00:02Z"), // the run's second page
		row("a5", "DE", 5, "2026-03-01T10:00:02Z"), // a gap: a duplicate SavePage dropped
		row("b1", "GB", 1, "2026-03-01T10:05:00Z"),
		row("c51", "GB", 51, "2026-03-01T11:05:00Z"), // the next GB run, cut by --since
		row("d1", "GB", 1, "2026-03-01T12:05:00Z"),
	}
	charts, rep := readAll(t, "export.csv", file2020(t, dataset.ColumnsYtrend, rows, style{}), "")
	want := []string{
		"DE 2026-03-01T10:00:00Z #1: a1 a2",
		"DE 2026-03-01T10:00:02Z #3: a3",
		"DE 2026-03-01T10:00:02Z #5: a5",
		"GB 2026-03-01T10:05:00Z #1: b1",
		"GB 2026-03-01T11:05:00Z #51: c51",
		"GB 2026-03-01T12:05:00Z #1: d1",
	}
	if got := chartIDs(charts); !slices.Equal(got, want) || len(charts) != 4 || rep.Charts != 4 || rep.Skipped != 0 {
		t.Errorf("%d charts:\n%s\nwant\n%s", len(charts), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !charts[0].Pages[0].FetchedAt.Equal(time.Date(2026, 3, 1, 10, 0, 0, 5e8, time.UTC)) {
		t.Errorf("fetch time %v", charts[0].Pages[0].FetchedAt)
	}
}
