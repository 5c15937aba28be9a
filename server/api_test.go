package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/internal/reply"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// aWord is a word of the US chart's top title: a search for it matches.
func aWord(t testing.TB, db *store.DB) string {
	t.Helper()
	c, err := db.Chart(context.Background(), "US", time.Time{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(c.Entries[0].Title)[0]
}

func TestAPISearch(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	word := aWord(t, e.db)
	// The same query straight from the store, 25 results, for the pages.
	want, err := e.db.Search(ctx, store.Query{Text: word, Limit: 25, MarkOpen: "<mark>", MarkClose: "</mark>"})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 25 {
		t.Fatalf("fixture: %q matches %d videos; the test needs 25 or more", word, len(want))
	}
	r := e.get(t, "/api/v1/search?limit=10&q="+url.QueryEscape(word))
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	page := decode[view.SearchPage](t, r)
	if got, w := jsonOf(t, page.Results), jsonOf(t, view.Hits(want[:10])); got != w {
		t.Fatalf("page 1 differs from the store's first 10:\n%s\n%s", got, w)
	}
	if !strings.Contains(strings.ToLower(page.Results[0].Snippet+page.Results[0].Title), strings.ToLower(word)) {
		t.Fatalf("first result has no %q: %+v", word, page.Results[0])
	}
	// Follow the cursor twice: 10, 10, then 5 of the 25.
	var all []view.Hit
	all = append(all, page.Results...)
	for page.NextCursor != nil && len(all) < 25 {
		r = e.get(t, "/api/v1/search?limit=10&q="+url.QueryEscape(word)+"&cursor="+*page.NextCursor)
		page = decode[view.SearchPage](t, r)
		all = append(all, page.Results...)
	}
	if got, w := jsonOf(t, all[:25]), jsonOf(t, view.Hits(want)); got != w {
		t.Fatalf("three pages differ from the store's 25")
	}
	// A region filter.
	r = e.get(t, "/api/v1/search?region=gb&q="+url.QueryEscape(word))
	for _, h := range decode[view.SearchPage](t, r).Results {
		if len(h.Regions) != 1 || h.Regions[0] != "GB" {
			t.Fatalf("region=gb: hit in %v", h.Regions)
		}
	}
}

func TestAPIChart(t *testing.T) {
	e := newEnv(t)
	want, err := e.db.Chart(context.Background(), "US", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := e.get(t, "/api/v1/charts/us")
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	if string(r.body) != jsonOf(t, view.ChartOf(want)) {
		t.Fatalf("chart differs from store.Chart")
	}
	c := decode[view.Chart](t, r)
	if len(c.Entries) != 200 || c.PreviousRunID == 0 {
		t.Fatalf("US chart: %d entries, previous run %d; want 200 and a previous chart", len(c.Entries), c.PreviousRunID)
	}
	moved := 0
	for _, en := range c.Entries {
		if want := "https://i.ytimg.com/vi/" + en.VideoID + "/hqdefault.jpg"; en.ThumbnailURL == nil || *en.ThumbnailURL != want {
			t.Fatalf("rank %d: thumbnail %v, want %q", en.Rank, en.ThumbnailURL, want)
		}
		if en.Movement != store.MovementNew {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no entry of the second US chart was on the first")
	}
	// ?at= before the second chart gives the first one.
	at := c.PreviousFetchedAt.Add(time.Minute).UTC().Format(time.RFC3339)
	first := decode[view.Chart](t, e.get(t, "/api/v1/charts/US?at="+at+"&limit=5"))
	if first.RunID != c.PreviousRunID || len(first.Entries) != 5 {
		t.Fatalf("at=%s: run %d with %d entries; want run %d, 5 entries", at, first.RunID, len(first.Entries), c.PreviousRunID)
	}
	for _, tc := range []struct {
		path string
		code int
		ec   string
	}{
		{"/api/v1/charts/KR", 404, "not_found"}, // a region never fetched
		{"/api/v1/charts/US?at=2001-01-01", 404, "not_found"},
		{"/api/v1/charts/UK", 400, "bad_request"}, // not a code
		{"/api/v1/charts/US?at=yesterday", 400, "bad_request"},
		{"/api/v1/charts/US?limit=0", 400, "bad_request"},
	} {
		r := e.get(t, tc.path)
		er := decode[reply.ErrorBody](t, r)
		if r.code != tc.code || er.Error.Code != tc.ec || er.Error.Message == "" {
			t.Errorf("%s: %d %+v; want %d %s", tc.path, r.code, er, tc.code, tc.ec)
		}
	}
	if r := e.get(t, "/api/v1/charts/UK"); !strings.Contains(string(r.body), `did you mean \"GB\"`) {
		t.Errorf("UK: %s; want the suggestion of GB", r.body)
	}
}

func TestAPIVideo(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, _ := e.db.Chart(ctx, "US", time.Time{}, 1)
	id := c.Entries[0].VideoID
	h, err := e.db.History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	r := e.get(t, "/api/v1/videos/"+id)
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	v := decode[view.Video](t, r)
	if v.VideoID != id || v.Title != c.Entries[0].Title || jsonOf(t, v.Regions) != jsonOf(t, view.RegionHistories(h.Regions)) || len(v.Regions) == 0 {
		t.Fatalf("video %s: %+v; want the history %+v", id, v, h)
	}
	if v.URL != "https://www.youtube.com/watch?v="+id || v.ThumbnailURL == nil {
		t.Fatalf("url %q thumbnail %v", v.URL, v.ThumbnailURL)
	}
	for _, tc := range []struct {
		id   string
		code int
	}{{"AAAAAAAAAAA", 404}, {"no%20such", 400}, {strings.Repeat("a", 65), 400}, {"%3Cscript%3E", 400}} {
		r := e.get(t, "/api/v1/videos/"+tc.id)
		er := decode[reply.ErrorBody](t, r)
		if r.code != tc.code || er.Error.Code == "" {
			t.Errorf("%s: %d %s; want %d with a JSON error", tc.id, r.code, r.body, tc.code)
		}
	}
	if r := e.get(t, "/api/v1/videos/AAAAAAAAAAA"); string(r.body) != `{"error":{"code":"not_found","message":"the archive holds no video AAAAAAAAAAA"}}`+"\n" {
		t.Errorf("unknown video: %s", r.body)
	}
}

func TestAPIRegionsRunsQuota(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rs := decode[map[string][]view.Region](t, e.get(t, "/api/v1/regions"))["regions"]
	if len(rs) != len(regions.All()) {
		t.Fatalf("%d regions, want every one YouTube charts (%d)", len(rs), len(regions.All()))
	}
	fetched := 0
	for _, r := range rs {
		if r.LastFetch != nil {
			fetched++
			if r.Charts < 1 {
				t.Fatalf("%s: last fetch but %d charts", r.Code, r.Charts)
			}
		}
		if r.Code == "GB" && r.Name != "United Kingdom" {
			t.Fatalf("GB is named %q", r.Name)
		}
	}
	if fetched != 14 { // testkit/synth's regions
		t.Fatalf("%d regions fetched, want 14", fetched)
	}

	all, err := e.db.Runs(ctx, store.RunFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var got []view.Run
	path := "/api/v1/runs?limit=7"
	for range 100 {
		p := decode[view.RunsPage](t, e.get(t, path))
		got = append(got, p.Runs...)
		if p.NextCursor == nil {
			break
		}
		path = "/api/v1/runs?limit=7&cursor=" + *p.NextCursor
	}
	if jsonOf(t, got) != jsonOf(t, view.Runs(all)) {
		t.Fatalf("runs paged by 7 (%d) differ from the store's %d", len(got), len(all))
	}
	us := decode[view.RunsPage](t, e.get(t, "/api/v1/runs?region=US&status=ok"))
	if len(us.Runs) != 2 || us.Runs[0].Region != "US" {
		t.Fatalf("US runs: %+v", us.Runs)
	}

	r := e.get(t, "/api/v1/quota")
	q := decode[view.QuotaStatus](t, r)
	if r.code != 200 || len(q.Limits) != 2 || q.Limits[0].Name != "daily" || q.Limits[0].Units != 9500 || q.Leader != nil {
		t.Fatalf("quota: %d %s", r.code, r.body)
	}
}

func TestConditionalAndGzip(t *testing.T) {
	e := newEnv(t)
	r := e.get(t, "/api/v1/charts/US", "Accept-Encoding: gzip")
	if r.header.Get("Content-Encoding") != "gzip" || r.header.Get("Vary") == "" {
		t.Fatalf("no gzip: %v", r.header)
	}
	plain := e.get(t, "/api/v1/charts/US")
	if string(plain.body) != string(r.body) || plain.header.Get("Content-Encoding") != "" {
		t.Fatal("gzip and identity bodies differ")
	}
	etag, lm := r.header.Get("ETag"), r.header.Get("Last-Modified")
	if !strings.HasPrefix(etag, `W/"`) || lm == "" || etag != plain.header.Get("ETag") {
		t.Fatalf("ETag %q, Last-Modified %q", etag, lm)
	}
	for _, h := range []string{"If-None-Match: " + etag, "If-None-Match: \"x\", " + etag, "If-Modified-Since: " + lm} {
		if r := e.get(t, "/api/v1/charts/US", h); r.code != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("%s: %d with %d bytes; want 304 and no body", h, r.code, len(r.body))
		}
	}
	if r := e.get(t, "/api/v1/charts/US", `If-None-Match: W/"other"`); r.code != http.StatusOK {
		t.Errorf("another ETag: %d, want 200", r.code)
	}
	if r := e.get(t, "/api/v1/charts/US", "If-Modified-Since: Mon, 01 Jan 2001 00:00:00 GMT"); r.code != http.StatusOK {
		t.Errorf("modified since 2001: %d, want 200", r.code)
	}
	// Pages too.
	if r := e.get(t, "/", "Accept-Encoding: gzip"); r.code != 200 || r.header.Get("Content-Encoding") != "gzip" || r.header.Get("ETag") == "" {
		t.Fatalf("home: %d %v", r.code, r.header)
	}
}
