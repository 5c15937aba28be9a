package search

import (
	"context"
	"strings"
	"testing"
)

// How many times each candidates statement calls ytrend_keep and
// ytrend_rank per row: once each, or the walk's heap is offered a key twice.
func TestCandidatesCallKeepOnce(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t)
	for _, raw := range []bool{false, true} {
		for _, reg := range []bool{false, true} {
			for _, ch := range []bool{false, true} {
				for _, cat := range []bool{false, true} {
					for _, o := range []SortOrder{SortRelevance, SortRecent, SortViews} {
						q := sqlCandidates(raw, reg, ch, cat, o)
						rows, err := db.QueryContext(ctx, "EXPLAIN "+q, nil, 0, "a", 0, 0, nil, 0, 20, nil, 0, 0, 0)
						if err != nil {
							t.Fatal(err)
						}
						keep, rank := 0, 0
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
						}
						rows.Close()
						t.Logf("raw=%v regions=%v channels=%v cats=%v %s: keep %d rank %d", raw, reg, ch, cat, o, keep, rank)
						if keep != 1 || rank != 1 {
							t.Errorf("raw=%v regions=%v channels=%v cats=%v %s: keep %d rank %d", raw, reg, ch, cat, o, keep, rank)
						}
					}
				}
			}
		}
	}
}
