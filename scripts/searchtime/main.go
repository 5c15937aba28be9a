// Command searchtime times store.DB.Search in process over a query set made
// by genq.py (words, word pairs and CJK fragments sampled from an archive's
// own titles, with region, since and sort variants), and with -check
// compares every answer with Query.Exhaustive. cli.py times the ytrend
// binary on the same set from outside, one process per query.
//
//	python3 scripts/searchtime/genq.py ARCHIVE 7 > q7.json
//	go run ./scripts/searchtime -db ARCHIVE -q q7.json -cpu -rounds 2 -check
//	DB=ARCHIVE python3 scripts/searchtime/cli.py ./ytrend q7.json
//
// -cpu reports each search's process CPU time instead of its wall time: on
// a shared machine wall time measures the other processes too.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
)

type q struct {
	Kind string   `json:"kind"`
	Args []string `json:"args"`
}

func main() {
	db := flag.String("db", "", "archive path")
	qf := flag.String("q", "", "query set (JSON, from genq.py)")
	rounds := flag.Int("rounds", 1, "times to run the set; -v prints each query's best")
	useCPU := flag.Bool("cpu", false, "CPU ms instead of wall")
	verbose := flag.Bool("v", false, "print each query")
	check := flag.Bool("check", false, "compare with exhaustive")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (leave out -check: its exhaustive searches would be in it)")
	flag.Parse()
	ctx := context.Background()
	t0 := time.Now()
	var ranked, read, tested, dropped int
	probe := &search.WalkProbe{
		Walked: func(a, b int) { ranked, read = a, b },
		Tested: func(a, b int) { tested, dropped = a, b },
	}
	d, err := store.Open(ctx, *db, store.ReadOnly(), store.WithSearch(search.WithWalkProbe(probe)))
	if err != nil {
		panic(err)
	}
	fmt.Println("open", time.Since(t0))
	var qs []q
	b, err := os.ReadFile(*qf)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		panic(err)
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			panic(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			panic(err)
		}
		defer pprof.StopCPUProfile()
	}
	// Every query is parsed before the first is timed: a flag this tool
	// does not know stops it, rather than timing another search.
	sqs := make([]store.Query, len(qs))
	for i, x := range qs {
		if sqs[i], err = parseArgs(ctx, d, x.Args, time.Now()); err != nil {
			fmt.Fprintf(os.Stderr, "searchtime: query %d %q: %v\n", i, x.Args, err)
			os.Exit(2)
		}
	}
	res := map[string][]float64{}
	mins := make([]float64, len(qs))
	paths := make([]string, len(qs))
	same, total := 0, 0
	for r := 0; r < *rounds; r++ {
		for qi, x := range qs {
			sq := sqs[qi]
			ranked, read, tested, dropped = -1, -1, 0, 0
			cpu := func() float64 {
				var ru syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
			}
			c0 := cpu()
			t := time.Now()
			h, err := d.Search(ctx, sq)
			ms := float64(time.Since(t).Microseconds()) / 1000
			if *useCPU {
				ms = cpu() - c0
			}
			if err != nil {
				panic(err)
			}
			if r == 0 || ms < mins[qi] {
				mins[qi] = ms
			}
			paths[qi] = fmt.Sprintf("ranked=%d read=%d tested=%d dropped=%d", ranked, read, tested, dropped)
			res[x.Kind] = append(res[x.Kind], ms)
			if false {
				fmt.Printf("Q %7.2f ms ranked=%d read=%d %s %q\n", ms, ranked, read, x.Kind, x.Args)
			}
			res["ALL"] = append(res["ALL"], ms)
			// And by sort order, whatever the kind: "_relevance",
			// "_recent", "_views".
			order := cmp.Or(sq.Sort, store.SortRelevance)
			res["_"+string(order)] = append(res["_"+string(order)], ms)
			if *check && r == 0 {
				sq.Exhaustive = true
				h2, err := d.Search(ctx, sq)
				if err != nil {
					panic(err)
				}
				total++
				if reflect.DeepEqual(h, h2) { // every field of every hit
					same++
				} else {
					fmt.Println("DIFF", x.Args)
				}
			}
		}
	}
	if *verbose {
		for qi, x := range qs {
			fmt.Printf("M %7.2f %s %s %q\n", mins[qi], paths[qi], x.Kind, x.Args)
		}
	}
	keys := []string{}
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := slices.Clone(res[k])
		slices.Sort(v)
		p := func(f float64) float64 { return v[min(len(v)-1, int(f*float64(len(v))))] }
		fmt.Printf("%-10s n=%3d p50=%7.2f p90=%7.2f p99=%7.2f max=%7.2f\n", k, len(v), p(.5), p(.9), p(.99), v[len(v)-1])
	}
	if *check {
		fmt.Printf("identical %d of %d\n", same, total)
	}
}

// parseArgs reads a query's arguments as `ytrend search` reads them: the
// text, then --region (repeatable, or comma-separated), --sort, --since (a
// duration such as 7d, or a date), --channel, --category (an id or a name)
// and --limit. Anything else is an error.
func parseArgs(ctx context.Context, d *store.DB, args []string, now time.Time) (store.Query, error) {
	if len(args) == 0 {
		return store.Query{}, fmt.Errorf("no query text")
	}
	q := store.Query{Text: args[0], Limit: 20}
	var category string
	rest := args[1:]
	if len(rest)%2 != 0 {
		return q, fmt.Errorf("flag %q has no value", rest[len(rest)-1])
	}
	for i := 0; i < len(rest); i += 2 {
		flag, v := rest[i], rest[i+1]
		switch flag {
		case "--region":
			for _, p := range strings.Split(v, ",") {
				c, err := regions.Parse(p)
				if err != nil {
					return q, err
				}
				if !slices.Contains(q.Regions, c) {
					q.Regions = append(q.Regions, c)
				}
			}
		case "--sort":
			q.Sort = store.SortOrder(v)
		case "--since":
			t, err := config.ParseSince(v, now)
			if err != nil {
				return q, fmt.Errorf("--since %w", err)
			}
			q.Since = t
		case "--channel":
			q.Channel = v
		case "--category":
			category = v
		case "--limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 500 {
				return q, fmt.Errorf("--limit %q: allowed 1-500", v)
			}
			q.Limit = n
		default:
			return q, fmt.Errorf("unknown flag %q", flag)
		}
	}
	if category != "" {
		ids, err := d.CategoryIDs(ctx, category, q.Regions...)
		if err != nil {
			return q, err
		}
		q.Categories = ids
	}
	return q, nil
}
