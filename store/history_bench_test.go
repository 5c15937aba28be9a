package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// The history benchmarks run against the same cached 100k and 1M archives
// as BenchmarkSearch (see bench_test.go):
//
//	go test -run '^$' -bench '^Benchmark(Chart|History|Export|Import)$' -benchtime 3x -timeout 120m ./store

// chartTimes returns n (region, time) pairs spread over the archive's span:
// each asks for the chart as it stood at a random moment.
func chartTimes(b *testing.B, db *store.DB, n int) ([]regions.Code, []time.Time) {
	var lo, hi int64
	if err := db.Reader().QueryRow(`SELECT min(last_page_at), max(last_page_at) FROM runs WHERE pages > 0`).Scan(&lo, &hi); err != nil {
		b.Fatal(err)
	}
	rows, err := db.Reader().Query(`SELECT DISTINCT region FROM runs`)
	if err != nil {
		b.Fatal(err)
	}
	var codes []regions.Code
	for rows.Next() {
		var r string
		rows.Scan(&r)
		codes = append(codes, regions.Code(r))
	}
	rows.Close()
	r := rand.New(rand.NewPCG(1, 2))
	rs, ts := make([]regions.Code, n), make([]time.Time, n)
	for i := range rs {
		rs[i] = codes[r.IntN(len(codes))]
		// A day in: every region has a chart by then.
		ts[i] = time.UnixMicro(lo + 86_400_000_000 + r.Int64N(hi-lo-86_400_000_000+1))
	}
	return rs, ts
}

// BenchmarkChart asks for a region's full chart (about 200 entries, with
// movement against the fetch before) at random past moments.
func BenchmarkChart(b *testing.B) {
	ctx := context.Background()
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			db := openBench(b, benchArchive(b, size.n))
			rs, ts := chartTimes(b, db, 200)
			run := func() []time.Duration {
				lat := make([]time.Duration, 0, len(rs))
				for i := range rs {
					t0 := time.Now()
					c, err := db.Chart(ctx, rs[i], ts[i], 0)
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					if len(c.Entries) == 0 || c.PreviousRunID == 0 {
						b.Fatalf("chart of %s at %v: %d entries, previous %d", rs[i], ts[i], len(c.Entries), c.PreviousRunID)
					}
				}
				return lat
			}
			run()
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lat = append(lat, run()...)
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}

// BenchmarkHistory reads the whole chart history of videos that trended,
// the most-seen among them included.
func BenchmarkHistory(b *testing.B) {
	ctx := context.Background()
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			db := openBench(b, benchArchive(b, size.n))
			var ids []string
			rows, err := db.Reader().Query(`SELECT v.video_id FROM videos v WHERE v.id % 4999 = 7 LIMIT 190`)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
				var id string
				rows.Scan(&id)
				ids = append(ids, id)
			}
			rows.Close()
			rows, err = db.Reader().Query(`SELECT v.video_id FROM video_regions r JOIN videos v ON v.id = r.video
				ORDER BY r.snapshots DESC LIMIT 10`)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
				var id string
				rows.Scan(&id)
				ids = append(ids, id)
			}
			rows.Close()
			points := 0
			run := func() []time.Duration {
				lat := make([]time.Duration, 0, len(ids))
				points = 0
				for _, id := range ids {
					t0 := time.Now()
					h, err := db.History(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					for _, r := range h.Regions {
						points += len(r.Points)
					}
				}
				return lat
			}
			run()
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lat = append(lat, run()...)
			}
			b.StopTimer()
			reportLatency(b, lat)
			b.ReportMetric(float64(points)/float64(len(ids)), "points/video")
		})
	}
}

// BenchmarkExport writes every chart position of the archive as CSV to
// nowhere, and reports rows/s and the largest heap seen while it ran (the
// export streams: that must not grow with the rows).
func BenchmarkExport(b *testing.B) {
	ctx := context.Background()
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			db := openBench(b, benchArchive(b, size.n))
			var rowsOut int64
			var maxHeap uint64
			var took, cpu time.Duration
			for i := 0; i < b.N; i++ {
				w, err := dataset.NewCSVWriter(io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				rowsOut = 0
				runtime.GC()
				cpu0 := cpuTime()
				t0 := time.Now()
				err = db.Snapshots(ctx, store.SnapshotFilter{}, func(s *store.Snapshot) error {
					rowsOut++
					if rowsOut%100_000 == 0 {
						var m runtime.MemStats
						runtime.ReadMemStats(&m)
						maxHeap = max(maxHeap, m.HeapInuse)
					}
					return w.Write(s)
				})
				if err == nil {
					err = w.Flush()
				}
				if err != nil {
					b.Fatal(err)
				}
				took += time.Since(t0)
				cpu += cpuTime() - cpu0
			}
			c, _ := db.Counts(ctx)
			if rowsOut != c.Snapshots {
				b.Fatalf("exported %d rows of %d snapshots", rowsOut, c.Snapshots)
			}
			b.ReportMetric(float64(rowsOut), "rows")
			b.ReportMetric(float64(rowsOut)*float64(b.N)/took.Seconds(), "rows/s")
			b.ReportMetric(float64(rowsOut)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
			b.ReportMetric(float64(maxHeap)/(1<<20), "max-heap-MB")
		})
	}
}

// importCSV is a public 2020+ dataset of days of 200 rows: each day keeps
// 80% of the day before (grown counts) and adds 20% new videos, as the real
// files do; the videos are new to the archive.
func importCSV(days, first int, start time.Time) []byte {
	g := benchGenerator()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(dataset.Columns2020)
	r := rand.New(rand.NewPCG(3, 4))
	var today []int
	next := first
	for d := 0; d < days; d++ {
		var keep []int
		for _, n := range today {
			if r.Float64() < 0.8 {
				keep = append(keep, n)
			}
		}
		for len(keep) < 200 {
			keep = append(keep, next)
			next++
		}
		r.Shuffle(len(keep), func(i, j int) { keep[i], keep[j] = keep[j], keep[i] })
		today = keep
		for _, n := range today {
			v := g.Video(n)
			views := *v.Views + int64(d)*1000
			likes, comments := "", ""
			if v.Likes != nil {
				likes = strconv.FormatInt(*v.Likes, 10)
			}
			if v.Comments != nil {
				comments = strconv.FormatInt(*v.Comments, 10)
			}
			w.Write([]string{v.ID, v.Title, v.PublishedAt.Format(time.RFC3339), v.ChannelID, v.ChannelTitle, v.CategoryID,
				start.AddDate(0, 0, d).Format(time.RFC3339), strings.Join(v.Tags, "|"), strconv.FormatInt(views, 10), likes, "",
				comments, v.ThumbnailURL, pyBool(v.Comments == nil), pyBool(v.Likes == nil), v.Description})
		}
	}
	w.Flush()
	return buf.Bytes()
}

// BenchmarkImport reads a 2020+ dataset file and imports it into a copy of
// each archive as ytrend import does (batches of store.ImportBatchRows rows):
// rows/s end to end (CSV parsing included).
func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	const days = 250 // 50,000 rows
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			db := openBench(b, copyArchive(b, benchArchive(b, size.n)))
			var rows, charts int
			var took, cpu time.Duration
			for i := 0; i < b.N; i++ {
				file := importCSV(days, size.n+20_000_000+i*days*200, time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*days))
				cpu0 := cpuTime()
				t0 := time.Now()
				r, err := dataset.NewReader(bytes.NewReader(file), "US_youtube_trending_data.csv", "US")
				if err != nil {
					b.Fatal(err)
				}
				// As ytrend import does: charts in batches of about
				// ImportBatchRows rows, one transaction each.
				var batch []store.ImportedChart
				n := 0
				flush := func() {
					res, err := db.ImportCharts(ctx, batch)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if !r.Skipped {
							charts++
						}
					}
					batch, n = batch[:0], 0
				}
				for {
					c, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					batch = append(batch, c)
					for _, p := range c.Pages {
						n += len(p.Videos)
					}
					if n >= store.ImportBatchRows {
						flush()
					}
				}
				if len(batch) > 0 {
					flush()
				}
				took += time.Since(t0)
				cpu += cpuTime() - cpu0
				rep := r.Report()
				if rep.Skipped != 0 || rep.Rows != days*200 {
					b.Fatalf("report %+v", rep)
				}
				rows += rep.Rows
			}
			if charts != days*b.N {
				b.Fatalf("%d charts imported, want %d", charts, days*b.N)
			}
			b.ReportMetric(float64(rows)/took.Seconds(), "rows/s")
			b.ReportMetric(took.Seconds()/float64(b.N), "s/file")
			// On a shared machine the wall clock includes waiting for a
			// core; the process's CPU time does not.
			b.ReportMetric(float64(rows)/cpu.Seconds(), "rows/cpu-s")
		})
	}
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
