package main

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/testkit/logbuf"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// startServeLogs is startServe that also hands back serve's log.
func startServeLogs(t *testing.T, w *world) (string, *logbuf.Buffer) {
	t.Helper()
	cmd := w.command("serve", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	logs := &logbuf.Buffer{}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stderr, logs))
		re := regexp.MustCompile(`serving (http://[0-9.:]+)/`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case base := <-addr:
		return base, logs
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start:\n%s", logs.String())
	}
	return "", nil
}

// A limiter whose Redis is down falls back to the in-memory limiter behind a
// circuit breaker, with one log line per state change (issue 22, point 5).
// The red team, with the real binary and a real redis-server killed under
// it, found go-redis' own "failed to dial after 5 attempts" warning twice at
// the trip and twice per half-open probe (one per 5 s cooldown): a 30 s
// outage wrote 13 WARN lines for one state change. Each probe is also made inline on a client's request,
// which waited 0.82-0.85 s (above redis.timeout, 500 ms) once per cooldown.
func TestRedisOutageLogsOneLinePerStateChange(t *testing.T) {
	t.Parallel()
	rs := redistest.StartServer(t)
	w := newWorld(t, sim.Config{})
	w.mustRun("migrate")
	w.config("serve:\n  rate_limit: {requests: 1000, window: 1m}\n")
	w.env["REDIS_URL"] = rs.URL()
	base, logs := startServeLogs(t, w)
	if code, _ := get(t, base+"/api/v1/regions"); code != 200 {
		t.Fatalf("Redis up: %d", code)
	}
	rs.Kill()
	waitFor(t, "the breaker to open", 30*time.Second, func() bool {
		get(t, base+"/api/v1/regions")
		return strings.Contains(logs.String(), "Redis failed")
	})
	// Keep requests coming across two cooldowns (DefaultCooldown 5 s): each
	// cooldown's end lets one request probe the dead Redis.
	opened := time.Now()
	for time.Since(opened) < 12*time.Second {
		get(t, base+"/api/v1/regions")
	}
	var warns []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			warns = append(warns, line)
		}
	}
	if len(warns) != 1 {
		t.Errorf("one state change (Redis down), %d warning lines:\n%s", len(warns), strings.Join(warns, "\n"))
	}
}

// A grant made while the budget's Redis is unreachable (failure_policy
// open) knows nothing of what is left: the red team found `quota reserve`
// printing "-1 remaining", --json "remaining": -1, and fetch's progress
// "-1 remaining". Each now says the remainder is unknown and why.
func TestFailOpenGrantSaysRemainingIsUnknown(t *testing.T) {
	t.Parallel()
	rs := redistest.StartServer(t)
	w := newWorld(t, sim.Config{})
	w.mustRun("migrate")
	w.env["REDIS_URL"] = rs.URL()
	w.config("failure_policy: {videos.list: open, search.list: closed}\nredis: {timeout: 200ms}\n")
	rs.Kill()

	r := w.mustRun("quota", "reserve", "--call", "videos.list")
	if !strings.Contains(r.stdout, "remaining unknown: granted while the budget was unreachable") || strings.Contains(r.stdout, "-1") {
		t.Errorf("text: %q", r.stdout)
	}
	r = w.mustRun("quota", "reserve", "--call", "videos.list", "--json")
	res := decode[map[string]any](t, r.stdout)
	if res["fail_open"] != true || res["remaining"] != nil {
		t.Errorf("json: remaining %v (want null), fail_open %v:\n%s", res["remaining"], res["fail_open"], r.stdout)
	}
	for _, l := range res["limits"].([]any) {
		if l := l.(map[string]any); l["used"] != nil || l["remaining"] != nil {
			t.Errorf("json limit %v: used %v, remaining %v (want null)", l["name"], l["used"], l["remaining"])
		}
	}
	r = w.mustRun("fetch", "US", "--pages", "1", "--no-search")
	if !strings.Contains(r.stderr, "remaining unknown: granted while the budget was unreachable") || strings.Contains(r.stderr, "-1 remaining") {
		t.Errorf("fetch progress: %q", r.stderr)
	}
}
