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
// must not cost more than the video_stats seek it spares. A walk with
// --since loads the video_cuts rows of every range it ranks, page full or
// not, 10 KB of rows per block of 1,024 ids whatever the number of matches
// in it. A word with a match or two per block (a word in a few thousand
// videos of a million) then reads megabytes of rows to test a few hundred
// matches, nearly none of which the since bound drops: at 1M videos (the
// gencsv archive) "tri --since 2024-06-01" took 18-20 ms of CPU against
// 6.7-7.1 without the rows, as much as before migration 0014.
//
// Here a few thousand synthetic videos are spread over a million ids (a
// million-video archive's id space, in which the word is as sparse), and the
// same search is timed with video_cuts as the triggers keep it and with its
// rows deleted (ytrend_pass then passes every match: the same answer,
// without the bounds).
func TestCutsCostNoMoreThanTheSeeksTheySpare(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an archive of 6,000 videos")
	}
	if raceDetector {
		t.Skip("times CPU; run without -race")
	}
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
	q := store.Query{Text: word, Since: time.UnixMicro(oldest + 1)}
	ex := q
	ex.Exhaustive = true
	want, err := db.Search(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	var walked, tested, dropped int
	probe.Walked = func(r, _ int) { walked = r }
	probe.Tested = func(tt, d int) { tested, dropped = tt, d }
	cpu := func() time.Duration {
		best := time.Duration(1<<63 - 1)
		for range 15 {
			c0 := cpuTime()
			got, err := db.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, cpuTime()-c0)
			same := len(got) == len(want)
			for i := 0; same && i < len(got); i++ {
				same = got[i].VideoID == want[i].VideoID && got[i].Score == want[i].Score
			}
			if !same {
				t.Fatalf("%q since %v: the walk's page differs from --exhaustive's", q.Text, q.Since)
			}
		}
		return best
	}
	withCuts := cpu()
	t.Logf("%q (%d matches) since %v: walked %d blocks, %d matches tested on their bounds, %d dropped",
		word, most, q.Since.UTC(), walked, tested, dropped)
	if _, err := raw.ExecContext(ctx, `DELETE FROM video_cuts`); err != nil {
		t.Fatal(err)
	}
	without := cpu()
	t.Logf("CPU a search: %v with video_cuts, %v with its rows deleted", withCuts, without)
	if withCuts > without*3/2 {
		t.Errorf("a walk that tests its matches on video_cuts costs %.1fx one without the rows (%v, %v)",
			float64(withCuts)/float64(without), withCuts, without)
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
