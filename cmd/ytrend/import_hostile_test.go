package main

import (
	"strings"
	"testing"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/view"
)

// A file with a date from the future, one from year 1, a javascript:
// thumbnail and a 150-character title, through the real binary: the bad
// dates cost their rows only, the fields are cut or dropped, every change
// is in the report with its line, and the chart is the real day's.
func TestImportHostileFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	row := func(id, title, date, thumb string) string {
		return id + "," + title + ",2020-08-11T19:20:14Z,UC1,Channel,22," + date + ",[None],10,1,0,1," + thumb + ",False,False,text\n"
	}
	long := strings.Repeat("t", 150)
	w.write("US_youtube_trending_data.csv", header+
		row("real0000001", "A real title", "2020-08-12T00:00:00Z", "https://i.ytimg.com/vi/real0000001/default.jpg")+
		row("longtitle01", long, "2020-08-12T00:00:00Z", "javascript:alert(1)")+
		row("future00001", "DEFACED", "9999-12-30T00:00:00Z", "")+
		row("yearone0001", "Year one", "0001-01-01T00:00:00Z", "")+
		row("real0000002", "Next day", "2020-08-13T00:00:00Z", ""))
	type report struct {
		importJSON
		Fixed   int               `json:"fixed_fields"`
		FixedBy map[string]int    `json:"fixed_by_kind"`
		Fixes   []view.ImportSkip `json:"fixes"`
	}
	reps := decode[[]report](t, w.mustRun("import", "US_youtube_trending_data.csv", "--json").stdout)
	r := reps[0]
	if r.Rows != 5 || r.Imported != 2 || r.ImportedRows != 3 || r.Skipped != 2 || r.SkippedBy["out of range"] != 2 {
		t.Errorf("report: %+v", r.importJSON)
	}
	if len(r.Skips) != 2 || r.Skips[0].Line != 4 || r.Skips[1].Line != 5 || r.Skips[0].Field != "trending_date" {
		t.Errorf("skips: %+v", r.Skips)
	}
	if r.Fixed != 2 || r.FixedBy["cut"] != 1 || r.FixedBy["dropped"] != 1 || len(r.Fixes) != 2 || r.Fixes[0].Line != 3 {
		t.Errorf("fixes: %d %v %+v", r.Fixed, r.FixedBy, r.Fixes)
	}
	v := decode[view.Video](t, w.mustRun("history", "longtitle01", "--json").stdout)
	if len(v.Title) != 100 || v.ThumbnailURL != nil {
		t.Errorf("longtitle01: title of %d, thumbnail %v", len(v.Title), v.ThumbnailURL)
	}
	if r := w.run("history", "future00001", "--json"); r.code == 0 {
		t.Errorf("the future row was stored: %s", r.stdout)
	}
	chart := decode[[]view.ChartEntry](t, w.mustRun("chart", "US", "--json").stdout)
	if len(chart) != 1 || chart[0].VideoID != "real0000002" {
		t.Errorf("the newest US chart: %+v", chart)
	}
}
