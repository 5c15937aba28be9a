package replication_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
)

// BenchmarkReplication measures, on the archive benchArchive names
// (YTREND_BENCH_ARCHIVE, or a cached one of YTREND_BENCH_REPLICATION
// videos, default 50,000): SavePage's p50 and
// p99 for pages of 50 new videos without a replica and with a file replica
// at the default sync interval (1s), the replication lag of each page (its
// commit to the replica holding it), the time to restore the archive from
// the file replica, and the replica's size against the archive's. SavePage
// is measured once the term's first compaction is done (steady state), or
// with YTREND_BENCH_TERM_START=1 in the term's first minute. Run once:
//
//	go test -run '^$' -bench '^BenchmarkReplication$' -benchtime 1x -timeout 60m ./replication
func BenchmarkReplication(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	base := benchArchive(b)
	const pages = 200
	for _, mode := range []string{"none", "file"} {
		path := filepath.Join(dir, mode+".db")
		copyFile(b, base, path)
		db, err := store.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		var s *replication.Stream
		url := "file://" + filepath.Join(dir, "replica-"+mode)
		if mode == "file" {
			s, err = replication.Start(ctx, path, []string{url}, 1, replication.Options{
				SyncInterval: time.Second, SnapshotInterval: 6 * time.Hour, Retention: 72 * time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			// A term starts with a full snapshot (L0), and Litestream's
			// first L1 compaction (30 s later) copies it again. Measure
			// the steady state, after it, unless asked for the term's
			// first minute.
			if os.Getenv("YTREND_BENCH_TERM_START") == "" {
				t0 := time.Now()
				waitL1(b, strings.TrimPrefix(url, "file://"))
				b.Logf("the term's first compaction took %.0fs", time.Since(t0).Seconds())
			}
		}
		run, err := db.StartRun(ctx, "US", store.TriggerCLI, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		var took, lags []time.Duration
		for i := 0; i < pages; i++ {
			vs := make([]store.Video, 50)
			for j := range vs {
				vs[j] = gen.Video(10_000_000 + i*50 + j)
			}
			t0 := time.Now()
			if _, err := db.SavePage(ctx, store.Page{RunID: run, Region: "US", FetchedAt: t0, Kind: store.PageChart,
				FirstRank: 1 + 50*i, Videos: vs}); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(t0))
			// Every fifth page, wait for the replica to hold it: the lag
			// of a page stored at a random point of the sync interval.
			if s != nil && i%5 == 0 {
				before := s.Status()[0].LocalPosition
				for {
					st := s.Status()[0]
					if st.LocalPosition != before && st.Position == st.LocalPosition {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				lags = append(lags, time.Since(t0))
			}
		}
		b.ReportMetric(pct(took, 50), "savepage-p50-ms/"+mode)
		b.ReportMetric(pct(took, 99), "savepage-p99-ms/"+mode)
		if s != nil {
			b.ReportMetric(pct(lags, 50), "lag-p50-ms")
			b.ReportMetric(pct(lags, 99), "lag-p99-ms")
			if err := s.Stop(ctx); err != nil {
				b.Fatal(err)
			}
			db.Writer().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
			fi, _ := os.Stat(path)
			b.ReportMetric(float64(fi.Size())/1e6, "archive-MB")
			b.ReportMetric(float64(dirSize(b, strings.TrimPrefix(url, "file://")))/1e6, "replica-MB")
			out := filepath.Join(dir, "restored.db")
			t0 := time.Now()
			if _, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{}); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(time.Since(t0).Seconds(), "restore-s")
			// The restore's share that is SQLite's quick_check of the copy.
			rdb, err := store.Open(ctx, out)
			if err != nil {
				b.Fatal(err)
			}
			t0 = time.Now()
			var res string
			if err := rdb.Reader().QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res); err != nil || res != "ok" {
				b.Fatalf("quick_check: %q %v", res, err)
			}
			b.ReportMetric(time.Since(t0).Seconds(), "quick-check-s")
			rdb.Close()
		}
		db.Close()
	}
}

func pct(ds []time.Duration, p int) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return float64(s[max(0, i-1)].Microseconds()) / 1000
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	src, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		tb.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		tb.Fatal(err)
	}
}

func dirSize(tb testing.TB, dir string) int64 {
	var n int64
	for _, size := range listing(tb, dir) {
		n += size
	}
	return n
}

// waitL1 waits until the replica below dir holds a level-1 file: the
// term's snapshot compacted.
func waitL1(tb testing.TB, dir string) {
	tb.Helper()
	for {
		found := false
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(p)) == "1" && strings.HasSuffix(p, ".ltx") {
				found = true
			}
			return nil
		})
		if found {
			return
		}
		time.Sleep(time.Second)
	}
}
