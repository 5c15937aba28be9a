package store_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

func sampleVideo(id string) store.Video {
	return store.Video{
		ID: id, Title: "Title of " + id, Description: "Description of " + id,
		ChannelID: "UC" + id, ChannelTitle: "Channel " + id, Tags: []string{"tag one", "tag-two"},
		CategoryID: "10", PublishedAt: t0.Add(-48 * time.Hour), Duration: 3*time.Minute + 25*time.Second,
		DefaultLanguage: "en", ThumbnailURL: "https://i.ytimg.com/vi/" + id + "/hqdefault.jpg",
		Views: i64(1000), Likes: i64(50), Comments: i64(7),
	}
}

// SavePage classifies every video of a page, and the classification drives
// both the result counts and whether the index is touched.
func TestSavePageClassifiesVideos(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	run := startRun(t, db, "US", t0)
	a, b, c := sampleVideo("a"), sampleVideo("b"), sampleVideo("c")

	type step struct {
		name   string
		videos func() []store.Video
		want   store.PageResult
		fts    int64 // index-changing statements the page may run
	}
	at := t0
	steps := []step{
		{"all new", func() []store.Video { return []store.Video{a, b, c} }, store.PageResult{New: 3}, 1},
		{"re-seen, same text, grown stats", func() []store.Video {
			a.Views, b.Views, c.Views = i64(2000), i64(3000), i64(4000)
			return []store.Video{a, b, c}
		}, store.PageResult{Unchanged: 3}, 0},
		{"title changed", func() []store.Video { a.Title = "A new title"; return []store.Video{a, b, c} }, store.PageResult{Updated: 1, Unchanged: 2}, 2},
		{"description changed", func() []store.Video { b.Description = "Rewritten"; return []store.Video{a, b} }, store.PageResult{Updated: 1, Unchanged: 1}, 2},
		{"tags changed", func() []store.Video { c.Tags = []string{"other"}; return []store.Video{c} }, store.PageResult{Updated: 1}, 2},
		{"channel renamed", func() []store.Video { c.ChannelTitle = "Renamed"; return []store.Video{c} }, store.PageResult{Updated: 1}, 2},
		{"thumbnail and category only", func() []store.Video {
			c.ThumbnailURL, c.CategoryID, c.Duration = "https://example.com/t.jpg", "24", time.Hour
			return []store.Video{c}
		}, store.PageResult{Unchanged: 1}, 0},
		{"one new among re-seen", func() []store.Video { return []store.Video{a, sampleVideo("d"), b} }, store.PageResult{New: 1, Unchanged: 2}, 1},
		{"duplicate in page stored once", func() []store.Video { return []store.Video{a, a} }, store.PageResult{Unchanged: 1}, 0},
	}
	for i, s := range steps {
		at = at.Add(time.Hour)
		before := store.FTSWrites(db)
		got := savePage(t, db, store.Page{RunID: run, Region: "US", FetchedAt: at, Kind: store.PageChart, FirstRank: 1 + 50*i, Videos: s.videos(), Units: int64(3 * (i + 1))})
		if got != s.want {
			t.Errorf("%s: %+v, want %+v", s.name, got, s.want)
		}
		if n := store.FTSWrites(db) - before; n != s.fts {
			t.Errorf("%s: %d index writes, want %d", s.name, n, s.fts)
		}
		ftsIntegrity(t, db)
	}
	// The channel filter knows the channel by its new name only.
	for name, want := range map[string][]string{"renamed": {"c"}, "channel c": {}} {
		hits, err := db.Search(ctx, store.Query{Text: "title", Channel: name})
		if err != nil || !slices.Equal(ids(hits), want) {
			t.Errorf("channel %q: %v %v, want %v", name, ids(hits), err, want)
		}
	}
	// The latest metadata is stored.
	v, _, err := db.Video(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, c) {
		t.Errorf("Video(c):\n got %+v\nwant %+v", v, c)
	}
	// The run's progress counts what happened.
	runs, err := db.Runs(ctx, store.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatal(runs, err)
	}
	r := runs[0]
	if r.Pages != len(steps) || r.Videos != 3+3+3+2+1+1+1+3+1 || r.NewVideos != 4 || r.UpdatedVideos != 4 || r.Units != int64(3*len(steps)) || r.Status != store.StatusRunning {
		t.Errorf("run progress %+v", r)
	}
}

func TestSavePageRoundTrip(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	full := sampleVideo("full")
	hidden := sampleVideo("hidden")
	hidden.Views, hidden.Likes, hidden.Comments = nil, nil, i64(0) // hidden is not zero
	hidden.Tags = nil
	odd := store.Video{ID: "odd", Title: "null\x00byte and bad \xff utf8", Tags: []string{" spaced ", "", "multi\nline"}}
	saveChart(t, db, "US", t0, 5, full, hidden, odd)

	for _, tc := range []struct {
		id   string
		want store.Video
	}{
		{"full", full},
		{"hidden", hidden},
		{"odd", store.Video{ID: "odd", Title: "nullbyte and bad \uFFFD utf8", Tags: []string{"spaced", "multi line"}}},
	} {
		v, st, err := db.Video(ctx, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if tc.id == "odd" {
			tc.want.PublishedAt = v.PublishedAt // the zero time, in UTC
			if !v.PublishedAt.Equal(time.Time{}) {
				t.Errorf("zero PublishedAt came back as %v", v.PublishedAt)
			}
		}
		if !reflect.DeepEqual(v, tc.want) {
			t.Errorf("Video(%s):\n got %+v\nwant %+v", tc.id, v, tc.want)
		}
		if !st.FirstSeen.Equal(t0) || !st.LastSeen.Equal(t0) || st.FirstSeen.Location() != time.UTC {
			t.Errorf("Video(%s) seen %v..%v", tc.id, st.FirstSeen, st.LastSeen)
		}
	}
	if _, _, err := db.Video(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Video(nope): %v, want ErrNotFound", err)
	}
	// Hidden views stay hidden in search hits too.
	hits, err := db.Search(ctx, store.Query{Text: "hidden"})
	if err != nil || len(hits) != 1 || hits[0].Views != nil {
		t.Errorf("search hidden: %+v %v", hits, err)
	}
}

// Where and when a video trended: per region best rank, last rank, last
// sighting and snapshot count; the video's first and last sightings.
func TestVideoStatsAcrossRegions(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	v := sampleVideo("x")
	saveChart(t, db, "US", t0, 7, v)                   // US #7
	saveChart(t, db, "DE", t0.Add(time.Hour), 3, v)    // DE #3
	saveChart(t, db, "US", t0.Add(2*time.Hour), 2, v)  // US #2
	saveChart(t, db, "US", t0.Add(3*time.Hour), 12, v) // US #12
	saveChart(t, db, "JP", t0.Add(4*time.Hour), 40, v) // JP #40
	saveChart(t, db, "US", t0.Add(-time.Hour), 1, v)   // an older page saved late: best rank only
	run := startRun(t, db, "FR", t0.Add(5*time.Hour))  // a search page: no snapshot
	savePage(t, db, store.Page{RunID: run, Region: "FR", FetchedAt: t0.Add(5 * time.Hour), Kind: store.PageSearch, Videos: []store.Video{v}})

	_, st, err := db.Video(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	want := store.VideoStats{
		FirstSeen: t0.Add(-time.Hour),
		LastSeen:  t0.Add(5 * time.Hour),
		Regions: []store.RegionStat{
			{Region: "DE", BestRank: 3, LastRank: 3, LastSeen: t0.Add(time.Hour), Snapshots: 1},
			{Region: "JP", BestRank: 40, LastRank: 40, LastSeen: t0.Add(4 * time.Hour), Snapshots: 1},
			{Region: "US", BestRank: 1, LastRank: 12, LastSeen: t0.Add(3 * time.Hour), Snapshots: 4},
		},
	}
	// first_seen is the first page saved (videos.first_seen is never rewritten).
	want.FirstSeen = t0
	if !reflect.DeepEqual(st, want) {
		t.Errorf("stats:\n got %+v\nwant %+v", st, want)
	}
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Videos != 1 || c.Snapshots != 6 || c.Runs != 7 || c.Bytes <= 0 {
		t.Errorf("counts %+v", c)
	}
	// One hit, with its three regions and best rank.
	hits, err := db.Search(ctx, store.Query{Text: "title"})
	if err != nil || len(hits) != 1 {
		t.Fatal(hits, err)
	}
	if h := hits[0]; !reflect.DeepEqual(h.Regions, []regions.Code{"DE", "JP", "US"}) || h.BestRank != 1 || !h.LastSeen.Equal(t0.Add(5*time.Hour)) {
		t.Errorf("hit %+v", h)
	}
}

func TestSavePageRejects(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	run := startRun(t, db, "US", t0)
	done := startRun(t, db, "US", t0)
	if err := db.FinishRun(ctx, done, store.RunEnd{Status: store.StatusOK, At: t0}); err != nil {
		t.Fatal(err)
	}
	ok := store.Page{RunID: run, Region: "US", FetchedAt: t0, Kind: store.PageChart, FirstRank: 1, Videos: []store.Video{sampleVideo("a")}}
	for _, tc := range []struct {
		name   string
		change func(*store.Page)
		is     error
	}{
		{"no run", func(p *store.Page) { p.RunID = 0 }, nil},
		{"unknown run", func(p *store.Page) { p.RunID = 999 }, store.ErrNotFound},
		{"finished run", func(p *store.Page) { p.RunID = done }, store.ErrRunFinished},
		{"zero time", func(p *store.Page) { p.FetchedAt = time.Time{} }, nil},
		{"bad kind", func(p *store.Page) { p.Kind = "weird" }, nil},
		{"chart without region", func(p *store.Page) { p.Region = " " }, nil},
		{"rank 0", func(p *store.Page) { p.FirstRank = 0 }, nil},
		{"video without id", func(p *store.Page) { p.Videos = []store.Video{{Title: "x"}} }, nil},
	} {
		p := ok
		tc.change(&p)
		_, err := db.SavePage(ctx, p)
		if err == nil || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want an error (%v)", tc.name, err, tc.is)
		}
	}
	// Nothing of the rejected pages was stored.
	c, _ := db.Counts(ctx)
	if c.Videos != 0 || c.Snapshots != 0 {
		t.Errorf("after rejected pages: %+v", c)
	}
	// Saving the same chart positions twice in a run is a caller bug, and
	// the second save leaves nothing behind.
	savePage(t, db, ok)
	if _, err := db.SavePage(ctx, ok); err == nil {
		t.Error("saving the same page twice in a run succeeded")
	}
	runs, _ := db.Runs(ctx, store.RunFilter{Region: "US", Status: store.StatusRunning})
	if len(runs) != 1 || runs[0].Pages != 1 {
		t.Errorf("runs after a failed duplicate page: %+v", runs)
	}
}

func TestDeleteVideos(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	saveChart(t, db, "US", t0, 1, sampleVideo("a"), sampleVideo("b"), sampleVideo("c"))
	saveChart(t, db, "DE", t0.Add(time.Hour), 1, sampleVideo("b"))
	n, err := db.DeleteVideos(ctx, "b", "nope", "c")
	if err != nil || n != 2 {
		t.Fatalf("DeleteVideos: %d, %v", n, err)
	}
	ftsIntegrity(t, db)
	hits, err := db.Search(ctx, store.Query{Text: "title"})
	if err != nil || !slices.Equal(ids(hits), []string{"a"}) {
		t.Errorf("after delete: %v %v", ids(hits), err)
	}
	c, _ := db.Counts(ctx)
	if c.Videos != 1 || c.Snapshots != 1 {
		t.Errorf("counts after delete: %+v", c)
	}
	var orphans int
	db.Reader().QueryRow(`SELECT (SELECT count(*) FROM video_stats) + (SELECT count(*) FROM video_regions) + (SELECT count(*) FROM trending_snapshots)`).Scan(&orphans)
	if orphans != 3 {
		t.Errorf("%d rows in stats+regions+snapshots, want 3 (a's only)", orphans)
	}
	if n, err := db.DeleteVideos(ctx); n != 0 || err != nil {
		t.Errorf("DeleteVideos(): %d %v", n, err)
	}
	// A deleted video comes back as new.
	if res := saveChart(t, db, "US", t0.Add(2*time.Hour), 1, sampleVideo("b")); res.New != 1 {
		t.Errorf("re-adding a deleted video: %+v", res)
	}
	ftsIntegrity(t, db)
}

func TestRuns(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	// The store takes parsed codes: "us" was never through regions.Parse.
	if _, err := db.StartRun(ctx, "us", store.TriggerSchedule, t0); err == nil {
		t.Fatal(`StartRun("us"): no error; want the unparsed code refused`)
	}
	a, err := db.StartRun(ctx, "US", store.TriggerSchedule, t0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := db.StartRun(ctx, "JP", store.TriggerCLI, t0.Add(time.Minute))
	c, _ := db.StartRun(ctx, "US", store.TriggerCLI, t0.Add(2*time.Minute))
	if err := db.FinishRun(ctx, a, store.RunEnd{Status: store.StatusOK, At: t0.Add(30 * time.Second), Units: 12}); err != nil {
		t.Fatal(err)
	}
	err = db.FinishRun(ctx, b, store.RunEnd{Status: store.StatusStoppedQuota, At: t0.Add(90 * time.Second), Units: 7,
		RefusedBy: "daily", RetryAt: t0.Add(10 * time.Hour),
		Error: "GET https://www.googleapis.com/youtube/v3/videos?chart=mostPopular&key=AIzaSyA1234567890abcdefghijklmnopqrstuv&part=id: quota"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := db.Runs(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := []int64{all[0].ID, all[1].ID, all[2].ID}; !reflect.DeepEqual(got, []int64{c, b, a}) {
		t.Fatalf("runs not newest first: %v", got)
	}
	wantB := store.Run{ID: b, Region: "JP", Trigger: store.TriggerCLI, Owner: db.Instance(),
		StartedAt: t0.Add(time.Minute), FinishedAt: t0.Add(90 * time.Second), Status: store.StatusStoppedQuota, Units: 7,
		RefusedBy: "daily", RetryAt: t0.Add(10 * time.Hour),
		Error: "GET https://www.googleapis.com/youtube/v3/videos?chart=mostPopular&key=REDACTED&part=id: quota"}
	if !reflect.DeepEqual(all[1], wantB) {
		t.Errorf("run b:\n got %+v\nwant %+v", all[1], wantB)
	}
	if strings.Contains(all[1].Error, "AIza") {
		t.Error("API key stored in run error")
	}
	if !all[0].FinishedAt.IsZero() || all[0].Status != store.StatusRunning || !all[0].RetryAt.IsZero() {
		t.Errorf("running run c: %+v", all[0])
	}
	for _, tc := range []struct {
		f    store.RunFilter
		want []int64
	}{
		{store.RunFilter{Region: "US"}, []int64{c, a}},
		{store.RunFilter{Status: store.StatusOK}, []int64{a}},
		{store.RunFilter{Region: "US", Status: store.StatusRunning}, []int64{c}},
		{store.RunFilter{Limit: 1}, []int64{c}},
		{store.RunFilter{Region: "BR"}, []int64{}},
	} {
		got, err := db.Runs(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if !reflect.DeepEqual(ids, tc.want) {
			t.Errorf("Runs(%+v) = %v, want %v", tc.f, ids, tc.want)
		}
	}
	if err := db.FinishRun(ctx, 999, store.RunEnd{Status: store.StatusOK, At: t0}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FinishRun(999): %v", err)
	}
	if err := db.FinishRun(ctx, c, store.RunEnd{Status: store.StatusRunning, At: t0}); err == nil {
		t.Error("FinishRun with status running accepted")
	}
	if _, err := db.StartRun(ctx, "US", "manual", t0); err == nil {
		t.Error("StartRun with an unknown trigger accepted")
	}
	if _, err := db.StartRun(ctx, "", store.TriggerCLI, t0); err == nil {
		t.Error("StartRun without a region accepted")
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(tb testing.TB) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		tb.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestMarkInterrupted(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	host, _ := os.Hostname()
	now := t0.Add(48 * time.Hour)
	insert := func(owner string, started time.Time) int64 {
		var id int64
		err := db.Writer().QueryRowContext(ctx, `INSERT INTO runs (region, triggered_by, owner, started_at) VALUES ('US', 'cli', ?, ?) RETURNING id`,
			owner, started.UnixMicro()).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	beat := func(owner string, at time.Time) {
		if _, err := db.Writer().ExecContext(ctx, `INSERT INTO instances (id, host, pid, started_at, heartbeat_at) VALUES (?, 'h', 1, 0, ?)`,
			owner, at.UnixMicro()); err != nil {
			t.Fatal(err)
		}
	}
	// This process's own run: it registers at its first StartRun.
	mine, err := db.StartRun(ctx, "US", store.TriggerCLI, now.Add(-72*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// Owners with a heartbeat (host:pid:random).
	pid1Here := host + ":1:0a0b0c"                            // a container's pid 1: alive, proves nothing
	deadHere := host + ":" + strconv.Itoa(deadPID(t)) + ":0d" // fresh beat, but its pid is gone
	beat(pid1Here+"-stale", now.Add(-61*time.Second))
	beat(pid1Here+"-fresh", now.Add(-59*time.Second))
	beat(deadHere, now.Add(-time.Second))
	beat("elsewhere:7:1f", now.Add(-10*time.Second))
	beat("elsewhere:8:2f", now.Add(-10*time.Minute))
	// Owners from binaries older than the heartbeat (host:pid).
	parent := host + ":" + strconv.Itoa(os.Getppid())
	dead := host + ":" + strconv.Itoa(deadPID(t))
	runs := map[string]int64{
		"heartbeat stale, pid 1 alive here": insert(pid1Here+"-stale", now.Add(-time.Hour)),
		"heartbeat fresh, pid 1 alive here": insert(pid1Here+"-fresh", now.Add(-72*time.Hour)),
		"heartbeat fresh, pid gone here":    insert(deadHere, now.Add(-time.Minute)),
		"heartbeat fresh, other host":       insert("elsewhere:7:1f", now.Add(-72*time.Hour)),
		"heartbeat stale, other host":       insert("elsewhere:8:2f", now.Add(-time.Minute)),
		"instance without a row":            insert(host+":"+strconv.Itoa(os.Getppid())+":3f", now.Add(-time.Minute)),
		"old binary, live pid here, recent": insert(parent, now.Add(-time.Hour)),
		"old binary, live pid here, old":    insert(parent, now.Add(-72*time.Hour)),
		"old binary, dead process here":     insert(dead, now.Add(-time.Minute)),
		"old binary, other host, recent":    insert("elsewhere:1234", now.Add(-time.Hour)),
		"old binary, other host, over day":  insert("elsewhere:1234", now.Add(-25*time.Hour)),
		"finished, dead process":            insert(dead, now.Add(-time.Hour)),
		"unparsable owner, over day":        insert("garbage", now.Add(-25*time.Hour)),
	}
	if err := db.FinishRun(ctx, runs["finished, dead process"], store.RunEnd{Status: store.StatusOK, At: now}); err != nil {
		t.Fatal(err)
	}
	n, err := db.MarkInterrupted(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Errorf("marked %d runs, want 8", n)
	}
	want := map[string]store.RunStatus{
		"heartbeat stale, pid 1 alive here": store.StatusInterrupted,
		"heartbeat fresh, pid 1 alive here": store.StatusRunning,
		"heartbeat fresh, pid gone here":    store.StatusInterrupted,
		"heartbeat fresh, other host":       store.StatusRunning,
		"heartbeat stale, other host":       store.StatusInterrupted,
		"instance without a row":            store.StatusInterrupted,
		"old binary, live pid here, recent": store.StatusRunning,
		"old binary, live pid here, old":    store.StatusInterrupted,
		"old binary, dead process here":     store.StatusInterrupted,
		"old binary, other host, recent":    store.StatusRunning,
		"old binary, other host, over day":  store.StatusInterrupted,
		"finished, dead process":            store.StatusOK,
		"unparsable owner, over day":        store.StatusInterrupted,
	}
	runs["this process, old"] = mine
	want["this process, old"] = store.StatusRunning
	all, _ := db.Runs(ctx, store.RunFilter{Limit: 100})
	byID := map[int64]store.Run{}
	for _, r := range all {
		byID[r.ID] = r
	}
	for name, id := range runs {
		r := byID[id]
		if r.Status != want[name] {
			t.Errorf("%s: %s, want %s", name, r.Status, want[name])
		}
		if r.Status == store.StatusInterrupted && (!r.FinishedAt.Equal(now) || !strings.HasPrefix(r.Error, "interrupted:")) {
			t.Errorf("%s: finished %v error %q", name, r.FinishedAt, r.Error)
		}
	}
	if n, _ := db.MarkInterrupted(ctx, now); n != 0 {
		t.Errorf("second MarkInterrupted marked %d", n)
	}
}

// A process registers at its first run, beats while it lives and leaves no
// row when it closes; a run it left running is then abandoned.
func TestInstanceHeartbeat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	store.SetHeartbeat(db, 20*time.Millisecond)
	heartbeat := func(id string) (int64, bool) {
		var hb int64
		err := db.Writer().QueryRowContext(ctx, `SELECT heartbeat_at FROM instances WHERE id = ?`, id).Scan(&hb)
		return hb, err == nil
	}
	if _, ok := heartbeat(db.Instance()); ok {
		t.Fatal("registered before any run")
	}
	host, _ := os.Hostname()
	if parts := strings.Split(db.Instance(), ":"); len(parts) != 3 || parts[0] != host || parts[1] != strconv.Itoa(os.Getpid()) || len(parts[2]) != 12 {
		t.Errorf("instance id %q, want host:pid:12 hex digits", db.Instance())
	}
	run, err := db.StartRun(ctx, "US", store.TriggerCLI, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	first, ok := heartbeat(db.Instance())
	if !ok {
		t.Fatal("no row after StartRun")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if hb, _ := heartbeat(db.Instance()); hb > first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the heartbeat never moved")
		}
		time.Sleep(10 * time.Millisecond)
	}
	owner := db.Instance()
	db.Close() // with the run still running: a crash as far as the run goes

	db2, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var rows int
	db2.Writer().QueryRowContext(ctx, `SELECT count(*) FROM instances WHERE id = ?`, owner).Scan(&rows)
	if rows != 0 {
		t.Errorf("%d instance rows after Close, want 0", rows)
	}
	if n, err := db2.MarkInterrupted(ctx, time.Now()); n != 1 || err != nil {
		t.Fatalf("MarkInterrupted: %d, %v; want the closed process's run", n, err)
	}
	rs, _ := db2.Runs(ctx, store.RunFilter{})
	if len(rs) != 1 || rs[0].ID != run || rs[0].Status != store.StatusInterrupted || !strings.Contains(rs[0].Error, "has exited") {
		t.Errorf("runs %+v", rs)
	}
}
