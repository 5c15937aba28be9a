package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
)

// Issue 22 (red team, point 2): one bare quote at the start of a field
// (a title `"unterminated`) opens a quoted field that nothing closes, so the
// record guard drops "up to the line end that closes it outside quotes":
// the rest of the file. Measured with the real binary: a file of 5,001
// rows whose first title is `"unterminated` imported nothing, and its
// report said "1 rows read ... 1 rows skipped (1 too large)": the 5,000
// good rows after it were neither imported nor reported. One character
// anyone can type into the file removed every row after it, silently: now
// only its own line is skipped, and reported.
func TestImportUnclosedQuoteLosesOnlyItsLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	row := func(id, title string) string {
		return id + "," + title + ",2020-08-11T19:20:14Z,UC1,Channel,22,2020-08-12T00:00:00Z,[None],10,1,0,1,,False,False,text\n"
	}
	var b strings.Builder
	b.WriteString(header)
	b.WriteString(row("broken00000", `"unterminated`))
	const good = 2000
	for i := 1; i <= good; i++ {
		b.WriteString(row(fmt.Sprintf("good%07d", i), fmt.Sprintf("Good row %d", i)))
	}
	w.write("US_youtube_trending_data.csv", b.String())
	reps := decode[[]importJSON](t, w.mustRun("import", "US_youtube_trending_data.csv", "--json").stdout)
	r := reps[0]
	// Every row is either imported or reported: the file has 1+good rows.
	if r.ImportedRows+r.Skipped < 1+good {
		t.Errorf("%d data rows in the file: %d imported, %d reported skipped (%v); %d rows lost without a word",
			1+good, r.ImportedRows, r.Skipped, r.SkippedBy, 1+good-r.ImportedRows-r.Skipped)
	}
}

// Issue 22 (red team, point 2): imported text kept terminal control
// sequences, and the CLI printed them raw; they are now removed on import. YouTube never sends a C0/C1
// control character in a title, channel name or description (NUL is
// already stripped), but ESC, BEL, BS, CR and U+009B (CSI) pass the import
// and reach the operator's terminal through `ytrend history` and `ytrend
// search`. Measured with the real binary: a title with "\x1b[2J" (clear
// screen), "\x1b]0;pwned\x07" (set the window title), a description with
// "\x1b]52;c;ZXZpbA==\x07" (OSC 52: write the clipboard, honoured by
// xterm, iTerm2, kitty, tmux) were stored byte for byte and printed as
// such by both commands.
func TestImportedControlCharactersNeverReachTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	title := "escape \x1b[2J\x1b]0;pwned\x07 \x1b[31mRED\x1b[0m \r over \b\b \u009b31m"
	w.write("US_youtube_trending_data.csv", header+
		`escape00001,"`+title+`",2020-08-11T19:20:14Z,UC1,"Chan`+"\x1b[5m"+`",22,2020-08-12T00:00:00Z,[None],10,1,0,1,,False,False,"desc `+"\x1b]52;c;ZXZpbA==\x07"+`"`+"\n")
	w.mustRun("import", "US_youtube_trending_data.csv")
	for _, args := range [][]string{{"history", "escape00001"}, {"search", "escape"}, {"chart", "US"}} {
		out := w.mustRun(args...).stdout
		if i := strings.IndexAny(out, "\x1b\x07\b\u009b"); i >= 0 {
			t.Errorf("ytrend %s printed a control sequence from the imported file at byte %d: %q", strings.Join(args, " "), i, out)
		}
	}
}

// Issue 22 (red team, point 2): "fields are capped at YouTube's own limits
// ... Memory stays bounded whatever the file", but only the title,
// description and tags are. channelTitle (YouTube: at most 100
// characters) is stored as the file has it, up to the 64 KiB record cap.
// Measured with the real binary: 200 rows of one channel named with 60,000
// characters, one day: /api/v1/charts/NO?limit=200 answers 12,057,305
// bytes and /charts/NO 12,060,032 (a search of 100, 6 MB); 32 concurrent
// chart requests from 16 addresses (a trailing '&' defeats the cache)
// took serve from 144 MB to 1.1 GB peak RSS.
func TestImportCapsChannelTitle(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	w.write("US_youtube_trending_data.csv", header+
		"bigchannel1,A title,2020-08-11T19:20:14Z,UC1,"+strings.Repeat("W", 60000)+",22,2020-08-12T00:00:00Z,[None],10,1,0,1,,False,False,text\n")
	w.mustRun("import", "US_youtube_trending_data.csv")
	out := w.mustRun("history", "bigchannel1", "--json").stdout
	v := decode[struct {
		ChannelTitle string `json:"channel_title"`
	}](t, out)
	if n := len([]rune(v.ChannelTitle)); n > 100 {
		t.Errorf("channel title of %d characters stored and served (YouTube's limit is 100)", n)
	}
}

// An archive imported before imports removed control characters still holds
// them: history, search and chart print them as visible escapes, never raw.
func TestOlderArchiveControlCharactersPrintedAsEscapes(t *testing.T) {
	t.Parallel()
	w := worldWithVideo(t, store.Video{
		ID: "escape00001", Title: "escape \x1b[2J\x1b]0;pwned\x07 \u009b31m", ChannelTitle: "Chan\x1b[5m", CategoryID: "22",
		Description: "desc escape \x1b]52;c;ZXZpbA==\x07",
	})
	for _, args := range [][]string{{"history", "escape00001"}, {"search", "escape"}, {"chart", "US"}} {
		out := w.mustRun(args...).stdout
		if i := strings.IndexFunc(out, func(r rune) bool { return unicode.IsControl(r) && r != '\n' }); i >= 0 {
			t.Errorf("ytrend %s printed a control character at byte %d: %q", strings.Join(args, " "), i, out)
		}
		if !strings.Contains(out, `escape \x1b[2J\x1b]0;pwned\x07 \u009b31m`) || !strings.Contains(out, `Chan\x1b[5m`) {
			t.Errorf("ytrend %s does not show the controls as escapes: %q", strings.Join(args, " "), out)
		}
	}
}

// worldWithVideo is a world whose archive holds v alone, charted first in
// US on 2020-08-12 as an older archive could hold it: stored directly, past
// what imports remove.
func worldWithVideo(t *testing.T, v store.Video) *world {
	t.Helper()
	w := newWorld(t, sim.Config{})
	db := w.openDB()
	at := time.Date(2020, 8, 12, 0, 0, 0, 0, time.UTC)
	if v.PublishedAt.IsZero() {
		v.PublishedAt = at.Add(-time.Hour)
	}
	_, err := db.ImportChart(context.Background(), store.ImportedChart{Region: "US",
		Pages: []store.Page{{FetchedAt: at, FirstRank: 1, Videos: []store.Video{v}}}})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	return w
}

// A line break or a tab in archive text cannot forge a line or a column:
// chart printed a channel title's as they were (red team), so one holding
// "\n   2\tNEW\t..." added a row to the table. Imports keep line breaks and
// tabs, which a description may hold.
func TestArchiveTextCannotForgeRows(t *testing.T) {
	t.Parallel()
	forged := "\n   2\tNEW\tFree giftcard\tYouTube\t   9.9M"
	w := worldWithVideo(t, store.Video{ID: "forge000001", Title: "forge title" + forged, ChannelTitle: "Chan" + forged, CategoryID: "22"})
	for _, args := range [][]string{{"chart", "US"}, {"search", "forge"}, {"history", "forge000001"}} {
		out := w.mustRun(args...).stdout
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "2 ") || strings.Contains(line, "\t") {
				t.Errorf("ytrend %s printed a forged line %q:\n%s", strings.Join(args, " "), line, out)
			}
		}
	}
}

// A run's error can quote what the API answered; fetch's summary and runs
// print it on one line with its controls as escapes (red team: an error
// carrying OSC 52, which writes the clipboard, reached the terminal raw,
// and a line break in it forged a row of runs).
func TestRunErrorsPrintedOnOneSafeLine(t *testing.T) {
	t.Parallel()
	const hostile = "bad \x1b]52;c;ZXZpbA==\x07 request\n99  US  cli  2026-01-01 00:00:00  fake"
	w := newWorld(t, sim.Config{}, func(s *sim.Server) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/videos") {
				s.ServeHTTP(rw, r)
				return
			}
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(rw).Encode(map[string]any{"error": map[string]any{"code": 400, "message": hostile,
				"errors": []any{map[string]any{"message": hostile, "domain": "global", "reason": "badRequest"}}}})
		})
	})
	fetch := w.run("fetch", "US")
	if fetch.code == 0 {
		t.Fatalf("fetch against a 400 exited 0:\n%s", fetch.stdout)
	}
	for name, out := range map[string]string{"fetch": fetch.stdout, "runs": w.mustRun("runs").stdout} {
		if !strings.Contains(out, `\x1b`) { // runs cuts the detail at 80 characters
			t.Errorf("%s does not show the error's controls as escapes:\n%q", name, out)
		}
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s printed a control character: %q", name, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "99 ") {
				t.Errorf("%s printed a forged row %q", name, line)
			}
		}
	}
}

// quota status prints what Redis holds (the epoch id, an upstream mark's
// reason, the lease's holder), which any process spending from the
// credential, or anyone who can write to Redis, wrote: each prints as one
// line with its controls as escapes (red team: a planted epoch id put
// OSC 52 on the terminal).
func TestQuotaStatusPrintsRedisTextSafely(t *testing.T) {
	const hostile = "x\x1b]52;c;ZXZpbA==\x07\n99 forged"
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var b strings.Builder
	printStatus(&b, quota.Status{
		Credential: "main", At: at,
		Exhausted:      &quota.Exhaustion{Until: at.Add(time.Hour), Reason: hostile},
		ExhaustedCalls: []quota.Exhaustion{{Until: at.Add(time.Hour), Reason: hostile, Call: "search.list"}},
		Ledger:         quota.LedgerInfo{Epoch: hostile, Created: at, Rebuilt: at, GraceUntil: at.Add(time.Minute)},
		Leader:         &quota.Fence{Token: 3, Holder: hostile},
	}, "redis")
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("a control character reached the output: %q", out)
	}
	if n := strings.Count(out, `\x1b]52;c;ZXZpbA==\x07`); n < 5 {
		t.Errorf("the hostile text shows as escapes %d times, want 5 (two reasons, the epoch twice, the holder): %q", n, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "99 ") {
			t.Errorf("a forged line %q", line)
		}
	}
}

// An error can quote what came from outside; ytrend prints it with its
// controls as escapes. Here the path of a file to import.
func TestErrorsPrintControlsAsEscapes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	r := w.run("import", filepath.Join(w.dir, "no such \x1b]0;pwned\x07.csv"))
	if r.code == 0 {
		t.Fatal("an import of a missing file succeeded")
	}
	if strings.ContainsAny(r.stderr, "\x1b\x07") || !strings.Contains(r.stderr, `\x1b]0;pwned\x07`) {
		t.Errorf("stderr does not show the controls as escapes: %q", r.stderr)
	}
}

// --json writes the controls a terminal acts on (DEL, C1 such as CSI
// U+009B, bidirectional overrides) as \u escapes, which encoding/json left
// raw (red team): the same strings to a JSON reader, inert on a terminal.
func TestJSONEscapesTerminalControls(t *testing.T) {
	t.Parallel()
	const title = "json \u009b31m del\x7f rlo\u202e end"
	w := worldWithVideo(t, store.Video{ID: "json0000001", Title: title, ChannelTitle: "Chan", CategoryID: "22"})
	for _, args := range [][]string{{"search", "json", "--json"}, {"chart", "US", "--json"}, {"history", "json0000001", "--json"}} {
		out := w.mustRun(args...).stdout
		if strings.ContainsAny(out, "\u009b\x7f\u202e") {
			t.Errorf("ytrend %s wrote a control raw: %q", strings.Join(args, " "), out)
		}
		if !strings.Contains(out, `json \u009b31m del\u007f rlo\u202e end`) {
			t.Errorf("ytrend %s: the title's controls are not \\u escapes: %q", strings.Join(args, " "), out)
		}
		if !strings.Contains(out, `"title"`) || !json.Valid([]byte(out)) {
			t.Errorf("ytrend %s: not JSON: %q", strings.Join(args, " "), out)
		}
	}
	hits := decode[[]struct {
		Title string `json:"title"`
	}](t, w.mustRun("search", "json", "--json").stdout)
	if len(hits) != 1 || hits[0].Title != title {
		t.Errorf("decoded %+v, want the title %q as stored", hits, title)
	}
}

// The import summary names the file with its controls as escapes (red
// team: a file name carrying OSC 0 and U+202E reached the terminal).
func TestImportSummaryNamesTheFileSafely(t *testing.T) {
	t.Parallel()
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	w := newWorld(t, sim.Config{})
	path := filepath.Join(w.dir, "GB\x1b]0;pwned\x07vi\u202edeos.csv")
	row := "name0000001,Title,2020-08-11T19:20:14Z,UC1,Channel,22,2020-08-12T00:00:00Z,[None],10,1,0,1,,False,False,text\n"
	if err := os.WriteFile(path, []byte(header+row), 0o644); err != nil {
		t.Fatal(err)
	}
	r := w.mustRun("import", "--region", "GB", path)
	out := r.stdout + r.stderr
	if strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `\x1b]0;pwned\x07vi\u202edeos.csv`) {
		t.Errorf("the file name is not shown with escapes: %q", out)
	}
}

// A large import ends with the search index merged into one segment, as
// "ytrend optimize" would; --merge never leaves it as the batches left it,
// and auto leaves a small import's alone. Each 5,000-position batch
// commits a segment of its own, so three batches leave three.
func TestImportMergesTheIndexAfterALargeImport(t *testing.T) {
	t.Parallel()
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	var b strings.Builder
	b.WriteString(header)
	day := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := 0; d < 75; d++ { // 75 days x 200 = 15,000 positions, 3 batches
		for r := 0; r < 200; r++ {
			fmt.Fprintf(&b, "v%04d%06d,Video %d of day %d,2020-12-31T00:00:00Z,UC1,Channel,22,%s,[None],10,1,0,1,,False,False,text %d\n",
				d, r, r, d, day.AddDate(0, 0, d).Format(time.RFC3339), r)
		}
	}
	for _, tc := range []struct {
		flags     []string
		merged    bool
		compacted bool
	}{
		{[]string{"--merge=never", "--compact=never"}, false, false},
		{[]string{"--merge=auto", "--compact=auto"}, false, false},
		{[]string{"--merge=always", "--compact=never"}, true, false},
		{[]string{"--merge=always", "--compact=always"}, true, true},
	} {
		w := newWorld(t, sim.Config{})
		w.write("US_youtube_trending_data.csv", b.String())
		r := w.mustRun(append([]string{"import", "US_youtube_trending_data.csv"}, tc.flags...)...)
		n := w.indexSegments()
		if tc.merged != (n == 1) || tc.merged != strings.Contains(r.stderr, "search index merged") {
			t.Errorf("import %s: %d index segments after it, stderr:\n%s\nwant merged: %v", tc.flags, n, r.stderr, tc.merged)
		}
		// The merge frees the pages of the segments it replaced; a
		// compacted archive has none free.
		free := w.freePages()
		if tc.compacted && free != 0 || tc.compacted != strings.Contains(r.stderr, "archive compacted") {
			t.Errorf("import %s: %d free pages after it, stderr:\n%s\nwant compacted: %v", tc.flags, free, r.stderr, tc.compacted)
		}
		if tc.merged && !tc.compacted && free == 0 {
			t.Errorf("import %s: the merge left no free page, so this test cannot tell a compaction", tc.flags)
		}
	}
	w := newWorld(t, sim.Config{})
	if r := w.run("import", "x.csv", "--compact=sometimes"); r.code == 0 || !strings.Contains(r.stderr, `--compact: "sometimes" is not auto, always or never`) {
		t.Errorf("--compact=sometimes: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
