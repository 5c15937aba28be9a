package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/logbuf"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// start launches ytrend in the background; its stderr is collected.
func (w *world) start(args ...string) (*exec.Cmd, *logbuf.Buffer) {
	w.t.Helper()
	cmd := w.command(args...)
	var errb logbuf.Buffer
	cmd.Stderr = &errb
	cmd.Stdout = &errb
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &errb
}

func exitCode(t *testing.T, cmd *exec.Cmd, within time.Duration) (int, time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), time.Since(start)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, time.Since(start)
	case <-time.After(within):
		cmd.Process.Kill()
		t.Fatalf("process still running %s later", within)
		return -1, 0
	}
}

// TestSIGTERMStoresThePageInFlight: a SIGTERM while a page request is in
// flight lets that page arrive and be stored, records the run as
// interrupted, and exits without reaching the shutdown deadline (which
// would say so in the log and cancel the page).
func TestSIGTERMStoresThePageInFlight(t *testing.T) {
	t.Parallel()
	inFlight := make(chan struct{}, 16)
	var requests atomic.Int32
	// Every chart page takes 1.5s; the test learns when the second page's
	// request has arrived. (The day's first fetch also asks for category
	// names first, answered at once.)
	w := newWorld(t, sim.Config{}, func(s *sim.Server) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/youtube/v3/videos" {
				if requests.Add(1) == 2 {
					inFlight <- struct{}{}
				}
				time.Sleep(1500 * time.Millisecond)
			}
			s.ServeHTTP(rw, r)
		})
	})
	w.config(`
scheduler: {shutdown_timeout: 8s}
regions:
  - {code: US, cron: "@every 1s", pages: 4}
`)
	cmd, logs := w.start("run")
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatalf("no second request; logs:\n%s", logs)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, _ := exitCode(t, cmd, 60*time.Second)
	if code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0; logs:\n%s", code, logs)
	}
	if strings.Contains(logs.String(), "cancelling in-flight runs") {
		t.Errorf("the shutdown reached its deadline; logs:\n%s", logs)
	}
	db := w.openDB()
	runs, err := db.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != store.StatusInterrupted || runs[0].Pages != 2 || runs[0].Videos != 100 || runs[0].Trigger != store.TriggerSchedule {
		t.Fatalf("runs %+v; want one interrupted run with the in-flight page stored (2 pages)", runs)
	}
	if c, _ := db.Counts(context.Background()); c.Snapshots != 100 {
		t.Errorf("%d snapshots, want 100", c.Snapshots)
	}
	if got := requests.Load(); got != 2 {
		t.Errorf("%d page requests; no page may start after the signal", got)
	}
	if runs[0].Units != 3 {
		t.Errorf("run spent %d units, want 3 (category names and two pages)", runs[0].Units)
	}
}

// TestSecondSignalExitsAtOnce: with a page stuck for a long time, a second
// signal ends the process without waiting for the deadline. The page takes
// a minute and the deadline is ten: an exit at all means the second signal
// ended it (the harness gives up long before either).
func TestSecondSignalExitsAtOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{Faults: sim.Faults{Latency: time.Minute}})
	w.config(`
scheduler: {shutdown_timeout: 10m}
regions:
  - {code: US, cron: "@every 1s", pages: 4}
`)
	cmd, logs := w.start("run")
	waitFor(t, "a request in flight", 30*time.Second, func() bool { return w.sim.TotalRequests() > 0 })
	cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, "the shutdown to begin", 10*time.Second, func() bool { return strings.Contains(logs.String(), "shutting down") })
	cmd.Process.Signal(syscall.SIGINT)
	exitCode(t, cmd, 50*time.Second)
	if !strings.Contains(logs.String(), "second signal: stopping now") {
		t.Errorf("no log line for the second signal:\n%s", logs)
	}
	runs, err := w.openDB().Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
		t.Errorf("runs %+v; want the run recorded interrupted", runs)
	}
}

// TestRunOnceMarksCrashedRunsAndExitsWithFetchCodes: a run left "running"
// by a process that no longer exists becomes interrupted at start; --once
// fires each region once.
func TestRunOnceMarksCrashedRunsAndExitsWithFetchCodes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	// A run owned by a process that is gone.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	db := w.openDB()
	id, err := db.StartRun(context.Background(), "US", store.TriggerSchedule, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec(`UPDATE runs SET owner = ? WHERE id = ?`, fmt.Sprintf("%s:%d", hostname(t), dead.ProcessState.Pid()), id); err != nil {
		t.Fatal(err)
	}
	// A run of a container's pid 1 that crashed: pid 1 is alive here, but
	// its heartbeat stopped two minutes ago.
	pid1, err := db.StartRun(context.Background(), "JP", store.TriggerSchedule, time.Now().Add(-3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	owner := hostname(t) + ":1:c0ffee"
	if _, err := db.Writer().Exec(`UPDATE runs SET owner = ? WHERE id = ?`, owner, pid1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec(`INSERT INTO instances (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, 1, ?, ?)`,
		owner, hostname(t), time.Now().Add(-3*time.Minute).UnixMicro(), time.Now().Add(-2*time.Minute).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	w.config(`
regions:
  - {code: GB, cron: "0 * * * *", pages: 1}
  - {code: DE, cron: "0 * * * *", pages: 1}
`)
	r := w.mustRun("run", "--once")
	if !strings.Contains(r.stderr, "marked interrupted") {
		t.Errorf("no log line about the crashed run:\n%s", r.stderr)
	}
	runs, err := db.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 || runs[3].Status != store.StatusInterrupted || runs[2].Status != store.StatusInterrupted ||
		!strings.Contains(runs[2].Error, "stopped its heartbeat") ||
		runs[1].Region != "GB" || runs[0].Region != "DE" || runs[0].Status != store.StatusOK {
		t.Errorf("runs %+v", runs)
	}
	w.config(`
costs: {videos.list: 1, search.list: 100}
limits:
  - {name: daily,  units: 2,    window: 24h, costs: {videos.list: 1}}
  - {name: search, units: 1000, window: 1h,  costs: {search.list: 100}}
regions:
  - {code: FR, cron: "0 * * * *", pages: 4}
`)
	if r := w.run("run", "--once"); r.code != 75 {
		t.Errorf("--once with a refusal: exit %d, want 75\n%s", r.code, r.stderr)
	}
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Skip("no hostname")
	}
	return h
}

var metricLine = regexp.MustCompile(`(?m)^(ytrend_[a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$`)

func metricsOf(body string) map[string]float64 {
	m := map[string]float64{}
	for _, match := range metricLine.FindAllStringSubmatch(body, -1) {
		v, _ := strconv.ParseFloat(match[3], 64)
		m[match[1]+match[2]] = v
	}
	return m
}

// TestMetricsMoveAndReadyzFollowsRedis scrapes a running scheduler: the
// counters move between scrapes, and /readyz fails while Redis is away.
func TestMetricsMoveAndReadyzFollowsRedis(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	proxy := redistest.NewProxy(t, rdb.Options().Addr)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = "redis://" + proxy.Addr() + "/0"
	w.config(fmt.Sprintf(`
credential: %s
scheduler: {maintenance: "@every 1s"}
regions:
  - {code: US, cron: "@every 1s", pages: 1}
  - {code: GB, cron: "@every 1s", pages: 1}
`, redistest.Prefix(t)))
	cmd, logs := w.start("run", "--listen", "127.0.0.1:0")
	var base string
	waitFor(t, "the metrics address", 30*time.Second, func() bool {
		m := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(logs.String())
		if m != nil {
			base = "http://" + m[1]
		}
		return m != nil
	})
	if code, body := get(t, base+"/livez"); code != 200 {
		t.Fatalf("/livez %d %s", code, body)
	}
	var first map[string]float64
	waitFor(t, "a finished run in /metrics", 30*time.Second, func() bool {
		_, body := get(t, base+"/metrics")
		first = metricsOf(body)
		return first[`ytrend_runs_total{region="US",status="ok"}`] >= 1
	})
	waitFor(t, "the counters to move", 30*time.Second, func() bool {
		_, body := get(t, base+"/metrics")
		m := metricsOf(body)
		return m[`ytrend_runs_total{region="US",status="ok"}`] > first[`ytrend_runs_total{region="US",status="ok"}`] &&
			m[`ytrend_quota_units_reserved_total{call="videos.list",limit="daily"}`] > first[`ytrend_quota_units_reserved_total{call="videos.list",limit="daily"}`]
	})
	_, body := get(t, base+"/metrics")
	m := metricsOf(body)
	for _, name := range []string{
		`ytrend_quota_remaining_units{limit="daily"}`, `ytrend_quota_remaining_units{limit="search"}`,
		`ytrend_last_success_timestamp_seconds{region="GB"}`, `ytrend_fetch_duration_seconds_count{region="US"}`,
	} {
		if _, ok := m[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if m[`ytrend_quota_remaining_units{limit="daily"}`] >= 9500 || m[`ytrend_quota_remaining_units{limit="search"}`] != 1000 {
		t.Errorf("remaining units: %v %v", m[`ytrend_quota_remaining_units{limit="daily"}`], m[`ytrend_quota_remaining_units{limit="search"}`])
	}
	if code, _ := get(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz %d with Redis up", code)
	}
	proxy.Set(redistest.Dead)
	waitFor(t, "/readyz to fail with Redis away", 10*time.Second, func() bool {
		code, _ := get(t, base+"/readyz")
		return code == http.StatusServiceUnavailable
	})
	proxy.Set(redistest.Forwarding)
	waitFor(t, "/readyz to recover", 10*time.Second, func() bool {
		code, _ := get(t, base+"/readyz")
		return code == 200
	})
	// The archive's upkeep runs on its own schedule beside the fetches.
	waitFor(t, "a finished maintenance run", 30*time.Second, func() bool {
		return strings.Contains(logs.String(), `msg="maintenance finished" index_segments=`)
	})
	waitFor(t, "the upkeep in /metrics", 10*time.Second, func() bool {
		_, body := get(t, base+"/metrics")
		m := metricsOf(body)
		return m[`ytrend_maintenance_runs_total{status="ok"}`] >= 1 && m[`ytrend_maintenance_last_success_timestamp_seconds`] > 0
	})
	cmd.Process.Signal(syscall.SIGTERM)
	exitCode(t, cmd, 30*time.Second)
	w.assertNoKey(logs.String())
}

// TestConcurrentProcessesNeverOverspend: several `ytrend fetch` processes and
// a scheduler share one budget scaled down to 60 units per 20s, against a
// simulator whose own quota is just above that. Google-side spend never
// exceeds the budget, Google never has to answer quotaExceeded, and every
// refusal is a stopped_quota run that kept its earlier pages. Once on Redis,
// once on the embedded ledger in the shared archive file.
func TestConcurrentProcessesNeverOverspend(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 25s of contention")
	}
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		redistest.Client(t)
		overspendTest(t, redistest.URL())
	})
	t.Run("ledger", func(t *testing.T) {
		t.Parallel()
		overspendTest(t, "")
	})
}

func overspendTest(t *testing.T, redisURL string) {
	const window = 20 * time.Second
	w := newWorld(t, sim.Config{Quota: 62, Day: window})
	w.env["REDIS_URL"] = redisURL
	w.config(fmt.Sprintf(`
credential: %s
costs: {videos.list: 1, search.list: 100}
limits:
  - {name: daily,  units: 60,   window: 20s, costs: {videos.list: 1}}
  - {name: search, units: 1000, window: 1h,  costs: {search.list: 100}}
redis: {timeout: 2s}
youtube: {retries: 0}
regions:
  - {code: US, cron: "@every 1s", pages: 4}
  - {code: GB, cron: "@every 1s", pages: 4}
`, redistest.Prefix(t)))

	sched, schedLogs := w.start("run")
	deadline := time.Now().Add(25 * time.Second)
	var wg sync.WaitGroup
	var fetches atomic.Int32
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			regions := []string{"DE FR", "IN BR", "AU CA", "JP MX"}[p]
			for time.Now().Before(deadline) {
				r := w.run(append([]string{"fetch"}, strings.Fields(regions)...)...)
				if r.code != 0 && r.code != 75 {
					t.Errorf("fetch %s: exit %d\n%s", regions, r.code, r.stderr)
					return
				}
				fetches.Add(1)
			}
		}()
	}
	wg.Wait()
	sched.Process.Signal(syscall.SIGTERM)
	exitCode(t, sched, 30*time.Second)

	u := w.sim.Usage(testKey)
	if u.QuotaExceeded != 0 {
		t.Errorf("the simulator answered quotaExceeded %d times: the budget let Google refuse first", u.QuotaExceeded)
	}
	days := int64(25*time.Second/window) + 2
	if u.Charged > 60*days {
		t.Errorf("simulator charged %d units over at most %d quota days of 60", u.Charged, days)
	}
	db := w.openDB()
	runs, err := db.Runs(context.Background(), store.RunFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	var stopped, pages int
	var units int64
	for _, r := range runs {
		switch r.Status {
		case store.StatusStoppedQuota:
			stopped++
			if r.RefusedBy != "daily" || r.RetryAt.IsZero() {
				t.Errorf("refusal recorded without its limit or retry time: %+v", r)
			}
		case store.StatusOK, store.StatusInterrupted:
		default:
			t.Errorf("run %d: %s (%s)", r.ID, r.Status, r.Error)
		}
		pages += r.Pages
		units += r.Units
	}
	if stopped == 0 {
		t.Error("no run was refused; the test did not reach the budget")
	}
	c, err := db.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Snapshots != int64(pages*50) {
		t.Errorf("%d snapshots for %d stored pages: pages of refused runs must be intact", c.Snapshots, pages)
	}
	if units != u.Charged {
		t.Errorf("runs reserved %d units, the simulator charged %d", units, u.Charged)
	}
	t.Logf("%d fetch commands, %d runs (%d stopped by quota), %d units charged; scheduler log %d bytes",
		fetches.Load(), len(runs), stopped, u.Charged, len(schedLogs.String()))
}
