package dataset_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/dataset"
)

// red3: one bare `"` in an unquoted field (a title, a 2017-18 tag) flips the
// record guard's idea of being inside quotes for good. Every later line end
// then looks quoted, the "record" grows past MaxRecordBytes, and the guard
// drops everything up to a line end it thinks is unquoted, which never
// comes: the rest of the file is lost, reported as one record "cut off".
// Without the guard the CSV reader reads every row (2020+: the bad row is
// skipped as malformed; 2017-18, LazyQuotes: it is read).
func TestBareQuoteLosesNothingElse(t *testing.T) {
	const total = 400
	var b strings.Builder
	b.WriteString("video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n")
	for i := range total {
		title := fmt.Sprintf("title %d", i)
		if i == 5 {
			title = `bad "quote`
		}
		fmt.Fprintf(&b, "q2020%06d,%s,2020-08-11T19:20:14Z,UC,chan,10,2020-08-12T00:00:00Z,a|b,100,1,,1,https://i.ytimg.com/vi/x/default.jpg,False,False,%s\n",
			i, title, strings.Repeat("desc ", 40))
	}
	charts, rep := readAll(t, "CA_youtube_trending_data.csv", b.String(), "CA")
	read := videosIn(charts)
	if read < total-1 || rep.Rows < total-1 {
		t.Errorf("one bare quote on line 7: %d of %d rows read (report: %d rows, skips %v)",
			read, total, rep.Rows, skips(rep))
	}
	_ = dataset.MaxRecordBytes
}

// A quote that opens a field and never closes (a title typed `"oops`) costs
// its own line only, reported with its line number, whether the file ends
// a few records later or many records follow; the rows after it keep their
// own line numbers.
func TestUnclosedQuoteSkipsOnlyItsLine(t *testing.T) {
	for _, total := range []int{6, 20, 700} { // 6: the file ends 2 records after it
		var b strings.Builder
		b.WriteString("video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n")
		for i := range total {
			title, id := fmt.Sprintf("title %d", i), fmt.Sprintf("q2020%06d", i)
			switch i {
			case 3:
				title = `"unterminated`
			case total - 2:
				id = "not an id" // reported at its own line
			}
			fmt.Fprintf(&b, "%s,%s,2020-08-11T19:20:14Z,UC,chan,10,2020-08-12T00:00:00Z,a|b,100,1,,1,,False,False,text\n", id, title)
		}
		charts, rep := readAll(t, "CA_youtube_trending_data.csv", b.String(), "CA")
		read := videosIn(charts)
		want := []string{
			"line 5: malformed: a quoted field opens here and never closes: the lines after it are read as records",
			fmt.Sprintf(`line %d: malformed: video_id: "not an id" is not a video id`, total),
		}
		if got := skips(rep); read != total-2 || rep.Rows != total || rep.CutOff || !slicesEqual(got, want) {
			t.Errorf("%d rows: %d read, report rows %d cut off %v, skips %q, want %q", total, read, rep.Rows, rep.CutOff, got, want)
		}
	}
}

func slicesEqual(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) && len(a) == len(b) }

// The same when the quote's own line is past MaxRecordBytes: that line is
// skipped as too large, and the lines after it are read.
func TestUnclosedQuoteOnAnOversizedLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n")
	for i := range 10 {
		title := fmt.Sprintf("title %d", i)
		if i == 3 {
			title = `"` + strings.Repeat("x", dataset.MaxRecordBytes+10)
		}
		fmt.Fprintf(&b, "q2020%06d,%s,2020-08-11T19:20:14Z,UC,chan,10,2020-08-12T00:00:00Z,a|b,100,1,,1,,False,False,text\n", i, title)
	}
	charts, rep := readAll(t, "CA_youtube_trending_data.csv", b.String(), "CA")
	read := videosIn(charts)
	want := []string{"line 5: too large: the record is larger than 64 KiB: no row of a real dataset is"}
	if got := skips(rep); read != 9 || rep.Rows != 10 || !slicesEqual(got, want) {
		t.Errorf("%d read, report rows %d, skips %q, want %q", read, rep.Rows, got, want)
	}
}

// A few records after the quote, then a line past MaxRecordBytes: the
// quote is taken for a stray one there, and the long line is skipped as
// too large on its own.
func TestUnclosedQuoteBeforeAnOversizedLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n")
	for i := range 10 {
		title := fmt.Sprintf("title %d", i)
		switch i {
		case 3:
			title = `"oops`
		case 6:
			fmt.Fprintf(&b, "%s\n", strings.Repeat("junk ", dataset.MaxRecordBytes/4))
			continue
		}
		fmt.Fprintf(&b, "q2020%06d,%s,2020-08-11T19:20:14Z,UC,chan,10,2020-08-12T00:00:00Z,a|b,100,1,,1,,False,False,text\n", i, title)
	}
	charts, rep := readAll(t, "CA_youtube_trending_data.csv", b.String(), "CA")
	read := videosIn(charts)
	want := []string{
		"line 5: malformed: a quoted field opens here and never closes: the lines after it are read as records",
		"line 8: too large: the record is larger than 64 KiB: no row of a real dataset is",
	}
	if got := skips(rep); read != 8 || rep.Rows != 10 || !slicesEqual(got, want) {
		t.Errorf("%d read, report rows %d, skips %q, want %q", read, rep.Rows, got, want)
	}
}
