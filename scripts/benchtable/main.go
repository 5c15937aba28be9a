// Command benchtable turns `go test -bench` output on stdin into one
// Markdown table per package on stdout, one column per reported unit, so
// `make bench` prints something a person can read and BENCHMARKS.md can
// quote. Lines that are not benchmark results are ignored.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var pkgLine = regexp.MustCompile(`^pkg: (\S+)`)

type row struct {
	name   string
	values map[string]float64
}

type table struct {
	pkg   string
	units []string
	rows  []row
}

func main() {
	var tables []*table
	cur := &table{pkg: "?"}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := pkgLine.FindStringSubmatch(line); m != nil {
			cur = &table{pkg: m[1]}
			tables = append(tables, cur)
			continue
		}
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		// name iterations (value unit)...
		if len(f) < 4 || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		r := row{name: trimProcs(strings.TrimPrefix(f[0], "Benchmark")), values: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			unit := f[i+1]
			if _, seen := indexOf(cur.units, unit); !seen {
				cur.units = append(cur.units, unit)
			}
			r.values[unit] = v
		}
		if len(tables) == 0 {
			tables = append(tables, cur)
		}
		cur.rows = append(cur.rows, r)
	}
	for _, t := range tables {
		if len(t.rows) == 0 {
			continue
		}
		fmt.Printf("\n### %s\n\n", t.pkg)
		fmt.Printf("| benchmark | %s |\n", strings.Join(t.units, " | "))
		fmt.Printf("|---|%s\n", strings.Repeat("---:|", len(t.units)))
		for _, r := range t.rows {
			cells := make([]string, len(t.units))
			for i, u := range t.units {
				if v, ok := r.values[u]; ok {
					cells[i] = format(v)
				}
			}
			fmt.Printf("| %s | %s |\n", r.name, strings.Join(cells, " | "))
		}
	}
}

// trimProcs drops the -GOMAXPROCS suffix go test appends.
func trimProcs(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

func indexOf(xs []string, x string) (int, bool) {
	for i, v := range xs {
		if v == x {
			return i, true
		}
	}
	return -1, false
}

// format prints large values with thousands separators and small ones with
// three significant digits.
func format(v float64) string {
	if v >= 1000 {
		s := strconv.FormatInt(int64(v+0.5), 10)
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
