package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/redistest"
	"github.com/ytrend/ytrend/view"
)

// TestTakeoverKeepsReplicatedHistory runs two `ytrend run` processes on one
// Redis, each with its own archive, streaming to one file replica, and
// fetching two regions from the simulated YouTube every second.
//
//  1. The leader is SIGKILLed in the middle of its fetches. The new leader
//     adopts the old term's replica before it fetches: its archive holds
//     every run and every chart the old one had replicated (restored from
//     the old term: the replicated position), and passes SQLite's and
//     FTS5's checks.
//  2. The killed one comes back as a standby; the leader is frozen
//     (SIGSTOP) past its lease, the standby takes over, and the frozen one
//     is woken (SIGCONT): its term's replica path does not change after
//     that, and it writes no other (each term has its own path).
//  3. `archive restore --at` a time between two fetches gives the charts as
//     they stood then; `archive status --json` names the newest term;
//     `archive restore` refuses to overwrite an archive.
func TestTakeoverKeepsReplicatedHistory(t *testing.T) {
	t.Parallel()
	redistest.Client(t)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = redistest.URL()
	dir := filepath.Join(w.dir, "replica")
	repl := "file://" + dir
	w.config(fmt.Sprintf(`
credential: %s
redis: {epoch_check: 500ms}
scheduler: {leader_ttl: 2s, maintenance: "off"}
archive: {replicas: [%q], sync_interval: 200ms}
regions:
  - {code: US, cron: "@every 1s", pages: 2}
  - {code: GB, cron: "@every 1s", pages: 2}
`, redistest.Prefix(t), repl))
	ctx := context.Background()
	codes := []regions.Code{"US", "GB"}

	dbs := map[string]string{"r0": filepath.Join(w.dir, "r0.db"), "r1": filepath.Join(w.dir, "r1.db")}
	rs := []*replica{startReplica(t, w, "r0", dbs["r0"]), startReplica(t, w, "r1", dbs["r1"])}
	first := leaderOf(t, "one leader of two", rs...)
	second := without(rs, first)[0]
	waitFor(t, "the leader's stream", 60*time.Second, func() bool {
		return strings.Contains(first.logs.String(), "replication: streaming the archive for this term")
	})
	waitFor(t, "ten of the leader's pages", 60*time.Second, func() bool { return first.requests.Load() >= 10 })

	// 1. kill -9 in the middle of the fetches (a page every half second).
	first.cmd.Process.Kill()
	first.cmd.Wait()
	waitFor(t, "the new leader's takeover, then its stream", 60*time.Second, func() bool {
		l := second.logs.String()
		return strings.Contains(l, "takeover: adopted the previous term") && strings.Contains(l, "replication: streaming the archive")
	})
	// What the old leader had replicated: its term, restored.
	old, oldRuns, terms := oldTermRuns(t, w, repl)
	if len(oldRuns) < 2 {
		t.Fatalf("the old term replicated %d runs", len(oldRuns))
	}
	waitFor(t, "the new leader's fetches", 60*time.Second, func() bool { return second.requests.Load() >= 8 })
	// Another process writes the leader's archive: Litestream ships its
	// WAL too (checked below: the run reaches the next leader).
	w.env["YTREND_DB"] = second.db
	w.mustRun("fetch", "GB")
	probe := filepath.Join(w.dir, "probe.db")
	waitFor(t, "the fetch's run in the leader's replica", 60*time.Second, func() bool {
		os.Remove(probe)
		if _, err := replication.Restore(ctx, []string{repl}, probe, replication.RestoreOptions{}); err != nil {
			return false
		}
		for _, r := range runsOf(t, probe) {
			if r.Trigger == store.TriggerCLI {
				return true
			}
		}
		return false
	})

	// 2. The killed one returns as a standby; the leader freezes past its
	// lease, the standby takes over, the frozen one wakes.
	back := startReplica(t, w, "back", first.db)
	waitFor(t, "the returning one to stand by", 30*time.Second, func() bool { return back.leader(t) == 0 })
	second.cmd.Process.Signal(syscall.SIGSTOP)
	frozenAt := time.Now()
	waitFor(t, "the standby's takeover", 60*time.Second, func() bool {
		return strings.Contains(back.logs.String(), "takeover: adopted the previous term")
	})
	termDir := filepath.Join(dir, terms[0].Generation()) // the frozen leader's
	before := listFiles(t, termDir)
	second.cmd.Process.Signal(syscall.SIGCONT)
	waitFor(t, "the woken leader's stream to stop", 60*time.Second, func() bool {
		return strings.Contains(second.logs.String(), "replication: stopped streaming")
	})
	waitFor(t, "the new leader's fetches", 60*time.Second, func() bool { return back.requests.Load() >= 4 })
	// Only a write in flight when it froze may complete (Litestream's file
	// client writes name.tmp, then renames it): it began while the term
	// lasted. Nothing begins after.
	after := listFiles(t, termDir)
	for p, n := range after {
		if m, ok := before[p]; (!ok || m != n) && !strings.HasSuffix(p, ".tmp") {
			if _, inFlight := before[p+".tmp"]; !inFlight {
				t.Errorf("the deposed leader wrote %s (%d bytes, %d before) after it was woken", p, n, m)
			}
		}
	}
	if ts, err := replication.Terms(ctx, repl); err != nil || len(ts) != 3 {
		t.Errorf("terms after the second takeover: %v, %v; want three", ts, err)
	}

	// The new leaders stop cleanly; the dead one's archive is the
	// returning one's. The standby first: stopped second, it took the lease
	// back's stop released, adopted back's term and fetched a tick of its
	// own into a fourth term, which the restore on start below then read
	// (runs neither back's nor the new host's).
	for _, r := range []*replica{second, back} {
		r.cmd.Process.Signal(syscall.SIGTERM)
		exitCode(t, r.cmd, 60*time.Second)
	}
	if ts, err := replication.Terms(ctx, repl); err != nil || len(ts) != 3 {
		t.Errorf("terms after the leaders stopped: %v, %v; want still three", ts, err)
	}

	// 1, checked: every run and chart the old term replicated is in the new
	// leader's archive, as it was.
	newRuns := runsOf(t, second.db)
	runsKept(t, oldRuns, newRuns, true)
	for _, code := range codes {
		w.env["YTREND_DB"] = old
		want := w.mustRun("chart", string(code), "--json", "--limit", "0").stdout
		entries := decode[[]view.ChartEntry](t, want)
		if len(entries) == 0 {
			continue // no page of this region replicated
		}
		// The old leader's newest chart, in the new archive: at its fetch
		// time (half a second later: the flag reads it to the
		// microsecond), before any fetch of the new leader (a lease later).
		w.env["YTREND_DB"] = second.db
		got := w.mustRun("chart", string(code), "--json", "--limit", "0", "--at", entries[0].FetchedAt.Add(500*time.Millisecond).Format(time.RFC3339Nano)).stdout
		if got != want {
			t.Errorf("chart %s: the new leader's archive differs from the old term's replica\nold term:\n%s\nnew leader:\n%s", code, want, got)
		}
	}
	t.Logf("old term replicated %d runs; the new leader holds %d", len(oldRuns), len(newRuns))

	// 3. Point in time: between two of the new leader's fetches, before it
	// froze.
	at, ok := between(newRuns, oldRuns, frozenAt)
	if !ok {
		t.Fatal("no two of the new leader's fetches with a gap between them")
	}
	w.env["YTREND_DB"] = back.db
	pit := filepath.Join(w.dir, "pit.db")
	w.mustRun("archive", "restore", "--at", at.Format(time.RFC3339Nano), "--out", pit)
	for _, code := range codes {
		w.env["YTREND_DB"] = back.db
		want := w.mustRun("chart", string(code), "--json", "--limit", "0", "--at", at.Format(time.RFC3339Nano)).stdout
		w.env["YTREND_DB"] = pit
		if got := w.mustRun("chart", string(code), "--json", "--limit", "0").stdout; got != want {
			t.Errorf("chart %s restored at %s:\n%s\nwant, as the archive had it then:\n%s", code, at.Format(time.RFC3339Nano), got, want)
		}
	}
	for id, r := range runsOf(t, pit) {
		if r.StartedAt.After(at) {
			t.Errorf("run %d started at %s, after the restore's time %s", id, r.StartedAt, at)
		}
	}

	// The CLI: status names the newest term, restore refuses an archive.
	w.env["YTREND_DB"] = back.db
	var sts []replication.Status
	if err := json.Unmarshal([]byte(w.mustRun("archive", "status", "--json").stdout), &sts); err != nil || len(sts) != 1 {
		t.Fatalf("archive status --json: %v %+v", err, sts)
	}
	if newest := terms[0].Token + 1; sts[0].Generation < fmt.Sprintf("term-%019d", newest) || sts[0].LastError != "" || sts[0].Position == "" {
		t.Errorf("archive status: %+v, want the third term and no error", sts[0])
	}
	if out := w.mustRun("archive", "status").stdout; !strings.Contains(out, "GENERATION") || !strings.Contains(out, sts[0].Generation) ||
		!strings.Contains(out, sts[0].Replica) {
		t.Errorf("archive status does not show the replica and its generation %s:\n%s", sts[0].Generation, out)
	}
	if r := w.run("archive", "restore"); r.code == 0 || !strings.Contains(r.stderr, "exists") {
		t.Errorf("restore over the live archive: exit %d %q", r.code, r.stderr)
	}

	// Restore-on-start: a run on a host with no archive restores the
	// replica's newest state first, then fetches.
	fresh := filepath.Join(w.dir, "fresh", "ytrend.db")
	w.env["YTREND_DB"] = fresh
	startedFresh := time.Now()
	res := w.mustRun("run", "--once")
	if !strings.Contains(res.stderr, "restore on start: restored the archive from its replica") {
		t.Errorf("run on a new host did not say it restored:\n%s", res.stderr)
	}
	restored, final := runsOf(t, fresh), runsOf(t, back.db)
	for id := range final {
		if _, ok := restored[id]; !ok {
			t.Errorf("run %d of the last leader is not in the archive restored on start", id)
		}
	}
	cli := 0
	for _, r := range final {
		if r.Trigger == store.TriggerCLI {
			cli++
		}
	}
	if cli != 1 {
		t.Errorf("the last leader holds %d runs of the fetch run beside its predecessor, want 1: its WAL was shipped", cli)
	}
	// Beside the restored runs, only its own: at least one a region, every
	// one begun after it started (a retried region may have two).
	own := 0
	for id, r := range restored {
		if _, ok := final[id]; ok {
			continue
		}
		own++
		if r.StartedAt.Before(startedFresh) {
			t.Errorf("run %d (%s, started %s) in the archive restored on start is neither the last leader's nor its own", id, r.Region, r.StartedAt)
		}
	}
	if own < len(codes) {
		t.Errorf("the new host holds %d runs of its own beside the %d restored; want at least %d", own, len(final), len(codes))
	}
	w.assertNoKey(first.logs.String(), second.logs.String(), back.logs.String(), res.stderr)
}

// between finds a time between two runs of the new leader (runs not in
// old), both finished before until, with no run in flight: half way from
// the one's end to the next one's start.
func between(runs, old map[int64]store.Run, until time.Time) (time.Time, bool) {
	var mine []store.Run
	for id, r := range runs {
		if _, ok := old[id]; !ok && !r.FinishedAt.IsZero() && r.FinishedAt.Before(until) {
			mine = append(mine, r)
		}
	}
	slices.SortFunc(mine, func(a, b store.Run) int { return a.StartedAt.Compare(b.StartedAt) })
	for i := 1; i+1 < len(mine); i++ { // not the first: its term's snapshot may still be shipping
		var latest time.Time
		for _, r := range mine[:i+1] {
			if r.FinishedAt.After(latest) {
				latest = r.FinishedAt
			}
		}
		if gap := mine[i+1].StartedAt.Sub(latest); gap > 100*time.Millisecond {
			return latest.Add(gap / 2), true
		}
	}
	return time.Time{}, false
}

// oldTermRuns restores what the replica repl held before its newest term
// (it must hold two: the old leader's and the new one's) into a file of
// the world's, and returns the file, its runs (runsOf) and the replica's
// terms, newest first.
func oldTermRuns(t *testing.T, w *world, repl string) (string, map[int64]store.Run, []replication.Term) {
	t.Helper()
	ctx := context.Background()
	terms, err := replication.Terms(ctx, repl)
	if err != nil || len(terms) != 2 {
		t.Fatalf("terms %v, %v; want the two leaders'", terms, err)
	}
	old := filepath.Join(w.dir, "old-term.db")
	if _, err := replication.Restore(ctx, []string{repl}, old, replication.RestoreOptions{Before: terms[0].Token}); err != nil {
		t.Fatal(err)
	}
	return old, runsOf(t, old), terms
}

// runsKept reports every run of the old term missing from the new
// leader's archive; with whole, also one whose region or start changed or
// that lost pages.
func runsKept(t *testing.T, old, now map[int64]store.Run, whole bool) {
	t.Helper()
	for id, r := range old {
		n, ok := now[id]
		if !ok {
			t.Errorf("run %d (%s) of the old leader, replicated, is missing from the new leader's archive", id, r.Region)
			continue
		}
		if whole && (n.Region != r.Region || n.StartedAt != r.StartedAt || n.Pages < r.Pages) {
			t.Errorf("run %d: old term %+v, new leader %+v", id, r, n)
		}
	}
}

// runsOf opens the archive at path, runs SQLite's and FTS5's checks, and
// returns its runs by id.
func runsOf(t *testing.T, path string) map[int64]store.Run {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	archivetest.Integrity(t, db)
	runs, err := db.Runs(ctx, store.RunFilter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]store.Run{}
	for _, r := range runs {
		out[r.ID] = r
	}
	return out
}

// listFiles is every file below dir with its size.
func listFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fi.Size()
		return nil
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("list %s: %d files, %v", dir, len(out), err)
	}
	return out
}
