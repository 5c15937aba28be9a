// Command loadmix writes the two request mixes that BENCHMARKS.md's load
// figures for `ytrend serve` use, as files of paths (one a line) that
// scripts/loadmix/paths.lua feeds to wrk:
//
//   - skewed.txt: what a trending site sees. Zipf-distributed over today's
//     charts, the videos on them and common searches, pages and API alike.
//   - distinct.txt: the worst case for any cache. Past charts, random
//     videos and searches with filters and sorts, no two the same.
//
// Everything is drawn from the archive itself (read-only), so the mixes fit
// whatever was imported:
//
//	go run ./scripts/loadmix -db .bench/1m.db -out .bench/load
//	wrk -t2 -c50 -d30s --latency -s scripts/loadmix/paths.lua http://127.0.0.1:8080 -- .bench/load/skewed.txt
package main

import (
	"bufio"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	_ "modernc.org/sqlite"
)

func main() {
	db := flag.String("db", ".bench/1m.db", "archive to draw the requests from (opened read-only)")
	out := flag.String("out", ".bench/load", "directory for skewed.txt and distinct.txt")
	n := flag.Int("n", 40_000, "requests per mix")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*db, *out, *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "loadmix:", err)
		os.Exit(1)
	}
}

type archive struct {
	regions []string            // regions with a chart
	days    map[string][]string // region -> days with a chart (YYYY-MM-DD)
	today   map[string][]string // region -> video ids of its latest chart, in rank order
	words   []string            // title words, most frequent first
	channel []string            // channel ids
	videos  int64               // largest videos.id
}

func run(path, dir string, n int, seed uint64) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return err
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(seed, 0x10ad))
	a, err := load(db, r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	skewed := skewedMix(a, r, n)
	distinct, err := distinctMix(db, a, r, n)
	if err != nil {
		return err
	}
	for name, paths := range map[string][]string{"skewed.txt": skewed, "distinct.txt": distinct} {
		if err := write(filepath.Join(dir, name), paths); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "loadmix: %d regions, %d words; %d skewed and %d distinct paths in %s\n",
		len(a.regions), len(a.words), len(skewed), len(distinct), dir)
	return nil
}

func load(db *sql.DB, r *rand.Rand) (*archive, error) {
	a := &archive{days: map[string][]string{}, today: map[string][]string{}}
	rows, err := db.Query(`SELECT region, last_page_at FROM runs WHERE pages > 0 AND status <> 'running' ORDER BY region, last_page_at`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var region string
		var at int64
		if err := rows.Scan(&region, &at); err != nil {
			return nil, err
		}
		if len(a.days[region]) == 0 {
			a.regions = append(a.regions, region)
		}
		day := time.UnixMicro(at).UTC().Format(time.DateOnly)
		if d := a.days[region]; len(d) == 0 || d[len(d)-1] != day {
			a.days[region] = append(a.days[region], day)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if len(a.regions) == 0 {
		return nil, fmt.Errorf("the archive has no chart")
	}
	for _, region := range a.regions {
		rows, err := db.Query(`SELECT v.video_id FROM trending_snapshots s JOIN videos v ON v.id = s.video
			WHERE s.run_id = (SELECT max(id) FROM runs WHERE region = ? AND pages > 0 AND status <> 'running') ORDER BY s.rank`, region)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			a.today[region] = append(a.today[region], id)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	if err := db.QueryRow(`SELECT max(id) FROM videos`).Scan(&a.videos); err != nil {
		return nil, err
	}
	// Words: from 3,000 random titles, counted, most frequent first.
	freq := map[string]int{}
	chans := map[string]bool{}
	for range 3000 {
		var title, ch string
		err := db.QueryRow(`SELECT title, channel_id FROM videos WHERE id = ?`, 1+r.Int64N(a.videos)).Scan(&title, &ch)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return nil, err
		}
		chans[ch] = true
		for _, w := range strings.FieldsFunc(title, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) {
			if len([]rune(w)) >= 3 && len([]rune(w)) <= 12 {
				freq[strings.ToLower(w)]++
			}
		}
	}
	for w := range freq {
		a.words = append(a.words, w)
	}
	sort.Slice(a.words, func(i, j int) bool {
		if freq[a.words[i]] != freq[a.words[j]] {
			return freq[a.words[i]] > freq[a.words[j]]
		}
		return a.words[i] < a.words[j]
	})
	for ch := range chans {
		a.channel = append(a.channel, ch)
	}
	sort.Strings(a.channel)
	return a, nil
}

// skewedMix draws n paths Zipf-distributed over the popular things: each
// region's chart (page and API), the top of today's charts, common searches.
func skewedMix(a *archive, r *rand.Rand, n int) []string {
	var popular []string
	for i := 0; ; i++ { // interleave so that rank in the list is popularity
		added := false
		for _, region := range a.regions {
			ids := a.today[region]
			if i == 0 {
				popular = append(popular, "/charts/"+region, "/api/v1/charts/"+region)
				added = true
			}
			if i < len(ids) && i < 100 {
				popular = append(popular, "/videos/"+ids[i], "/api/v1/videos/"+ids[i])
				added = true
			}
		}
		if i < len(a.words) && i < 300 {
			q := url.QueryEscape(a.words[i])
			popular = append(popular, "/search?q="+q, "/api/v1/search?q="+q)
			added = true
		}
		if !added {
			break
		}
	}
	z := rand.NewZipf(r, 1.1, 1, uint64(len(popular)-1))
	out := make([]string, n)
	for i := range out {
		out[i] = popular[z.Uint64()]
	}
	return out
}

// distinctMix draws n different paths: a third past charts, a third random
// videos, a third searches with filters and sorts.
func distinctMix(db *sql.DB, a *archive, r *rand.Rand, n int) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sorts := []string{"", "&sort=recent", "&sort=views", "&sort=relevance"}
	for tries := 0; len(out) < n && tries < 20*n; tries++ {
		api := ""
		if r.IntN(2) == 0 {
			api = "/api/v1"
		}
		switch r.IntN(3) {
		case 0:
			region := a.regions[r.IntN(len(a.regions))]
			days := a.days[region]
			add(api + "/charts/" + region + "?at=" + days[r.IntN(len(days))])
		case 1:
			var id string
			err := db.QueryRow(`SELECT video_id FROM videos WHERE id >= ? ORDER BY id LIMIT 1`, 1+r.Int64N(a.videos)).Scan(&id)
			if err != nil {
				return nil, err
			}
			add(api + "/videos/" + id)
		case 2:
			w := a.words[r.IntN(len(a.words))]
			if r.IntN(2) == 0 {
				w += " " + a.words[r.IntN(len(a.words))]
			}
			p := api + "/search?q=" + url.QueryEscape(w) + sorts[r.IntN(len(sorts))]
			switch r.IntN(4) {
			case 0:
				p += "&region=" + a.regions[r.IntN(len(a.regions))]
			case 1:
				region := a.regions[r.IntN(len(a.regions))]
				days := a.days[region]
				p += "&since=" + days[r.IntN(len(days))]
			case 2:
				i := r.IntN(len(a.regions))
				p += "&region=" + a.regions[i] + "&region=" + a.regions[(i+1+r.IntN(len(a.regions)-1))%len(a.regions)]
			}
			add(p)
		}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

func write(path string, paths []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, p := range paths {
		fmt.Fprintln(w, p)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
