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
func TestRed3BareQuoteLosesTheRestOfTheFile(t *testing.T) {
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
	read := 0
	for _, c := range charts {
		for _, p := range c.Pages {
			read += len(p.Videos)
		}
	}
	if read < total-1 || rep.Rows < total-1 {
		t.Errorf("one bare quote on line 7: %d of %d rows read (report: %d rows, skips %v)",
			read, total, rep.Rows, skips(rep))
	}
	_ = dataset.MaxRecordBytes
}
