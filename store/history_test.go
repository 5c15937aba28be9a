package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// vid is a small video for the history tests: its id, title and views.
func vid(id, title string, views int64) store.Video {
	return store.Video{ID: id, Title: title, ChannelID: "UC" + id, ChannelTitle: "Channel " + id,
		CategoryID: "10", PublishedAt: t0.Add(-24 * time.Hour), Views: i64(views), Likes: i64(views / 10),
		Comments: i64(views / 100)}
}

type entry struct {
	rank int
	id   string
	move store.Movement
	prev int // 0: none
}

func chartEntries(c store.Chart) []entry {
	var out []entry
	for _, e := range c.Entries {
		en := entry{rank: e.Rank, id: e.VideoID, move: e.Movement}
		if e.PreviousRank != nil {
			en.prev = *e.PreviousRank
		}
		out = append(out, en)
	}
	return out
}

func TestChartAtAndMovement(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	a, b, c, d := vid("aaa", "Alpha", 100), vid("bbb", "Bravo", 200), vid("ccc", "Charlie", 300), vid("ddd", "Delta", 400)
	saveChart(t, db, "US", t0, 1, a, b, c)
	saveChart(t, db, "GB", t0.Add(90*time.Minute), 1, d, a) // another region: never mixed in
	c.Views = i64(350)
	saveChart(t, db, "US", t0.Add(2*time.Hour), 1, c, a, d)
	// A run that stored only search results is no chart.
	search := startRun(t, db, "US", t0.Add(150*time.Minute))
	savePage(t, db, store.Page{RunID: search, FetchedAt: t0.Add(150 * time.Minute), Kind: store.PageSearch, Videos: []store.Video{b}})
	if err := db.FinishRun(ctx, search, store.RunEnd{Status: store.StatusOK, At: t0.Add(151 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	// A run still fetching is not a chart yet.
	run := startRun(t, db, "US", t0.Add(3*time.Hour))
	savePage(t, db, store.Page{RunID: run, Region: "US", FetchedAt: t0.Add(3 * time.Hour), FirstRank: 1, Videos: []store.Video{b}})

	// Between the two fetches: the first, all new.
	first, err := db.Chart(ctx, "US", t0.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []entry{{1, "aaa", store.MovementNew, 0}, {2, "bbb", store.MovementNew, 0}, {3, "ccc", store.MovementNew, 0}}
	if got := chartEntries(first); !slices.Equal(got, want) {
		t.Errorf("chart between the fetches: %v, want %v", got, want)
	}
	if !first.FetchedAt.Equal(t0) || first.PreviousFetchedAt != nil || first.PreviousRunID != 0 {
		t.Errorf("first chart fetched %v, previous %v/%d", first.FetchedAt, first.PreviousFetchedAt, first.PreviousRunID)
	}
	// Exactly at a fetch's time counts as at or before.
	if exact, err := db.Chart(ctx, "US", t0, 0); err != nil || exact.RunID != first.RunID {
		t.Errorf("chart at the fetch's own time: run %d, %v; want run %d", exact.RunID, err, first.RunID)
	}

	// Now (the zero time): the second fetch, against the first.
	now, err := db.Chart(ctx, "US", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want = []entry{{1, "ccc", store.MovementUp, 3}, {2, "aaa", store.MovementDown, 1}, {3, "ddd", store.MovementNew, 0}}
	if got := chartEntries(now); !slices.Equal(got, want) {
		t.Errorf("chart now: %v, want %v", got, want)
	}
	if now.Entries[0].Change != 2 || now.Entries[1].Change != -1 || now.Entries[2].Change != 0 {
		t.Errorf("changes %d %d %d, want 2 -1 0", now.Entries[0].Change, now.Entries[1].Change, now.Entries[2].Change)
	}
	if now.PreviousRunID != first.RunID || now.PreviousFetchedAt == nil || !now.PreviousFetchedAt.Equal(t0) {
		t.Errorf("previous fetch %d at %v, want %d at %v", now.PreviousRunID, now.PreviousFetchedAt, first.RunID, t0)
	}
	e := now.Entries[0]
	if e.Title != "Charlie" || e.ChannelTitle != "Channel ccc" || e.ChannelID != "UCccc" || e.CategoryID != "10" ||
		*e.Views != 350 || *e.Likes != 30 || *e.Comments != 3 || !e.FetchedAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("entry: %+v", e)
	}
	// The views are the sighting's own, not the latest.
	if *first.Entries[2].Views != 300 {
		t.Errorf("views at the first fetch: %d, want 300", *first.Entries[2].Views)
	}
	if lim, err := db.Chart(ctx, "US", time.Time{}, 2); err != nil || len(lim.Entries) != 2 || lim.Entries[1].VideoID != "aaa" {
		t.Errorf("limit 2: %v, %v", chartEntries(lim), err)
	}

	// Before the first fetch: a clear error naming the first chart.
	_, err = db.Chart(ctx, "US", t0.Add(-time.Hour), 0)
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no fetch at or before 2026-03-01T11:00:00Z") ||
		!strings.Contains(err.Error(), "the first is at 2026-03-01T12:00:00Z") {
		t.Errorf("chart before the first fetch: %v", err)
	}
	if _, err := db.Chart(ctx, "DE", time.Time{}, 0); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no chart of DE") {
		t.Errorf("region never fetched: %v", err)
	}
	if _, err := db.Chart(ctx, "XX", time.Time{}, 0); err == nil || !strings.Contains(err.Error(), `"XX" is not a region code`) {
		t.Errorf("bad region: %v", err)
	}
}

func TestHistory(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	a := vid("aaa", "Alpha", 100)
	saveChart(t, db, "US", t0, 3, a)
	a.Views = nil // hidden at the next sighting
	saveChart(t, db, "US", t0.Add(2*time.Hour), 1, a)
	a.Views = i64(500)
	saveChart(t, db, "US", t0.Add(26*time.Hour), 2, a)
	saveChart(t, db, "GB", t0.Add(50*time.Hour), 7, a)
	saveChart(t, db, "GB", t0, 1, vid("zzz", "Other", 1))

	h, err := db.History(ctx, "aaa")
	if err != nil {
		t.Fatal(err)
	}
	if h.VideoID != "aaa" || h.Title != "Alpha" || h.ChannelTitle != "Channel aaa" || h.ChannelID != "UCaaa" || len(h.Regions) != 2 {
		t.Fatalf("history: %+v", h)
	}
	gb, us := h.Regions[0], h.Regions[1]
	if gb.Region != "GB" || gb.BestRank != 7 || gb.Days != 1 || len(gb.Points) != 1 || !gb.FirstSeen.Equal(t0.Add(50*time.Hour)) {
		t.Errorf("GB: %+v", gb)
	}
	if us.Region != "US" || us.BestRank != 1 || us.Days != 2 || !us.FirstSeen.Equal(t0) || !us.LastSeen.Equal(t0.Add(26*time.Hour)) {
		t.Errorf("US: %+v", us)
	}
	var pts []string
	for _, p := range us.Points {
		v := "hidden"
		if p.Views != nil {
			v = fmt.Sprint(*p.Views)
		}
		pts = append(pts, fmt.Sprintf("%s #%d %s", p.At.Format("02T15"), p.Rank, v))
	}
	if want := []string{"01T12 #3 100", "01T14 #1 hidden", "02T14 #2 500"}; !slices.Equal(pts, want) {
		t.Errorf("US points %v, want %v", pts, want)
	}
	if _, err := db.History(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown video: %v", err)
	}
	// A video only ever found by search has a history with no regions.
	run := startRun(t, db, "US", t0)
	savePage(t, db, store.Page{RunID: run, FetchedAt: t0, Kind: store.PageSearch, Videos: []store.Video{vid("sss", "Searched", 5)}})
	if h, err := db.History(ctx, "sss"); err != nil || h.Regions == nil || len(h.Regions) != 0 {
		t.Errorf("search-only video: %+v, %v", h, err)
	}
}

// snapRow is what an exported row says, compactly.
func snapRow(s *store.Snapshot) string {
	n := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s %s #%d %s v%s l%s d%s c%s cd=%v rd=%v", s.Region, s.FetchedAt.Format("02T15:04"), s.Rank, s.Video.ID,
		n(s.Views), n(s.Likes), n(s.Dislikes), n(s.Comments), s.CommentsDisabled, s.RatingsDisabled)
}

func collect(t *testing.T, db *store.DB, f store.SnapshotFilter) []string {
	t.Helper()
	var out []string
	if err := db.Snapshots(context.Background(), f, func(s *store.Snapshot) error {
		out = append(out, snapRow(s))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSnapshotsOrderFiltersAndCounts(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	a, b := vid("aaa", "Alpha", 100), vid("bbb", "Bravo", 200)
	b.Likes, b.Comments = nil, nil // the owner hides likes and comments
	saveChart(t, db, "US", t0.Add(time.Hour), 1, a, b)
	saveChart(t, db, "DE", t0, 1, b)
	a.Views = i64(150)
	saveChart(t, db, "US", t0.Add(3*time.Hour), 1, b, a)

	all := collect(t, db, store.SnapshotFilter{})
	want := []string{
		"DE 01T12:00 #1 bbb v200 l- d- c- cd=true rd=true",
		"US 01T13:00 #1 aaa v100 l10 d- c1 cd=false rd=false",
		"US 01T13:00 #2 bbb v200 l- d- c- cd=true rd=true",
		"US 01T15:00 #1 bbb v200 l- d- c- cd=true rd=true",
		"US 01T15:00 #2 aaa v150 l10 d- c1 cd=false rd=false",
	}
	if !slices.Equal(all, want) {
		t.Errorf("all snapshots:\n%s\nwant\n%s", strings.Join(all, "\n"), strings.Join(want, "\n"))
	}
	if got := collect(t, db, store.SnapshotFilter{Regions: []regions.Code{"DE"}}); !slices.Equal(got, want[:1]) {
		t.Errorf("DE: %v", got)
	}
	if got := collect(t, db, store.SnapshotFilter{Since: t0.Add(time.Hour), Until: t0.Add(2 * time.Hour)}); !slices.Equal(got, want[1:3]) {
		t.Errorf("13:00-14:00: %v", got)
	}
	if got := collect(t, db, store.SnapshotFilter{Regions: []regions.Code{"US", "GB"}, Since: t0.Add(2 * time.Hour)}); !slices.Equal(got, want[3:]) {
		t.Errorf("US since 14:00: %v", got)
	}
	// The metadata comes with each row.
	var v store.Video
	stop := errors.New("stop")
	err := db.Snapshots(ctx, store.SnapshotFilter{}, func(s *store.Snapshot) error {
		if s.Video.ID == "aaa" {
			v = s.Video
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Errorf("fn's error: %v", err)
	}
	if v.Title != "Alpha" || v.ChannelID != "UCaaa" || v.ChannelTitle != "Channel aaa" || v.CategoryID != "10" || !v.PublishedAt.Equal(t0.Add(-24*time.Hour)) {
		t.Errorf("metadata: %+v", v)
	}

	// Snapshots stored before migration 0004 recorded views only: their
	// likes and comments are unknown, and the flags are the video's now.
	if _, err := db.Writer().ExecContext(ctx, `UPDATE trending_snapshots SET likes = NULL, comments = NULL, counted = 0 WHERE region = 'DE'`); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, db, store.SnapshotFilter{Regions: []regions.Code{"DE"}}); !slices.Equal(got, []string{"DE 01T12:00 #1 bbb v200 l- d- c- cd=true rd=true"}) {
		t.Errorf("pre-0004 row of a video with hidden counts: %v", got)
	}
	if _, err := db.Writer().ExecContext(ctx, `UPDATE trending_snapshots SET likes = NULL, comments = NULL, counted = 0 WHERE region = 'US' AND rank = 1`); err != nil {
		t.Fatal(err)
	}
	got := collect(t, db, store.SnapshotFilter{Regions: []regions.Code{"US"}, Until: t0.Add(time.Hour)})
	if !slices.Equal(got, []string{"US 01T13:00 #1 aaa v100 l- d- c- cd=false rd=false", "US 01T13:00 #2 bbb v200 l- d- c- cd=true rd=true"}) {
		t.Errorf("pre-0004 row of a video with visible counts: %v", got)
	}
}

func importChart(t *testing.T, db *store.DB, region regions.Code, at time.Time, vs ...store.Video) store.ImportResult {
	t.Helper()
	res, err := db.ImportChart(context.Background(), store.ImportedChart{Region: region,
		Pages: []store.Page{{FetchedAt: at, FirstRank: 1, Videos: vs}}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func countRows(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImportChartIdempotentAndMerged(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	day := func(d int) time.Time { return time.Date(2020, 8, 11+d, 0, 0, 0, 0, time.UTC) }

	// The archive fetched "aaa" itself, recently, with a duration and a
	// language the datasets do not carry.
	live := vid("aaa", "Alpha (live)", 9000)
	live.Duration, live.DefaultLanguage = 95*time.Second, "en"
	saveChart(t, db, "US", t0, 1, live)
	fts0 := store.FTSWrites(db)

	old := vid("aaa", "Alpha (2020)", 100)
	res := importChart(t, db, "US", day(1), old, vid("bbb", "Bravo", 50), vid("ccc", "Charlie", 70))
	if res.Skipped || res.RunID == 0 || res.New != 2 || res.Unchanged != 1 || res.Updated != 0 {
		t.Fatalf("first import: %+v", res)
	}
	runs, err := db.Runs(ctx, store.RunFilter{Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatal(runs, err)
	}
	r := runs[0]
	if r.ID != res.RunID || r.Trigger != store.TriggerImport || r.Status != store.StatusOK || r.Region != "US" ||
		!r.StartedAt.Equal(day(1)) || !r.FinishedAt.Equal(day(1)) || r.Pages != 1 || r.Videos != 3 || r.Units != 0 {
		t.Errorf("import run: %+v", r)
	}
	// Older metadata never replaces newer: the title stays the live one.
	v, st, err := db.Video(ctx, "aaa")
	if err != nil {
		t.Fatal(err)
	}
	if v.Title != "Alpha (live)" || *v.Views != 9000 || v.Duration != 95*time.Second || !st.FirstSeen.Equal(day(1)) || !st.LastSeen.Equal(t0) {
		t.Errorf("merged video: %q views %d duration %v first %v last %v", v.Title, *v.Views, v.Duration, st.FirstSeen, st.LastSeen)
	}
	if hits, err := db.Search(ctx, store.Query{Text: "2020"}); err != nil || len(hits) != 0 {
		t.Errorf("the older title reached the index: %v %v", ids(hits), err)
	}
	// Two new videos indexed in one statement, nothing re-indexed.
	if got := store.FTSWrites(db) - fts0; got != 1 {
		t.Errorf("index writes for the import: %d, want 1", got)
	}
	c, err := db.Chart(ctx, "US", day(1).Add(12*time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := chartEntries(c); !slices.Equal(got, []entry{{1, "aaa", store.MovementNew, 0}, {2, "bbb", store.MovementNew, 0}, {3, "ccc", store.MovementNew, 0}}) {
		t.Errorf("imported chart: %v", got)
	}
	if *c.Entries[0].Views != 100 {
		t.Errorf("the imported sighting's views: %d, want 100", *c.Entries[0].Views)
	}

	// Again: nothing changes, not even the run list.
	before := []int{countRows(t, db, "runs"), countRows(t, db, "trending_snapshots"), countRows(t, db, "videos")}
	fts1 := store.FTSWrites(db)
	if res := importChart(t, db, "US", day(1), old, vid("bbb", "Bravo", 50), vid("ccc", "Charlie", 70)); !res.Skipped || res.RunID != 0 {
		t.Errorf("second import: %+v", res)
	}
	after := []int{countRows(t, db, "runs"), countRows(t, db, "trending_snapshots"), countRows(t, db, "videos")}
	if !slices.Equal(before, after) || store.FTSWrites(db) != fts1 {
		t.Errorf("second import changed runs/snapshots/videos %v -> %v, index writes %d -> %d", before, after, fts1, store.FTSWrites(db))
	}
	// So is a chart this archive fetched itself.
	if res := importChart(t, db, "US", t0, live); !res.Skipped {
		t.Errorf("importing the archive's own chart: %+v", res)
	}

	// A newer dataset day changes the text of one video: it alone is
	// re-indexed, once, and keeps what the file lacks.
	b2 := vid("bbb", "Bravo renamed", 60)
	b2.ChannelID = "" // as in the 2017-18 format: the archive's id stays
	fts2 := store.FTSWrites(db)
	res = importChart(t, db, "US", day(2), b2, vid("ccc", "Charlie", 80))
	if res.Updated != 1 || res.Unchanged != 1 || res.New != 0 {
		t.Errorf("newer day: %+v", res)
	}
	if got := store.FTSWrites(db) - fts2; got != 2 { // delete + insert of bbb
		t.Errorf("index writes for one changed video: %d, want 2", got)
	}
	vb, _, err := db.Video(ctx, "bbb")
	if err != nil || vb.Title != "Bravo renamed" || vb.ChannelID != "UCbbb" || *vb.Views != 60 {
		t.Errorf("bbb after a newer day: %+v %v", vb, err)
	}
	later := vid("aaa", "Alpha (2030)", 1)
	later.Duration = 0
	importChart(t, db, "US", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), later)
	if va, _, _ := db.Video(ctx, "aaa"); va.Title != "Alpha (2030)" || va.Duration != 95*time.Second || va.DefaultLanguage != "en" {
		t.Errorf("a newer import keeps what the archive knows and the file lacks: %+v", va)
	}
	ftsIntegrity(t, db)
}

func TestImportChartPagesAndDuplicates(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	at := time.Date(2020, 8, 12, 0, 0, 0, 0, time.UTC)
	// A run of two pages fetched a second apart, as a ytrend export holds
	// it; the second page lists a video twice.
	res, err := db.ImportChart(ctx, store.ImportedChart{Region: "DE", Pages: []store.Page{
		{FetchedAt: at, FirstRank: 1, Videos: []store.Video{vid("aaa", "A", 1), vid("bbb", "B", 2)}},
		{FetchedAt: at.Add(time.Second), FirstRank: 3, Videos: []store.Video{vid("ccc", "C", 3), vid("ccc", "C", 3), vid("ddd", "D", 4)}},
	}})
	if err != nil || res.New != 4 {
		t.Fatalf("import: %+v %v", res, err)
	}
	got := collect(t, db, store.SnapshotFilter{})
	want := []string{
		"DE 12T00:00 #1 aaa v1 l0 d- c0 cd=false rd=false",
		"DE 12T00:00 #2 bbb v2 l0 d- c0 cd=false rd=false",
		"DE 12T00:00 #3 ccc v3 l0 d- c0 cd=false rd=false",
		"DE 12T00:00 #5 ddd v4 l0 d- c0 cd=false rd=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("snapshots:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	runs, _ := db.Runs(ctx, store.RunFilter{})
	if len(runs) != 1 || !runs[0].StartedAt.Equal(at) || !runs[0].FinishedAt.Equal(at.Add(time.Second)) {
		t.Errorf("runs: %+v", runs)
	}
	// The chart's time is its newest page's: importing it again is a no-op.
	res, err = db.ImportChart(ctx, store.ImportedChart{Region: "DE", Pages: []store.Page{
		{FetchedAt: at.Add(time.Second), FirstRank: 1, Videos: []store.Video{vid("zzz", "Z", 1)}}}})
	if err != nil || !res.Skipped {
		t.Errorf("same region and time: %+v %v", res, err)
	}

	for name, c := range map[string]store.ImportedChart{
		"bad region":   {Region: "XX", Pages: []store.Page{{FetchedAt: at, FirstRank: 1, Videos: []store.Video{vid("a", "A", 1)}}}},
		"no pages":     {Region: "US"},
		"no time":      {Region: "US", Pages: []store.Page{{FirstRank: 1, Videos: []store.Video{vid("a", "A", 1)}}}},
		"rank 0":       {Region: "US", Pages: []store.Page{{FetchedAt: at, Videos: []store.Video{vid("a", "A", 1)}}}},
		"rank twice":   {Region: "US", Pages: []store.Page{{FetchedAt: at, FirstRank: 1, Videos: []store.Video{vid("a", "A", 1)}}, {FetchedAt: at, FirstRank: 1, Videos: []store.Video{vid("b", "B", 1)}}}},
		"no id":        {Region: "US", Pages: []store.Page{{FetchedAt: at, FirstRank: 1, Videos: []store.Video{{Title: "no id"}}}}},
		"empty charts": {Region: "US", Pages: []store.Page{{FetchedAt: at, FirstRank: 1}}},
	} {
		if _, err := db.ImportChart(ctx, c); !errors.Is(err, store.ErrBadChart) {
			t.Errorf("%s: %v, want ErrBadChart", name, err)
		}
	}
	if n := countRows(t, db, "runs"); n != 1 {
		t.Errorf("refused charts left runs: %d", n)
	}
}
