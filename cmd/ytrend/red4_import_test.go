package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/ingest/sim"
)

// Red team (issue 22, point 2): one bare quote at the start of a field
// (a title `"unterminated`) opens a quoted field that nothing closes, so the
// record guard drops "up to the line end that closes it outside quotes":
// the rest of the file. Measured with the real binary: a file of 5,001
// rows whose first title is `"unterminated` imported nothing, and its
// report said "1 rows read ... 1 rows skipped (1 too large)": the 5,000
// good rows after it were neither imported nor reported. One character
// anyone can type into the file removes every row after it, silently.
func TestRedOneBareQuoteLosesTheRestOfTheFileSilently(t *testing.T) {
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

// Red team (issue 22, point 2): imported text keeps terminal control
// sequences, and the CLI prints them raw. YouTube never sends a C0/C1
// control character in a title, channel name or description (NUL is
// already stripped), but ESC, BEL, BS, CR and U+009B (CSI) pass the import
// and reach the operator's terminal through `ytrend history` and `ytrend
// search`. Measured with the real binary: a title with "\x1b[2J" (clear
// screen), "\x1b]0;pwned\x07" (set the window title), a description with
// "\x1b]52;c;ZXZpbA==\x07" (OSC 52: write the clipboard, honoured by
// xterm, iTerm2, kitty, tmux) were stored byte for byte and printed as
// such by both commands.
func TestRedImportedControlCharactersReachTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	title := "escape \x1b[2J\x1b]0;pwned\x07 \x1b[31mRED\x1b[0m \r over \b\b \u009b31m"
	w.write("US_youtube_trending_data.csv", header+
		`escape00001,"`+title+`",2020-08-11T19:20:14Z,UC1,"Chan`+"\x1b[5m"+`",22,2020-08-12T00:00:00Z,[None],10,1,0,1,,False,False,"desc `+"\x1b]52;c;ZXZpbA==\x07"+`"`+"\n")
	w.mustRun("import", "US_youtube_trending_data.csv")
	for _, args := range [][]string{{"history", "escape00001"}, {"search", "escape"}} {
		out := w.mustRun(args...).stdout
		if i := strings.IndexAny(out, "\x1b\x07\b\u009b"); i >= 0 {
			t.Errorf("ytrend %s printed a control sequence from the imported file at byte %d: %q", strings.Join(args, " "), i, out)
		}
	}
}

// Red team (issue 22, point 2): "fields are capped at YouTube's own limits
// ... Memory stays bounded whatever the file", but only the title,
// description and tags are. channelTitle (YouTube: at most 100
// characters) is stored as the file has it, up to the 64 KiB record cap.
// Measured with the real binary: 200 rows of one channel named with 60,000
// characters, one day: /api/v1/charts/NO?limit=200 answers 12,057,305
// bytes and /charts/NO 12,060,032 (a search of 100, 6 MB); 32 concurrent
// chart requests from 16 addresses (a trailing '&' defeats the cache)
// took serve from 144 MB to 1.1 GB peak RSS.
func TestRedChannelTitleIsCapped(t *testing.T) {
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
