package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// dumpRows returns every row of a query as text, for before/after checks.
func dumpRows(t *testing.T, db *store.DB, query string) []string {
	t.Helper()
	rows, err := db.Reader().Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// saveOldChart writes a chart as binaries before 0004_history did, for
// archives built at an older schema version (SavePage writes today's
// snapshot columns): the videos through a search page, then the snapshots,
// region aggregates, totals and region facets by hand, and the index
// rebuilt.
func saveOldChart(tb testing.TB, db *store.DB, region regions.Code, at time.Time, firstRank int, vs ...store.Video) {
	tb.Helper()
	ctx := context.Background()
	run := startOldRun(tb, db, region, store.TriggerSchedule, at)
	w := db.Writer()
	// SavePage prepares today's snapshot statement even for a search page:
	// lend the old table today's columns for the call.
	var have int
	if err := w.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('trending_snapshots') WHERE name = 'counted'`).Scan(&have); err != nil {
		tb.Fatal(err)
	}
	lent := []string{"likes INTEGER", "dislikes INTEGER", "comments INTEGER", "counted INTEGER NOT NULL DEFAULT 0"}
	for _, col := range lent {
		if have == 0 {
			if _, err := w.ExecContext(ctx, `ALTER TABLE trending_snapshots ADD COLUMN `+col); err != nil {
				tb.Fatal(err)
			}
		}
	}
	savePage(tb, db, store.Page{RunID: run, FetchedAt: at, Kind: store.PageSearch, Videos: vs})
	for _, col := range lent {
		if have == 0 {
			if _, err := w.ExecContext(ctx, `ALTER TABLE trending_snapshots DROP COLUMN `+strings.Fields(col)[0]); err != nil {
				tb.Fatal(err)
			}
		}
	}
	for i, v := range vs {
		var id int64
		if err := w.QueryRowContext(ctx, `SELECT id FROM videos WHERE video_id = ?`, v.ID).Scan(&id); err != nil {
			tb.Fatal(err)
		}
		var views any
		if v.Views != nil {
			views = *v.Views
		}
		rank := firstRank + i
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO trending_snapshots (run_id, rank, region, video, fetched_at, views) VALUES (?, ?, ?, ?, ?, ?)`,
				[]any{run, rank, region, id, at.UnixMicro(), views}},
			{`INSERT INTO video_regions (video, region, best_rank, last_rank, first_seen, last_seen, snapshots) VALUES (?1, ?2, ?3, ?3, ?4, ?4, 1)
				ON CONFLICT DO UPDATE SET best_rank = min(best_rank, ?3), last_rank = ?3, last_seen = ?4, snapshots = snapshots + 1`,
				[]any{id, region, rank, at.UnixMicro()}},
			{`UPDATE videos SET facets = facets || ' ' || ?2 WHERE id = ?1 AND instr(facets, ?2) = 0`, []any{id, store.RegionFacet(region)}},
			{`UPDATE video_stats SET best_rank = min(coalesce(best_rank, ?2), ?2) WHERE video = ?1`, []any{id, rank}},
			{`UPDATE archive_totals SET snapshots = snapshots + 1`, nil},
			{`UPDATE runs SET last_page_at = ?2 WHERE id = ?1`, []any{run, at.UnixMicro()}},
		} {
			if _, err := w.ExecContext(ctx, q.sql, q.args...); err != nil {
				tb.Fatalf("%s: %v", q.sql, err)
			}
		}
	}
	if _, err := w.ExecContext(ctx, `INSERT INTO video_fts (video_fts) VALUES ('rebuild')`); err != nil {
		tb.Fatal(err)
	}
	if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: at.Add(time.Minute)}); err != nil {
		tb.Fatal(err)
	}
}

// An archive from before 0004_history upgrades in place: its runs (every
// status and trigger they could have), snapshots and videos are all kept,
// its old charts can be read, exported and moved against, and imports can
// be recorded.
func TestMigrateHistoryUpgradesInPlace(t *testing.T) {
	ctx := context.Background()
	all := embedded(t)
	k := slices.Index(all, "0004_history.sql")
	if k < 0 {
		t.Fatalf("no 0004_history.sql among %v", all)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := store.Open(ctx, path, store.WithMigrations(migrationSet(t, all[:k], nil)))
	if err != nil {
		t.Fatal(err)
	}
	a, b := vid("aaa", "Alpha", 100), vid("bbb", "Bravo", 200)
	saveOldChart(t, old, "US", t0, 1, a, b)
	saveOldChart(t, old, "US", t0.Add(time.Hour), 1, b, a)
	for i, st := range []store.RunStatus{store.StatusFailed, store.StatusStoppedQuota, store.StatusInterrupted} {
		id := startOldRun(t, old, "GB", store.TriggerCLI, t0.Add(time.Duration(i)*time.Minute))
		end := store.RunEnd{Status: st, At: t0.Add(time.Hour), Units: int64(i), RefusedBy: "daily", RetryAt: t0.Add(2 * time.Hour), Error: "boom"}
		if err := old.FinishRun(ctx, id, end); err != nil {
			t.Fatal(err)
		}
	}
	startOldRun(t, old, "DE", store.TriggerSchedule, t0) // still running
	const runsQ = `SELECT * FROM runs ORDER BY id`
	const snapsQ = `SELECT run_id, rank, region, video, fetched_at, views FROM trending_snapshots ORDER BY run_id, rank`
	const videosQ = `SELECT id, video_id, title, first_seen FROM videos ORDER BY id`
	runsBefore, snapsBefore, videosBefore := dumpRows(t, old, runsQ), dumpRows(t, old, snapsQ), dumpRows(t, old, videosQ)
	old.Close()

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer db.Close()
	if got := dumpRows(t, db, runsQ); !slices.Equal(got, runsBefore) || len(got) != 6 {
		t.Errorf("runs changed:\n%s\nwas\n%s", strings.Join(got, "\n"), strings.Join(runsBefore, "\n"))
	}
	if got := dumpRows(t, db, snapsQ); !slices.Equal(got, snapsBefore) || len(got) != 4 {
		t.Errorf("snapshots changed: %v, was %v", got, snapsBefore)
	}
	if got := dumpRows(t, db, videosQ); !slices.Equal(got, videosBefore) {
		t.Errorf("videos changed: %v, was %v", got, videosBefore)
	}
	// Old charts read with their movement; their likes were not recorded.
	c, err := db.Chart(ctx, "US", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := chartEntries(c); !slices.Equal(got, []entry{{1, "bbb", store.MovementUp, 2}, {2, "aaa", store.MovementDown, 1}}) ||
		*c.Entries[0].Views != 200 || c.Entries[0].Likes != nil {
		t.Errorf("old chart after the upgrade: %v, likes %v", got, c.Entries[0].Likes)
	}
	if got := collect(t, db, store.SnapshotFilter{}); len(got) != 4 || got[0] != "US 01T12:00 #1 aaa v100 l- d- c- cd=false rd=false" {
		t.Errorf("old snapshots exported: %v", got)
	}
	// New runs: an import, and a fetch whose sightings keep their counts.
	if res := importChart(t, db, "US", t0.Add(-24*time.Hour), a); res.RunID == 0 {
		t.Errorf("import after the upgrade: %+v", res)
	}
	saveChart(t, db, "US", t0.Add(2*time.Hour), 1, a)
	if c, err := db.Chart(ctx, "US", time.Time{}, 0); err != nil || *c.Entries[0].Likes != 10 {
		t.Errorf("new chart after the upgrade: %+v %v", c, err)
	}
	ftsIntegrity(t, db)
}
