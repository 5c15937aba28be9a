package main

// Red-team tests of the archive's replication (issue 20): real `ytrend run`
// processes on one Redis, a file replica, and faults a user meets.

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// TestTakeoverRefusesADamagedStandbyCopy damages a standby's followed copy
// (<archive>.standby) while the standby is stopped (a torn file after a
// disk fault, bad sectors), restarts it, and SIGKILLs the leader. The
// standby resumes following from the copy's recorded position and, on
// takeover, must not adopt a copy that is not a sound database: the new
// leader's archive must pass SQLite's and FTS5's checks and hold every run
// the old term replicated (restoring the term instead is fine).
func TestTakeoverRefusesADamagedStandbyCopy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"truncated", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"overwritten pages", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			junk := []byte(strings.Repeat("red5", 4*4096/4))
			if _, err := f.WriteAt(junk, 3*4096); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			redistest.Client(t)
			w := newWorld(t, sim.Config{})
			w.env["REDIS_URL"] = redistest.URL()
			repl := "file://" + filepath.Join(w.dir, "replica")
			first, second := followingPair(t, w, repl, `
  - {code: US, cron: "@every 2s", pages: 2}
  - {code: GB, cron: "@every 2s", pages: 2}`, 6)

			// A clean stop keeps the copy and its position; damage the copy.
			second.cmd.Process.Signal(syscall.SIGTERM)
			exitCode(t, second.cmd, 60*time.Second)
			tc.damage(t, second.db+".standby")

			back := startReplicaArgs(t, w, "back", second.db, []string{"--serve", "127.0.0.1:0"})
			waitFor(t, "the restarted standby to follow", 60*time.Second, func() bool {
				return strings.Contains(back.logs.String(), "standby: following the leader's replica")
			})
			from := first.requests.Load()
			waitFor(t, "two more of the leader's pages", 60*time.Second, func() bool { return first.requests.Load() >= from+2 })

			first.cmd.Process.Kill()
			first.cmd.Wait()
			waitFor(t, "the standby's takeover and stream", 60*time.Second, func() bool {
				l := back.logs.String()
				return strings.Contains(l, "takeover: adopted the previous term") && strings.Contains(l, "replication: streaming the archive")
			})
			back.cmd.Process.Signal(syscall.SIGTERM)
			exitCode(t, back.cmd, 60*time.Second)

			_, oldRuns, _ := oldTermRuns(t, w, repl)
			runsKept(t, oldRuns, runsOf(t, back.db), false) // runsOf: SQLite's and FTS5's checks first
		})
	}
}

// TestTakeoverKeepsTheTermUpToADamagedTail: the standby is frozen, the
// leader ships four more transactions and is SIGKILLed, and the newest LTX
// file of its term is torn (half its bytes: a crash of the disk or the
// object store under the replica). The woken standby takes over. Its copy
// holds everything but the last few transactions, and the replica holds
// every one but the torn one intact: the new leader must keep the old
// term's runs up to the damage (from its copy, or a restore to the last
// readable transaction), not drop the whole previous term and fetch on
// from an archive without history.
func TestTakeoverKeepsTheTermUpToADamagedTail(t *testing.T) {
	t.Parallel()
	redistest.Client(t)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = redistest.URL()
	dir := filepath.Join(w.dir, "replica")
	first, second := followingPair(t, w, "file://"+dir, `
  - {code: US, cron: "@every 2s", pages: 2}
  - {code: GB, cron: "@every 2s", pages: 2}`, 12)

	l0 := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "term-*", "ltx", "0", "*.ltx"))
		sort.Strings(m)
		return m
	}
	second.cmd.Process.Signal(syscall.SIGSTOP)
	n := len(l0())
	waitFor(t, "four more transactions in the replica", 60*time.Second, func() bool { return len(l0()) >= n+4 })
	first.cmd.Process.Kill()
	first.cmd.Wait()
	files := l0()
	newest := files[len(files)-1]
	fi, err := os.Stat(newest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(newest, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	second.cmd.Process.Signal(syscall.SIGCONT)
	waitFor(t, "the standby's takeover and stream", 90*time.Second, func() bool {
		l := second.logs.String()
		return strings.Contains(l, "standby: --serve answers from the live archive") && strings.Contains(l, "replication: streaming the archive")
	})
	second.cmd.Process.Signal(syscall.SIGTERM)
	exitCode(t, second.cmd, 60*time.Second)

	// What the old term holds up to the damage: the old leader's archive,
	// less its runs that started in the torn transaction or after it.
	oldRuns := runsOf(t, first.db)
	newRuns := runsOf(t, second.db)
	missing := 0
	for id, o := range oldRuns {
		if n, ok := newRuns[id]; !ok || n.Region != o.Region || !n.StartedAt.Equal(o.StartedAt) {
			missing++
		}
	}
	// Four transactions at most carry a run's start each (a run is
	// several: its start, its pages, its end); allow them.
	if missing > 4 {
		t.Errorf("the new leader lacks %d of the old leader's %d runs (it holds %d); a torn last LTX cost the whole previous term", missing, len(oldRuns), len(newRuns))
	}
}
