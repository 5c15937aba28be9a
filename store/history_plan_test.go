package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Charts, histories and exports must read by key whatever the archive's
// size: this pins their plans. An export of millions of rows must stream in
// index order, never through a temporary B-tree that holds them all.
func TestHistoryPlans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan := func(query string, args ...any) string {
		rows, err := db.reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, " | ")
	}
	for _, c := range []struct {
		name, query string
		args        []any
		want        []string
		sorts       bool // a sort is fine: it holds one video's sightings
	}{
		{"chart runs", sqlChartRuns, []any{"US", 0}, []string{"SEARCH runs USING INDEX runs_charts (region=? AND last_page_at<?)"}, false},
		{"first chart", sqlFirstChart, []any{"US"}, []string{"SEARCH runs USING INDEX runs_charts (region=?)"}, false},
		{"chart runs, in progress", sqlChartRuns, []any{"US", 0}, []string{"SCAN r USING INDEX runs_running"}, false},
		// The previous chart's ranks are grouped by video (a sort of its
		// 200 rows), then looked up by an automatic index.
		{"chart rows", sqlChartRows, []any{1, 10, nil, "US", 2}, []string{"SEARCH t USING PRIMARY KEY (run_id=?)", "SEARCH v USING INTEGER PRIMARY KEY (rowid=?)",
			"SEARCH trending_snapshots USING PRIMARY KEY (run_id=?)", "SEARCH c USING PRIMARY KEY (region=? AND category_id=?)",
			"SEARCH p USING AUTOMATIC COVERING INDEX (video=?)"}, true},
		{"chart rows of categories", sqlChartRows, []any{1, 10, `["10"]`, "US", 2}, []string{"SEARCH t USING PRIMARY KEY (run_id=?)", "SEARCH v USING INTEGER PRIMARY KEY (rowid=?)"}, true},
		{"history", sqlHistoryPoints, []any{1}, []string{"SEARCH trending_snapshots USING INDEX trending_snapshots_video (video=?)"}, true},
		{"chart exists", sqlChartExists, []any{"US", 0}, []string{"SEARCH runs USING INDEX runs_charts (region=? AND last_page_at=?)"}, false},
		{"export", sqlSnapshotsExport + ` ORDER BY r.last_page_at, r.id, t.rank`, []any{0, 1},
			[]string{"SEARCH r USING INDEX runs_last_page (last_page_at>?)", "SEARCH t USING PRIMARY KEY (run_id=?)"}, false},
		{"export regions", sqlSnapshotsExport + ` AND r.region IN (SELECT value FROM json_each(?3)) ORDER BY r.last_page_at, r.id, t.rank`,
			[]any{0, 1, `["US"]`}, []string{"USING INDEX runs_last_page", "SEARCH t USING PRIMARY KEY (run_id=?)"}, false},
		{"export categories", sqlSnapshotsExport + ` AND v.category_id IN (SELECT value FROM json_each(?3)) ORDER BY r.last_page_at, r.id, t.rank`,
			[]any{0, 1, `["10"]`}, []string{"USING INDEX runs_last_page", "SEARCH t USING PRIMARY KEY (run_id=?)",
				"SEARCH c USING PRIMARY KEY (region=? AND category_id=?)"}, false},
	} {
		got := plan(c.query, c.args...)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: plan lacks %q: %s", c.name, w, got)
			}
		}
		if !c.sorts && strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("%s: sorts in a temporary B-tree: %s", c.name, got)
		}
	}
}
