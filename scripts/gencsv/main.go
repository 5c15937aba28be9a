// Command gencsv writes a large archive's worth of trending charts as the
// public 2020-onwards dataset's CSV files (<CC>_youtube_trending_data.csv,
// one per region), from testkit/synth's deterministic generator. The files
// are what `ytrend import` reads from Kaggle, so an archive built from them
// went through the same path a user's would: it is how the load and search
// benchmarks of BENCHMARKS.md get a 1M-video archive.
//
//	go run ./scripts/gencsv -videos 1000000 -out .bench/csv
//	ytrend --db .bench/1m.db import .bench/csv/*.csv
//
// Each region gets one chart a day (the dataset's trending_date is a day), of
// up to 200 videos in rank order.
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/testkit/synth"
)

func main() {
	videos := flag.Int("videos", 100_000, "distinct videos to generate")
	out := flag.String("out", ".bench/csv", "directory for the CSV files")
	seed := flag.Uint64("seed", 1, "generator seed")
	flag.Parse()
	if err := run(*videos, *out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gencsv:", err)
		os.Exit(1)
	}
}

type file struct {
	f  *os.File
	bw *bufio.Writer
	cw *csv.Writer
}

func run(videos int, dir string, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// One run per region per day: the generator cycles through its regions.
	g := synth.New(synth.Config{Seed: seed, Start: start, RunEvery: 24 * time.Hour / time.Duration(len(synth.Regions))})
	files := map[regions.Code]*file{}
	defer func() {
		for _, f := range files {
			f.f.Close()
		}
	}()
	rows := 0
	rec := make([]string, len(dataset.Columns2020))
	for run := range g.Runs(videos) {
		f, ok := files[run.Region]
		if !ok {
			name := filepath.Join(dir, string(run.Region)+"_youtube_trending_data.csv")
			osf, err := os.Create(name)
			if err != nil {
				return err
			}
			bw := bufio.NewWriterSize(osf, 1<<20)
			f = &file{f: osf, bw: bw, cw: csv.NewWriter(bw)}
			files[run.Region] = f
			if err := f.cw.Write(dataset.Columns2020); err != nil {
				return err
			}
		}
		// RunEvery is 24h/14 rounded down: a minute more keeps a day's last
		// run from falling a few nanoseconds into the previous day.
		day := run.At.UTC().Add(time.Minute).Truncate(24 * time.Hour).Format("2006-01-02T15:04:05Z")
		for _, p := range run.Pages {
			for _, v := range p.Videos {
				tags := "[None]"
				if len(v.Tags) > 0 {
					tags = strings.Join(v.Tags, "|")
				}
				rec[0], rec[1], rec[2] = v.ID, clip(v.Title, 100), v.PublishedAt.UTC().Format("2006-01-02T15:04:05Z")
				rec[3], rec[4], rec[5], rec[6] = v.ChannelID, v.ChannelTitle, v.CategoryID, day
				rec[7], rec[8], rec[9], rec[10], rec[11] = tags, count(v.Views), count(v.Likes), count(v.Dislikes), count(v.Comments)
				rec[12], rec[13], rec[14], rec[15] = v.ThumbnailURL, pyBool(v.Comments == nil), "False", v.Description
				if err := f.cw.Write(rec); err != nil {
					return err
				}
				rows++
			}
		}
	}
	for code, f := range files {
		f.cw.Flush()
		if err := f.cw.Error(); err != nil {
			return fmt.Errorf("%s: %w", code, err)
		}
		if err := f.bw.Flush(); err != nil {
			return err
		}
		if err := f.f.Close(); err != nil {
			return err
		}
	}
	files = nil
	fmt.Fprintf(os.Stderr, "gencsv: %d videos, %d rows in %s\n", videos, rows, dir)
	return nil
}

// clip keeps the first n characters of s: the generator's CJK titles can be
// longer than YouTube allows, and the import would cut them (and say so).
func clip(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func count(p *int64) string {
	if p == nil {
		return "0"
	}
	return strconv.FormatInt(*p, 10)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
