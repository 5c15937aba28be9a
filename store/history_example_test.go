package store_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ytrend/ytrend/store"
)

// A day of a public dataset comes in as a run of its own; the chart of any
// moment is the newest chart at or before it, moved against the one before.
func ExampleDB_Chart() {
	ctx := context.Background()
	db, cleanup := exampleDB()
	defer cleanup()

	day := func(d int) time.Time { return time.Date(2020, 8, 11+d, 0, 0, 0, 0, time.UTC) }
	for d, ids := range [][]string{{"aaa", "bbb", "ccc"}, {"ccc", "aaa", "ddd"}} {
		var vs []store.Video
		for _, id := range ids {
			vs = append(vs, store.Video{ID: id, Title: "Video " + id, Views: views(int64(100 * (d + 1)))})
		}
		res, err := db.ImportChart(ctx, store.ImportedChart{Region: "US", Pages: []store.Page{{FetchedAt: day(d), FirstRank: 1, Videos: vs}}})
		fmt.Println("imported", day(d).Format(time.DateOnly), res.New, "new", err)
	}
	again, _ := db.ImportChart(ctx, store.ImportedChart{Region: "US", Pages: []store.Page{{FetchedAt: day(0), FirstRank: 1,
		Videos: []store.Video{{ID: "aaa"}}}}})
	fmt.Println("again: skipped", again.Skipped)

	c, _ := db.Chart(ctx, "US", day(1).Add(12*time.Hour), 0)
	for _, e := range c.Entries {
		fmt.Printf("#%d %s %s %+d\n", e.Rank, e.VideoID, e.Movement, e.Change)
	}
	// Output:
	// imported 2020-08-11 3 new <nil>
	// imported 2020-08-12 1 new <nil>
	// again: skipped true
	// #1 ccc up +2
	// #2 aaa down -1
	// #3 ddd new +0
}

func ExampleDB_History() {
	ctx := context.Background()
	db, cleanup := exampleDB()
	defer cleanup()

	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for i, rank := range []int{4, 1, 2} {
		t := at.Add(time.Duration(i) * 12 * time.Hour)
		run, _ := db.StartRun(ctx, "GB", store.TriggerSchedule, t)
		vs := make([]store.Video, rank)
		for j := range vs {
			vs[j] = store.Video{ID: fmt.Sprintf("filler%d", j), Title: "Filler"}
		}
		vs[rank-1] = store.Video{ID: "star", Title: "The star", Views: views(int64(1000 * (i + 1)))}
		db.SavePage(ctx, store.Page{RunID: run, Region: "GB", FetchedAt: t, FirstRank: 1, Videos: vs})
		db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: t.Add(time.Minute)})
	}
	h, _ := db.History(ctx, "star")
	for _, r := range h.Regions {
		fmt.Printf("%s best #%d over %d days\n", r.Region, r.BestRank, r.Days)
		for _, p := range r.Points {
			fmt.Printf("  %s #%d %d views\n", p.At.Format("Jan 2 15:04"), p.Rank, *p.Views)
		}
	}
	// Output:
	// GB best #1 over 2 days
	//   May 1 09:00 #4 1000 views
	//   May 1 21:00 #1 2000 views
	//   May 2 09:00 #2 3000 views
}
