package search

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// How many times each candidates statement calls ytrend_keep and
// ytrend_rank per row (views order), or ytrend_score (the others): once
// each, or the walk's heap is offered a key twice.
func TestCandidatesCallKeepOnce(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t)
	for _, raw := range []bool{false, true} {
		for _, reg := range []bool{false, true} {
			for _, ch := range []bool{false, true} {
				for _, cat := range []bool{false, true} {
					for _, o := range []SortOrder{SortRelevance, SortRecent, SortViews} {
						q := sqlCandidates(raw, reg, ch, cat, o)
						rows, err := db.QueryContext(ctx, "EXPLAIN "+q, nil, 0, "a", 0, 0, nil, 0, 20, nil, 0, 0, 0, nil, false)
						if err != nil {
							t.Fatal(err)
						}
						keep, rank, score := 0, 0, 0
						for rows.Next() {
							var addr, p1, p2, p3, p5 any
							var op, p4, comment any
							if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
								t.Fatal(err)
							}
							s, _ := p4.(string)
							if strings.Contains(s, "ytrend_keep") {
								keep++
							}
							if strings.Contains(s, "ytrend_rank") {
								rank++
							}
							if strings.Contains(s, "ytrend_score") {
								score++
							}
						}
						rows.Close()
						t.Logf("raw=%v regions=%v channels=%v cats=%v %s: keep %d rank %d score %d", raw, reg, ch, cat, o, keep, rank, score)
						want := [3]int{0, 0, 1}
						if o == SortViews {
							want = [3]int{1, 1, 0}
						}
						if [3]int{keep, rank, score} != want {
							t.Errorf("raw=%v regions=%v channels=%v cats=%v %s: keep %d rank %d score %d, want %v", raw, reg, ch, cat, o, keep, rank, score, want)
						}
					}
				}
			}
		}
	}
}

// A one-pass ranking over the probe's list of matches reads no doclist:
// it finds each video's statistics by key from the list, ranks each row
// (ytrend_keep and ytrend_rank, or ytrend_score), and keeps every filter.
func TestCandidatesInReadsTheListNotTheIndex(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t)
	for _, reg := range []bool{false, true} {
		for _, ch := range []bool{false, true} {
			for _, cat := range []bool{false, true} {
				for _, o := range []SortOrder{SortRelevance, SortRecent, SortViews} {
					q := sqlCandidatesIn(reg, ch, cat, o)
					args := []any{"[]", 0, "a", 0, 0, "[]", 0, 20, "[]", 0, 0, 0, "[1,2]", true}
					rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
					if err != nil {
						t.Fatalf("%v\n%s", err, q)
					}
					var plan []string
					for rows.Next() {
						var id, parent, unused int
						var detail string
						if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
							t.Fatal(err)
						}
						plan = append(plan, detail)
					}
					rows.Close()
					all := strings.Join(plan, " | ")
					if strings.Contains(all, "VIRTUAL TABLE INDEX") && strings.Contains(all, "video_fts") || strings.Contains(all, "SCAN f VIRTUAL TABLE INDEX 0:M") ||
						!strings.Contains(all, "SEARCH s USING INTEGER PRIMARY KEY") {
						t.Errorf("regions=%v channels=%v cats=%v %s: plan %s", reg, ch, cat, o, all)
					}
					ranks := []string{"ytrend_score(?7"}
					if o == SortViews {
						ranks = []string{"ytrend_keep(?7", "ytrend_rank(?7"}
					}
					for _, want := range append(ranks, "json_each(?13)", "?10", "?11", "?12") {
						if strings.Count(q, want) < 1 {
							t.Errorf("regions=%v channels=%v cats=%v %s: %s missing from %s", reg, ch, cat, o, want, q)
						}
					}
					if ch != strings.Contains(q, "json_each(?6)") || cat != strings.Contains(q, "json_each(?9)") || reg != strings.Contains(q, "json_each(?1)") {
						t.Errorf("regions=%v channels=%v cats=%v %s: a filter is lost: %s", reg, ch, cat, o, q)
					}
				}
			}
		}
	}
}

// A walk's candidates statement tests each match's bounds (ytrend_pass)
// once, in the loop over the index, before it seeks the match's
// video_stats row: the test is there to spare that seek.
func TestCandidatesTestBoundsBeforeTheSeek(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t)
	var statsRoot int64
	if err := db.QueryRowContext(ctx, `SELECT rootpage FROM sqlite_schema WHERE name = 'video_stats'`).Scan(&statsRoot); err != nil {
		t.Fatal(err)
	}
	for _, reg := range []bool{false, true} {
		for _, ch := range []bool{false, true} {
			for _, cat := range []bool{false, true} {
				for _, o := range []SortOrder{SortRelevance, SortRecent, SortViews} {
					q := sqlCandidates(false, reg, ch, cat, o)
					rows, err := db.QueryContext(ctx, "EXPLAIN "+q, nil, 0, "a", 0, 0, nil, 0, 20, nil, 0, 0, 0, nil, false)
					if err != nil {
						t.Fatal(err)
					}
					pass, seek, passes := -1, -1, 0
					statsCursor := int64(-1)
					for rows.Next() {
						var addr, p1, p2, p3, p5 int64
						var op string
						var p4, comment any
						if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
							t.Fatal(err)
						}
						s, _ := p4.(string)
						switch {
						case op == "OpenRead" && p2 == statsRoot:
							statsCursor = p1
						case strings.Contains(s, "ytrend_pass"):
							passes++
							pass = int(addr)
						case (op == "SeekRowid" || op == "NotExists") && p1 == statsCursor && seek < 0:
							seek = int(addr)
						}
					}
					rows.Close()
					name := fmt.Sprintf("regions=%v channels=%v cats=%v %s", reg, ch, cat, o)
					if passes != 1 || seek < 0 || pass > seek {
						t.Errorf("%s: ytrend_pass %d times, the last at %d; video_stats sought at %d", name, passes, pass, seek)
					}
				}
			}
		}
	}
}
