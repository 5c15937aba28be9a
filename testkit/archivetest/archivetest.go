// Package archivetest builds archives of synthetic videos for tests and
// benchmarks: through store.SavePage exactly as ingest would (runs of four
// 50-video chart pages, 30% of each chart re-seen), from testkit/synth.
//
// Key decision: the large archives (100k, 1M videos) are built once and
// cached under $YTREND_BENCH_DIR (default .bench/ at the repository root),
// keyed by the generator, the schema and the term-blob format, because a
// million videos take about ten minutes on two cores.
package archivetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ytrend/ytrend/migrations"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/synth"
)

// Generator is the synthetic corpus every cached archive is built from.
func Generator() *synth.Generator { return synth.New(synth.Config{Seed: 1}) }

// Dir is where cached archives live.
func Dir(tb testing.TB) string {
	if d := os.Getenv("YTREND_BENCH_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".bench")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, ".bench")
		}
	}
}

// schemaDigest changes whenever the store's schema does. (Other packages'
// migrations, such as the quota ledger's, do not change what is measured, so
// they do not invalidate a cached archive.)
func schemaDigest(tb testing.TB) string {
	h := sha256.New()
	b, err := fs.ReadFile(migrations.FS, "0001_init.sql")
	if err != nil {
		tb.Fatal(err)
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))[:10]
}

// Stats is what building an archive took.
type Stats struct {
	Videos, Pages int
	Seconds       float64
	VideosPerSec  float64
}

// Cached returns the path of a cached archive of n videos, building it on
// first use.
func Cached(tb testing.TB, n int) string { return CachedVariant(tb, n, "", nil) }

// CachedVariant is Cached for an archive built another way: variant names
// it in the cache, and setup, if set, runs before the build and returns
// what undoes it (a test hook of the store, say).
func CachedVariant(tb testing.TB, n int, variant string, setup func() (undo func())) string {
	g := Generator()
	dir := Dir(tb)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if variant != "" {
		variant = "-" + variant
	}
	path := filepath.Join(dir, fmt.Sprintf("archive-%s-t%d-m%s%s-n%d.db", g, store.TermsVersion, schemaDigest(tb), variant, n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if setup != nil {
		defer setup()()
	}
	tb.Logf("building %s (once; later runs reuse it)", path)
	tmp := fmt.Sprintf("%s.building-%d", path, os.Getpid())
	st, err := Build(context.Background(), tmp, g, n, func(s Stats) {
		tb.Logf("  %d videos, %d pages, %.0fs, %.0f new videos/s", s.Videos, s.Pages, s.Seconds, s.VideosPerSec)
	})
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(path+".json", b, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	os.Remove(tmp + "-wal")
	os.Remove(tmp + "-shm")
	tb.Logf("built %d videos in %.0fs (%.0f new videos/s through SavePage)", st.Videos, st.Seconds, st.VideosPerSec)
	return path
}

// Build writes an archive of n of g's videos at path (a new file), calling
// progress every 100,000 videos (nil: never), and checkpoints it.
func Build(ctx context.Context, path string, g *synth.Generator, n int, progress func(Stats)) (Stats, error) {
	var st Stats
	db, err := store.Open(ctx, path)
	if err != nil {
		return st, err
	}
	defer db.Close()
	// Generate the next runs while the current one is written.
	runs := make(chan synth.Run, 8)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(runs)
		for r := range g.Runs(n) {
			select {
			case runs <- r:
			case <-stop:
				return
			}
		}
	}()
	start := time.Now()
	next := 100_000
	for r := range runs {
		id, err := db.StartRun(ctx, r.Region, store.TriggerSchedule, r.At)
		if err != nil {
			return st, err
		}
		var units int64
		for _, p := range r.Pages {
			p.RunID = id
			res, err := db.SavePage(ctx, p)
			if err != nil {
				return st, err
			}
			st.Videos += res.New
			st.Pages++
			units = p.Units
		}
		if err := db.FinishRun(ctx, id, store.RunEnd{Status: store.StatusOK, At: r.At.Add(time.Minute), Units: units}); err != nil {
			return st, err
		}
		if st.Videos >= next && progress != nil {
			st.Seconds = time.Since(start).Seconds()
			st.VideosPerSec = float64(st.Videos) / st.Seconds
			progress(st)
			next += 100_000
		}
	}
	st.Seconds = time.Since(start).Seconds()
	st.VideosPerSec = float64(st.Videos) / st.Seconds
	if _, err := db.Writer().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return st, err
	}
	return st, db.Close()
}
