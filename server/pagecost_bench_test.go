package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
)

// BenchmarkPageCost renders one past chart page, its API answer and a video
// page in process, uncached, with gzip as browsers ask: the CPU a distinct
// request costs apart from the network.
//
// YTREND_PAGECOST_DB names another archive to read (the 1M one).
// cpu-µs/op is the process's CPU time (getrusage) per request, which the
// load of a shared machine moves less than the wall time.
//
//	go test -run '^$' -bench PageCost -cpu 1 ./server
func BenchmarkPageCost(b *testing.B) {
	var db *store.DB
	if path := os.Getenv("YTREND_PAGECOST_DB"); path != "" { // another archive (the 1M one), read-only
		var err error
		if db, err = store.Open(context.Background(), path, store.ReadOnly()); err != nil {
			b.Fatal(err)
		}
		defer db.Close()
	} else {
		db = openRO(b)
	}
	s, err := server.New(server.Config{NoCache: true}, server.Deps{Archive: db})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	c, err := db.Chart(context.Background(), "US", time.Time{}, 0)
	if err != nil {
		b.Fatal(err)
	}
	if c.PreviousFetchedAt != nil { // a past chart, with movement
		if c, err = db.Chart(context.Background(), "US", *c.PreviousFetchedAt, 0); err != nil {
			b.Fatal(err)
		}
	}
	at := "?at=" + c.FetchedAt.Format(time.RFC3339)
	id := c.Entries[0].VideoID
	for _, tc := range []struct{ name, path string }{{"chart", "/charts/US" + at}, {"chart-api", "/api/v1/charts/US" + at},
		{"video", "/videos/" + id}, {"video-api", "/api/v1/videos/" + id}} {
		p := tc.path
		b.Run(tc.name, func(b *testing.B) {
			cpu := cpuTime()
			for range b.N {
				req := httptest.NewRequest(http.MethodGet, p, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
