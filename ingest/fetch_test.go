package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/internal/secret"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/logbuf"
)

// testKey is distinctive so a leak is easy to grep for.
const testKey = "AIzaTEST-k3y-must-never-leak-0123456789"

// env is one test's world: the simulated YouTube over real HTTP, a real
// SQLite archive, and the embedded ledger as the budget.
type env struct {
	t       testing.TB
	sim     *sim.Server
	srv     *httptest.Server
	db      *store.DB
	dbPath  string
	limiter *quota.Limiter
	logs    *logbuf.Buffer
	f       *ingest.Fetcher
}

type envOpts struct {
	sim       sim.Config
	quota     *quota.Config
	fetch     ingest.Options
	handler   func(http.Handler) http.Handler // wraps the simulator
	noFetcher bool
	// ledgerClock replaces the embedded ledger's clock (time.Now).
	ledgerClock func() time.Time
	// categories starts the archive without category names, so that the
	// first fetch of each region (per quota day) asks videoCategories.list.
	// Otherwise every region has today's names, as after the day's first
	// fetch, and a fetch spends exactly one unit per chart page.
	categories bool
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	if o.sim.Keys == nil {
		o.sim.Keys = []string{testKey}
	}
	s, err := sim.New(o.sim)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = s
	if o.handler != nil {
		h = o.handler(s)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	path := filepath.Join(t.TempDir(), "archive.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	qc := quota.DefaultConfig()
	if o.quota != nil {
		qc = *o.quota
	}
	logs := &logbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var lopts []quota.SQLiteOption
	if o.ledgerClock != nil {
		lopts = append(lopts, quota.WithClock(o.ledgerClock))
	}
	// As ytrend itself does (cmd/ytrend app.open): the embedded ledger
	// waits at least 5 s for the archive's lock before the failure policy
	// applies, and the process keeps its record of grants in the archive.
	qc.Timeout = max(qc.Timeout, 5*time.Second)
	lim, err := quota.New(qc, quota.NewSQLite(db.Writer(), lopts...), quota.WithLogger(log), quota.WithRecord(db.Writer()))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, sim: s, srv: srv, db: db, dbPath: path, limiter: lim, logs: logs}
	if !o.categories {
		now := time.Now
		if o.fetch.Now != nil {
			now = o.fetch.Now
		}
		seedCategories(t, db, now())
	}
	if o.noFetcher {
		return e
	}
	fo := o.fetch
	if fo.Endpoint == "" {
		fo.Endpoint = srv.URL
	}
	if fo.APIKey.IsZero() {
		fo.APIKey = secret.New(testKey)
	}
	fo.Logger = log
	if fo.Backoff == 0 {
		fo.Backoff = 5 * time.Millisecond
		fo.MaxBackoff = 20 * time.Millisecond
	}
	e.f, err = ingest.New(context.Background(), lim, db, fo)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// seedCategories gives every region a category name fetched at at.
func seedCategories(t testing.TB, db *store.DB, at time.Time) {
	t.Helper()
	yes := true
	for _, code := range regions.All() {
		if err := db.SaveCategories(context.Background(), code, at, []store.Category{{ID: "10", Title: "Music", Assignable: &yes}}); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *env) fetch(code string, pages int) ingest.Report {
	e.t.Helper()
	return e.f.Fetch(context.Background(), ingest.Job{Region: config.Region{Code: regions.Code(code), Pages: pages}, Trigger: store.TriggerCLI})
}

func (e *env) used(limit string) int64 {
	e.t.Helper()
	st, err := e.limiter.Status(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, l := range st.Limits {
		if l.Name == limit {
			return l.Used
		}
	}
	e.t.Fatalf("no limit %q", limit)
	return 0
}

func (e *env) counts() store.Counts {
	e.t.Helper()
	c, err := e.db.Counts(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// Each region's first fetch of the day also asks for its category names:
// four chart pages and one videoCategories.list, five units.
func TestFetchEightRegionsStoresWholeChartsAtFiveUnitsEach(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 15, 20, 0, 0, time.UTC)
	e := newEnv(t, envOpts{sim: sim.Config{Now: func() time.Time { return at }, Seed: 7}, categories: true})
	ctx := context.Background()

	charts := map[string][]string{}
	for _, code := range regions.Default() {
		rep := e.fetch(code.String(), 4)
		if rep.Status != store.StatusOK || rep.Pages != 4 || rep.Videos != 200 || rep.Units != 5 || rep.Categories != 32 {
			t.Fatalf("%s: %+v (err %v), want ok, 4 pages, 200 videos, 5 units, 32 categories", code, rep, rep.Err)
		}
		ids, err := e.sim.Chart(code, "0", at)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 200 {
			t.Fatalf("%s chart has %d videos", code, len(ids))
		}
		charts[code.String()] = ids
	}
	if got := e.sim.Usage(testKey).Charged; got != 40 {
		t.Errorf("simulator charged %d units, want 40 (8 regions x (4 pages + 1 category list))", got)
	}
	if got := e.used("daily"); got != 40 {
		t.Errorf("ledger used %d, want 40", got)
	}

	// Every stored rank is the simulator's rank; a video charted in several
	// regions is one video with a snapshot per region.
	regionsOf := map[string][]string{}
	for region, ids := range charts {
		for i, id := range ids {
			regionsOf[id] = append(regionsOf[id], region)
			_, vs, err := e.db.Video(ctx, id)
			if err != nil {
				t.Fatalf("video %s (%s #%d): %v", id, region, i+1, err)
			}
			rs := regionStat(vs, regions.Code(region))
			if rs == nil || rs.LastRank != i+1 || rs.BestRank != i+1 || rs.Snapshots != 1 {
				t.Fatalf("video %s in %s: %+v, want rank %d, 1 snapshot", id, region, rs, i+1)
			}
		}
	}
	c := e.counts()
	if c.Snapshots != 1600 || c.Videos != int64(len(regionsOf)) {
		t.Errorf("archive has %d videos and %d snapshots, want %d and 1600", c.Videos, c.Snapshots, len(regionsOf))
	}
	var shared string
	for id, rs := range regionsOf {
		if len(rs) >= 3 {
			shared = id
			break
		}
	}
	if shared == "" {
		t.Fatal("no video trends in 3 regions; the simulator should share videos")
	}
	_, vs, err := e.db.Video(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.Regions) != len(regionsOf[shared]) {
		t.Errorf("video %s trends in %v but the archive lists %d regions", shared, regionsOf[shared], len(vs.Regions))
	}

	// Hidden counts stay hidden (nil), not 0.
	var hidden int
	for id := range regionsOf {
		v, _, err := e.db.Video(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if v.Likes == nil || v.Comments == nil {
			hidden++
		}
		if v.Views == nil || v.Duration < 0 || v.Title == "" || v.ChannelID == "" || v.PublishedAt.IsZero() {
			t.Fatalf("video %s incomplete: %+v", id, v)
		}
	}
	if hidden == 0 {
		t.Error("no video with a hidden like or comment count was stored as hidden")
	}

	runs, err := e.db.Runs(ctx, store.RunFilter{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 {
		t.Fatalf("%d runs recorded, want 8", len(runs))
	}
	for _, r := range runs {
		if r.Status != store.StatusOK || r.Pages != 4 || r.Videos != 200 || r.Units != 5 || r.Trigger != store.TriggerCLI {
			t.Errorf("run %+v", r)
		}
	}
}

func regionStat(vs store.VideoStats, region regions.Code) *store.RegionStat {
	for i := range vs.Regions {
		if vs.Regions[i].Region == region {
			return &vs.Regions[i]
		}
	}
	return nil
}

func TestRefusalStopsCleanlyKeepingEarlierPages(t *testing.T) {
	t.Parallel()
	qc := quota.DefaultConfig()
	// daily: room for 6 pages; search.list counts only in its own limit.
	qc.Costs = map[string]int64{"videos.list": 1, "search.list": 100}
	qc.Limits[0].Units = 6
	qc.Limits[0].Costs = map[string]int64{"videos.list": 1}
	e := newEnv(t, envOpts{quota: &qc})

	if rep := e.fetch("US", 4); rep.Status != store.StatusOK {
		t.Fatalf("first fetch: %+v", rep)
	}
	before := time.Now()
	rep := e.fetch("GB", 4)
	if rep.Status != store.StatusStoppedQuota || rep.Pages != 2 || rep.Videos != 100 || rep.Units != 2 || rep.RefusedBy != "daily" {
		t.Fatalf("second fetch: %+v (err %v), want stopped_quota after 2 pages by daily", rep, rep.Err)
	}
	// The first page of US frees up first: 24h after it was reserved.
	if wait := rep.RetryAt.Sub(before); wait < 23*time.Hour+59*time.Minute || wait > 24*time.Hour {
		t.Errorf("retry at %v, %v from now; want about 24h", rep.RetryAt, wait)
	}
	if got := e.sim.Usage(testKey).Charged; got != 6 {
		t.Errorf("simulator charged %d, want 6: a refused page must never be sent", got)
	}
	runs, err := e.db.Runs(context.Background(), store.RunFilter{Region: "GB"})
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if r.Status != store.StatusStoppedQuota || r.Pages != 2 || r.Videos != 100 || r.RefusedBy != "daily" || !r.RetryAt.Equal(rep.RetryAt) {
		t.Errorf("run row %+v", r)
	}
	if c := e.counts(); c.Snapshots != 300 {
		t.Errorf("%d snapshots, want 300 (US 200 + GB's 2 stored pages)", c.Snapshots)
	}
	if n := strings.Count(e.logs.String(), "run stopped by quota"); n != 1 {
		t.Errorf("refusal logged %d times, want once per run", n)
	}
}

func TestUpstreamQuotaExceededMarksCredentialExhausted(t *testing.T) {
	t.Parallel()
	// Google's quota (6) is below the budget's; Google's day resets an hour
	// from now, and the ledger's clock can be moved past that.
	reset := time.Now().Add(time.Hour)
	var skew atomic.Int64
	e := newEnv(t, envOpts{
		sim:         sim.Config{Quota: 6},
		fetch:       ingest.Options{NextReset: func(time.Time) time.Time { return reset }},
		ledgerClock: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
	})
	if rep := e.fetch("US", 4); rep.Status != store.StatusOK {
		t.Fatalf("US: %+v", rep)
	}
	rep := e.fetch("GB", 4)
	if rep.Status != store.StatusStoppedQuota || rep.RefusedBy != "upstream" || rep.Pages != 2 || !rep.RetryAt.Equal(reset.UTC()) {
		t.Fatalf("GB: %+v (err %v), want stopped_quota by upstream after 2 pages, retry at %v", rep, rep.Err, reset)
	}
	if !strings.Contains(rep.Err.Error(), "quotaExceeded") {
		t.Errorf("error %q does not say quotaExceeded", rep.Err)
	}
	requests := e.sim.TotalRequests()
	if u := e.sim.Usage(testKey); u.QuotaExceeded != 1 {
		t.Errorf("simulator answered quotaExceeded %d times, want 1", u.QuotaExceeded)
	}

	// Until the mark expires, no request reaches Google.
	for _, code := range []string{"DE", "FR", "IN"} {
		rep := e.fetch(code, 4)
		if rep.Status != store.StatusStoppedQuota || rep.RefusedBy != "upstream" || rep.Pages != 0 || rep.Units != 0 {
			t.Fatalf("%s while exhausted: %+v", code, rep)
		}
		if wait := rep.RetryAt.Sub(reset); wait < -50*time.Millisecond || wait > 50*time.Millisecond {
			t.Errorf("%s retry at %v, want the mark's end %v", code, rep.RetryAt, reset)
		}
	}
	if got := e.sim.TotalRequests(); got != requests {
		t.Errorf("%d requests reached the simulator while the credential was marked exhausted", got-requests)
	}

	// Another process (a new limiter on the same ledger) sees the mark too.
	other, err := quota.New(quota.DefaultConfig(), quota.NewSQLite(e.db.Writer()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Reserve(context.Background(), "videos.list"); !errors.Is(err, quota.ErrRefused) {
		t.Errorf("another limiter on the same budget was not refused: %v", err)
	}

	// Once the mark expires, requests flow again.
	skew.Store(int64(time.Hour + time.Minute))
	e.fetch("AU", 1)
	if e.sim.TotalRequests() == requests {
		t.Error("no request reached the simulator after the exhaustion mark expired")
	}
}

// flipAfter answers with the given faults for the first n API requests and
// cleanly afterwards.
func flipAfter(s *sim.Server, n int64, f sim.Faults) func(http.Handler) http.Handler {
	var seen atomic.Int64
	var mu sync.Mutex
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if seen.Add(1) <= n {
				s.SetFaults(f)
			} else {
				s.SetFaults(sim.Faults{})
			}
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
}

func TestFaultsProduceTheDocumentedOutcome(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		faults    sim.Faults
		failFirst int64 // faulted requests before the simulator recovers; -1 = always
		timeout   time.Duration
		status    store.RunStatus
		pages     int
		units     int64 // reserved by the run = charged by the simulator
		errHas    string
	}{
		{"500 then ok: retried", sim.Faults{Error500: 1}, 2, 0, store.StatusOK, 4, 6, ""},
		{"503 always: bounded retries", sim.Faults{Error503: 1}, -1, 0, store.StatusFailed, 0, 3, "backendError"},
		{"rateLimitExceeded 403 then ok", sim.Faults{RateLimit403: 1}, 1, 0, store.StatusOK, 4, 5, ""},
		{"per-minute 429 then ok", sim.Faults{RateLimit429: 1}, 1, 0, store.StatusOK, 4, 5, ""},
		{"dropped connection then ok", sim.Faults{Drop: 1}, 1, 0, store.StatusOK, 4, 5, ""},
		{"malformed JSON: failed, no retry", sim.Faults{Malformed: 1}, -1, 0, store.StatusFailed, 0, 1, "malformed"},
		{"slow beyond timeout then ok", sim.Faults{Latency: 5 * time.Second}, 1, time.Second, store.StatusOK, 4, 5, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e *env
			o := envOpts{fetch: ingest.Options{Retries: 2, Timeout: tc.timeout}}
			if tc.failFirst < 0 {
				o.sim.Faults = tc.faults
			} else {
				o.handler = func(h http.Handler) http.Handler {
					return flipAfter(h.(*sim.Server), tc.failFirst, tc.faults)(h)
				}
			}
			e = newEnv(t, o)
			if _, err := e.sim.Chart("US", "0", time.Now()); err != nil { // build today's chart before timing requests
				t.Fatal(err)
			}
			rep := e.fetch("US", 4)
			if rep.Status != tc.status || rep.Pages != tc.pages || rep.Units != tc.units {
				t.Fatalf("%+v (err %v); want %s, %d pages, %d units", rep, rep.Err, tc.status, tc.pages, tc.units)
			}
			if got := e.sim.Usage(testKey).Charged; got != tc.units {
				t.Errorf("simulator charged %d, ledger counted %d: every attempt must be reserved", got, tc.units)
			}
			if got := e.used("daily"); got != tc.units {
				t.Errorf("ledger used %d, want %d", got, tc.units)
			}
			if tc.errHas != "" && (rep.Err == nil || !strings.Contains(rep.Err.Error(), tc.errHas)) {
				t.Errorf("error %v does not mention %q", rep.Err, tc.errHas)
			}
			if c := e.counts(); c.Snapshots != int64(tc.pages*50) {
				t.Errorf("%d snapshots stored, want %d (nothing half-written)", c.Snapshots, tc.pages*50)
			}
			assertNoKey(t, e)
		})
	}
}

func TestInvalidKeyFailsWithoutRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{fetch: ingest.Options{APIKey: secret.New("AIzaWRONG-key-that-must-not-leak"), Retries: 3}})
	rep := e.fetch("US", 4)
	if rep.Status != store.StatusFailed || rep.Units != 1 || !strings.Contains(rep.Err.Error(), "API key not valid") {
		t.Fatalf("%+v (err %v); want failed after one request saying the key is not valid", rep, rep.Err)
	}
	if got := e.sim.TotalRequests(); got != 1 {
		t.Errorf("%d requests; a bad key must not be retried", got)
	}
	assertNoSecret(t, e, "AIzaWRONG-key-that-must-not-leak")
}

// A code that never went through regions.Parse fails before anything is
// reserved or sent: the archive refuses to start its run.
func TestBadRegionFailsClearly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{fetch: ingest.Options{Retries: 3}})
	for _, code := range []string{"ZZ", "us", "UK"} {
		rep := e.fetch(code, 4)
		if rep.Status != store.StatusFailed || !strings.Contains(rep.Err.Error(), "not a region code") || rep.Units != 0 {
			t.Errorf("%s: %+v (err %v)", code, rep, rep.Err)
		}
	}
	if n := e.sim.TotalRequests(); n != 0 {
		t.Errorf("%d requests sent for unparsed regions", n)
	}
	if got := e.used("daily"); got != 0 {
		t.Errorf("%d units reserved for unparsed regions", got)
	}
}

func TestUnreachableEndpointReleasesReservations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{fetch: ingest.Options{Endpoint: "http://" + refusingAddr(t), Retries: 2}})
	rep := e.fetch("US", 4)
	if rep.Status != store.StatusFailed || rep.Units != 0 {
		t.Fatalf("%+v (err %v); want failed with 0 units (requests never left the host)", rep, rep.Err)
	}
	if got := e.used("daily"); got != 0 {
		t.Errorf("ledger still holds %d units for requests that were never sent", got)
	}
	assertNoKey(t, e)
	if strings.Contains(rep.Err.Error(), "key=") && !strings.Contains(rep.Err.Error(), "key=REDACTED") {
		t.Errorf("transport error shows a key parameter: %v", rep.Err)
	}
}

// TestRequestResentOnNewConnectionStaysSpent: the server reads page 2 on a
// reused keep-alive connection and hangs up without answering, with its
// port already closed. Go's transport resends the GET on a new connection,
// that dial is refused, and the run gets a dial error although page 2
// reached the server (Google would have charged it). Its units must stay
// spent. Later attempts that are refused at their first dial never left this
// host and are released.
func TestRequestResentOnNewConnectionStaysSpent(t *testing.T) {
	t.Parallel()
	for _, retries := range []int{0, 2} {
		t.Run(fmt.Sprintf("retries=%d", retries), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{noFetcher: true})
			var served atomic.Int64
			var ts *httptest.Server
			ts = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if served.Add(1) != 2 {
					e.sim.ServeHTTP(w, r)
					return
				}
				// The server has read page 2's request in full (a GET has no
				// body). Close the port first, so the transport's resend is
				// refused, then the connection, without a reply.
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				ts.Listener.Close()
				conn.Close()
			}))
			ts.Start()
			t.Cleanup(ts.Close)
			f, err := ingest.New(context.Background(), e.limiter, e.db, ingest.Options{
				Endpoint: ts.URL, APIKey: secret.New(testKey), Retries: retries,
				Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}

			rep := f.Fetch(context.Background(), ingest.Job{Region: config.Region{Code: "US", Pages: 4}, Trigger: store.TriggerCLI})
			// Page 1 and page 2's first attempt reached the server; page 2's
			// retries (if any) were refused at their first dial.
			if rep.Status != store.StatusFailed || rep.Pages != 1 || rep.Units != 2 {
				t.Fatalf("%+v (err %v); want failed after 1 page with 2 units spent", rep, rep.Err)
			}
			// The last error is a refused dial: for retries=0 that is the
			// transport's own resend of page 2, the case that must not be
			// mistaken for "never sent".
			if !errors.Is(rep.Err, syscall.ECONNREFUSED) {
				t.Errorf("error %v; want connection refused", rep.Err)
			}
			if got := served.Load(); got != 2 {
				t.Errorf("server read %d requests, want 2", got)
			}
			if got := e.used("daily"); got != 2 {
				t.Errorf("ledger holds %d units, want 2 (page 2 reached the server)", got)
			}
			runs, err := e.db.Runs(context.Background(), store.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].Units != 2 {
				t.Errorf("run rows %+v; want one run with 2 units", runs)
			}
		})
	}
}

func TestStopFinishesPageInFlightThenInterrupts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	stop := make(chan struct{})
	rep := e.f.Fetch(context.Background(), ingest.Job{
		Region: config.Region{Code: "US", Pages: 4}, Trigger: store.TriggerSchedule, Stop: stop,
		Progress: func(p ingest.Progress) {
			if p.Page == 2 {
				close(stop) // shutdown begins while page 2 is being stored
			}
		},
	})
	if rep.Status != store.StatusInterrupted || rep.Pages != 2 || rep.Units != 2 {
		t.Fatalf("%+v; want interrupted after 2 stored pages", rep)
	}
	if c := e.counts(); c.Snapshots != 100 {
		t.Errorf("%d snapshots, want 100", c.Snapshots)
	}
}

func TestCancelledContextRecordsInterruptedRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{sim: sim.Config{Faults: sim.Faults{Latency: 5 * time.Second}}})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	rep := e.f.Fetch(ctx, ingest.Job{Region: config.Region{Code: "US", Pages: 4}, Trigger: store.TriggerCLI})
	if rep.Status != store.StatusInterrupted {
		t.Fatalf("%+v", rep)
	}
	runs, err := e.db.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].Status != store.StatusInterrupted || runs[0].FinishedAt.IsZero() {
		t.Errorf("run row %+v; the end must be recorded even after cancellation", runs[0])
	}
}

func TestSearchesReserveSearchCostAndStoreResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	rep := e.f.Fetch(context.Background(), ingest.Job{
		Region: config.Region{Code: "IN", Pages: 1, Searches: []config.Search{
			{Q: "cricket", Order: "viewCount", PublishedWithin: config.Duration(7 * 24 * time.Hour), Pages: 2}}},
		Trigger: store.TriggerCLI,
	})
	if rep.Status != store.StatusOK {
		t.Fatalf("%+v (err %v)", rep, rep.Err)
	}
	// 1 chart page + per search page 100 + 1 for the statistics.
	searchPages := rep.Pages - 1
	if searchPages < 1 || rep.Units != 1+int64(searchPages)*101 {
		t.Fatalf("%+v: want 1 + 101 per search page", rep)
	}
	if got, want := e.used("search"), int64(searchPages)*100; got != want {
		t.Errorf("search limit used %d, want %d", got, want)
	}
	if got := e.sim.Usage(testKey).Charged; got != rep.Units {
		t.Errorf("simulator charged %d, run reserved %d", got, rep.Units)
	}
}

func TestSearchBucketExhaustionMarksOnlySearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{sim: sim.Config{SearchCallsPerDay: 1}})
	job := ingest.Job{Region: config.Region{Code: "US", Pages: 1, Searches: []config.Search{{Q: "music", Pages: 2}}},
		Trigger: store.TriggerCLI}
	rep := e.f.Fetch(context.Background(), job)
	if rep.Status != store.StatusStoppedQuota || rep.RefusedBy != "upstream" || !strings.Contains(rep.Err.Error(), sim.SearchQuotaLimit) {
		t.Fatalf("%+v (err %v); want stopped_quota naming %s", rep, rep.Err, sim.SearchQuotaLimit)
	}
	// Only search.list is out for the day: the chart still fetches, and no
	// further search reaches the simulator.
	searches := e.sim.Usage(testKey).Calls["search.list"]
	rep = e.fetch("GB", 2)
	if rep.Status != store.StatusOK || rep.Pages != 2 {
		t.Fatalf("chart after search bucket exhaustion: %+v (err %v)", rep, rep.Err)
	}
	rep = e.f.Fetch(context.Background(), job)
	if rep.Status != store.StatusStoppedQuota || rep.Pages != 1 {
		t.Fatalf("%+v", rep)
	}
	if got := e.sim.Usage(testKey).Calls["search.list"]; got != searches {
		t.Errorf("%d more search.list requests reached the simulator while search was marked exhausted", got-searches)
	}
}

// assertNoKey checks logs, errors and the database files for the test key.
func assertNoKey(t testing.TB, e *env) { t.Helper(); assertNoSecret(t, e, testKey) }

func assertNoSecret(t testing.TB, e *env, secret string) {
	t.Helper()
	if strings.Contains(e.logs.String(), secret) {
		t.Error("the API key appears in the logs")
	}
	runs, err := e.db.Runs(context.Background(), store.RunFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if strings.Contains(r.Error, secret) {
			t.Errorf("the API key appears in run %d's error", r.ID)
		}
	}
	dir := filepath.Dir(e.dbPath)
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the API key appears in %s", filepath.Base(path))
		}
		return nil
	})
}

func TestParseISODuration(t *testing.T) {
	ok := map[string]time.Duration{"PT2M55S": 175 * time.Second, "PT1H": time.Hour, "P1DT2H": 26 * time.Hour, "P0D": 0, "PT45S": 45 * time.Second, "P1W": 7 * 24 * time.Hour}
	for in, want := range ok {
		if got, err := ingest.ParseISODuration(in); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "2M", "PT5X", "P1M", "PTM", "P1H", "PT1D"} {
		if _, err := ingest.ParseISODuration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestKeyRedactedInEveryEncoding: an upstream error that echoes the request
// URL carries the key query-escaped (sec+ret%2BKEY%2F9); no encoding of it
// reaches the report, the logs or the archive.
func TestKeyRedactedInEveryEncoding(t *testing.T) {
	t.Parallel()
	const key = "sec ret+KEY/9=x"
	e := newEnv(t, envOpts{
		fetch: ingest.Options{APIKey: secret.New(key), Retries: 0},
		handler: func(http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				msg := "bad request for " + r.URL.String() + " (raw " + r.URL.RawQuery + ")"
				fmt.Fprintf(w, `{"error": {"code": 400, "message": %q, "errors": [{"reason": "badRequest", "message": %q}]}}`, msg, msg)
			})
		},
	})
	rep := e.fetch("US", 1)
	if rep.Status != store.StatusFailed || rep.Err == nil {
		t.Fatalf("%+v; want a failed run", rep)
	}
	for _, form := range []string{key, url.QueryEscape(key), url.PathEscape(key), "ret%2BKEY", "ret%2bKEY", "ret+KEY"} {
		if strings.Contains(rep.Err.Error(), form) {
			t.Errorf("the report's error holds the key as %q: %v", form, rep.Err)
		}
		assertNoSecret(t, e, form)
	}
}

// refusingAddr is a loopback address that refuses connections for the whole
// test: a socket bound to it that never listens. The port stays taken, so
// nothing else can start listening there (a listener opened and closed
// again frees its port for anyone).
func refusingAddr(tb testing.TB) string {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
