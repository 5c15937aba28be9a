package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// countingArchive counts how often the charts are read.
type countingArchive struct {
	*store.DB
	charts atomic.Int64
}

func (c *countingArchive) Chart(ctx context.Context, region regions.Code, at time.Time, limit int) (store.Chart, error) {
	c.charts.Add(1)
	return c.DB.Chart(ctx, region, at, limit)
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The same answer is rendered once while the archive takes no page and for
// at most a second; a new page is served at once; the budget's status,
// conditional requests and each request's own headers are never shared.
func TestResponseCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	if _, err := archivetest.Build(ctx, path, archivetest.Generator(), 300, nil); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ar := &countingArchive{DB: db}
	clock := &fakeClock{t: time.Now()}
	s, err := server.New(server.Config{}, server.Deps{Archive: ar, Budget: budget(t, db), Metrics: metrics.NewHTTP(prometheus.NewRegistry()),
		Log: slog.New(slog.DiscardHandler), Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	e := &env{srv: srv}

	first := e.get(t, "/api/v1/charts/US")
	second := e.get(t, "/api/v1/charts/US")
	if first.code != 200 || second.code != 200 || !bytes.Equal(first.body, second.body) {
		t.Fatalf("codes %d %d, bodies equal %v", first.code, second.code, bytes.Equal(first.body, second.body))
	}
	if n := ar.charts.Load(); n != 1 {
		t.Errorf("two requests read the chart %d times, want 1", n)
	}
	if first.header.Get("X-Request-Id") == second.header.Get("X-Request-Id") || second.header.Get("Etag") != first.header.Get("Etag") {
		t.Errorf("headers: request ids %q %q, etags %q %q", first.header.Get("X-Request-Id"), second.header.Get("X-Request-Id"),
			first.header.Get("Etag"), second.header.Get("Etag"))
	}
	// A conditional request goes to the handler (which answers 304).
	if r := e.get(t, "/api/v1/charts/US", "If-None-Match: "+first.header.Get("Etag")); r.code != 304 || ar.charts.Load() != 2 {
		t.Errorf("conditional: %d, %d reads", r.code, ar.charts.Load())
	}
	// Past the TTL it is rendered again.
	clock.add(1100 * time.Millisecond)
	e.get(t, "/api/v1/charts/US")
	if n := ar.charts.Load(); n != 3 {
		t.Errorf("after the TTL: %d reads, want 3", n)
	}
	// A new page is served at once, TTL or not.
	run, err := db.StartRun(ctx, "US", store.TriggerCLI, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SavePage(ctx, store.Page{RunID: run, Region: "US", FetchedAt: time.Now(), Kind: store.PageChart, FirstRank: 1,
		Videos: []store.Video{{ID: "newvideo001", Title: "Just landed"}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: time.Now(), Units: 1}); err != nil {
		t.Fatal(err)
	}
	if r := e.get(t, "/api/v1/charts/US"); !bytes.Contains(r.body, []byte("newvideo001")) || ar.charts.Load() != 4 {
		t.Errorf("after a new page: %d reads, new video served %v", ar.charts.Load(), bytes.Contains(r.body, []byte("newvideo001")))
	}
	// The budget's status is never cached.
	q1, q2 := e.get(t, "/api/v1/quota"), e.get(t, "/api/v1/quota")
	if q1.code != 200 || q2.code != 200 || q1.header.Get("X-Request-Id") == q2.header.Get("X-Request-Id") {
		t.Errorf("quota: %d %d", q1.code, q2.code)
	}
}

// A client that refuses gzip never gets the compressed copy another client
// made, and the other way round.
func TestResponseCacheKeepsEncodingsApart(t *testing.T) {
	e := newEnv(t)
	for _, enc := range []string{"gzip", "gzip;q=0", "identity", "gzip, br"} {
		r := e.get(t, "/api/v1/charts/US", "Accept-Encoding: "+enc)
		gz := r.header.Get("Content-Encoding") == "gzip"
		if want := enc == "gzip" || enc == "gzip, br"; r.code != 200 || gz != want {
			t.Errorf("Accept-Encoding %q: %d, gzip %v, want %v", enc, r.code, gz, want)
		}
	}
}
