package store_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/synth"
)

// Benchmarks run against archives of 100k and 1M synthetic videos, built
// through SavePage exactly as ingest would (runs of four 50-video chart pages,
// 30% of each chart re-seen) and cached under $YTREND_BENCH_DIR (default
// .bench/ at the repository root), keyed by the generator, the schema and the
// term-blob format. Building 1M takes about ten minutes on two cores; later
// runs reuse the file. Plain `go test` builds nothing: only -bench does.
//
//	go test -run '^$' -bench . -benchtime 3x -timeout 60m ./store

var benchSizes = []struct {
	name string
	n    int
}{{"100k", 100_000}, {"1M", 1_000_000}}

func benchGenerator() *synth.Generator { return synth.New(synth.Config{Seed: 1}) }

// benchArchive returns the path of a cached archive of n videos, building it
// on first use (testkit/archivetest, shared with serve's load benchmark).
func benchArchive(tb testing.TB, n int) string { return archivetest.Cached(tb, n) }

func openBench(tb testing.TB, path string, opts ...store.Option) *store.DB {
	db, err := store.Open(context.Background(), path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// reportLatency reports percentiles of per-operation latencies, and makes
// ns/op the mean of one operation.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	pct := func(p float64) float64 {
		i := int(float64(len(s))*p+0.999999) - 1
		return float64(s[max(0, min(i, len(s)-1))]) / 1e6
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(s)), "ns/op")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.90), "p90-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(s[len(s)-1])/1e6, "max-ms")
}

// BenchmarkSearch runs query sets against the cached archives, LIMIT 20 with
// snippets, after one warm-up pass, and reports latency percentiles over all
// queries of all iterations, plus the archive's size per 1,000 videos.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	g := benchGenerator()
	mixed := g.Queries(200)
	var top []string
	for i := 0; i < 20; i++ {
		top = append(top, g.Word(i), g.Word(i)+" "+g.Word(i+1))
	}
	// Chinese and Japanese: whole words drawn at corpus frequency, and
	// two-character fragments of them (found through grams).
	var cjk []string
	for _, q := range g.Queries(4000) {
		for _, w := range strings.Fields(q) {
			if r := []rune(w); len(r) >= 2 && unicode.In(r[0], unicode.Han, unicode.Hiragana, unicode.Katakana) && len(cjk) < 100 {
				cjk = append(cjk, w)
				if len(r) >= 3 {
					cjk = append(cjk, string(r[1:3]))
				}
			}
		}
	}
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			path := benchArchive(b, size.n)
			probe := &search.WalkProbe{}
			db := openBench(b, path, store.WithSearch(search.WithWalkProbe(probe)))
			var newest time.Time
			if err := db.Reader().QueryRowContext(ctx, `SELECT max(last_seen) FROM video_stats`).Scan(new(int64)); err != nil {
				b.Fatal(err)
			}
			var us int64
			db.Reader().QueryRowContext(ctx, `SELECT max(last_seen) FROM video_stats`).Scan(&us)
			newest = time.UnixMicro(us)
			var channel string
			db.Reader().QueryRowContext(ctx, `SELECT title FROM channels ORDER BY id LIMIT 1`).Scan(&channel)

			sets := []struct {
				name    string
				queries []string
				mod     func(*store.Query)
			}{
				{"mixed", mixed, nil},
				{"topwords", top, nil},
				{"cjk", cjk, nil},
				{"region-DE", mixed[:100], func(q *store.Query) { q.Regions = []regions.Code{"DE"} }},
				{"since-24h", mixed[:100], func(q *store.Query) { q.Since = newest.Add(-24 * time.Hour) }},
				{"channel", mixed[:100], func(q *store.Query) { q.Channel = channel }},
				{"sort-views", mixed[:100], func(q *store.Query) { q.Sort = store.SortViews }},
			}
			for _, set := range sets {
				b.Run(set.name, func(b *testing.B) {
					run := func() []time.Duration {
						lat := make([]time.Duration, 0, len(set.queries))
						for _, text := range set.queries {
							q := store.Query{Text: text, Limit: 20}
							if set.mod != nil {
								set.mod(&q)
							}
							t0 := time.Now()
							if _, err := db.Search(ctx, q); err != nil {
								b.Fatalf("%q: %v", text, err)
							}
							lat = append(lat, time.Since(t0))
						}
						return lat
					}
					run() // warm the page cache
					var lat []time.Duration
					var ranked, walks int
					probe.Walked = func(r, _ int) { ranked, walks = ranked+r, walks+1 }
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						lat = append(lat, run()...)
					}
					b.StopTimer()
					probe.Walked = nil
					reportLatency(b, lat)
					// How often the search walked, and how many blocks
					// of 1,024 ids a walk ranked.
					b.ReportMetric(100*float64(walks)/float64(len(lat)), "walked-%")
					if walks > 0 {
						b.ReportMetric(float64(ranked)/float64(walks), "blocks/walk")
					}
				})
			}
			c, err := db.Counts(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("size", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
				}
				b.ReportMetric(float64(c.Bytes)/1024/(float64(c.Videos)/1000), "KB/1k-videos")
				b.ReportMetric(float64(c.Bytes)/(1<<20), "MB")
				b.ReportMetric(0, "ns/op")
			})
			logTableSizes(b, db, c.Videos)
		})
	}
}

// logTableSizes logs how the file divides between tables and indexes.
// BenchmarkIndexSize compares the archive with grams of every column (what
// ytrend indexes) against grams of titles alone (what it indexed before), on
// the same synthetic corpus: 8% Japanese and 4% Chinese videos whose
// descriptions and tags are written without spaces.
//
//	go test -run '^$' -bench '^BenchmarkIndexSize$' -benchtime 1x ./store
func BenchmarkIndexSize(b *testing.B) {
	for _, size := range benchSizes {
		for _, v := range []struct {
			name      string
			titleOnly bool
		}{{"title-grams", true}, {"all-grams", false}} {
			b.Run(size.name+"/"+v.name, func(b *testing.B) {
				path := benchArchive(b, size.n)
				if v.titleOnly {
					path = copyArchive(b, path)
				}
				db := openBench(b, path)
				if v.titleOnly {
					// The index as it was: grams of titles alone, merged
					// into one segment as a fresh build's would be.
					ctx := context.Background()
					if err := store.Degram(ctx, db); err != nil {
						b.Fatal(err)
					}
					if err := db.Optimize(ctx); err != nil {
						b.Fatal(err)
					}
				}
				c, err := db.Counts(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				var fts int64
				if err := db.Reader().QueryRow(`SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'video_fts%'`).Scan(&fts); err != nil {
					b.Fatal(err)
				}
				for i := 0; i < b.N; i++ {
				}
				k := float64(c.Videos) / 1000
				b.ReportMetric(float64(c.Bytes)/1024/k, "KB/1k-videos")
				b.ReportMetric(float64(fts)/1024/k, "index-KB/1k-videos")
				b.ReportMetric(0, "ns/op")
				logTableSizes(b, db, c.Videos)
			})
		}
	}
}

func logTableSizes(b *testing.B, db *store.DB, videos int64) {
	rows, err := db.Reader().Query(`SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		b.Logf("no dbstat: %v", err)
		return
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var name string
		var size int64
		rows.Scan(&name, &size)
		if size*1000/(videos*1024) >= 10 { // at least 10 B per video
			parts = append(parts, fmt.Sprintf("%s %.0f", name, float64(size)/1024/(float64(videos)/1000)))
		}
	}
	b.Logf("KB per 1k videos: %s", strings.Join(parts, ", "))
}

// copyArchive copies a cached archive so a benchmark can write to it.
func copyArchive(tb testing.TB, path string) string {
	dst := filepath.Join(tb.TempDir(), "copy.db")
	in, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// BenchmarkRankingQuality checks the default search against --exhaustive on
// the 200 mixed queries: the share of queries whose top 20 is identical
// (same videos, same order, same scores) must be 100; overlap is the mean
// share of the exhaustive top 20 the default returns. Exhaustive ranking of
// a common word takes a second or two at 1M, so this takes minutes.
func BenchmarkRankingQuality(b *testing.B) {
	ctx := context.Background()
	queries := benchGenerator().Queries(200)
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			db := openBench(b, benchArchive(b, size.n))
			for b.Loop() {
				var sum float64
				var identical int
				for _, text := range queries {
					got, err := db.Search(ctx, store.Query{Text: text, Limit: 20})
					if err != nil {
						b.Fatal(err)
					}
					exact, err := db.Search(ctx, store.Query{Text: text, Limit: 20, Exhaustive: true})
					if err != nil {
						b.Fatal(err)
					}
					if reflect.DeepEqual(got, exact) {
						identical++
					} else {
						b.Logf("%q differs:\n  default    %v\n  exhaustive %v", text, hitIDs(got), hitIDs(exact))
					}
					if len(exact) == 0 {
						sum++
						continue
					}
					in := map[string]bool{}
					for _, h := range got {
						in[h.VideoID] = true
					}
					same := 0
					for _, h := range exact {
						if in[h.VideoID] {
							same++
						}
					}
					sum += float64(same) / float64(len(exact))
				}
				b.ReportMetric(100*sum/float64(len(queries)), "top20-overlap-%")
				b.ReportMetric(100*float64(identical)/float64(len(queries)), "identical-%")
				b.ReportMetric(0, "ns/op")
			}
		})
	}
}

func hitIDs(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.VideoID
	}
	return out
}

// BenchmarkSavePage stores 50-video chart pages into a copy of each archive:
// "new" pages of never-seen videos, and "reseen" pages of videos already
// stored whose text is unchanged (statistics grown), as hourly re-fetches are.
func BenchmarkSavePage(b *testing.B) {
	ctx := context.Background()
	g := benchGenerator()
	for _, size := range benchSizes {
		for _, kind := range []string{"new", "reseen"} {
			b.Run(size.name+"/"+kind, func(b *testing.B) {
				db := openBench(b, copyArchive(b, benchArchive(b, size.n)))
				start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
				run, err := db.StartRun(ctx, "US", store.TriggerCLI, start)
				if err != nil {
					b.Fatal(err)
				}
				// Re-seen pages re-fetch what already trended in the region
				// (the hourly re-fetch): the archive's newest US videos, as
				// stored, with grown view counts. Each page is a different 50.
				var usVideos []store.Video
				if kind == "reseen" {
					rows, err := db.Reader().QueryContext(ctx, `SELECT v.video_id FROM video_regions r JOIN videos v ON v.id = r.video
						WHERE r.region = 'US' ORDER BY r.video DESC LIMIT 5000`)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
						var id string
						rows.Scan(&id)
						v, _, err := db.Video(ctx, id)
						if err != nil {
							b.Fatal(err)
						}
						usVideos = append(usVideos, v)
					}
					rows.Close()
				}
				page := func(i int) store.Page {
					vs := make([]store.Video, 50)
					for j := range vs {
						if kind == "new" {
							vs[j] = g.Video(size.n + 10_000_000 + i*50 + j)
						} else {
							v := usVideos[(i*50+j)%len(usVideos)]
							if v.Views != nil {
								v.Views = views(*v.Views + int64(i+1))
							}
							vs[j] = v
						}
					}
					return store.Page{RunID: run, Region: "US", FetchedAt: start.Add(time.Duration(i) * time.Second),
						Kind: store.PageChart, FirstRank: 1 + 50*i, Videos: vs}
				}
				// Warm up with a few pages in a run of their own; prepare the
				// measured pages outside the timing.
				warm, err := db.StartRun(ctx, "US", store.TriggerCLI, start)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < 3; i++ {
					p := page(1_000_000 + i)
					p.RunID, p.FirstRank = warm, 1+50*i
					if _, err := db.SavePage(ctx, p); err != nil {
						b.Fatal(err)
					}
				}
				pages := make([]store.Page, b.N)
				for i := range pages {
					pages[i] = page(i)
				}
				lat := make([]time.Duration, 0, b.N)
				var res store.PageResult
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					r, err := db.SavePage(ctx, pages[i])
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					res.New += r.New
					res.Unchanged += r.Unchanged
					res.Updated += r.Updated
				}
				b.StopTimer()
				if kind == "new" && res.New != 50*b.N || kind == "reseen" && res.Unchanged != 50*b.N {
					b.Fatalf("%s pages stored %+v over %d pages", kind, res, b.N)
				}
				reportLatency(b, lat)
				var sum time.Duration
				for _, d := range lat {
					sum += d
				}
				b.ReportMetric(float64(50*b.N)/sum.Seconds(), "videos/s")
			})
		}
	}
}
