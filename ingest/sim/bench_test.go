package sim

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkChartPage is the simulator's own cost of one 50-video page with
// all three parts, chart already computed: what a benchmark of a client's
// fetch against it should subtract.
func BenchmarkChartPage(b *testing.B) {
	s, err := New(Config{Keys: []string{testKey}, Quota: 1 << 40, Now: (&fakeClock{t: t0}).Now})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/youtube/v3/videos?"+chartQuery("US", 50).Encode(), nil)
	s.ServeHTTP(httptest.NewRecorder(), req) // compute the chart
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("HTTP %d", w.Code)
		}
	}
}

// BenchmarkNewChart is the cost of a chart the simulator has not computed
// yet: a new region or a new epoch.
func BenchmarkNewChart(b *testing.B) {
	s, err := New(Config{Keys: []string{testKey}, Now: (&fakeClock{t: t0}).Now})
	if err != nil {
		b.Fatal(err)
	}
	s.Chart("US", "0", t0) // generate the days
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		s.world.chart("US", "0", s.world.epoch(t0)+int64(i))
	}
}
