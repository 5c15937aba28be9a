// Command recall measures how often a search finds a video by text taken
// from the video itself, on an archive built from real data (issue 10):
//
//	title   two words of its title, or for a title with a kanji/kana run a
//	        2-4 character fragment of that run
//	desc-ja a 2-4 character kanji/kana fragment found only in its description
//	        (not in its title, tags or channel title)
//	tag-ja  a 2-4 character kanji/kana fragment of one of its tags, found
//	        nowhere else (title, description, channel title)
//
// Each query goes through store.DB.Search with a store.Query, as the JSON
// API's /api/v1/search does: default relevance sort, Limit 500. A video is
// found when it is among the results. Sampling is deterministic for a given
// -seed: videos are taken in id order and shuffled with a seeded PCG.
//
//	go run ./scripts/recall -db /tmp/realdata/jp.db -n 500 -seed 1
//
// The table's "full" column counts queries that returned a whole page of
// Limit results (so the limit itself was tested), "worst" the lowest rank at
// which a found video came. Misses are re-run with Exhaustive set: the
// default search must give the same results, so a miss that Exhaustive
// finds is a ranking defect, and one it does not is the index's.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ytrend/ytrend/store"
)

const limit = store.MaxLimit // 500

func main() {
	dbPath := flag.String("db", "", "archive database path (required)")
	n := flag.Int("n", 500, "videos sampled per check (all eligible videos if fewer)")
	seed := flag.Uint64("seed", 1, "sampling seed")
	misses := flag.Int("misses", 10, "misses listed per check")
	flag.Parse()
	if *dbPath == "" {
		fmt.Fprintln(os.Stderr, "recall: -db is required")
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dbPath, *n, *seed, *misses); err != nil {
		fmt.Fprintln(os.Stderr, "recall:", err)
		os.Exit(1)
	}
}

// probe is one query made from one video's text.
type probe struct {
	video  store.Video
	query  string
	source string // where the query text came from, for a person reading a miss
	kind   string // "cjk" or "words" (title check only)
}

// result is a probe's outcome.
type result struct {
	probe
	found      bool
	rank       int // 1-based position when found
	hits       int // results returned
	exhaustive bool
}

type check struct {
	name    string
	make    func(r *rand.Rand, v store.Video) (probe, bool)
	results []result
	skipped int // videos with no usable text for this check
}

func run(path string, n int, seed uint64, nMisses int) error {
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.ReadOnly())
	if err != nil {
		return err
	}
	defer db.Close()

	counts, err := db.Counts(ctx)
	if err != nil {
		return err
	}
	ids, err := videoIDs(ctx, db)
	if err != nil {
		return err
	}
	videos := make([]store.Video, 0, len(ids))
	for _, id := range ids {
		v, _, err := db.Video(ctx, id)
		if err != nil {
			return err
		}
		videos = append(videos, v)
	}
	fmt.Printf("archive %s: %d videos, %d chart rows\n\n", path, counts.Videos, counts.Snapshots)

	checks := []*check{
		{name: "title", make: titleProbe},
		{name: "desc-ja", make: descProbe},
		{name: "tag-ja", make: tagProbe},
	}
	for i, c := range checks {
		// One generator per check, so adding a check does not move the
		// others' samples.
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		order := slices.Clone(videos)
		r.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, v := range order {
			if len(c.results) >= n {
				break
			}
			p, ok := c.make(r, v)
			if !ok {
				c.skipped++
				continue
			}
			res, err := search(ctx, db, p, false)
			if err != nil {
				return err
			}
			if !res.found {
				if ex, err := search(ctx, db, p, true); err != nil {
					return err
				} else if ex.found {
					res.exhaustive = true
					res.rank = ex.rank
				}
			}
			c.results = append(c.results, res)
		}
	}

	fmt.Printf("%-14s %7s %7s %8s %8s %6s %6s\n", "check", "sample", "found", "percent", "skipped", "full", "worst")
	for _, c := range checks {
		printRow(c.name, c.results, c.skipped)
		if c.name == "title" {
			for _, kind := range []string{"cjk", "words"} {
				var sub []result
				for _, r := range c.results {
					if r.kind == kind {
						sub = append(sub, r)
					}
				}
				printRow("  title/"+kind, sub, -1)
			}
		}
	}
	for _, c := range checks {
		var missed []result
		for _, r := range c.results {
			if !r.found {
				missed = append(missed, r)
			}
		}
		if len(missed) == 0 {
			continue
		}
		fmt.Printf("\nmisses, %s (%d; up to %d shown)\n", c.name, len(missed), nMisses)
		for _, r := range missed[:min(len(missed), nMisses)] {
			note := fmt.Sprintf("%d results", r.hits)
			if r.exhaustive {
				note += fmt.Sprintf("; found by Exhaustive at rank %d", r.rank)
			}
			fmt.Printf("  %s  q=%q  (%s)\n      from: %s\n", r.video.ID, r.query, note, r.source)
		}
	}
	return nil
}

func printRow(name string, rs []result, skipped int) {
	found, full, worst := 0, 0, 0
	for _, r := range rs {
		if r.found {
			found++
			worst = max(worst, r.rank)
		}
		if r.hits == limit {
			full++
		}
	}
	pct := "-"
	if len(rs) > 0 {
		pct = fmt.Sprintf("%.1f%%", 100*float64(found)/float64(len(rs)))
	}
	sk := ""
	if skipped >= 0 {
		sk = fmt.Sprint(skipped)
	}
	fmt.Printf("%-14s %7d %7d %8s %8s %6d %6d\n", name, len(rs), found, pct, sk, full, worst)
}

func videoIDs(ctx context.Context, db *store.DB) ([]string, error) {
	rows, err := db.Reader().QueryContext(ctx, `SELECT video_id FROM videos ORDER BY video_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func search(ctx context.Context, db *store.DB, p probe, exhaustive bool) (result, error) {
	hits, err := db.Search(ctx, store.Query{Text: p.query, Limit: limit, Exhaustive: exhaustive})
	if err != nil {
		return result{}, fmt.Errorf("search %q: %w", p.query, err)
	}
	res := result{probe: p, hits: len(hits)}
	for i, h := range hits {
		if h.VideoID == p.video.ID {
			res.found, res.rank = true, i+1
			break
		}
	}
	return res, nil
}

// isCJK reports whether r belongs to a kanji/kana run: Han, Hiragana or
// Katakana letters, the prolonged sound mark ー and the iteration mark 々
// included (both are letters, script Common).
func isCJK(r rune) bool {
	if !unicode.IsLetter(r) {
		return false
	}
	return r == 'ー' || r == '々' || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// cjkRuns returns the maximal kanji/kana runs of s that have at least two
// characters.
func cjkRuns(s string) []string {
	var runs []string
	start := -1
	for i, r := range s {
		if isCJK(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && utf8.RuneCountInString(s[start:i]) >= 2 {
			runs = append(runs, s[start:i])
		}
		start = -1
	}
	if start >= 0 && utf8.RuneCountInString(s[start:]) >= 2 {
		runs = append(runs, s[start:])
	}
	return runs
}

// fragment picks a 2-4 character substring of a random run.
func fragment(r *rand.Rand, runs []string) (frag, run string) {
	run = runs[r.IntN(len(runs))]
	rs := []rune(run)
	l := 2 + r.IntN(3)
	l = min(l, len(rs))
	off := r.IntN(len(rs) - l + 1)
	return string(rs[off : off+l]), run
}

// pickFragment tries a few random fragments of runs and returns the first
// that ok accepts.
func pickFragment(r *rand.Rand, runs []string, ok func(string) bool) (frag, run string, found bool) {
	if len(runs) == 0 {
		return "", "", false
	}
	for range 30 {
		f, run := fragment(r, runs)
		if ok(f) {
			return f, run, true
		}
	}
	return "", "", false
}

// words splits s on everything that is not a letter, digit or mark and keeps
// words of two characters or more, once each.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	}) {
		if utf8.RuneCountInString(w) >= 2 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func titleProbe(r *rand.Rand, v store.Video) (probe, bool) {
	if runs := cjkRuns(v.Title); len(runs) > 0 {
		f, run, _ := pickFragment(r, runs, func(string) bool { return true })
		return probe{video: v, query: f, source: "title run " + quote(run) + " of " + quote(v.Title), kind: "cjk"}, true
	}
	ws := words(v.Title)
	switch len(ws) {
	case 0:
		return probe{}, false
	case 1:
		return probe{video: v, query: ws[0], source: "title " + quote(v.Title), kind: "words"}, true
	}
	i := r.IntN(len(ws))
	j := r.IntN(len(ws) - 1)
	if j >= i {
		j++
	}
	return probe{video: v, query: ws[i] + " " + ws[j], source: "title " + quote(v.Title), kind: "words"}, true
}

func descProbe(r *rand.Rand, v store.Video) (probe, bool) {
	others := append([]string{v.Title, v.ChannelTitle}, v.Tags...)
	f, run, ok := pickFragment(r, cjkRuns(v.Description), func(f string) bool { return !inAny(f, others) })
	if !ok {
		return probe{}, false
	}
	return probe{video: v, query: f, source: "description run " + quote(run)}, true
}

func tagProbe(r *rand.Rand, v store.Video) (probe, bool) {
	var runs []string
	for _, t := range v.Tags {
		runs = append(runs, cjkRuns(t)...)
	}
	others := []string{v.Title, v.ChannelTitle, v.Description}
	f, run, ok := pickFragment(r, runs, func(f string) bool { return !inAny(f, others) })
	if !ok {
		return probe{}, false
	}
	return probe{video: v, query: f, source: "tag run " + quote(run) + " of tags " + quote(strings.Join(v.Tags, "|"))}, true
}

func inAny(f string, texts []string) bool {
	for _, t := range texts {
		if strings.Contains(t, f) {
			return true
		}
	}
	return false
}

// quote shortens s for a report line.
func quote(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
