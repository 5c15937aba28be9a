package sim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/youtube/v3"
)

const testKey = "test-key-5b0f3c"

// t0 is on an hour boundary, so the chart epoch of a request made at t0
// starts exactly at t0 and statistics read at t0 equal those search ranked by.
var t0 = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// newTestServer starts a simulator over real HTTP on a fake clock at t0
// (unless cfg.Now is set) that accepts testKey (unless cfg.Keys is set).
func newTestServer(tb testing.TB, cfg Config) (*Server, *httptest.Server, *fakeClock) {
	tb.Helper()
	clock := &fakeClock{t: t0}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Keys == nil {
		cfg.Keys = []string{testKey}
	}
	s, err := New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	hs := httptest.NewServer(s)
	tb.Cleanup(hs.Close)
	return s, hs, clock
}

// client is the real Go client for YouTube, pointed at the simulator.
func client(tb testing.TB, hs *httptest.Server, key string) *youtube.Service {
	tb.Helper()
	svc, err := youtube.NewService(context.Background(), option.WithAPIKey(key), option.WithEndpoint(hs.URL+"/"))
	if err != nil {
		tb.Fatalf("youtube.NewService: %v", err)
	}
	return svc
}

// get does a raw GET of path?query on the simulator.
func get(tb testing.TB, hs *httptest.Server, path string, q url.Values, header ...string) (int, []byte, http.Header) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, hs.URL+path+"?"+q.Encode(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("GET %s: read body: %v", path, err)
	}
	return resp.StatusCode, body, resp.Header
}

func chartQuery(region string, maxResults int, extra ...string) url.Values {
	q := url.Values{
		"part": {"snippet,contentDetails,statistics"}, "chart": {"mostPopular"}, "regionCode": {region},
		"maxResults": {strconv.Itoa(maxResults)}, "key": {testKey}, "prettyPrint": {"false"},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return q
}

// fetchChart pages through a region's chart with the real client, 50 at a
// time, and returns every page.
func fetchChart(tb testing.TB, svc *youtube.Service, region string) []*youtube.VideoListResponse {
	tb.Helper()
	var pages []*youtube.VideoListResponse
	token := ""
	for {
		call := svc.Videos.List([]string{"snippet", "contentDetails", "statistics"}).
			Chart("mostPopular").RegionCode(region).MaxResults(50)
		if token != "" {
			call = call.PageToken(token)
		}
		resp, err := call.Do()
		if err != nil {
			tb.Fatalf("%s page %d: %v", region, len(pages)+1, err)
		}
		pages = append(pages, resp)
		if resp.NextPageToken == "" || len(pages) > 10 {
			return pages
		}
		token = resp.NextPageToken
	}
}

// googleErr asserts err is a *googleapi.Error with the code and first reason.
func googleErr(tb testing.TB, err error, code int, reason string) *googleapi.Error {
	tb.Helper()
	gerr, ok := err.(*googleapi.Error)
	if !ok {
		tb.Fatalf("error %T %v, want *googleapi.Error %d %s", err, err, code, reason)
	}
	if gerr.Code != code || len(gerr.Errors) == 0 || gerr.Errors[0].Reason != reason {
		tb.Fatalf("googleapi.Error %d %+v, want %d %s; body %s", gerr.Code, gerr.Errors, code, reason, gerr.Body)
	}
	return gerr
}

// errorJSON decodes an error body in full, domain and location included,
// which googleapi.Error does not keep.
func errorJSON(tb testing.TB, body []byte) apiError {
	tb.Helper()
	var b struct{ Error apiError }
	if err := json.Unmarshal(body, &b); err != nil {
		tb.Fatalf("error body %q: %v", body, err)
	}
	return b.Error
}
