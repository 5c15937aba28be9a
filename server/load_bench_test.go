package server_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/synth"
)

// BenchmarkServeLoad measures the search, chart and video pages under 50
// concurrent clients over real HTTP, against the cached 100k and 1M
// archives (testkit/archivetest; the first run builds them), and reports
// latency percentiles per page. Each iteration is 3000 requests, a third of
// each kind, in random order; no rate limit.
//
//	go test -run '^$' -bench 'ServeLoad/100k' -benchtime 1x -timeout 60m ./server
func BenchmarkServeLoad(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}} {
		b.Run(size.name, func(b *testing.B) {
			path := archivetest.Cached(b, size.n)
			db, err := store.Open(context.Background(), path, store.ReadOnly())
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			s, err := server.New(server.Config{}, server.Deps{Archive: db})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			reqs := workload(b, db, 3000)
			// One warm-up pass over a tenth, as a running server would be.
			run(b, srv.URL, reqs[:300], 50)
			lat := map[string][]time.Duration{}
			b.ResetTimer()
			for range b.N {
				for kind, ds := range run(b, srv.URL, reqs, 50) {
					lat[kind] = append(lat[kind], ds...)
				}
			}
			b.StopTimer()
			for _, kind := range []string{"search", "chart", "video"} {
				p50, p99 := pct(lat[kind], 0.50), pct(lat[kind], 0.99)
				b.ReportMetric(p50, kind+"-p50-ms")
				b.ReportMetric(p99, kind+"-p99-ms")
			}
		})
	}
}

type loadReq struct{ kind, path string }

// workload mixes search pages (the generator's queries, at corpus
// frequency), chart pages (every synthetic region, now and at a past date)
// and video pages (videos on the charts).
func workload(b *testing.B, db *store.DB, n int) []loadReq {
	ctx := context.Background()
	g := archivetest.Generator()
	queries := g.Queries(n / 3)
	var ids []string
	for _, r := range synth.Regions {
		c, err := db.Chart(ctx, regions.Code(r), time.Time{}, 0)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range c.Entries {
			ids = append(ids, e.VideoID)
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var out []loadReq
	for i := range n / 3 {
		out = append(out, loadReq{"search", "/search?q=" + url.QueryEscape(queries[i])})
		region := synth.Regions[rng.IntN(len(synth.Regions))]
		at := ""
		if i%2 == 1 {
			at = "?at=2025-01-0" + fmt.Sprint(1+rng.IntN(3))
		}
		out = append(out, loadReq{"chart", "/charts/" + region.String() + at})
		out = append(out, loadReq{"video", "/videos/" + ids[rng.IntN(len(ids))]})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// run sends reqs from clients goroutines, each with its own connection,
// and returns each kind's latencies. Anything but a 200 or 404 (a past
// chart before the region's first) fails the benchmark.
func run(b *testing.B, base string, reqs []loadReq, clients int) map[string][]time.Duration {
	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	next := make(chan loadReq)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			for r := range next {
				start := time.Now()
				res, err := c.Get(base + r.path)
				if err != nil {
					b.Error(err)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				d := time.Since(start)
				if res.StatusCode != 200 && res.StatusCode != 404 {
					b.Errorf("%s: %d", r.path, res.StatusCode)
				}
				mu.Lock()
				lat[r.kind] = append(lat[r.kind], d)
				mu.Unlock()
			}
		})
	}
	for _, r := range reqs {
		next <- r
	}
	close(next)
	wg.Wait()
	return lat
}

func pct(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.999999) - 1
	return float64(s[max(0, min(i, len(s)-1))]) / 1e6
}
