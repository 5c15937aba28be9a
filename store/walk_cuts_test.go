package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/synth"
)

// video_cuts is there to make a walk cheaper: testing a match on its bounds
// must not cost more than the video_stats seek it spares. A walk reads the
// video_cuts rows of each range it ranks, 10 KB per block of 1,024 ids
// whatever the number of matches in it, so for a word with a match or two
// per block (a word in a few thousand videos of a million) the rows cost
// more than the seeks: at 1M videos (the gencsv archive) "tri --since
// 2024-06-01" took 18-34 ms of CPU with them against 7-12 without
// (BENCHMARKS.md). Such a walk must not read them, and must still give the
// exhaustive page.
//
// Here a few thousand synthetic videos are spread over a million ids (a
// million-video archive's id space, in which the word is as sparse). The
// cost itself is a benchmark's to show, not a test's: this checks what the
// walk does (the matches it tested on bounds, by the probe), and the page.
func TestWalkOverSparseMatchesReadsNoCuts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an archive of 6,000 videos")
	}
	if raceDetector {
		t.Skip("run without -race (make test does)")
	}
	t.Parallel() // each full-size check builds its own archive
	ctx := context.Background()
	const n, spread = 6000, 170 // ids up to about a million
	g := synth.New(synth.Config{Seed: 7, RunEvery: 24 * time.Hour})
	path := filepath.Join(t.TempDir(), "sparse.db")
	if _, err := archivetest.Build(ctx, path, g, n, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	spreadIDs(t, raw, spread)

	probe := &search.WalkProbe{}
	db, err := store.Open(ctx, path, store.WithSearch(search.WithWalkProbe(probe)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// The most common word of the archive with more matches than a
	// one-pass ranking takes (a walk), and a since bound that every block
	// but the oldest passes.
	var word string
	var most int
	for _, w := range g.Words()[:400] {
		var c int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM video_fts WHERE video_fts MATCH ?`, `"`+w+`"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		if c > most && c < 2500 {
			word, most = w, c
		}
	}
	if most < 1100 {
		t.Fatalf("no word with a walk's matches (best %q: %d)", word, most)
	}
	var oldest int64
	if err := raw.QueryRowContext(ctx, `SELECT min(max_seen) FROM video_blocks`).Scan(&oldest); err != nil {
		t.Fatal(err)
	}
	for _, q := range []store.Query{
		{Text: word, Since: time.UnixMicro(oldest + 1)},
		{Text: word},
		{Text: word, Sort: store.SortRecent},
	} {
		walks, tested := 0, 0
		probe.Walked = func(int, int) { walks++ }
		probe.Tested = func(tt, _ int) { tested += tt }
		got, err := db.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		ex := q
		ex.Exhaustive = true
		want, err := db.Search(ctx, ex)
		if err != nil {
			t.Fatal(err)
		}
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i].VideoID == want[i].VideoID && got[i].Score == want[i].Score
		}
		if !same {
			t.Errorf("%q (%d matches) since %v, %s: the walk's page differs from --exhaustive's", q.Text, most, q.Since, q.Sort)
		}
		if walks != 1 {
			t.Fatalf("%q: %d walks, want 1", q.Text, walks)
		}
		if tested > 0 {
			t.Errorf("%q (%d matches over a million ids) since %v, %s: %d matches tested on video_cuts rows, which cost more than they spare here",
				q.Text, most, q.Since, q.Sort, tested)
		}
	}
}

// spreadIDs multiplies every video id by k, as if the archive held k times
// the videos and the word were k times rarer, and has video_fts,
// video_blocks and video_cuts rebuilt for the new ids (the cuts and blocks
// by their own triggers, re-inserting every video_stats row).
func spreadIDs(t *testing.T, raw *sql.DB, k int64) {
	t.Helper()
	for _, s := range []string{
		`PRAGMA foreign_keys = OFF`,
		`BEGIN`,
		// Negated first: no new id collides with an old one.
		`UPDATE videos SET id = -id`,
		`UPDATE videos SET id = -id * ?1`,
		`UPDATE video_stats SET video = -video`,
		`UPDATE video_stats SET video = -video * ?1`,
		`UPDATE video_regions SET video = -video`,
		`UPDATE video_regions SET video = -video * ?1`,
		`UPDATE trending_snapshots SET video = video * ?1`,
		`UPDATE runs SET min_video = min_video * ?1`,
		`INSERT INTO video_fts (video_fts) VALUES ('rebuild')`,
		`DELETE FROM video_blocks`,
		`DELETE FROM video_cuts`,
		`CREATE TEMP TABLE stats AS SELECT * FROM video_stats`,
		`DELETE FROM video_stats`,
		`INSERT INTO video_stats SELECT * FROM temp.stats`,
		`DROP TABLE temp.stats`,
		`COMMIT`,
	} {
		s = strings.ReplaceAll(s, "?1", strconv.FormatInt(k, 10))
		_, err := raw.Exec(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
