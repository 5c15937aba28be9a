package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/testkit/logbuf"
	"github.com/ytrend/ytrend/testkit/redistest"
	"github.com/ytrend/ytrend/testkit/wait"
)

// startServe runs ytrend serve with args and returns its base URL once it
// listens; it is killed at cleanup.
func (w *world) startServe(t *testing.T, args ...string) (string, *logbuf.Buffer) {
	t.Helper()
	cmd := w.command(append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
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
	exited := make(chan struct{})
	go func() {
		defer close(exited)
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
	case <-exited:
		t.Fatalf("ytrend serve %v exited:\n%s", args, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("ytrend serve %v did not start:\n%s", args, logs.String())
	}
	return "", nil
}

// TestServeFollow: ytrend fetch keeps writing an archive that a leader's
// stream replicates to a file replica; ytrend serve --follow on another
// path serves the same charts as ytrend serve on the archive itself once it
// has caught up, reports its lag, and moves to a new term after a
// takeover.
func TestServeFollow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, sim.Config{})
	w.config(pollable)
	w.mustRun("fetch", "US")
	url := "file://" + filepath.Join(t.TempDir(), "replica")
	opts := replication.Options{SyncInterval: 100 * time.Millisecond, SnapshotInterval: time.Hour, Retention: time.Hour}
	s, err := replication.Start(ctx, w.env["YTREND_DB"], []string{url}, 1, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })

	leader, _ := w.startServe(t)
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	follower, logs := w.startServe(t, "--follow", url, "--db", copyPath)
	if !strings.Contains(logs.String(), "following replica "+replication.Name(url)+" generation term-0000000000000000001") {
		t.Errorf("serve --follow does not say what it follows:\n%s", logs.String())
	}

	converged := func(what string, regions ...string) { sameCharts(t, what, leader, follower, regions...) }
	converged("the follower serves the leader's chart", "US")
	for _, r := range []string{"GB", "US", "DE"} {
		w.mustRun("fetch", r) // the leader keeps writing
	}
	converged("the follower serves the new charts", "US", "GB", "DE")

	if code, body := get(t, follower+"/readyz"); code != 200 || !strings.Contains(body, "following replica") || !strings.Contains(body, "term-0000000000000000001") {
		t.Errorf("readyz: %d %s", code, body)
	}
	if code, body := get(t, follower+"/metrics"); code != 200 || !strings.Contains(body, "ytrend_archive_follow_lag_seconds{") ||
		!strings.Contains(body, "ytrend_archive_follow_term{replica=\""+replication.Name(url)+"\"} 1") {
		t.Errorf("metrics: %d\n%s", code, body)
	}

	// A takeover: the term ends, the next leader's term starts.
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	s2, err := replication.Start(ctx, w.env["YTREND_DB"], []string{url}, 2, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Stop(context.Background()) })
	w.mustRun("fetch", "FR")
	eventually(t, "the follower switches to term 2", func() (bool, string) {
		_, body := get(t, follower+"/readyz")
		return strings.Contains(body, "term-0000000000000000002"), body
	})
	converged("the follower serves the new term's charts", "US", "FR")
}

// pollable lets a test poll both servers' charts as fast as it likes: the
// per-client rate limit (shared through Redis when there is one) is not
// what these tests are about.
const pollable = "serve: {rate_limit: {requests: 1000000, window: 1m}}\n"

// sameCharts waits until follower serves leader's charts of regions.
func sameCharts(t *testing.T, what, leader, follower string, regions ...string) {
	t.Helper()
	eventually(t, what, func() (bool, string) {
		for _, r := range regions {
			lc, lb := get(t, leader+"/api/v1/charts/"+r)
			fc, fb := get(t, follower+"/api/v1/charts/"+r)
			if lc != 200 || fc != lc || fb != lb {
				return false, fmt.Sprintf("%s: leader %d %.200s\nfollower %d %.200s", r, lc, lb, fc, fb)
			}
		}
		return true, ""
	})
}

// TestServeFollowAcrossATakeover: two ytrend run replicas on one Redis
// stream their terms to a file replica; serve --follow on a third path
// (” = archive.replicas) follows the leader, switches to the next
// leader's term after a kill -9, and ends serving what the next leader
// stored.
func TestServeFollowAcrossATakeover(t *testing.T) {
	t.Parallel()
	redistest.Client(t)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = redistest.URL()
	repl := "file://" + filepath.Join(w.dir, "replica")
	w.config(fmt.Sprintf(`
credential: %s
redis: {epoch_check: 500ms}
scheduler: {leader_ttl: 2s, maintenance: "off"}
archive: {replicas: [%q]}
regions:
  - {code: US, cron: "@every 1s", pages: 2}
  - {code: GB, cron: "@every 1s", pages: 2}
%s`, redistest.Prefix(t), repl, pollable))
	rs := []*replica{startReplica(t, w, "r0", filepath.Join(w.dir, "r0.db")), startReplica(t, w, "r1", filepath.Join(w.dir, "r1.db"))}
	first := leaderOf(t, "one leader of two", rs...)
	second := without(rs, first)[0]
	waitFor(t, "the leader's stream and pages", 60*time.Second, func() bool {
		return strings.Contains(first.logs.String(), "replication: streaming the archive") && first.requests.Load() >= 4
	})
	follower, _ := w.startServe(t, "--follow", "", "--db", filepath.Join(w.dir, "third.db"))
	terms, err := replication.Terms(context.Background(), repl)
	if err != nil || len(terms) != 1 {
		t.Fatalf("terms %v, %v; want the leader's", terms, err)
	}

	first.cmd.Process.Kill()
	first.cmd.Wait()
	waitFor(t, "the new leader's stream", 60*time.Second, func() bool {
		return strings.Contains(second.logs.String(), "replication: streaming the archive")
	})
	terms, err = replication.Terms(context.Background(), repl)
	if err != nil || len(terms) != 2 {
		t.Fatalf("terms %v, %v; want the two leaders'", terms, err)
	}
	eventually(t, "the follower switches to the new leader's term", func() (bool, string) {
		_, body := get(t, follower+"/readyz")
		return strings.Contains(body, "generation "+terms[0].Generation()), body
	})
	waitFor(t, "the new leader's fetches", 60*time.Second, func() bool { return second.requests.Load() >= 4 })
	// The new leader stops (its stream ships its last pages): the follower
	// must end with exactly its archive.
	second.cmd.Process.Signal(syscall.SIGTERM)
	exitCode(t, second.cmd, 60*time.Second)
	w.env["YTREND_DB"] = second.db
	leader, _ := w.startServe(t)
	sameCharts(t, "the follower serves the new leader's charts", leader, follower, "US", "GB")
}

// eventually waits for cond, polling; it fails t with cond's last word if
// that takes longer than any machine should need.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	wait.Until(t, what, 90*time.Second, cond)
}
