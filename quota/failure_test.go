package quota_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// deadRedis is a client for a unix socket that does not exist: every dial
// fails at once, and nothing else can be listening there (a TCP port opened
// and closed again could be taken by anything in between).
func deadRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: filepath.Join(tb.TempDir(), "no-redis.sock")})
	tb.Cleanup(func() { c.Close() })
	return c
}

type journalRow struct {
	ID, Call, Costs string
	At              int64
}

// journalRows are the record's pending rows: fail-open grants the backend
// has not seen yet.
func journalRows(tb testing.TB, db *sql.DB, cred string) []journalRow {
	tb.Helper()
	rows, err := db.Query(`SELECT id, call, costs, at FROM quota_grants WHERE credential = ? AND pending = 1 ORDER BY at, id`, cred)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []journalRow
	for rows.Next() {
		var r journalRow
		if err := rows.Scan(&r.ID, &r.Call, &r.Costs, &r.At); err != nil {
			tb.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func insertJournal(tb testing.TB, db *sql.DB, cred string, rows ...journalRow) {
	tb.Helper()
	for _, r := range rows {
		if _, err := db.Exec(`INSERT OR REPLACE INTO quota_grants(credential, id, call, costs, at, epoch, pending)
			VALUES (?, ?, ?, ?, ?, '', 1)`,
			cred, r.ID, r.Call, r.Costs, r.At); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestFailurePolicy: with Redis on a closed port, videos.list (open) is
// granted and journaled, search.list (closed) and channels.list (no policy:
// closed) fail with ErrBackend, which is not ErrRefused.
func TestFailurePolicy(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	cfg := testConfig()
	cfg.Credential = "failure-policy"
	cfg.Timeout = 300 * time.Millisecond
	var seen []quota.Result
	l := newLimiter(t, cfg, quota.NewRedis(deadRedis(t)), quota.WithRecord(db.Writer()),
		quota.WithObserver(func(r quota.Result) { seen = append(seen, r) }))
	ctx := context.Background()

	res, err := l.Reserve(ctx, "videos.list", quota.WithID("v-1"))
	if err != nil || !res.Granted || !res.FailOpen || res.Cost != 1 || res.RefusedBy != "" {
		t.Fatalf("videos.list = %+v, %v; want a fail-open grant", res, err)
	}
	if res.Limits[0].Used != -1 || res.Remaining() != -1 {
		t.Errorf("fail-open usage = %+v, want -1 (unknown)", res.Limits)
	}
	want := []journalRow{{ID: "v-1", Call: "videos.list", Costs: `{"daily":1}`, At: res.At.UnixMicro()}}
	if got := journalRows(t, db.Writer(), cfg.Credential); len(got) != 1 || got[0] != want[0] {
		t.Errorf("journal = %+v, want %+v", got, want)
	}
	// A retry with the same ID is journaled once.
	if r, err := l.Reserve(ctx, "videos.list", quota.WithID("v-1")); err != nil || !r.FailOpen {
		t.Fatalf("retry = %+v, %v", r, err)
	}
	if got := journalRows(t, db.Writer(), cfg.Credential); len(got) != 1 {
		t.Errorf("journal has %d rows after a retry, want 1", len(got))
	}

	for _, call := range []string{"search.list", "channels.list"} {
		res, err := l.Reserve(ctx, call)
		if !errors.Is(err, quota.ErrBackend) || errors.Is(err, quota.ErrRefused) || res.Granted || res.FailOpen {
			t.Errorf("%s = %+v, %v; want ErrBackend (and not ErrRefused)", call, res, err)
		}
	}
	// Only the fail-open grant was journaled.
	if got := journalRows(t, db.Writer(), cfg.Credential); len(got) != 1 {
		t.Errorf("journal = %+v, want only v-1", got)
	}
	if len(seen) != 4 || !seen[0].FailOpen || seen[2].Granted || seen[2].RefusedBy != "" {
		t.Errorf("observer saw %+v", seen)
	}

	for name, f := range map[string]func() error{
		"Status":        func() error { _, err := l.Status(ctx); return err },
		"Ping":          func() error { return l.Ping(ctx) },
		"MarkExhausted": func() error { return l.MarkExhausted(ctx, time.Now().Add(time.Hour), "x") },
		"Release":       func() error { return l.Release(ctx, "other") },
	} {
		if err := f(); !errors.Is(err, quota.ErrBackend) {
			t.Errorf("%s = %v, want ErrBackend", name, err)
		}
	}
	// Releasing a fail-open grant that was never replayed drops its journal row.
	if err := l.Release(ctx, "v-1"); err != nil {
		t.Errorf("Release(v-1) = %v, want nil (its journal row was the reservation)", err)
	}
	if got := journalRows(t, db.Writer(), cfg.Credential); len(got) != 0 {
		t.Errorf("journal after release = %+v, want empty", got)
	}

	// A caller that gives up is not a backend outage: no fail-open grant.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if res, err := l.Reserve(cctx, "videos.list"); res.Granted || !errors.Is(err, context.Canceled) {
		t.Errorf("Reserve(canceled) = %+v, %v; want context.Canceled and no grant", res, err)
	}
}

// TestFailOpenNeedsARecord: a grant that cannot be recorded anywhere is not
// given. Without a record, or when the record cannot be written (the
// archive is locked: the embedded ledger's own case), a fail-open call is
// refused with ErrBackend instead.
func TestFailOpenNeedsARecord(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Credential = "no-record"
	cfg.Timeout = 300 * time.Millisecond
	l := newLimiter(t, cfg, quota.NewRedis(deadRedis(t)))
	if res, err := l.Reserve(context.Background(), "videos.list"); !errors.Is(err, quota.ErrBackend) || res.Granted {
		t.Errorf("Reserve without a record = %+v, %v; want ErrBackend and no grant", res, err)
	}

	// The embedded ledger with its archive locked by another process: the
	// ledger times out (unavailable), and the record, in the same file,
	// cannot be written either.
	db := openStore(t)
	locker, err := sql.Open("sqlite", db.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locker.Close() })
	conn, err := locker.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.ExecContext(context.Background(), `ROLLBACK`); conn.Close() })
	ll := newLimiter(t, cfg, quota.NewSQLite(db.Writer()), quota.WithRecord(db.Writer()))
	res, err := ll.Reserve(context.Background(), "videos.list")
	if !errors.Is(err, quota.ErrBackend) || res.Granted || res.FailOpen {
		t.Errorf("Reserve on a locked archive = %+v, %v; want ErrBackend and no grant", res, err)
	}
}

// TestFailOpenOnTimeout: a Redis that accepts and never answers is cut off by
// Config.Timeout and treated like an unreachable one, whether or not the
// client itself honours context deadlines.
func TestFailOpenOnTimeout(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", ctxTimeouts), func(t *testing.T) {
			t.Parallel()
			p := redistest.NewProxy(t, rdb.Options().Addr)
			p.Set(redistest.Stalled)
			// The client's own timeouts are an hour, so only Config.Timeout
			// can end these calls (without it the test hangs until go test's
			// -timeout), and the error must carry its deadline. No elapsed
			// time is measured.
			client := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: ctxTimeouts,
				DialTimeout: time.Hour, ReadTimeout: time.Hour, WriteTimeout: time.Hour})
			t.Cleanup(func() { client.Close() })
			cfg := testConfig()
			cfg.Credential = redistest.Prefix(t)
			cfg.Timeout = 200 * time.Millisecond
			l := newLimiter(t, cfg, quota.NewRedis(client), quota.WithRecord(openStore(t).Writer()))

			res, err := l.Reserve(context.Background(), "videos.list")
			if err != nil || !res.FailOpen {
				t.Errorf("videos.list = %+v, %v; want fail-open", res, err)
			}
			_, err = l.Reserve(context.Background(), "search.list")
			if !errors.Is(err, quota.ErrBackend) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("search.list = %v, want ErrBackend from Config.Timeout's deadline", err)
			}
		})
	}
}

// TestBackendErrorIsNotFailOpen: a Redis that answers with an error (here a
// key of the wrong type) is a bug to surface, not an outage to ride out.
func TestBackendErrorIsNotFailOpen(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := testConfig()
	cfg.Credential = redistest.Prefix(t)
	l := newLimiter(t, cfg, quota.NewRedis(rdb))
	logKey := "ytrend:{" + cfg.Credential + "}:log:daily"
	if err := rdb.Set(context.Background(), logKey, "not a sorted set", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Del(context.Background(), logKey) })
	res, err := l.Reserve(context.Background(), "videos.list")
	if !errors.Is(err, quota.ErrBackend) || res.Granted || res.FailOpen {
		t.Errorf("Reserve = %+v, %v; want ErrBackend without a fail-open grant", res, err)
	}
}

// TestJournalReplay: fail-open grants made while Redis was away are added
// once it is back (automatically, by the same Limiter), at their journaled
// times; replaying again adds nothing.
func TestJournalReplay(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	p := redistest.NewProxy(t, rdb.Options().Addr)
	client := redis.NewClient(&redis.Options{Addr: p.Addr()})
	t.Cleanup(func() { client.Close() })
	db := openStore(t)
	cfg := testConfig()
	cfg.Credential = redistest.Prefix(t)
	cfg.Timeout = 300 * time.Millisecond
	l := newLimiter(t, cfg, quota.NewRedis(client), quota.WithRecord(db.Writer()))
	direct := newLimiter(t, cfg, quota.NewRedis(rdb)) // another process, Redis never lost
	ctx := context.Background()

	mustGrant(t, l, "videos.list") // connections pooled, then Redis goes away
	p.Set(redistest.Dead)
	var open []quota.Result
	for range 3 {
		res, err := l.Reserve(ctx, "videos.list")
		if err != nil || !res.FailOpen {
			t.Fatalf("while dead: %+v, %v; want fail-open", res, err)
		}
		open = append(open, res)
	}
	if _, err := l.Reserve(ctx, "search.list"); !errors.Is(err, quota.ErrBackend) {
		t.Fatalf("search.list while dead = %v, want ErrBackend", err)
	}
	journaled := journalRows(t, db.Writer(), cfg.Credential)
	if len(journaled) != 3 {
		t.Fatalf("journal holds %d rows, want 3", len(journaled))
	}
	if u := used(t, direct); u["daily"] != 1 {
		t.Fatalf("Redis saw %d units while the proxy was dead, want 1", u["daily"])
	}

	p.Set(redistest.Forwarding)
	res := mustGrant(t, l, "videos.list") // the backend answers: the journal is replayed
	if res.FailOpen {
		t.Fatal("granted fail-open with Redis back")
	}
	if u := used(t, direct); u["daily"] != 5 {
		t.Errorf("daily used = %d after replay, want 5 (1 + 3 replayed + 1)", u["daily"])
	}
	if got := journalRows(t, db.Writer(), cfg.Credential); len(got) != 0 {
		t.Errorf("journal still holds %+v after replay", got)
	}
	// Each replayed entry sits at its journaled (fail-open) time.
	for _, r := range open {
		score, err := rdb.ZScore(ctx, "ytrend:{"+cfg.Credential+"}:log:daily", r.ID+"|1").Result()
		if err != nil || int64(score) != r.At.UnixMicro() {
			t.Errorf("entry %s: score %v (%v), want %d", r.ID, int64(score), err, r.At.UnixMicro())
		}
	}

	// Replaying the same rows again adds nothing.
	insertJournal(t, db.Writer(), cfg.Credential, journaled...)
	if n, err := replayed(l); err != nil || n != 0 {
		t.Errorf("second replay = %d, %v; want 0 added", n, err)
	}
	if u := used(t, direct); u["daily"] != 5 {
		t.Errorf("daily used = %d after a second replay, want still 5", u["daily"])
	}
	if got := journalRows(t, db.Writer(), cfg.Credential); len(got) != 0 {
		t.Errorf("journal not trimmed by the second replay: %+v", got)
	}

	// A grant whose reply was lost (it reached Redis) and was also journaled
	// is not counted twice.
	mustGrant(t, direct, "videos.list", quota.WithID("lost-reply"))
	insertJournal(t, db.Writer(), cfg.Credential, journalRow{ID: "lost-reply", Call: "videos.list", Costs: `{"daily":1}`, At: time.Now().UnixMicro()})
	if n, err := replayed(l); err != nil || n != 0 {
		t.Errorf("replay of a lost-reply grant = %d, %v; want 0", n, err)
	}
	// An entry older than its window is dropped, not added.
	insertJournal(t, db.Writer(), cfg.Credential, journalRow{ID: "ancient", Call: "videos.list", Costs: `{"daily":1}`, At: time.Now().Add(-25 * time.Hour).UnixMicro()})
	if n, err := replayed(l); err != nil || n != 0 {
		t.Errorf("replay of an expired entry = %d, %v; want 0", n, err)
	}
	if u := used(t, direct); u["daily"] != 6 {
		t.Errorf("daily used = %d, want 6", u["daily"])
	}
	// A journaled search.list counts in both of its limits.
	insertJournal(t, db.Writer(), cfg.Credential, journalRow{ID: "s1", Call: "search.list", Costs: `{"daily":100,"search":100}`, At: time.Now().UnixMicro()})
	if n, err := replayed(l); err != nil || n != 1 {
		t.Errorf("replay of a search = %d, %v; want 1", n, err)
	}
	if u := used(t, direct); u["daily"] != 106 || u["search"] != 100 {
		t.Errorf("used = %v, want daily 106 search 100", u)
	}
}

// TestJournalReplayAtStartup: rows left by an earlier process are replayed
// by a new Limiter before its first answer (here a Status) is given.
func TestJournalReplayAtStartup(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	db := openStore(t)
	cfg := testConfig()
	cfg.Credential = redistest.Prefix(t)
	insertJournal(t, db.Writer(), cfg.Credential,
		journalRow{ID: "left-1", Call: "videos.list", Costs: `{"daily":1}`, At: time.Now().Add(-time.Minute).UnixMicro()},
		journalRow{ID: "left-2", Call: "videos.list", Costs: `{"daily":1}`, At: time.Now().Add(-time.Minute).UnixMicro()})
	l := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(db.Writer()))
	if u := used(t, l); u["daily"] != 2 {
		t.Errorf("daily used = %d after the first answer, want the 2 journaled units", u["daily"])
	}
	if got := journalRows(t, db.Writer(), cfg.Credential); len(got) != 0 {
		t.Errorf("journal = %+v, want empty", got)
	}
}

// replayed runs the sync a Limiter runs when fail-open grants wait, and
// returns how many grants it added.
func replayed(l *quota.Limiter) (int, error) {
	rep, err := l.Sync(context.Background(), false)
	return rep.Added, err
}

// TestBackendErrorsSayItOnce: an unreachable Redis fails every call with
// one "quota: backend unavailable" and its cause. Status and Reserve first
// bring this process's books to the backend (a sync), and that sync's
// ErrBackend was wrapped in theirs (red team: "quota: backend unavailable:
// status: quota: backend unavailable: sync: ..."). The Redis here is a
// listener this test holds: one that never accepts (the kernel completes
// the handshake, nothing answers: Config.Timeout's deadline ends each call)
// and one that closes every connection it accepts.
func TestBackendErrorsSayItOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		accept   bool
		deadline bool // the cause is Config.Timeout's deadline
	}{
		{"never accepts", false, true},
		{"accepts and closes", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			if tc.accept {
				go func() {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						c.Close()
					}
				}()
			}
			client := redis.NewClient(&redis.Options{Addr: ln.Addr().String()})
			t.Cleanup(func() { client.Close() })
			cfg := testConfig()
			cfg.Credential = "say-it-once"
			cfg.Timeout = 300 * time.Millisecond
			l := newLimiter(t, cfg, quota.NewRedis(client), quota.WithRecord(openStore(t).Writer()))
			ctx := context.Background()
			for _, c := range []struct {
				name string
				call func() error
			}{
				{"Status", func() error { _, err := l.Status(ctx); return err }},
				{"Reserve search.list", func() error { _, err := l.Reserve(ctx, "search.list"); return err }},
				{"Sync", func() error { _, err := l.Sync(ctx, true); return err }},
				{"Ping", func() error { return l.Ping(ctx) }},
				{"MarkExhausted", func() error { return l.MarkExhausted(ctx, time.Now().Add(time.Hour), "x") }},
				{"Release", func() error { return l.Release(ctx, "other") }},
			} {
				err := c.call()
				if !errors.Is(err, quota.ErrBackend) || !strings.HasPrefix(err.Error(), "quota: backend unavailable: ") ||
					strings.Count(err.Error(), "backend unavailable") != 1 {
					t.Errorf("%s: %v; want ErrBackend, saying \"quota: backend unavailable\" once, first", c.name, err)
				}
				if tc.deadline && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s: %v; want it to match context.DeadlineExceeded", c.name, err)
				}
			}
		})
	}
}
