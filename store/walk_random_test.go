package store_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
)

// Red-team tests: the default walk must equal Query.Exhaustive.

var randWords = []string{"alpha", "beta", "gamma", "delta", "omega"}

// randArchive builds a small archive of n videos with few distinct texts,
// fetch times, ranks and view counts (so that ties abound), re-sighted at
// random, some in search pages (no rank, no region), some from older
// history saved late.
func randArchive(t testing.TB, db *store.DB, seed int64, n int) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	titles := make([]string, 12)
	for i := range titles {
		k := 1 + rng.Intn(3)
		s := ""
		for j := 0; j < k; j++ {
			if j > 0 {
				s += " "
			}
			s += randWords[rng.Intn(len(randWords))]
		}
		titles[i] = s
	}
	days := 60
	times := make([]time.Time, days)
	for i := range times {
		times[i] = t0.Add(time.Duration(i) * 24 * time.Hour)
	}
	regs := []regions.Code{"US", "DE", "JP"}
	cats := []string{"10", "24", "1"}
	mk := func(i int) store.Video {
		r := rand.New(rand.NewSource(seed*1_000_003 + int64(i)))
		v := store.Video{
			ID:           fmt.Sprintf("v%05d", i),
			Title:        titles[r.Intn(len(titles))],
			ChannelID:    fmt.Sprintf("UC%03d", r.Intn(100)),
			CategoryID:   cats[r.Intn(len(cats))],
			PublishedAt:  t0.Add(-time.Hour),
			Description:  "",
			ChannelTitle: "",
		}
		v.ChannelTitle = "chan" + v.ChannelID[2:]
		return v
	}
	viewsOf := func() *int64 {
		switch rng.Intn(5) {
		case 0:
			return nil
		case 1:
			return i64(0)
		default:
			return i64(int64(rng.Intn(6)) * 1000)
		}
	}
	type sighting struct {
		at     int
		region regions.Code
		search bool
		vids   []int
	}
	var ss []sighting
	// First sightings in id order (ids follow first insertion), then
	// re-sightings of random older videos.
	next := 0
	for next < n {
		k := min(n-next, 1+rng.Intn(50))
		s := sighting{at: min(days-1, next*days/n+rng.Intn(2)), region: regs[rng.Intn(len(regs))], search: rng.Intn(8) == 0}
		for j := 0; j < k; j++ {
			s.vids = append(s.vids, next)
			next++
		}
		ss = append(ss, s)
	}
	for i := 0; i < n/400; i++ {
		k := 1 + rng.Intn(50)
		s := sighting{at: rng.Intn(days), region: regs[rng.Intn(len(regs))], search: rng.Intn(8) == 0}
		seen := map[int]bool{}
		for j := 0; j < k; j++ {
			v := rng.Intn(n)
			if !seen[v] {
				seen[v] = true
				s.vids = append(s.vids, v)
			}
		}
		ss = append(ss, s)
	}
	for si, s := range ss {
		at := times[s.at]
		if si%7 == 3 && !s.search {
			// Older history, imported late: an earlier time than stored.
			at = at.Add(-time.Duration(1+rng.Intn(20)) * 24 * time.Hour).Add(time.Duration(si) * time.Second)
			vs := make([]store.Video, len(s.vids))
			for j, id := range s.vids {
				vs[j] = mk(id)
				vs[j].Views = viewsOf()
			}
			if _, err := db.ImportChart(ctx, store.ImportedChart{Region: s.region,
				Pages: []store.Page{{FetchedAt: at, FirstRank: 1 + rng.Intn(4)*50, Videos: vs}}}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		vs := make([]store.Video, len(s.vids))
		for j, id := range s.vids {
			vs[j] = mk(id)
			vs[j].Views = viewsOf()
		}
		run := startRun(t, db, s.region, at)
		p := store.Page{RunID: run, Region: s.region, FetchedAt: at, Kind: store.PageChart, FirstRank: 1 + rng.Intn(4)*50, Videos: vs}
		if s.search {
			p.Kind, p.FirstRank = store.PageSearch, 0
		}
		savePage(t, db, p)
		if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: at.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
}

func randQuery(rng *rand.Rand, newest time.Time) store.Query {
	var q store.Query
	switch rng.Intn(8) {
	case 0:
		q.Text = randWords[rng.Intn(len(randWords))] + " OR " + randWords[rng.Intn(len(randWords))]
		q.Raw = true
	case 1, 2:
		q.Text = randWords[rng.Intn(len(randWords))] + " " + randWords[rng.Intn(len(randWords))]
	default:
		q.Text = randWords[rng.Intn(len(randWords))]
	}
	q.Sort = []store.SortOrder{store.SortRelevance, store.SortRecent, store.SortViews}[rng.Intn(3)]
	q.Limit = []int{1, 2, 3, 5, 7, 20, 100, 500, 1 + rng.Intn(500)}[rng.Intn(9)]
	if rng.Intn(4) == 0 {
		all := []regions.Code{"US", "DE", "JP", "FR"}
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		q.Regions = all[:1+rng.Intn(2)]
	}
	if rng.Intn(4) == 0 {
		q.Since = newest.Add(-time.Duration(rng.Intn(60)) * 24 * time.Hour) // exactly at a fetch time
	}
	switch rng.Intn(6) {
	case 0:
		q.Channel = "chan" // every channel: > 64
	case 1:
		q.Channel = "chan0" // 10 channels: facets
	case 2:
		q.Channel = "UC0" + strconv.Itoa(10+rng.Intn(90)) // one
	}
	if rng.Intn(4) == 0 {
		q.Categories = []string{"10", "1"}[:1+rng.Intn(2)]
	}
	return q
}

func TestWalkRandomEqualsExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds archives")
	}
	if raceDetector {
		// A walk is one goroutine's reads: the detector has nothing to
		// find here that TestSearchDuringWrites (walks beside writes and
		// each other) would not, and the equality is checked at full size
		// without it (make test runs '^TestWalk' after the race run).
		t.Skip("run without -race (make test does)")
	}
	t.Parallel() // each full-size check builds its own archive
	ctx := context.Background()
	seeds, nq := 3, 300
	if s := os.Getenv("YTREND_WALK_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("YTREND_WALK_QUERIES"); s != "" {
		nq, _ = strconv.Atoi(s)
	}
	probe := &search.WalkProbe{}
	var walks, ranked, read int
	probe.Walked = func(r, b int) { walks, ranked, read = walks+1, ranked+r, read+b }
	bySort := map[store.SortOrder]int{}
	defer func() { t.Logf("walks by sort: %v", bySort) }()
	for seed := int64(1); seed <= int64(seeds); seed++ {
		db, _ := openDB(t, store.WithSearch(search.WithWalkProbe(probe)))
		n := 3000 + int(seed%3)*4000
		randArchive(t, db, seed, n)
		if seed%2 == 0 {
			// Delete some videos: their blocks' bounds stay loose.
			rng := rand.New(rand.NewSource(-seed))
			var del []string
			for i := 0; i < n/10; i++ {
				del = append(del, fmt.Sprintf("v%05d", rng.Intn(n)))
			}
			if _, err := db.DeleteVideos(ctx, del...); err != nil {
				t.Fatal(err)
			}
		}
		if v := blockBoundsViolated(t, db); v != 0 {
			t.Fatalf("seed %d: %d videos outside their block's bounds", seed, v)
		}
		var newestUS int64
		if err := db.Reader().QueryRow(`SELECT max(last_seen) FROM video_stats`).Scan(&newestUS); err != nil {
			t.Fatal(err)
		}
		newest := time.UnixMicro(newestUS)
		rng := rand.New(rand.NewSource(seed))
		fails := 0
		for i := 0; i < nq && fails < 5; i++ {
			q := randQuery(rng, newest)
			group := rng.Intn(4)
			probe.Group = group
			w0 := walks
			got, err := db.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if walks > w0 {
				bySort[q.Sort]++
			}
			q.Exhaustive = true
			want, err := db.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				fails++
				t.Errorf("seed %d n %d group %d query %+v:\n walk %d %v\n  all %d %v", seed, n, group, q, len(got), ids(got), len(want), ids(want))
			}
		}
	}
	t.Logf("%d walks ranked %d of %d blocks read", walks, ranked, read)
}

// Views order walks only for small limits on common words: aim at those.
func TestWalkViewsOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds archives")
	}
	if raceDetector {
		t.Skip("run without -race (make test does; see TestWalkRandomEqualsExhaustive)")
	}
	t.Parallel() // each full-size check builds its own archive
	ctx := context.Background()
	probe := &search.WalkProbe{}
	var walks int
	probe.Walked = func(r, b int) { walks++ }
	last := int64(13)
	for seed := int64(11); seed <= last; seed++ {
		db, _ := openDB(t, store.WithSearch(search.WithWalkProbe(probe)))
		n := 7000
		randArchive(t, db, seed, n)
		var newestUS int64
		if err := db.Reader().QueryRow(`SELECT max(last_seen) FROM video_stats`).Scan(&newestUS); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(seed))
		nq := 300
		for i := 0; i < nq; i++ {
			q := randQuery(rng, time.UnixMicro(newestUS))
			q.Sort, q.Limit, q.Raw = store.SortViews, 1+rng.Intn(6), false
			if q.Raw {
				q.Text = randWords[0]
			}
			probe.Group = rng.Intn(3)
			got, err := db.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			q.Exhaustive = true
			want, err := db.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d query %+v:\n walk %v\n  all %v", seed, q, ids(got), ids(want))
			}
		}
	}
	t.Logf("%d walks", walks)
}

// Searches while pages are written and videos deleted: each search is one
// snapshot, so none fails, and parallel searches do not share ranking state.
func TestSearchDuringWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an archive")
	}
	ctx := context.Background()
	db, _ := openDB(t)
	randArchive(t, db, 5, 4000)
	stop := make(chan struct{})
	werr := make(chan error, 1)
	go func() {
		defer close(werr)
		rng := rand.New(rand.NewSource(9))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			at := t0.Add(70*24*time.Hour + time.Duration(i)*time.Minute)
			run, err := db.StartRun(ctx, "US", store.TriggerSchedule, at)
			if err != nil {
				werr <- err
				return
			}
			var vs []store.Video
			for j := 0; j < 50; j++ {
				id := rng.Intn(6000)
				vs = append(vs, store.Video{ID: fmt.Sprintf("v%05d", id), Title: randWords[rng.Intn(5)] + " " + randWords[rng.Intn(5)],
					ChannelID: "UC001", ChannelTitle: "chan001", Views: i64(int64(rng.Intn(10)) * 1000)})
			}
			if _, err := db.SavePage(ctx, store.Page{RunID: run, Region: "US", FetchedAt: at, Kind: store.PageChart, FirstRank: 1, Videos: vs}); err != nil {
				werr <- err
				return
			}
			if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: at}); err != nil {
				werr <- err
				return
			}
			if _, err := db.DeleteVideos(ctx, fmt.Sprintf("v%05d", rng.Intn(6000)), fmt.Sprintf("v%05d", rng.Intn(6000))); err != nil {
				werr <- err
				return
			}
		}
	}()
	errs := make(chan error, 8)
	for g := 0; g < 4; g++ {
		go func(g int) {
			rng := rand.New(rand.NewSource(int64(g)))
			nq := 60
			if raceDetector {
				nq = 20
			}
			for i := 0; i < nq; i++ {
				q := randQuery(rng, t0.Add(60*24*time.Hour))
				q.Exhaustive = i%3 == 0
				if _, err := db.Search(ctx, q); err != nil {
					errs <- fmt.Errorf("%+v: %w", q, err)
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	close(stop)
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
}
