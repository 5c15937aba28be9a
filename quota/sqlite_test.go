package quota_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
)

// Tests of the embedded ledger with an injected clock: exact instants, no
// sleeping.

func ledgerLimiter(tb testing.TB, cfg quota.Config, start time.Time) (*quota.Limiter, *fakeClock, *quota.SQLite) {
	tb.Helper()
	clock := &fakeClock{now: start}
	db := openStore(tb)
	b := quota.NewSQLite(db.Writer(), quota.WithClock(clock.Now))
	return newLimiter(tb, cfg, b, quota.WithRecord(db.Writer())), clock, b
}

// TestLedgerMarkExhaustedAcrossDST: Google's quota resets at midnight in Los
// Angeles, so on the night clocks change the wait is 22h or 24h30m, not a
// naive 23h or 23h30m.
func TestLedgerMarkExhaustedAcrossDST(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		now   string // UTC
		want  time.Duration
		until string // UTC
	}{
		{"spring forward: 01:00 PST, next midnight is PDT", "2026-03-08T09:00:00Z", 22 * time.Hour, "2026-03-09T07:00:00Z"},
		{"fall back: 00:30 PDT, next midnight is PST", "2026-11-01T07:30:00Z", 24*time.Hour + 30*time.Minute, "2026-11-02T08:00:00Z"},
		{"ordinary winter night: 23:00 PST", "2026-01-16T07:00:00Z", time.Hour, "2026-01-16T08:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now, _ := time.Parse(time.RFC3339, tt.now)
			until, _ := time.Parse(time.RFC3339, tt.until)
			cfg := testConfig()
			l, clock, _ := ledgerLimiter(t, cfg, now)
			if err := l.MarkExhausted(context.Background(), time.Time{}, "quotaExceeded"); err != nil {
				t.Fatal(err)
			}
			res := mustRefuse(t, l, "videos.list")
			if res.RefusedBy != "upstream" || res.RetryAfter != tt.want {
				t.Errorf("refused by %q, RetryAfter %s; want upstream, %s", res.RefusedBy, res.RetryAfter, tt.want)
			}
			if st := status(t, l); st.Exhausted == nil || !st.Exhausted.Until.Equal(until) {
				t.Errorf("mark = %+v, want until %s", st.Exhausted, until)
			}
			clock.Set(until.Add(-time.Microsecond))
			if r := mustRefuse(t, l, "videos.list"); r.RetryAfter != time.Microsecond {
				t.Errorf("one µs before the reset RetryAfter = %s, want 1µs", r.RetryAfter)
			}
			clock.Set(until)
			mustGrant(t, l, "videos.list")
			if st := status(t, l); st.Exhausted != nil {
				t.Errorf("mark still reported after its end: %+v", st.Exhausted)
			}
		})
	}
}

// TestLedgerRetryAfterExact: with a controlled clock Retry-After is exact to
// the microsecond, and an entry stops counting exactly at its time + window.
func TestLedgerRetryAfterExact(t *testing.T) {
	t.Parallel()
	const window = time.Hour
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	costs := map[string]int64{"c3": 3, "c5": 5, "c4": 4, "c9": 9}
	l, clock, _ := ledgerLimiter(t, oneLimit("exact", 10, window, costs), t0)
	mustGrant(t, l, "c3")
	clock.Advance(10 * time.Minute)
	t1 := clock.Now()
	mustGrant(t, l, "c5")
	clock.Advance(5 * time.Minute)
	now := clock.Now()

	tests := []struct {
		call string
		want time.Duration
	}{
		{"c4", t0.Add(window).Sub(now)}, // 3 units must leave: the first entry
		{"c9", t1.Add(window).Sub(now)}, // 7 must leave: both entries
	}
	for _, tt := range tests {
		if r := mustRefuse(t, l, tt.call); r.RetryAfter != tt.want {
			t.Errorf("%s: RetryAfter = %s, want %s", tt.call, r.RetryAfter, tt.want)
		}
	}
	clock.Set(t0.Add(window - time.Microsecond))
	if r := mustRefuse(t, l, "c4"); r.RetryAfter != time.Microsecond {
		t.Errorf("1µs before the slide: RetryAfter = %s, want 1µs", r.RetryAfter)
	}
	clock.Set(t0.Add(window))
	if r := mustGrant(t, l, "c4"); r.Limits[0].Used != 9 {
		t.Errorf("at t0+window used = %d, want 5+4", r.Limits[0].Used)
	}
	if st := status(t, l); st.Limits[0].Reservations != 2 || st.Limits[0].NextFree != t1.Add(window).Sub(t0.Add(window)) {
		t.Errorf("status = %+v", st.Limits[0])
	}
}

// TestLedgerRows: the tables hold exactly one row per reservation and limit
// that counts it, and the epoch counts them.
func TestLedgerRows(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	l := newLimiter(t, testConfig(), quota.NewSQLite(db.Writer()))
	mustGrant(t, l, "search.list", quota.WithID("s1"))
	mustGrant(t, l, "videos.list", quota.WithID("v1"))
	mustGrant(t, l, "videos.list", quota.WithID("v2"))
	mustRefuse(t, l, "", quota.WithCost(1000), quota.WithID("big"))

	rows, err := db.Writer().Query(`SELECT limit_name, id, cost FROM quota_log WHERE credential = 'main' ORDER BY limit_name, id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var name, id string
		var cost int64
		if err := rows.Scan(&name, &id, &cost); err != nil {
			t.Fatal(err)
		}
		got = append(got, name+"/"+id+"|"+strconv.FormatInt(cost, 10))
	}
	rows.Close()
	want := []string{"daily/s1|100", "daily/v1|1", "daily/v2|1", "search/s1|100"}
	if len(got) != len(want) {
		t.Fatalf("quota_log = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("quota_log[%d] = %s, want %s", i, got[i], want[i])
		}
	}
	var entries int64
	db.Writer().QueryRow(`SELECT entries FROM quota_epoch WHERE credential = 'main'`).Scan(&entries)
	if entries != 4 {
		t.Errorf("quota_epoch.entries = %d, want the 4 rows", entries)
	}
}

// TestLedgerJournalReplay: journaled fail-open grants replay into the ledger
// too, at their own times, once.
func TestLedgerJournalReplay(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cfg := testConfig()
	clock := &fakeClock{now: start}
	db := openStore(t)
	l := newLimiter(t, cfg, quota.NewSQLite(db.Writer(), quota.WithClock(clock.Now)), quota.WithRecord(db.Writer()))
	rows := []journalRow{
		{ID: "j1", Call: "videos.list", Costs: `{"daily":1}`, At: start.Add(-time.Hour).UnixMicro()},
		{ID: "j2", Call: "search.list", Costs: `{"daily":100,"search":100}`, At: start.Add(-30 * time.Minute).UnixMicro()},
		{ID: "j3", Call: "search.list", Costs: `{"daily":100,"search":100}`, At: start.Add(-2 * time.Hour).UnixMicro()}, // outside the 1h search window
		{ID: "j4", Call: "videos.list", Costs: `{"daily":1,"retired":5}`, At: start.Add(-25 * time.Hour).UnixMicro()},   // outside every window
	}
	insertJournal(t, db.Writer(), "main", rows...)
	if n, err := replayed(l); err != nil || n != 3 {
		t.Fatalf("ReplayJournal = %d, %v; want 3 entries added", n, err)
	}
	if u := used(t, l); u["daily"] != 201 || u["search"] != 100 {
		t.Errorf("used = %v, want daily 201 search 100", u)
	}
	insertJournal(t, db.Writer(), "main", rows...)
	if n, err := replayed(l); err != nil || n != 0 {
		t.Errorf("second ReplayJournal = %d, %v; want 0", n, err)
	}
	st := status(t, l)
	if st.Limits[0].Used != 201 || st.Limits[0].Reservations != 3 || st.Limits[0].NextFree != 22*time.Hour {
		t.Errorf("daily = %+v, want used 201 in 3 entries, the oldest (j3, 2h ago) freeing in 22h", st.Limits[0])
	}
}

// TestLedgerClockJump: a host clock that jumps forward past the window and
// back loses nothing. While it is ahead the old entries do not count (the
// clock says they are old); once it is back they count again, beside what
// was granted meanwhile.
func TestLedgerClockJump(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{now: t0}
	l := newLimiter(t, oneLimit("main", 100, time.Hour, smallCosts), quota.NewSQLite(openStore(t).Writer(), quota.WithClock(clock.Now)))
	for range 10 {
		mustGrant(t, l, "seven")
	}
	clock.Set(t0.Add(3 * time.Hour))
	if r := mustGrant(t, l, "one"); r.Limits[0].Used != 1 {
		t.Errorf("while the clock is ahead: used %d, want 1", r.Limits[0].Used)
	}
	clock.Set(t0.Add(time.Minute))
	if r := mustGrant(t, l, "seven"); r.Limits[0].Used != 78 {
		t.Errorf("clock back: used %d, want 70 + 1 + 7: the entries survived the jump", r.Limits[0].Used)
	}
}

// TestLedgerReleaseEveryCost: a release removes every entry of its ID, even
// rows an older version left with two costs under one ID.
func TestLedgerReleaseEveryCost(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	l := newLimiter(t, oneLimit("main", 100, time.Hour, smallCosts), quota.NewSQLite(db.Writer()))
	mustGrant(t, l, "", quota.WithCost(5), quota.WithID("twice"))
	if _, err := db.Writer().Exec(`INSERT INTO quota_log(credential, limit_name, id, cost, at)
		SELECT credential, limit_name, id, 7, at FROM quota_log WHERE id = 'twice'`); err != nil {
		t.Fatal(err)
	}
	if u := used(t, l)["only"]; u != 12 {
		t.Fatalf("used = %d, want the legacy 5 + 7", u)
	}
	if err := l.Release(context.Background(), "twice"); err != nil {
		t.Fatal(err)
	}
	if u := used(t, l)["only"]; u != 0 {
		t.Errorf("used after release = %d, want 0", u)
	}
}

// TestLedgerWindowMatchesTheLog is the embedded ledger's counting against its
// own log, on a real archive: random reservations (two limits, one that only
// some calls count), releases, rows written behind the ledger's back, small
// steps and clock jumps forward past the window, past the retention, and
// back. After every step each window total must equal the log's sum past its
// cutoff, and every reported usage the exact sum of the log's window; no
// grant may go past a limit, and no refusal may come while the reservation
// fit.
func TestLedgerWindowMatchesTheLog(t *testing.T) {
	t.Parallel()
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 21))
			t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			clock := &fakeClock{now: t0}
			db := openStore(t)
			cfg := quota.Config{
				Credential: "prop",
				Costs:      map[string]int64{"one": 1, "seven": 7, "search": 3},
				Limits: []quota.Limit{
					{Name: "hour", Units: 60, Window: time.Hour},
					{Name: "short", Units: 20, Window: 10 * time.Minute, Costs: map[string]int64{"search": 5}},
				},
				Timeout:      5 * time.Second,
				RebuildGrace: noGrace,
			}
			l := newLimiter(t, cfg, quota.NewSQLite(db.Writer(), quota.WithClock(clock.Now)))
			var ids []string
			calls := []string{"one", "seven", "search"}
			for step := range 500 {
				switch op := rng.IntN(100); {
				case op < 55:
					id := fmt.Sprintf("r%d", step)
					call := calls[rng.IntN(len(calls))]
					res := reserve(t, l, call, quota.WithID(id))
					if res.Granted {
						ids = append(ids, id)
					}
					checkUsage(t, db.Writer(), cfg, res, step)
				case op < 65 && len(ids) > 0:
					i := rng.IntN(len(ids))
					// Past the retention its entries are gone already.
					if err := l.Release(context.Background(), ids[i]); err != nil && !errors.Is(err, quota.ErrNotFound) {
						t.Fatal(err)
					}
					ids = slices.Delete(ids, i, i+1)
				case op < 70:
					// A row another writer (an older ytrend, a repair by hand)
					// put in the log, at any time in the last two hours.
					at := clock.Now().Add(-time.Duration(rng.Int64N(1536)) * 4687500 * time.Microsecond)
					if _, err := db.Writer().Exec(`INSERT INTO quota_log(credential, limit_name, id, cost, at) VALUES ('prop', 'hour', ?, ?, ?)`,
						fmt.Sprintf("x%d", step), 1+rng.Int64N(3), at.UnixMicro()); err != nil {
						t.Fatal(err)
					}
				case op < 78:
					clock.Advance(time.Duration(rng.Int64N(int64(5 * time.Minute))))
				case op < 85:
					// On a grid, so that entries and window starts meet.
					clock.Advance(time.Duration(rng.Int64N(40)) * 4687500 * time.Microsecond)
				case op < 92:
					clock.Advance(-time.Duration(rng.Int64N(int64(3 * time.Hour)))) // back, even before earlier grants
				case op < 97:
					clock.Advance(time.Hour + time.Duration(rng.Int64N(int64(3*time.Hour)))) // past every window
				default:
					clock.Advance(8 * 24 * time.Hour) // past the retention: the old entries go for good
				}
				st := status(t, l)
				checkWindowTotals(t, db.Writer(), step)
				for i, ls := range st.Limits {
					if want := windowSum(t, db.Writer(), cfg.Limits[i], st.At); ls.Used != want {
						t.Fatalf("step %d: status says %s holds %d, the log %d", step, ls.Name, ls.Used, want)
					}
				}
			}
		})
	}
}

// windowSum is the exact sum of lim's entries in its window at now, from
// the log itself.
func windowSum(tb testing.TB, db *sql.DB, lim quota.Limit, now time.Time) int64 {
	tb.Helper()
	var sum int64
	if err := db.QueryRow(`SELECT COALESCE(SUM(cost), 0) FROM quota_log WHERE credential = 'prop' AND limit_name = ? AND at > ?`,
		lim.Name, now.Add(-lim.Window).UnixMicro()).Scan(&sum); err != nil {
		tb.Fatal(err)
	}
	return sum
}

// checkUsage: a reservation's reported usage is the log's, a grant stays
// within every limit, and a refusal comes only from a limit it would pass.
func checkUsage(tb testing.TB, db *sql.DB, cfg quota.Config, res quota.Result, step int) {
	tb.Helper()
	overflows := false
	for i, u := range res.Limits {
		exact := windowSum(tb, db, cfg.Limits[i], res.At)
		if u.Used != exact {
			tb.Fatalf("step %d: %s reported %d used, the log holds %d", step, u.Name, u.Used, exact)
		}
		if res.Granted && u.Cost > 0 && u.Used > u.Units {
			tb.Fatalf("step %d: granted %s past %s: %d of %d", step, res.Call, u.Name, u.Used, u.Units)
		}
		if u.Cost > 0 && exact+u.Cost > u.Units {
			overflows = true
		}
	}
	if !res.Granted && !overflows {
		tb.Fatalf("step %d: %s refused by %q although it fit every limit: %+v", step, res.Call, res.RefusedBy, res.Limits)
	}
}

// checkWindowTotals: every quota_window row is exactly its log's sum past its
// cutoff.
func checkWindowTotals(tb testing.TB, db *sql.DB, step int) {
	tb.Helper()
	got := dumpQuery(tb, db, `SELECT limit_name, cutoff, used, 0 FROM quota_window WHERE credential = 'prop' ORDER BY 1`)
	want := dumpQuery(tb, db, `SELECT w.limit_name, w.cutoff, COALESCE(SUM(l.cost), 0), 0 FROM quota_window w
		LEFT JOIN quota_log l ON l.credential = w.credential AND l.limit_name = w.limit_name AND l.at > w.cutoff
		WHERE w.credential = 'prop' GROUP BY 1, 2 ORDER BY 1`)
	if len(got) != 2 || !slices.Equal(got, want) {
		tb.Fatalf("step %d: the window totals drifted from the log:\n totals %v\n log    %v", step, got, want)
	}
}

func dumpQuery(tb testing.TB, db *sql.DB, query string) []string {
	tb.Helper()
	rows, err := db.Query(query)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		var b, used, n int64
		if err := rows.Scan(&name, &b, &used, &n); err != nil {
			tb.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s/%d:%d/%d", name, b, used, n))
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestLedgerWindowEdges: an entry counts until the microsecond its window
// has passed it, and the window's start moves over entries on neighbouring
// microseconds one by one.
func TestLedgerWindowEdges(t *testing.T) {
	t.Parallel()
	const width = 28125 * time.Millisecond // the third entry is this much after the first
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	l, clock, _ := ledgerLimiter(t, oneLimit("main", 100, time.Hour, smallCosts), t0)
	mustGrant(t, l, "one")
	clock.Set(t0.Add(time.Microsecond))
	mustGrant(t, l, "one")
	clock.Set(t0.Add(width - time.Microsecond))
	mustGrant(t, l, "seven")
	for _, tt := range []struct {
		at   time.Duration // after t0
		want int64
	}{
		{time.Hour - width, 9},                      // the window starts before them all
		{time.Hour - time.Microsecond, 9},           // ... and one µs before t0
		{time.Hour, 8},                              // at t0: the first entry has left
		{time.Hour + time.Microsecond, 7},           // the second too
		{time.Hour + width - 2*time.Microsecond, 7}, // the last µs the third counts
		{time.Hour + width - time.Microsecond, 0},
	} {
		clock.Set(t0.Add(tt.at))
		if got := status(t, l).Limits[0].Used; got != tt.want {
			t.Errorf("at t0+%s: used %d, want %d", tt.at, got, tt.want)
		}
	}
}
