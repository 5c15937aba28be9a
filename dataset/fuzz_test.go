package dataset_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/dataset"
)

// FuzzReader feeds the reader arbitrary files: it must never panic, and
// every data record it reads is either in a chart or reported skipped, at a
// line inside the file.
func FuzzReader(f *testing.F) {
	f.Add([]byte(file2017(rows2017)))
	f.Add([]byte(file2020(f, columns2020, rows2020, style{})))
	f.Add([]byte(file2020(f, columns2020, rows2020, style{quoteAll: true, crlf: true, bom: true})))
	f.Add([]byte(strings.Join(dataset.ColumnsYtrend, ",") + "\nabc,t,,UC,c,1,2020-01-01,[None],1,,,,x,False,False,d,US,1,2020-01-01T00:00:00Z\n"))
	f.Add([]byte(`{"video_id":"a","title":"t","publishedAt":"","channelId":"","channelTitle":"","categoryId":"","trending_date":"2020-01-01","tags":[],"view_count":1,"likes":null,"dislikes":null,"comment_count":null,"thumbnail_link":"","comments_disabled":false,"ratings_disabled":false,"description":"","region":"US","rank":1,"fetched_at":"2020-01-01T00:00:00Z"}` + "\n{\"video_id\":"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := dataset.NewReader(bytes.NewReader(data), "US_youtube_trending_data.csv", "US")
		if err != nil {
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		inCharts := 0
		for {
			c, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if len(c.Pages) == 0 {
				t.Fatal("a chart without pages")
			}
			for _, p := range c.Pages {
				if len(p.Videos) == 0 || p.FirstRank < 1 || p.FetchedAt.IsZero() {
					t.Fatalf("bad page %+v", p)
				}
				inCharts += len(p.Videos)
			}
		}
		rep := r.Report()
		if inCharts+rep.Skipped != rep.Rows {
			t.Fatalf("%d rows read, %d in charts, %d skipped", rep.Rows, inCharts, rep.Skipped)
		}
		for _, s := range rep.Skips {
			if s.Line < 1 || s.Line > lines || s.Kind == "" || s.Reason == "" {
				t.Fatalf("skip %+v outside a %d-line file", s, lines)
			}
		}
	})
}
