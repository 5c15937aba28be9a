package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
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
	"github.com/ytrend/ytrend/testkit/wait"
	"github.com/ytrend/ytrend/view"
)

// countingArchive counts how often the charts are read; with gate set, each
// read waits for it to close.
type countingArchive struct {
	*store.DB
	charts atomic.Int64
	gate   chan struct{}
}

func (c *countingArchive) Chart(ctx context.Context, region regions.Code, at time.Time, limit int) (store.Chart, error) {
	c.charts.Add(1)
	if c.gate != nil {
		<-c.gate
	}
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

// The same answer is rendered once while the archive takes no page (a chart
// for up to cacheArchiveTTL, anything relative to now for a second) and
// answers conditional requests too; a new page is served at once; the
// budget's status and each request's own headers are never shared.
func TestResponseCache(t *testing.T) {
	ctx := context.Background()
	db := smallArchive(t)
	ar := &countingArchive{DB: db}
	clock := &fakeClock{t: time.Now()}
	_, e := serveArchive(t, db, ar, server.Config{}, clock.now)

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
	// A conditional request is answered from the cache: 304 when it matches,
	// the cached body when it does not.
	if r := e.get(t, "/api/v1/charts/US", "If-None-Match: "+first.header.Get("Etag")); r.code != 304 || len(r.body) != 0 ||
		r.header.Get("Etag") != first.header.Get("Etag") || ar.charts.Load() != 1 {
		t.Errorf("conditional: %d, %d bytes, etag %q, %d reads", r.code, len(r.body), r.header.Get("Etag"), ar.charts.Load())
	}
	if r := e.get(t, "/api/v1/charts/US", `If-None-Match: W/"other"`); r.code != 200 || !bytes.Equal(r.body, first.body) || ar.charts.Load() != 1 {
		t.Errorf("conditional, other etag: %d, %d reads", r.code, ar.charts.Load())
	}
	// A chart is made of the archive alone: it lives while the archive does
	// not change, past the second that bounds everything else...
	clock.add(1100 * time.Millisecond)
	e.get(t, "/api/v1/charts/US")
	if n := ar.charts.Load(); n != 1 {
		t.Errorf("a second later, unchanged archive: %d reads, want 1", n)
	}
	// ...but a time relative to now means something else a second later.
	e.get(t, "/api/v1/charts/US?at=1d")
	clock.add(1100 * time.Millisecond)
	e.get(t, "/api/v1/charts/US?at=1d")
	if n := ar.charts.Load(); n != 3 {
		t.Errorf("at=1d a second later: %d reads, want 3", n)
	}
	// And nothing lives past cacheArchiveTTL.
	clock.add(11 * time.Minute)
	e.get(t, "/api/v1/charts/US")
	if n := ar.charts.Load(); n != 4 {
		t.Errorf("after ten minutes: %d reads, want 4", n)
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
	if r := e.get(t, "/api/v1/charts/US"); !bytes.Contains(r.body, []byte("newvideo001")) || ar.charts.Load() != 5 {
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

// Visitors asking for the same answer while it is being rendered wait for
// that rendering instead of each making their own: a popular chart costs
// one rendering when it expires, however many ask for it at that moment.
func TestResponseCacheRendersOnceForConcurrentVisitors(t *testing.T) {
	db := smallArchive(t)
	ar := &countingArchive{DB: db, gate: make(chan struct{})}
	s, e := serveArchive(t, db, ar, server.Config{ClientInFlight: 16}, nil)

	type answer struct {
		code int
		body []byte
		err  error
	}
	const visitors = 6
	answers := make(chan answer, visitors)
	visit := func() {
		res, err := http.Get(e.srv.URL + "/api/v1/charts/US")
		if err != nil {
			answers <- answer{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		answers <- answer{res.StatusCode, b, err}
	}
	go visit()
	wait.For(t, "the first rendering to start", time.Minute, func() bool { return ar.charts.Load() == 1 })
	for range visitors - 1 {
		go visit()
	}
	// Each of the others either waits for the first rendering or (the bug)
	// renders its own: wait until all are accounted for either way.
	wait.For(t, "the other visitors to arrive", time.Minute, func() bool { return s.CacheWaiting()+ar.charts.Load()-1 == visitors-1 })
	close(ar.gate)
	var bodies [][]byte
	for range visitors {
		r := <-answers
		if r.err != nil || r.code != 200 {
			t.Fatalf("code %d, %v", r.code, r.err)
		}
		bodies = append(bodies, r.body)
	}
	for _, b := range bodies[1:] {
		if !bytes.Equal(b, bodies[0]) {
			t.Fatal("visitors got different answers")
		}
	}
	if n := ar.charts.Load(); n != 1 {
		t.Errorf("%d concurrent visitors read the chart %d times, want 1", visitors, n)
	}
}

// smallArchive builds and opens a 300-video archive for one test.
func smallArchive(t *testing.T) *store.DB {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	if _, err := archivetest.Build(ctx, path, archivetest.Generator(), 300, nil); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// serveArchive serves ar (which reads db) over real HTTP with cfg, for one
// test; now is the server's clock (nil: time.Now).
func serveArchive(t *testing.T, db *store.DB, ar view.Archive, cfg server.Config, now func() time.Time) (*server.Server, *env) {
	t.Helper()
	s, err := server.New(cfg, server.Deps{Archive: ar, Budget: budget(t, db), Metrics: metrics.NewHTTP(prometheus.NewRegistry()),
		Log: slog.New(slog.DiscardHandler), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, &env{srv: srv}
}

// gatedArchive holds every chart of one region until gate closes.
type gatedArchive struct {
	*store.DB
	region  regions.Code
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedArchive) Chart(ctx context.Context, region regions.Code, at time.Time, limit int) (store.Chart, error) {
	if region == g.region {
		g.entered <- struct{}{}
		<-g.gate
	}
	return g.DB.Chart(ctx, region, at, limit)
}

// A cached answer takes no in-flight slot: while a client's request holds
// its only slot, its cached pages are answered at once, and its uncached
// ones still wait and are refused.
func TestCachedAnswersTakeNoInFlightSlot(t *testing.T) {
	db := smallArchive(t)
	ar := &gatedArchive{DB: db, region: "GB", entered: make(chan struct{}, 1), gate: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(ar.gate) }) }
	_, e := serveArchive(t, db, ar, server.Config{ClientInFlight: 1, ClientQueueWait: 50 * time.Millisecond}, nil)
	t.Cleanup(release) // before the server's Close, which waits for the held request
	if r := e.get(t, "/api/v1/charts/US"); r.code != http.StatusOK {
		t.Fatalf("warming the cache: %d", r.code)
	}
	held := make(chan int, 1)
	go func() {
		res, err := http.Get(e.srv.URL + "/api/v1/charts/GB")
		if err != nil {
			held <- 0
			return
		}
		res.Body.Close()
		held <- res.StatusCode
	}()
	<-ar.entered // the client's one slot is taken
	for range 3 {
		if r := e.get(t, "/api/v1/charts/US"); r.code != http.StatusOK {
			t.Fatalf("a cached chart while the slot is held: %d, want 200", r.code)
		}
	}
	if r := e.get(t, "/api/v1/charts/FR"); r.code != http.StatusTooManyRequests {
		t.Fatalf("an uncached chart while the slot is held: %d, want 429", r.code)
	}
	release()
	if code := <-held; code != http.StatusOK {
		t.Fatalf("the held request: %d", code)
	}
}
