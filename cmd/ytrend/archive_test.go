package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/internal/archivetest"
	"github.com/ytrend/ytrend/internal/redistest"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
)

// TestTakeoverKeepsReplicatedHistory runs two `ytrend run` replicas on one
// Redis, each with its own archive and one file replica. The leader is
// SIGKILLed in the middle of its fetches; the new leader adopts the old
// term's replica before it fetches, so its archive holds every run and
// video the old leader had replicated, and passes SQLite's and FTS5's
// checks. `archive status` and `archive restore` read the same replica.
func TestTakeoverKeepsReplicatedHistory(t *testing.T) {
	t.Parallel()
	redistest.Client(t)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = redistest.URL()
	repl := "file://" + filepath.Join(w.dir, "replica")
	w.config(fmt.Sprintf(`
credential: %s
redis: {epoch_check: 500ms}
scheduler: {leader_ttl: 2s, maintenance: "off"}
archive: {replicas: [%q], sync_interval: 200ms}
regions:
  - {code: US, cron: "@every 1s", pages: 2}
`, redistest.Prefix(t), repl))

	rs := []*replica{
		startReplica(t, w, "r0", filepath.Join(w.dir, "r0.db")),
		startReplica(t, w, "r1", filepath.Join(w.dir, "r1.db")),
	}
	first := leaderOf(t, "one leader of two", rs...)
	second := without(rs, first)[0]
	waitFor(t, "the leader's replication", 30*time.Second, func() bool {
		return strings.Contains(first.logs.String(), "replicating the archive for this term")
	})
	waitFor(t, "six of the leader's pages", 60*time.Second, func() bool { return first.requests.Load() >= 6 })
	first.cmd.Process.Kill() // in the middle of its fetches: one every second
	first.cmd.Wait()

	waitFor(t, "the new leader's takeover", 60*time.Second, func() bool {
		return strings.Contains(second.logs.String(), "takeover: adopted the previous term")
	})
	waitFor(t, "the new leader's fetch", 60*time.Second, func() bool { return second.requests.Load() >= 2 })

	// What the old leader had replicated: its term, the newest but one.
	ctx := context.Background()
	terms, err := replication.Terms(ctx, repl)
	if err != nil || len(terms) != 2 {
		t.Fatalf("terms %v, %v; want the two leaders'", terms, err)
	}
	old := filepath.Join(w.dir, "old-term.db")
	if _, err := replication.Restore(ctx, []string{repl}, old, replication.RestoreOptions{Before: terms[0].Token}); err != nil {
		t.Fatal(err)
	}
	second.cmd.Process.Signal(syscall.SIGTERM)
	exitCode(t, second.cmd, 30*time.Second)

	oldRuns, oldVideos := archiveRows(t, old)
	newRuns, newVideos := archiveRows(t, second.db)
	if len(oldRuns) == 0 || oldVideos == 0 {
		t.Fatalf("the old term's replica holds %d runs and %d videos", len(oldRuns), oldVideos)
	}
	for id := range oldRuns {
		if !newRuns[id] {
			t.Errorf("run %d of the old leader, replicated, is missing from the new leader's archive", id)
		}
	}
	if newVideos < oldVideos {
		t.Errorf("the new leader's archive holds %d videos, the old term replicated %d", newVideos, oldVideos)
	}
	t.Logf("old term replicated %d runs, %d videos; new leader holds %d runs, %d videos", len(oldRuns), oldVideos, len(newRuns), newVideos)

	// The CLI: status names the newest term, restore writes a new file and
	// refuses an existing one.
	w.env["YTREND_DB"] = second.db
	res := w.mustRun("archive", "status", "--json")
	var sts []replication.Status
	if err := json.Unmarshal([]byte(res.stdout), &sts); err != nil || len(sts) != 1 {
		t.Fatalf("archive status --json: %v %q", err, res.stdout)
	}
	if sts[0].Generation != terms[0].Generation() || sts[0].LastError != "" || sts[0].Position == "" {
		t.Errorf("archive status: %+v, want generation %s and no error", sts[0], terms[0].Generation())
	}
	out := filepath.Join(w.dir, "restored.db")
	w.mustRun("archive", "restore", "--out", out)
	if runs, videos := archiveRows(t, out); len(runs) != len(newRuns) || videos != newVideos {
		t.Errorf("archive restore: %d runs, %d videos; the leader stopped with %d, %d", len(runs), videos, len(newRuns), newVideos)
	}
	if r := w.run("archive", "restore", "--out", out); r.code == 0 || !strings.Contains(r.stderr, "exists") {
		t.Errorf("restore over an archive: exit %d %q", r.code, r.stderr)
	}
}

// archiveRows opens the archive at path, runs SQLite's and FTS5's checks,
// and returns its run ids and its number of videos.
func archiveRows(t *testing.T, path string) (map[int64]bool, int) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	archivetest.Integrity(t, db)
	runs := map[int64]bool{}
	rows, err := db.Reader().QueryContext(ctx, `SELECT id FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		runs[id] = true
	}
	rows.Close()
	var videos int
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM videos`).Scan(&videos); err != nil {
		t.Fatal(err)
	}
	return runs, videos
}
