package replication_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
)

// BenchmarkStandbyTakeover measures what a standby of ytrend run that
// follows the leader's replica saves at takeover, on the archive
// benchArchive names. A leader streams term 1 and stops; a standby has
// followed it into a copy. Then, for term 2:
//   - stop-ms: Follower.Stop, the copy applying everything replicated;
//   - restore-s: replication.Takeover without a copy (a standby that was
//     not following, or whose copy is not the whole term): a restore from
//     the replica, then the restored file into the standby's archive;
//   - adopt-copy-s: replication.Takeover handed the stopped copy, as the
//     daemon runs it: the checks that the copy is the whole term (the
//     replica's term index and position), then the copy into the archive.
//
// The *-cpu-s metrics are the process's CPU time (user + system) over the
// same spans: the wall times move with the machine's load.
//
// Run once:
//
//	go test -run '^$' -bench '^BenchmarkStandbyTakeover$' -benchtime 1x -timeout 60m ./replication
func BenchmarkStandbyTakeover(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	leader := filepath.Join(dir, "leader.db")
	copyFile(b, benchArchive(b), leader)
	url := "file://" + filepath.Join(dir, "replica")
	opts := replication.Options{SyncInterval: time.Second, SnapshotInterval: 6 * time.Hour, Retention: 72 * time.Hour}
	s, err := replication.Start(ctx, leader, []string{url}, 1, opts)
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(ctx, leader)
	if err != nil {
		b.Fatal(err)
	}
	f, err := replication.Follow(ctx, filepath.Join(dir, "standby.db.standby"), []string{url}, replication.FollowOptions{})
	if err != nil {
		b.Fatal(err)
	}
	// The leader goes on writing while the standby follows.
	run := saveRun(b, db, 20)
	if err := s.Stop(ctx); err != nil { // the term ends: its last sync
		b.Fatal(err)
	}
	db.Close()

	standby := func(name string) *store.DB {
		db, err := store.Open(ctx, filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}
	b.ResetTimer()
	t0 := time.Now()
	pos, err := f.Stop(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(time.Since(t0).Microseconds())/1000, "stop-ms")

	a := standby("a.db")
	t0, c0 := time.Now(), cpuTime(b)
	r, ok, err := replication.Takeover(ctx, []string{url}, 2, a, replication.TakeoverOptions{})
	if err != nil || !ok || r.FromCopy {
		b.Fatalf("takeover: %+v %v %v", r, ok, err)
	}
	b.ReportMetric(time.Since(t0).Seconds(), "restore-s")
	b.ReportMetric((cpuTime(b) - c0).Seconds(), "restore-cpu-s")
	if r.TXID != pos.TXID {
		b.Fatalf("the takeover restored %s, the copy stopped at %s", r.TXID, pos.TXID)
	}

	c := standby("c.db")
	t0, c0 = time.Now(), cpuTime(b)
	h := replication.Handover{Path: filepath.Join(dir, "standby.db.standby"), Position: pos}
	if r, ok, err := replication.Takeover(ctx, []string{url}, 2, c, replication.TakeoverOptions{Copy: &h}); err != nil || !ok || !r.FromCopy {
		b.Fatalf("takeover from the copy: %+v %v %v", r, ok, err)
	}
	b.ReportMetric(time.Since(t0).Seconds(), "adopt-copy-s")
	b.ReportMetric((cpuTime(b) - c0).Seconds(), "adopt-copy-cpu-s")
	b.StopTimer()

	// Both hold the leader's last run, whole.
	for _, db := range []*store.DB{a, c} {
		runs, err := db.Runs(ctx, store.RunFilter{Limit: 10})
		if err != nil || len(runs) == 0 || runs[0].ID != run || runs[0].Pages != 20 {
			b.Fatalf("runs after the takeover: %+v %v; want run %d with 20 pages", runs, err, run)
		}
	}
}
