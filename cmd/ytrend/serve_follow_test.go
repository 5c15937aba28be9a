package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/testkit/logbuf"
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

	converged := func(what string, regions ...string) {
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

// eventually waits for cond, polling; it fails t with cond's last word if
// that takes longer than any machine should need.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s", what, detail)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
