package ingest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
)

// BenchmarkFetchRegion measures one whole region fetch (4 pages of 50)
// against the in-process simulator over loopback HTTP, with the embedded
// ledger and a real archive: reserve + request + decode + store, per page.
// The simulator's own work per page is part of the figure.
func BenchmarkFetchRegion(b *testing.B) {
	for _, tc := range []struct {
		name string
		seen bool // re-fetch a chart already stored: statistics-only updates
	}{{"new-videos", false}, {"re-seen", true}} {
		b.Run(tc.name, func(b *testing.B) {
			qc := quota.DefaultConfig()
			qc.Limits[0].Units = 1 << 40
			var now atomic.Int64
			start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
			now.Store(start.UnixMicro())
			clock := func() time.Time { return time.UnixMicro(now.Load()) }
			e := newEnv(b, envOpts{quota: &qc, sim: sim.Config{Now: clock}})
			fetch := func() int {
				rep := e.f.Fetch(context.Background(), ingest.Job{Region: config.Region{Code: "US", Pages: 4}, Trigger: store.TriggerCLI})
				if rep.Status != store.StatusOK || rep.Pages != 4 {
					b.Fatalf("%+v (err %v)", rep, rep.Err)
				}
				return rep.Pages
			}
			if tc.seen {
				fetch()
			}
			b.ReportAllocs()
			b.ResetTimer()
			pages := 0
			for i := 1; i <= b.N; i++ {
				if !tc.seen {
					// A chart eight days later holds none of the videos
					// before. The simulator builds that world outside the
					// timer: its cost is not ytrend's.
					b.StopTimer()
					at := start.Add(time.Duration(i) * 8 * 24 * time.Hour)
					now.Store(at.UnixMicro())
					if _, err := e.sim.Chart("US", "0", at); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				pages += fetch()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(pages), "µs/page")
		})
	}
}
