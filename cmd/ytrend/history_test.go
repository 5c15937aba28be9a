package main

import (
	"encoding/csv"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/view"
)

// Small files in the public datasets' own syntax (see the dataset package's
// fixtures for every quirk): a 2017-18 file as its scraper wrote it, two
// days, a duplicate, an Excel-mangled id, and its last record cut off; and
// a 2020+ file with a BOM, CRLF line ends and a multi-line description.
const usVideos = "video_id,trending_date,title,channel_title,category_id,publish_time,tags,views,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,video_error_or_removed,description\n" +
	`2kyS6SvSYSE,17.14.11,"WE WANT TO TALK ABOUT OUR MARRIAGE","CaseyNeistat",22,2017-11-13T17:13:01.000Z,"SHANtell martin",748374,57527,2966,15954,https://i.ytimg.com/vi/2kyS6SvSYSE/default.jpg,False,False,False,"SHANTELL'S CHANNEL\nCANDICE"` + "\n" +
	`1ZAPwfrtAFY,17.14.11,"The Trump Presidency: Last Week Tonight with John Oliver (HBO)","LastWeekTonight",24,2017-11-13T07:30:00.000Z,"last week tonight trump presidency"|"john oliver trump",2418783,97185,6146,12703,https://i.ytimg.com/vi/1ZAPwfrtAFY/default.jpg,False,False,False,"One year after the presidential election"` + "\n" +
	`#NAME?,17.14.11,"Animal Adventure Park Giraffe Cam","Animal Adventure Park",15,2017-02-23T18:00:04.000Z,"giraffe",45455,2282,35,17,https://i.ytimg.com/vi/x/default.jpg,False,False,False,"Live"` + "\n" +
	`d380meD0W0M,17.14.11,"I Dare You: GOING BALD!?","nigahiga",24,2017-11-12T18:01:41.000Z,[none],2095731,0,0,17518,https://i.ytimg.com/vi/d380meD0W0M/default.jpg,False,True,False,"I know"` + "\n" +
	`1ZAPwfrtAFY,17.15.11,"The Trump Presidency: Last Week Tonight with John Oliver (HBO)","LastWeekTonight",24,2017-11-13T07:30:00.000Z,"last week tonight trump presidency"|"john oliver trump",3191400,140000,8000,15000,https://i.ytimg.com/vi/1ZAPwfrtAFY/default.jpg,False,False,False,"One year after the presidential election"` + "\n" +
	`puqaWrEC7tY,17.15.11,"Nickelback Lyrics: Real or Fake?","Good Mythical Morning",24,2017-11-13T11:00:04.000Z,"gmm",343168,10172,666,2146,https://i.ytimg.com/vi/puqaWrEC7tY/default.jpg,False,False,False,"Today"` + "\n" +
	`2kyS6SvSYSE,17.15.11,"WE WANT TO TALK ABOUT OUR MARRIAGE","CaseyNeistat",22,2017-11-13T17:13:01.000Z,"SHANtell martin",1800000,80000,4000,20000,https://i.ytimg.com/vi/2kyS6SvSYSE/default.jpg,False,False,False,"SHANTELL'S CHANNEL\nCANDICE"` + "\n" +
	`puqaWrEC7tY,17.15.11,"Nickelback Lyrics: Real or Fake?","Good Mythical Morning",24,2017-11-13T11:00:04.000Z,"gmm",343200,10172,666,2146,https://i.ytimg.com/vi/puqaWrEC7tY/default.jpg,False,False,False,"Today"` + "\n" +
	`d380meD0W0M,17.15.11,"I Dare You: GOING BALD!?","nigahiga",24,2017-11-12T18:01:41.000Z,[none],2500000,0,0,18000,https://i.ytimg.com/vi/d380meD0W0M/default.jpg,False,True,False,"I know it's been a wh`

const gbTrending = "\uFEFFvideo_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\r\n" +
	`"3C66w5Z0ixs","I ASKED HER TO BE MY GIRLFRIEND...","2020-08-11T19:20:14Z","UCvtRTOMP2TqYqu51xNrqAzg","Brawadis","22","2020-08-12T00:00:00Z","brawadis|prank","1514614","156908","5855","35313","https://i.ytimg.com/vi/3C66w5Z0ixs/default.jpg","False","False","SUBSCRIBE` + "\r\n\r\nFOLLOW ME\"\r\n" +
	`"uet14uf9NsE","OUR FIRST FAMILY INTRO!!","2020-08-12T00:17:41Z","UCDSJCBYqL7VQrlXfhr1RtwA","Les Do Makeup","26","2020-08-12T00:00:00Z","[None]","470446","0","0","0","https://i.ytimg.com/vi/uet14uf9NsE/default.jpg","True","True",""` + "\r\n"

type importJSON struct {
	File          string            `json:"file"`
	Format        string            `json:"format"`
	Region        string            `json:"region"`
	Rows          int               `json:"rows"`
	ImportedRows  int               `json:"imported_rows"`
	Charts        int               `json:"charts"`
	Imported      int               `json:"imported_charts"`
	AlreadyThere  int               `json:"already_imported_charts"`
	NewVideos     int               `json:"new_videos"`
	Skipped       int               `json:"skipped_rows"`
	SkippedBy     map[string]int    `json:"skipped_by_kind"`
	Skips         []view.ImportSkip `json:"skips"`
	CutOff        bool              `json:"cut_off"`
	RowsPerSecond float64           `json:"rows_per_second"`
}

func (w *world) write(name, content string) string {
	w.t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func csvRows(t *testing.T, s string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v", err)
	}
	return recs
}

// The checks, end to end through the binary: import both public
// layouts (one cut off), chart a past day in file order, a two-day history,
// the export of every row, a second import that changes nothing, and
// export -> import -> export.
func TestImportChartHistoryExport(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.write("USvideos.csv", usVideos)
	w.write("GB_youtube_trending_data.csv", gbTrending)

	r := w.mustRun("import", "USvideos.csv", "GB_youtube_trending_data.csv", "--json")
	reps := decode[[]importJSON](t, r.stdout)
	if len(reps) != 2 {
		t.Fatalf("reports: %s", r.stdout)
	}
	us, gb := reps[0], reps[1]
	if us.Format != "2017-18" || us.Region != "US" || us.Rows != 9 || us.Charts != 2 || us.Imported != 2 || us.ImportedRows != 6 ||
		us.NewVideos != 4 || us.Skipped != 3 || !us.CutOff || us.SkippedBy["malformed"] != 1 || us.SkippedBy["duplicate"] != 1 || us.SkippedBy["cut off"] != 1 {
		t.Errorf("US report: %+v", us)
	}
	wantSkips := []view.ImportSkip{
		{Line: 4, Field: "video_id", Kind: "malformed", Reason: `"#NAME?" is not a video id (a spreadsheet program replaced an id that began with '-')`},
		{Line: 9, Field: "video_id", Kind: "duplicate", Reason: "puqaWrEC7tY is on line 7 for 2017-11-15 too"},
		{Line: 10, Kind: "cut off", Reason: "the file ends in the middle of this record"},
	}
	if !slices.Equal(us.Skips, wantSkips) {
		t.Errorf("US skips %+v, want %+v", us.Skips, wantSkips)
	}
	if gb.Format != "2020+" || gb.Region != "GB" || gb.Rows != 2 || gb.Imported != 1 || gb.Skipped != 0 || gb.CutOff || gb.RowsPerSecond <= 0 {
		t.Errorf("GB report: %+v", gb)
	}

	// A past day: that day's rows in file order.
	day := decode[[]view.ChartEntry](t, w.mustRun("chart", "US", "--at", "2017-11-14", "--json").stdout)
	var got []string
	for _, e := range day {
		got = append(got, e.VideoID)
	}
	if !slices.Equal(got, []string{"2kyS6SvSYSE", "1ZAPwfrtAFY", "d380meD0W0M"}) || day[0].Rank != 1 || *day[0].Views != 748374 ||
		day[0].Title != "WE WANT TO TALK ABOUT OUR MARRIAGE" || day[0].ChannelTitle != "CaseyNeistat" || day[2].Likes != nil ||
		day[0].FetchedAt.Format("2006-01-02T15:04:05Z07:00") != "2017-11-14T00:00:00Z" {
		t.Errorf("chart of 2017-11-14: %+v", day)
	}
	// Between the two days, the first still stands; a day later, the
	// second, with its movement.
	if mid := decode[[]view.ChartEntry](t, w.mustRun("chart", "US", "--at", "2017-11-14T12:00:00Z", "--json").stdout); len(mid) != 3 {
		t.Errorf("chart between the days: %+v", mid)
	}
	text := w.mustRun("chart", "US", "--at", "2017-11-15").stdout
	for _, want := range []string{"US trending chart fetched 2017-11-15 00:00 UTC (moves against 2017-11-14 00:00 UTC)",
		"   1  ▲1    The Trump Presidency", "   2  NEW   Nickelback Lyrics", "   3  ▼2    WE WANT TO TALK", "3.2M"} {
		if !strings.Contains(text, want) {
			t.Errorf("chart text lacks %q:\n%s", want, text)
		}
	}
	if r := w.run("chart", "US", "--at", "2017-11-13"); r.code != 1 || !strings.Contains(r.stderr, "no fetch at or before 2017-11-13T23:59:59Z (the first is at 2017-11-14T00:00:00Z)") {
		t.Errorf("chart before the first day: exit %d\n%s", r.code, r.stderr)
	}

	// A video on two days has a two-day history.
	h := decode[view.History](t, w.mustRun("history", "1ZAPwfrtAFY", "--json").stdout)
	if len(h.Regions) != 1 || h.Regions[0].Region != "US" || h.Regions[0].Days != 2 || len(h.Regions[0].Points) != 2 ||
		h.Regions[0].BestRank != 1 || h.Regions[0].Points[0].Rank != 2 || *h.Regions[0].Points[1].Views != 3191400 {
		t.Errorf("history: %+v", h)
	}
	if out := w.mustRun("history", "https://www.youtube.com/watch?v=1ZAPwfrtAFY").stdout; !strings.Contains(out, "2 days on the chart") ||
		!strings.Contains(out, "#2 → #1") || !strings.Contains(out, "2.4M → 3.2M") {
		t.Errorf("history text:\n%s", out)
	}

	// Exporting the imported region returns every row with the public columns.
	export := w.mustRun("export", "--region", "US").stdout
	recs := csvRows(t, export)
	if len(recs) != 1+6 || strings.Join(recs[0][:16], ",") != "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description" {
		t.Errorf("export: %d rows, header %v", len(recs)-1, recs[0])
	}
	if row := recs[3]; row[0] != "d380meD0W0M" || row[6] != "2017-11-14T00:00:00Z" || row[7] != "[None]" || row[9] != "" || row[14] != "True" || row[17] != "3" {
		t.Errorf("a row with disabled ratings: %q", row)
	}

	// Importing again changes nothing.
	exp := w.mustRun("export")
	all := exp.stdout
	if exp.stderr != "" {
		t.Errorf("export wrote to a stderr that is no terminal: %q", exp.stderr)
	}
	runsBefore := w.mustRun("runs", "--json", "--limit", "100").stdout
	again := decode[[]importJSON](t, w.mustRun("import", "USvideos.csv", "GB_youtube_trending_data.csv", "--json").stdout)
	if again[0].Imported != 0 || again[0].AlreadyThere != 2 || again[1].Imported != 0 || again[1].AlreadyThere != 1 {
		t.Errorf("second import: %+v", again)
	}
	if w.mustRun("export").stdout != all || w.mustRun("runs", "--json", "--limit", "100").stdout != runsBefore {
		t.Error("a second import changed the archive")
	}

	// Export -> import into a fresh archive -> export: the same rows.
	w.write("export.csv", all)
	w.env["YTREND_DB"] = filepath.Join(w.dir, "fresh.db")
	back := decode[[]importJSON](t, w.mustRun("import", "export.csv", "--json").stdout)
	if back[0].Format != "ytrend" || back[0].Imported != 3 || back[0].ImportedRows != 8 || back[0].Skipped != 0 {
		t.Errorf("import of the export: %+v", back[0])
	}
	if again := w.mustRun("export").stdout; again != all {
		t.Errorf("export -> import -> export differs:\n%s\n---\n%s", all, again)
	}
	w.mustRun("export", "--format", "jsonl", "--out", "export.jsonl")
	w.env["YTREND_DB"] = filepath.Join(w.dir, "fresh2.db")
	w.mustRun("import", "export.jsonl")
	if again := w.mustRun("export").stdout; again != all {
		t.Errorf("export as JSON lines -> import -> export differs")
	}
}

// A file in no known layout exits non-zero with the expected columns, and
// nothing of the import runs, even for the good files beside it.
func TestImportRefusesUnknownFormat(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.write("USvideos.csv", usVideos)
	w.write("notes.csv", "name,score\nalice,3\n")
	r := w.run("import", "USvideos.csv", "notes.csv")
	if r.code != 1 || !strings.Contains(r.stderr, "nothing imported") ||
		!strings.Contains(r.stderr, "notes.csv: not a trending dataset ytrend can read: its header has 2 columns (name,score); expected one of:") ||
		!strings.Contains(r.stderr, "2017-18, e.g. USvideos.csv: video_id,trending_date,title,channel_title,category_id,publish_time,tags,views,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,video_error_or_removed,description") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	// Refused before the archive is opened: there is none yet.
	if _, err := os.Stat(w.env["YTREND_DB"]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused import left an archive (stat: %v)", err)
	}
	w.write("trending.csv", gbTrending)
	if r := w.run("import", "trending.csv"); r.code != 1 || !strings.Contains(r.stderr, `the file name "trending.csv" does not start with a region`) {
		t.Errorf("no region: exit %d\n%s", r.code, r.stderr)
	}
	if r := w.run("import", "trending.csv", "--region", "UK"); r.code != 2 || !strings.Contains(r.stderr, `did you mean "GB"`) {
		t.Errorf("bad region: exit %d\n%s", r.code, r.stderr)
	}
	rep := decode[[]importJSON](t, w.mustRun("import", "trending.csv", "--region", "gb", "--json").stdout)
	if rep[0].Region != "GB" || rep[0].Imported != 1 {
		t.Errorf("--region gb: %+v", rep)
	}
	if r := w.run("import", "missing.csv"); r.code != 1 || !strings.Contains(r.stderr, "missing.csv: no such file") {
		t.Errorf("missing file: exit %d\n%s", r.code, r.stderr)
	}
	if r := w.run("chart", "FR"); r.code != 1 || !strings.Contains(r.stderr, "the archive has no chart of FR") {
		t.Errorf("chart of a region never fetched: exit %d\n%s", r.code, r.stderr)
	}
	if r := w.run("export", "--format", "xml"); r.code != 2 || !strings.Contains(r.stderr, `--format "xml": allowed csv, jsonl`) {
		t.Errorf("export --format xml: exit %d\n%s", r.code, r.stderr)
	}
	if r := w.run("chart", "US", "--at", "yesterday-ish"); r.code != 2 || !strings.Contains(r.stderr, `--at "yesterday-ish"`) {
		t.Errorf("chart --at junk: exit %d\n%s", r.code, r.stderr)
	}
}
