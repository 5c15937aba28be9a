package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// TestStandbyFollowsAndTakesOver runs two `ytrend run --serve` processes on
// one Redis, each with its own archive, with one file replica:
//
//  1. The standby follows the leader's replica into a copy beside its
//     archive, and its --serve answers the leader's charts (it converges);
//     its /readyz and metrics report the copy and its lag.
//  2. The leader is SIGKILLed. The standby stops following, takes over by
//     adopting its copy (no restore), and its archive holds every run the
//     old leader had replicated and the union of the budget's grants (the
//     old term's and its own), passing SQLite's and FTS5's checks; its
//     --serve, on the same listener, now answers from its live archive
//     (its own new runs).
//  3. The killed one comes back as a standby: it follows the new leader's
//     term and serves the new leader's charts.
//  4. The new leader freezes (SIGSTOP) past its lease; the returning one
//     takes over, from its copy too; woken, the deposed leader stands by,
//     follows the newest term again and serves its charts.
func TestStandbyFollowsAndTakesOver(t *testing.T) {
	t.Parallel()
	redistest.Client(t)
	ctx := context.Background()
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = redistest.URL()
	repl := "file://" + filepath.Join(w.dir, "replica")
	rs := startStandbys(t, w, repl, `
  - {code: US, cron: "@every 2s", pages: 2}
  - {code: GB, cron: "@every 2s", pages: 2}`)
	serve := []string{"--serve", "127.0.0.1:0"}
	web := map[*replica]string{}
	for _, r := range rs {
		web[r] = serveAddr(t, r)
	}
	first := leaderOf(t, "one leader of two", rs...)
	second := without(rs, first)[0]
	waitFor(t, "the standby to follow the leader's replica", 60*time.Second, func() bool {
		return strings.Contains(second.logs.String(), "standby: following the leader's replica")
	})
	waitFor(t, "six of the leader's pages", 60*time.Second, func() bool { return first.requests.Load() >= 6 })

	// 1. The standby's --serve converges to the leader's.
	converged := func(what string, leader, standby *replica) {
		t.Helper()
		eventually(t, what, func() (bool, string) {
			for _, r := range []string{"US", "GB"} {
				lc, lb := get(t, web[leader]+"/api/v1/charts/"+r)
				sc, sb := get(t, web[standby]+"/api/v1/charts/"+r)
				if lc != 200 || sc != lc || sb != lb || !strings.Contains(lb, `"video_id"`) {
					return false, fmt.Sprintf("%s: leader %d %.300s\nstandby %d %.300s", r, lc, lb, sc, sb)
				}
			}
			return true, ""
		})
	}
	converged("the standby serves the leader's charts", first, second)
	if code, body := get(t, second.base+"/readyz"); code != 200 || !strings.Contains(body, "standby: following replica "+replication.Name(repl)) {
		t.Errorf("the standby's readyz: %d %s", code, body)
	}
	if _, body := get(t, second.base+"/metrics"); !strings.Contains(body, `ytrend_archive_follow_lag_seconds{replica="`+replication.Name(repl)+`"}`) {
		t.Errorf("the standby's metrics lack the follow lag:\n%s", body)
	}
	if _, body := get(t, first.base+"/metrics"); strings.Contains(body, "ytrend_archive_follow_lag_seconds{") {
		t.Errorf("the leader reports a follow lag; it follows nothing")
	}

	// A grant recorded in the standby's own archive: the takeover keeps it
	// beside the old term's.
	w.env["YTREND_DB"] = second.db
	w.mustRun("quota", "reserve", "--cost", "1", "--id", "standby-own")
	delete(w.env, "YTREND_DB")

	// 2. kill -9 the leader: the standby takes over from its copy.
	first.cmd.Process.Kill()
	first.cmd.Wait()
	waitFor(t, "the standby's takeover, its stream, its serve on the live archive", 60*time.Second, func() bool {
		l := second.logs.String()
		return strings.Contains(l, "standby: leading; stopped following with everything replicated applied") &&
			strings.Contains(l, "takeover: adopted the previous term from the standby's copy") &&
			strings.Contains(l, "replication: streaming the archive") &&
			strings.Contains(l, "standby: --serve answers from the live archive")
	})
	old, oldRuns, terms := oldTermRuns(t, w, repl)
	if len(oldRuns) < 2 {
		t.Fatalf("the old term replicated %d runs", len(oldRuns))
	}
	// The new leader's --serve answers from its live archive: its own runs
	// appear there, which the stopped copy never gets.
	eventually(t, "the new leader's serve to show its own runs", func() (bool, string) {
		code, body := get(t, web[second]+"/api/v1/runs?limit=1")
		var page struct {
			Runs []struct {
				ID int64 `json:"id"`
			} `json:"runs"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &page) != nil || len(page.Runs) == 0 {
			return false, fmt.Sprintf("%d %s", code, body)
		}
		_, old := oldRuns[page.Runs[0].ID]
		return !old, body
	})

	// 3. The killed one returns as a standby of the new leader.
	back := startReplicaArgs(t, w, "back", first.db, serve)
	web[back] = serveAddr(t, back)
	waitFor(t, "the returning one to follow", 60*time.Second, func() bool {
		return strings.Contains(back.logs.String(), "standby: following the leader's replica")
	})
	eventually(t, "the returning standby to follow the new leader's term", func() (bool, string) {
		code, body := get(t, back.base+"/readyz")
		return code == 200 && strings.Contains(body, "standby: following replica") && strings.Contains(body, terms[0].Generation()), body
	})
	converged("the returning standby serves the new leader's charts", second, back)

	// 4. The leader freezes past its lease: the returning standby takes
	// over. Woken, the deposed one stands by and follows again (afresh: its
	// old copy was handed over when it led), serving the new leader's charts.
	second.cmd.Process.Signal(syscall.SIGSTOP)
	waitFor(t, "the returning standby's takeover and serve on its live archive", 60*time.Second, func() bool {
		l := back.logs.String()
		return strings.Contains(l, "takeover: adopted the previous term from the standby's copy") &&
			strings.Contains(l, "standby: --serve answers from the live archive")
	})
	second.cmd.Process.Signal(syscall.SIGCONT)
	waitFor(t, "the deposed leader to follow again", 60*time.Second, func() bool {
		return strings.Count(second.logs.String(), "standby: following the leader's replica") >= 2
	})
	// The new leader's term is in the replica once its stream has written
	// there, which its takeover and its serve do not wait for (a CI run
	// read two terms here).
	eventually(t, "the replica to hold the three leaders' terms", func() (bool, string) {
		var err error
		terms, err = replication.Terms(ctx, repl)
		return err == nil && len(terms) == 3, fmt.Sprintf("terms %v, %v", terms, err)
	})
	// Until the new term holds a snapshot the newest one that does (the
	// deposed leader's own) is followed; then the follower switches.
	eventually(t, "the deposed leader to follow the new term", func() (bool, string) {
		code, body := get(t, second.base+"/readyz")
		return code == 200 && strings.Contains(body, "standby: following replica") && strings.Contains(body, terms[0].Generation()), body
	})
	converged("the deposed leader serves the new leader's charts", back, second)

	for _, r := range []*replica{back, second} {
		r.cmd.Process.Signal(syscall.SIGTERM)
		exitCode(t, r.cmd, 60*time.Second)
	}
	// Every run the old term replicated is in the new leader's archive.
	newRuns := runsOf(t, second.db)
	runsKept(t, oldRuns, newRuns, true)
	// The budget's grants: the old term's and the standby's own, none lost.
	want := append(grantsOf(t, old), "standby-own")
	have := grantsOf(t, second.db)
	for _, id := range want {
		if !slices.Contains(have, id) {
			t.Errorf("grant %s (the old term's, or the standby's own) is missing from the new leader's archive", id)
		}
	}
	if len(want) < 2 {
		t.Errorf("the old term replicated no grant: %v", want)
	}
	db, err := store.Open(ctx, second.db)
	if err != nil {
		t.Fatal(err)
	}
	archivetest.Integrity(t, db)
	db.Close()
	t.Logf("old term replicated %d runs and %d grants; the new leader holds %d runs", len(oldRuns), len(want)-1, len(newRuns))
	w.assertNoKey(first.logs.String(), second.logs.String(), back.logs.String())
}

// serveAddr is the base URL of r's --serve, from its log.
func serveAddr(t *testing.T, r *replica) string {
	t.Helper()
	re := regexp.MustCompile(`serving the archive's pages and API.*addr=(http://127\.0\.0\.1:\d+)/`)
	var base string
	waitFor(t, r.name+"'s --serve address", 30*time.Second, func() bool {
		if m := re.FindStringSubmatch(r.logs.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	return base
}

// startStandbys configures w for `ytrend run --serve` processes on Redis
// that stream to (and, standing by, follow) the replica repl, fetching the
// regions (YAML list items), and starts two of them.
func startStandbys(t *testing.T, w *world, repl, regions string) []*replica {
	t.Helper()
	w.config(fmt.Sprintf(`
credential: %s
redis: {epoch_check: 500ms}
scheduler: {leader_ttl: 2s, maintenance: "off"}
archive: {replicas: [%q], sync_interval: 200ms, follow_interval: 200ms}
serve: {rate_limit: {requests: 1000000, window: 1m}}
regions:%s
`, redistest.Prefix(t), repl, regions))
	serve := []string{"--serve", "127.0.0.1:0"}
	return []*replica{
		startReplicaArgs(t, w, "r0", filepath.Join(w.dir, "r0.db"), serve),
		startReplicaArgs(t, w, "r1", filepath.Join(w.dir, "r1.db"), serve),
	}
}

// followingPair starts two standbys (startStandbys) and waits until one
// leads, the other follows its replica, and the leader has fetched pages
// pages.
func followingPair(t *testing.T, w *world, repl, regions string, pages int64) (leader, standby *replica) {
	t.Helper()
	rs := startStandbys(t, w, repl, regions)
	leader = leaderOf(t, "one leader of two", rs...)
	standby = without(rs, leader)[0]
	waitFor(t, "the standby to follow the leader's replica", 60*time.Second, func() bool {
		return strings.Contains(standby.logs.String(), "standby: following the leader's replica")
	})
	waitFor(t, fmt.Sprintf("%d of the leader's pages", pages), 60*time.Second, func() bool { return leader.requests.Load() >= pages })
	return leader, standby
}

// grantsOf is the ids in the archive at path's quota_grants.
func grantsOf(t *testing.T, path string) []string {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return archivetest.Grants(t, db)
}
