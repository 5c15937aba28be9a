package server_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/view"
)

var update = flag.Bool("update", false, "rewrite testdata/chartpages.golden from the code as it is")

// chartArchive is an archive whose charts have every kind of movement: up,
// down, same, new, a re-entry (on the chart before last, not on the last),
// a video at two ranks of one chart (its better rank is the one compared),
// hidden counts, a thumbnail that is not YouTube's, markup in titles, and a
// chart imported later into the past between two fetched ones. It returns
// the fetch times of its US charts.
func chartArchive(t *testing.T) (*store.DB, []time.Time) {
	t.Helper()
	db, _ := archivetest.Open(t)
	ctx := context.Background()
	n := func(v int64) *int64 { return &v }
	vid := func(id, title string, views *int64) store.Video {
		return store.Video{ID: id, Title: title, ChannelID: "UC" + id, ChannelTitle: "Channel <" + id + ">",
			CategoryID: "10", PublishedAt: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Views: views,
			ThumbnailURL: "https://i.ytimg.com/vi/" + id + "/mqdefault.jpg", Description: "about " + id}
	}
	a := vid("aaaaaaaaaa1", `Tom & Jerry "live" <script>alert(1)</script>`, n(1234567))
	b := vid("bbbbbbbbbb2", "Second", nil)
	c := vid("cccccccccc3", "Third ▲ unicode 日本語", n(42))
	d := vid("dddddddddd4", "Fourth", n(999))
	e := vid("eeeeeeeeee5", "Fifth", n(1_500_000_000))
	f := vid("ffffffffff6", "Sixth", n(0))
	g := vid("gggggggggg7", "Seventh", n(7))
	g.ThumbnailURL = "/relative/thumb.jpg" // not YouTube's: no image
	if err := db.SaveCategories(ctx, "US", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), []store.Category{{ID: "10", Title: "Music"}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2024, 3, 1, 6, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	var at []time.Time
	chart := func(when time.Time, vs ...store.Video) {
		archivetest.SaveChart(t, db, "US", when, 1, vs...)
		at = append(at, when)
	}
	chart(t0, a, b, c, d)               // first: all new
	chart(t0.Add(day), b, a, c, e, b)   // b up and again at 5, a down, c same, e new
	chart(t0.Add(2*day), e, f, b, g)    // a, c, d gone; f, g new
	chart(t0.Add(3*day), c, a, e, f, g) // c and a re-enter
	archivetest.SaveChart(t, db, "GB", t0.Add(3*day), 1, g, a)
	// An import of the day between the second and third charts changes
	// the third chart's movement.
	imp := store.Page{FetchedAt: t0.Add(day + 12*time.Hour), FirstRank: 1, Videos: []store.Video{d, f, b}}
	if _, err := db.ImportChart(ctx, store.ImportedChart{Region: "US", Pages: []store.Page{imp}}); err != nil {
		t.Fatal(err)
	}
	at = append(at, imp.FetchedAt)
	return db, at
}

// TestChartPagesUnchanged renders every chart of chartArchive, as pages and
// API answers, before and after an import into the past, and compares them
// byte for byte with what the code rendered before chart pages were made
// cheaper (testdata/chartpages.golden, written by the old code with
// -update): the rendering changed, what it renders must not. It was
// rewritten once since, when the pages put YouTube's text in <bdi> and
// dir="auto" elements; with those removed it is the old file byte for byte.
func TestChartPagesUnchanged(t *testing.T) {
	db, ats := chartArchive(t)
	s, err := server.New(server.Config{NoCache: true}, server.Deps{Archive: db})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var got bytes.Buffer
	paths := []string{"/charts/US", "/api/v1/charts/US", "/charts/GB", "/api/v1/charts/GB?limit=1", "/charts/FR",
		"/charts/US?at=2024-02-01", "/api/v1/charts/US?at=2024-02-01"}
	for _, at := range ats {
		for _, shift := range []time.Duration{0, time.Hour} {
			q := "?at=" + at.Add(shift).Format(time.RFC3339)
			paths = append(paths, "/charts/US"+q, "/api/v1/charts/US"+q, "/api/v1/charts/US"+q+"&limit=2")
		}
	}
	for _, id := range []string{"aaaaaaaaaa1", "bbbbbbbbbb2", "gggggggggg7"} {
		paths = append(paths, "/videos/"+id, "/api/v1/videos/"+id)
	}
	for _, p := range paths {
		res, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(res.Body)
		res.Body.Close()
		fmt.Fprintf(&got, "== GET %s: %d\n%s\n", p, res.StatusCode, body.Bytes())
	}
	golden := filepath.Join("testdata", "chartpages.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d differs:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
}

// A chart asked for at a fixed time that no fetch can change any more is
// kept a day by browsers and shared caches; any other chart answer keeps
// being revalidated. An import into the past still changes the server's own
// answer at once.
func TestFinalChartCacheControl(t *testing.T) {
	db, ats := chartArchive(t)
	t0 := ats[0]
	day := 24 * time.Hour
	s, err := server.New(server.Config{}, server.Deps{Archive: db, Now: func() time.Time { return t0.Add(10 * day) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	get := func(path string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if len(header) == 2 {
			req.Header.Set(header[0], header[1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(res.Body)
		res.Body.Close()
		res.Header.Set("X-Test-Body", body.String())
		return res
	}
	const final, revalidate = view.FinalChartCacheControl, "no-cache"
	for _, tc := range []struct {
		path, want string
	}{
		{"/charts/US?at=" + t0.Format(time.RFC3339), final},
		{"/api/v1/charts/US?at=" + t0.Format(time.RFC3339), final},
		{"/api/v1/charts/US?at=" + t0.Add(day).Format(time.DateOnly) + "&limit=2", final},
		{"/?region=US&at=" + t0.Add(2*day).Format(time.RFC3339), final},
		{"/charts/US", revalidate}, // the current chart changes with the next fetch
		{"/api/v1/charts/US", revalidate},
		{"/charts/US?at=" + t0.Add(3*day).Format(time.RFC3339), revalidate}, // the newest chart, asked for by its time
		{"/charts/US?at=" + t0.Add(9*day).Format(time.DateOnly), revalidate},
		{"/charts/US?at=8d", revalidate}, // the third chart, but another one tomorrow
		{"/charts/GB?at=" + t0.Add(3*day).Format(time.RFC3339), revalidate},
		{"/charts/US?at=2020-01-01", ""}, // not found
		{"/videos/aaaaaaaaaa1", revalidate},
	} {
		res := get(tc.path)
		if got := res.Header.Get("Cache-Control"); got != tc.want {
			t.Errorf("GET %s: %d, Cache-Control %q, want %q", tc.path, res.StatusCode, got, tc.want)
		}
	}

	// From the response cache, and revalidated, the policy is the same.
	path := "/charts/US?at=" + t0.Add(2*day).Format(time.RFC3339)
	first := get(path)
	again := get(path)
	notMod := get(path, "If-None-Match", first.Header.Get("Etag"))
	if again.Header.Get("Cache-Control") != final || notMod.StatusCode != http.StatusNotModified || notMod.Header.Get("Cache-Control") != final {
		t.Fatalf("again: %q; revalidated: %d %q", again.Header.Get("Cache-Control"), notMod.StatusCode, notMod.Header.Get("Cache-Control"))
	}

	// A run of US in progress that began before that time may still end
	// with a chart at or before it: not final until it ends. (Uncached:
	// the end of a run without a page does not move the archive's
	// version, so the response cache may keep the revalidated answer; a
	// chart is never final too soon.)
	uncached, err := server.New(server.Config{NoCache: true}, server.Deps{Archive: db, Now: func() time.Time { return t0.Add(10 * day) }})
	if err != nil {
		t.Fatal(err)
	}
	policy := func() string {
		w := httptest.NewRecorder()
		uncached.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w.Header().Get("Cache-Control")
	}
	ctx := context.Background()
	run, err := db.StartRun(ctx, "US", store.TriggerSchedule, t0.Add(2*day-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got := policy(); got != revalidate {
		t.Fatalf("with a run in progress since before it: Cache-Control %q", got)
	}
	if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusFailed, At: t0.Add(2 * day)}); err != nil {
		t.Fatal(err)
	}
	if got := policy(); got != final {
		t.Fatalf("once the run ended without a page: Cache-Control %q", got)
	}

	// An import into the past changes that final chart's movement: the
	// server answers with the new chart at once (what caches were told
	// bounds how long they may show the old one).
	before := get(path).Header.Get("X-Test-Body")
	imp := store.Page{FetchedAt: t0.Add(2*day - 2*time.Hour), FirstRank: 1, Videos: []store.Video{{ID: "ffffffffff6", Title: "Sixth",
		ChannelID: "UCffffffffff6", ChannelTitle: "Channel <ffffffffff6>", CategoryID: "10"}}}
	if _, err := db.ImportChart(ctx, store.ImportedChart{Region: "US", Pages: []store.Page{imp}}); err != nil {
		t.Fatal(err)
	}
	after := get(path).Header.Get("X-Test-Body")
	if after == before || !strings.Contains(after, "movement against 2024-03-03 04:00 UTC") {
		t.Fatalf("after an import into the past, the chart is the same:\n%s", after)
	}
}
