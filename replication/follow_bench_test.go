package replication_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// BenchmarkFollowLag measures what a reader of serve --follow waits for a
// page: from the leader's commit to the page being readable in the copy,
// at the default archive.sync_interval and archive.follow_interval, with a
// file replica. Each iteration waits a random fraction of a second (so that
// commits fall anywhere between the two tickers), saves one chart page and
// waits until a reader of the copy counts its videos.
//
//	go test -run '^$' -bench FollowLag -benchtime 60x ./replication/
func BenchmarkFollowLag(b *testing.B) {
	ctx := context.Background()
	db, path := archivetest.Open(b)
	url := fileURL(b)
	s, err := replication.Start(ctx, path, []string{url}, 1, replication.Options{
		SyncInterval: config.DefaultSyncInterval, SnapshotInterval: config.DefaultSnapshotInterval, Retention: config.DefaultRetention})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop(ctx)
	saveCharts(b, db, 0, 1)
	if err := s.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	f, err := replication.Follow(ctx, filepath.Join(b.TempDir(), "copy.db"), []string{url},
		replication.FollowOptions{Interval: config.DefaultFollowInterval})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := newReader(b, f)
	lags := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		time.Sleep(rand.N(config.DefaultFollowInterval))
		b.StartTimer()
		saveCharts(b, db, (i+1)*100, 1)
		committed := time.Now()
		want := (i + 2) * 50
		for {
			n, err := r.videos()
			if err != nil {
				b.Fatal(err)
			}
			if n >= want {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		lags = append(lags, time.Since(committed))
	}
	b.StopTimer()
	slices.Sort(lags)
	q := func(p float64) float64 { return lags[int(p*float64(len(lags)-1))].Seconds() }
	b.ReportMetric(q(0.5), "p50-lag-s")
	b.ReportMetric(q(0.99), "p99-lag-s")
	b.ReportMetric(lags[len(lags)-1].Seconds(), "max-lag-s")
	b.ReportMetric(0, "ns/op")
}
