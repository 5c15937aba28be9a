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
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"syscall"
	"time"

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
	res := map[string][]float64{}
	mins := make([]float64, len(qs))
	paths := make([]string, len(qs))
	same, total := 0, 0
	for r := 0; r < *rounds; r++ {
		for qi, x := range qs {
			sq := store.Query{Text: x.Args[0], Limit: 20}
			for i := 1; i+1 < len(x.Args); i += 2 {
				switch x.Args[i] {
				case "--region":
					sq.Regions = []regions.Code{regions.Code(x.Args[i+1])}
				case "--sort":
					sq.Sort = store.SortOrder(x.Args[i+1])
				case "--since":
					t, _ := time.Parse("2006-01-02", x.Args[i+1])
					sq.Since = t
				case "--channel":
					sq.Channel = x.Args[i+1]
				}
			}
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
			if x.Kind != "views" && x.Kind != "recent" {
				res["relevance"] = append(res["relevance"], ms)
			}
			if *check && r == 0 {
				sq.Exhaustive = true
				h2, err := d.Search(ctx, sq)
				if err != nil {
					panic(err)
				}
				total++
				ok := len(h) == len(h2)
				for i := 0; ok && i < len(h); i++ {
					ok = h[i].VideoID == h2[i].VideoID && h[i].Score == h2[i].Score
				}
				if ok {
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
