package replication_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// benchArchive is the archive the replication benchmarks start from: the
// file named by YTREND_BENCH_ARCHIVE (an archive built by `ytrend import`,
// say; only ever copied), or the cached archive of
// YTREND_BENCH_REPLICATION videos (default 50,000; built through SavePage
// once, see archivetest.Cached).
func benchArchive(b *testing.B) string {
	if p := os.Getenv("YTREND_BENCH_ARCHIVE"); p != "" {
		return p
	}
	n := 50_000
	if v, err := strconv.Atoi(os.Getenv("YTREND_BENCH_REPLICATION")); err == nil {
		n = v
	}
	return archivetest.Cached(b, n)
}

// BenchmarkRestore measures a restore from a file replica holding one term
// of the archive (its snapshot, then 20 pages of 50 new videos): the wall
// time of each restore, and the CPU time (user + system) the process spent
// on it, which the other work of a shared machine does not inflate.
//
//	YTREND_BENCH_ARCHIVE=/path/to/copy.db go test -run '^$' -bench '^BenchmarkRestore$' -benchtime 3x -timeout 60m ./replication
func BenchmarkRestore(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	path := filepath.Join(dir, "archive.db")
	copyFile(b, benchArchive(b), path)
	url := "file://" + filepath.Join(dir, "replica")
	s, err := replication.Start(ctx, path, []string{url}, 1, replication.Options{
		SyncInterval: time.Second, SnapshotInterval: 6 * time.Hour, Retention: 72 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	saveRun(b, db, 20)
	if err := s.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	var wall, cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(dir, "restored-"+strconv.Itoa(i)+".db")
		c0, t0 := cpuTime(b), time.Now()
		if _, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{}); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0)
		cpu += cpuTime(b) - c0
		b.StopTimer()
		os.Remove(out)
		b.StartTimer()
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "restore-s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "restore-cpu-s")
}

// saveRun stores one run of n chart pages of 50 new videos each.
func saveRun(b *testing.B, db *store.DB, n int) (run int64) {
	ctx := context.Background()
	run, err := db.StartRun(ctx, "US", store.TriggerCLI, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		vs := make([]store.Video, 50)
		for j := range vs {
			vs[j] = gen.Video(20_000_000 + i*50 + j)
		}
		if _, err := db.SavePage(ctx, store.Page{RunID: run, Region: "US", FetchedAt: time.Now(), Kind: store.PageChart,
			FirstRank: 1 + 50*i, Videos: vs}); err != nil {
			b.Fatal(err)
		}
	}
	return run
}

// cpuTime is the CPU time (user + system) the process has used so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
