package search

import (
	"context"
	"strings"
	"testing"
)

// The cost of a search rests on the query plans: the MATCH scan must be
// bounded by the rowid range of the blocks being ranked (FTS5 seeks to it),
// every other table must be reached by key, the only sort must be the final
// one over a range's candidates, and the blocks must come in walking order
// from an index. This pins those plans.
func TestSearchPlans(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t)
	type node struct {
		id, parent int
		detail     string
	}
	plan := func(query string) []node {
		var args []any
		if strings.Contains(query, "?10") { // sqlCandidates
			args = []any{"[]", 0, `"x"`, -2047, -1024, "[]", 0, 10, `["10"]`, 0, -1, 1 << 30, nil, false}
		} else if strings.Contains(query, "video_blocks") {
			args = []any{0, 1 << 60, 1 << 60, 32}
		} else {
			args = []any{"[]", 0, `"x"`, -2047, -1024, "[]", 0, 10}
		}
		rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
		defer rows.Close()
		var out []node
		for rows.Next() {
			var n node
			var unused int
			if err := rows.Scan(&n.id, &n.parent, &unused, &n.detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	for _, raw := range []bool{false, true} {
		for _, regions := range []bool{false, true} {
			for _, channels := range []bool{false, true} {
				for _, order := range []SortOrder{SortRelevance, SortRecent, SortViews} {
					q := sqlCandidates(raw, regions, channels, order == SortViews, order)
					nodes := plan(q)
					var text []string
					sub := map[int]bool{} // nodes inside the candidate subquery
					for _, n := range nodes {
						text = append(text, n.detail)
						if strings.HasPrefix(n.detail, "CO-ROUTINE") || strings.HasPrefix(n.detail, "MATERIALIZE") {
							sub[n.id] = true
						}
						if sub[n.parent] {
							sub[n.id] = true
						}
					}
					all := strings.Join(text, " | ")
					// FTS5's plan string: M = MATCH, > and < = rowid bounds.
					if !strings.Contains(all, "SCAN f VIRTUAL TABLE INDEX") || !strings.Contains(all, ">") || !strings.Contains(all, "<") ||
						!strings.Contains(all, "SEARCH s USING INTEGER PRIMARY KEY") {
						t.Errorf("raw=%v regions=%v channels=%v %s: unexpected plan %s", raw, regions, channels, order, all)
					}
					if order == SortViews && !strings.Contains(all, "SEARCH v USING INTEGER PRIMARY KEY") {
						t.Errorf("categories: the videos row is not found by key: %s", all)
					}
					if regions && !strings.Contains(all, "SEARCH r USING PRIMARY KEY") {
						t.Errorf("regions: video_regions not searched by key: %s", all)
					}
					for _, n := range nodes {
						if sub[n.id] && strings.Contains(n.detail, "TEMP B-TREE") {
							t.Errorf("raw=%v regions=%v channels=%v %s: the MATCH scan is sorted, not read in rowid order: %s", raw, regions, channels, order, all)
						}
						if strings.HasPrefix(n.detail, "SCAN") && !strings.HasPrefix(n.detail, "SCAN f VIRTUAL") &&
							!strings.Contains(n.detail, "json_each") && !strings.Contains(n.detail, "subquery") {
							t.Errorf("full scan %q in %s", n.detail, all)
						}
					}
				}
			}
		}
	}
	for _, q := range []string{sqlBlocksBySeen, sqlBlocksByViews} {
		for _, n := range plan(q) {
			if strings.Contains(n.detail, "TEMP B-TREE") || !strings.Contains(n.detail, "video_blocks_") {
				t.Errorf("blocks are not read in walking order from an index: %q in %s", n.detail, q)
			}
		}
	}
	for _, q := range []string{sqlHitVideos, sqlHitRegions} {
		for _, n := range plan(strings.ReplaceAll(q, "?2", "?7")) {
			if strings.HasPrefix(n.detail, "SCAN") && !strings.Contains(n.detail, "VIRTUAL TABLE") && !strings.Contains(n.detail, "subquery") {
				t.Errorf("full scan %q in %s", n.detail, q)
			}
		}
	}
}
