package store_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// exampleDB opens an archive in a temporary directory.
func exampleDB() (*store.DB, func()) {
	dir, err := os.MkdirTemp("", "ytrend-example-")
	if err != nil {
		log.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(dir, "archive.db"))
	if err != nil {
		log.Fatal(err)
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }
}

func views(n int64) *int64 { return &n }

// A fetch records a run, saves each page in one transaction, and finishes
// the run; a search then answers from the archive.
func Example() {
	ctx := context.Background()
	db, cleanup := exampleDB()
	defer cleanup()

	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	run, _ := db.StartRun(ctx, "JP", store.TriggerCLI, at)
	db.SavePage(ctx, store.Page{RunID: run, Region: "JP", FetchedAt: at, Kind: store.PageChart, FirstRank: 1, Units: 1,
		Videos: []store.Video{
			{ID: "vid1", Title: "東京の天気予報", ChannelTitle: "ウェザーニュース", Views: views(1200)},
			{ID: "vid2", Title: "Café crème at home", Description: "A cafe classic.", ChannelTitle: "Cooking", Views: views(800)},
		}})
	db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: at.Add(time.Second), Units: 1})

	for _, text := range []string{"天気", "cafe creme"} {
		hits, _ := db.Search(ctx, store.Query{Text: text})
		for _, h := range hits {
			fmt.Printf("%s: %s %v #%d %q\n", text, h.VideoID, h.Regions, h.BestRank, h.Snippet)
		}
	}
	// Output:
	// 天気: vid1 [JP] #1 "東京の[天気]予報"
	// cafe creme: vid2 [JP] #2 "[Café] [crème] at home"
}

func ExampleDB_SavePage() {
	ctx := context.Background()
	db, cleanup := exampleDB()
	defer cleanup()

	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	run, _ := db.StartRun(ctx, "US", store.TriggerSchedule, at)
	page := store.Page{RunID: run, Region: "US", FetchedAt: at, Kind: store.PageChart, FirstRank: 1,
		Videos: []store.Video{{ID: "a", Title: "First"}, {ID: "b", Title: "Second", Views: views(10)}}}
	res, _ := db.SavePage(ctx, page)
	fmt.Printf("%+v\n", res)

	// An hour later: same texts, more views, one new title.
	page.FetchedAt, page.FirstRank = at.Add(time.Hour), 51
	page.Videos[1].Views = views(25)
	page.Videos[0].Title = "First (updated)"
	res, _ = db.SavePage(ctx, page)
	fmt.Printf("%+v\n", res)
	// Output:
	// {New:2 Updated:0 Unchanged:0}
	// {New:0 Updated:1 Unchanged:1}
}

func ExampleDB_Search() {
	ctx := context.Background()
	db, cleanup := exampleDB()
	defer cleanup()

	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for i, region := range []regions.Code{"US", "GB", "DE"} {
		run, _ := db.StartRun(ctx, region, store.TriggerSchedule, at)
		db.SavePage(ctx, store.Page{RunID: run, Region: region, FetchedAt: at, Kind: store.PageChart, FirstRank: 3 - i,
			Videos: []store.Video{{ID: "final", Title: "Cup final: extended highlights", Description: "All the goals of the final.", Views: views(5e6)}}})
	}
	hits, _ := db.Search(ctx, store.Query{Text: `"extended highlights" -`, MarkOpen: "<b>", MarkClose: "</b>"})
	for _, h := range hits {
		fmt.Println(h.VideoID, h.Regions, h.BestRank, *h.Views, h.Snippet)
	}
	none, err := db.Search(ctx, store.Query{Text: `NEAR("unbalanced`})
	fmt.Println(len(none), none != nil, err)
	// Output:
	// final [DE GB US] 1 5000000 Cup final: <b>extended highlights</b>
	// 0 true <nil>
}

func ExampleDB_Video() {
	ctx := context.Background()
	db, cleanup := exampleDB()
	defer cleanup()

	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for h, rank := range []int{8, 3, 5} {
		run, _ := db.StartRun(ctx, "BR", store.TriggerSchedule, at.Add(time.Duration(h)*time.Hour))
		db.SavePage(ctx, store.Page{RunID: run, Region: "BR", FetchedAt: at.Add(time.Duration(h) * time.Hour), Kind: store.PageChart,
			FirstRank: rank, Videos: []store.Video{{ID: "gol", Title: "Gol de placa", Likes: nil}}})
	}
	v, st, _ := db.Video(ctx, "gol")
	fmt.Println(v.Title, v.Likes == nil, st.FirstSeen.Format(time.Kitchen), st.LastSeen.Format(time.Kitchen))
	for _, r := range st.Regions {
		fmt.Printf("%s best #%d last #%d, %d snapshots\n", r.Region, r.BestRank, r.LastRank, r.Snapshots)
	}
	// Output:
	// Gol de placa true 9:00AM 11:00AM
	// BR best #3 last #5, 3 snapshots
}

func ExampleDB_Runs() {
	ctx := context.Background()
	db, cleanup := exampleDB()
	defer cleanup()

	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	run, _ := db.StartRun(ctx, "IN", store.TriggerSchedule, at)
	db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusStoppedQuota, At: at.Add(time.Minute), Units: 101,
		RefusedBy: "daily", RetryAt: at.Add(15 * time.Hour)})
	runs, _ := db.Runs(ctx, store.RunFilter{Region: "IN"})
	for _, r := range runs {
		fmt.Println(r.Region, r.Trigger, r.Status, r.Units, r.RefusedBy, r.RetryAt.Format(time.RFC3339))
	}
	// Output:
	// IN schedule stopped_quota 101 daily 2026-05-02T00:00:00Z
}
