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

// Red team (issue 22, point 5): "a limiter whose Redis is down falls back to
// the in-memory limiter behind a circuit breaker, with one log line per
// state change". With the real binary and a real redis-server killed under
// it, the breaker logs its one line, but every half-open probe (one per 5 s
// cooldown) also logs go-redis' own "failed to dial after 5 attempts"
// warning twice, and the trip itself logs it twice more: measured, a 30 s
// outage wrote 13 WARN lines for one state change (2 at the trip + 1 state
// line + 2 per probe). Each probe is also made inline on a client's request,
// which waited 0.82-0.85 s (above redis.timeout, 500 ms) once per cooldown.
func TestRedRedisOutageLogsOneLinePerStateChange(t *testing.T) {
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
