package quota_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/logbuf"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// grace is the rebuild grace these tests use. Redis' clock cannot be faked,
// so the tests wait it out; it must outlast every step a test takes while
// it expects the grace in force, on a loaded 2-core machine under -race
// (300 ms did not).
const grace = 3 * time.Second

// lossCfg is a 100-unit hour with 1/7/100 costs and a short grace.
func lossCfg(cred string) quota.Config {
	cfg := oneLimit(cred, 100, time.Hour, mixedCosts)
	cfg.RebuildGrace = grace
	return cfg
}

// begin starts cfg's books on b as the first process would, without the
// grace a first start costs (a missing epoch is a loss), so that a test of a
// later loss starts from a settled ledger.
func begin(tb testing.TB, cfg quota.Config, b quota.Backend) {
	tb.Helper()
	cfg.RebuildGrace = noGrace
	if _, err := newLimiter(tb, cfg, b).Sync(context.Background(), false); err != nil {
		tb.Fatalf("begin the books: %v", err)
	}
}

// spend reserves call n times and fails unless each is granted.
func spend(tb testing.TB, l *quota.Limiter, call string, n int) {
	tb.Helper()
	for range n {
		mustGrant(tb, l, call)
	}
}

// refusedBy reserves call and fails unless refused by limit; it returns the
// refusal's Retry-After.
func refusedBy(tb testing.TB, l *quota.Limiter, call, limit string) time.Duration {
	tb.Helper()
	res := mustRefuse(tb, l, call)
	if res.RefusedBy != limit {
		tb.Fatalf("Reserve(%q) refused by %q, want %q", call, res.RefusedBy, limit)
	}
	return res.RetryAfter
}

// TestBooksSurviveRedisLoss: two processes with separate archives spend,
// then Redis loses the credential's books - every key (a restart without
// persistence, FLUSHALL), or only the logs under their totals (eviction,
// DEL). Once each has reserved again, quota status equals the survivors'
// in-window grants, and no window ever holds more than the limit.
func TestBooksSurviveRedisLoss(t *testing.T) {
	t.Parallel()
	losses := []struct {
		name string
		keys string // the pattern of keys deleted
	}{
		{"everything", "*"},
		{"logs only", "log:*"},
	}
	for _, loss := range losses {
		t.Run(loss.name, func(t *testing.T) {
			t.Parallel()
			rdb := redistest.Client(t)
			cfg := lossCfg(redistest.Prefix(t))
			begin(t, cfg, quota.NewRedis(rdb))
			a := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()))
			b := newLimiter(t, cfg, quota.NewRedis(redistest.Client(t)), quota.WithRecord(openStore(t).Writer()))
			spend(t, a, "seven", 3)
			spend(t, a, "one", 1)
			spend(t, b, "seven", 4)
			if u := used(t, a)["only"]; u != 50 {
				t.Fatalf("used before the loss = %d, want 50", u)
			}
			before := status(t, a).Ledger

			ctx := context.Background()
			keys, err := rdb.Keys(ctx, "ytrend:{"+cfg.Credential+"}:"+loss.keys).Result()
			if err != nil || len(keys) == 0 {
				t.Fatalf("keys to lose: %v, %v", keys, err)
			}
			if err := rdb.Del(ctx, keys...).Err(); err != nil {
				t.Fatal(err)
			}

			// a meets the loss: it restores its own 22 units, then is refused
			// for the grace period like everyone else.
			if w := refusedBy(t, a, "seven", quota.Rebuild); w <= 0 || w > grace {
				t.Errorf("Retry-After during the grace = %s, want within (0, %s]", w, grace)
			}
			st := status(t, a)
			if st.Limits[0].Used != 22 || st.Ledger.Restored != 4 || st.Ledger.Epoch == before.Epoch || st.Ledger.Rebuilt.IsZero() {
				t.Errorf("after a's restore: used %d, ledger %+v; want 22 units from 4 restored grants in a new epoch",
					st.Limits[0].Used, st.Ledger)
			}
			// b meets the new epoch and restores its 28 before its own decision.
			refusedBy(t, b, "one", quota.Rebuild)
			st = status(t, b)
			if st.Limits[0].Used != 50 || st.Ledger.Restored != 8 {
				t.Errorf("after b's restore: used %d, restored %d; want the survivors' 50 units, 8 grants",
					st.Limits[0].Used, st.Ledger.Restored)
			}

			time.Sleep(grace)       // wait the grace out; nothing here measures time
			spend(t, b, "seven", 7) // 99
			spend(t, a, "one", 1)   // 100
			refusedBy(t, a, "one", "only")
			refusedBy(t, b, "seven", "only")
			if u := used(t, a)["only"]; u != 100 {
				t.Errorf("used = %d, want exactly the limit", u)
			}
		})
	}
}

// TestBooksRestoredAtStartup: a process that spent before the loss and
// starts again (a CLI, a restarted daemon) finds the epoch it spent under in
// its record, so it restores its share before its first decision.
func TestBooksRestoredAtStartup(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := lossCfg(redistest.Prefix(t))
	begin(t, cfg, quota.NewRedis(rdb))
	archive := openStore(t)
	first := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(archive.Writer()))
	spend(t, first, "seven", 5)
	wipe(t, cfg.Credential)

	again := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(archive.Writer()))
	refusedBy(t, again, "one", quota.Rebuild)
	if st := status(t, again); st.Limits[0].Used != 35 || st.Ledger.Restored != 5 {
		t.Errorf("used %d, restored %d; want 35 units from 5 grants", st.Limits[0].Used, st.Ledger.Restored)
	}
}

// TestFirstStartIsALoss: on Redis nobody can tell a first start from a
// restart that lost the books, so a missing epoch always starts a new one
// with a grace, whoever meets it first; then the books are settled. The
// embedded ledger lives in the archive with the records of every process
// that spends from it, so its first start is decided at once.
func TestFirstStartIsALoss(t *testing.T) {
	t.Parallel()
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := newLimiter(t, lossCfg(redistest.Prefix(t)), b.backend, quota.WithRecord(b.record))
			if name == "redis" {
				if w := refusedBy(t, l, "seven", quota.Rebuild); w <= 0 || w > grace {
					t.Errorf("Retry-After of the first start = %s, want within (0, %s]", w, grace)
				}
				st := status(t, l)
				if st.Ledger.Epoch == "" || st.Ledger.Rebuilt.IsZero() || st.Ledger.GraceUntil.IsZero() {
					t.Fatalf("ledger = %+v, want a new epoch started by a loss, with its grace", st.Ledger)
				}
				waitGrace(t, l)
			}
			mustGrant(t, l, "seven")
			st := status(t, l)
			if st.Ledger.Epoch == "" || st.Ledger.Created.IsZero() || st.Ledger.Age < 0 {
				t.Errorf("ledger = %+v, want an epoch", st.Ledger)
			}
			if name == "ledger" && !st.Ledger.Rebuilt.IsZero() {
				t.Errorf("ledger = %+v, want an embedded ledger that was never rebuilt", st.Ledger)
			}
		})
	}
}

// waitGrace waits until l's ledger is past its grace, by the ledger's clock.
func waitGrace(tb testing.TB, l *quota.Limiter) {
	tb.Helper()
	waitUntil(tb, "the grace to pass", func() bool {
		st := status(tb, l)
		return !st.At.Before(st.Ledger.GraceUntil)
	})
}

// TestEpochCheckRestoresPromptly: Sync (what `ytrend run` calls every few
// seconds) notices the loss without reserving anything, and starts the grace
// at once; a process that never spent is then refused too.
func TestEpochCheckRestoresPromptly(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := lossCfg(redistest.Prefix(t))
	begin(t, cfg, quota.NewRedis(rdb))
	daemon := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()))
	var seen []quota.Rebuilt
	cli := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()),
		quota.WithRebuildObserver(func(r quota.Rebuilt) { seen = append(seen, r) }))
	spend(t, daemon, "seven", 2)
	wipe(t, cfg.Credential)

	rep, err := daemon.Sync(context.Background(), false)
	if err != nil || !rep.Restored || rep.Sent != 2 || rep.Added != 2 {
		t.Fatalf("Sync = %+v, %v; want the 2 grants restored", rep, err)
	}
	refusedBy(t, cli, "one", quota.Rebuild)
	if u := used(t, cli)["only"]; u != 14 {
		t.Errorf("used = %d, want the daemon's 14", u)
	}
	if len(seen) != 0 {
		t.Errorf("a process with no grants reported a rebuild: %+v", seen)
	}
}

// TestAuditReaddsPartialLoss: writes can vanish while every key survives
// (a rollback the other checks missed). The audit (Sync with full) re-adds
// whatever is missing, and nothing twice; since the ledger had lost grants
// it acknowledged, and others may have spent them, that is a loss: a new
// epoch and its grace, so that every process replays.
func TestAuditReaddsPartialLoss(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := lossCfg(redistest.Prefix(t))
	begin(t, cfg, quota.NewRedis(rdb))
	l := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()))
	spend(t, l, "seven", 2)
	last := mustGrant(t, l, "one", quota.WithID("last"))
	// What a replica that missed the last script holds: no member, a total without it.
	ctx := context.Background()
	cred := cfg.Credential
	rdb.ZRem(ctx, redisKey(cred, "log", "only"), "last|1")
	rdb.Set(ctx, redisKey(cred, "total", "only"), "14 100 3600000000", time.Hour)
	if u := used(t, l)["only"]; u != 14 {
		t.Fatalf("used after the partial loss = %d, want 14", u)
	}
	epoch := status(t, l).Ledger.Epoch
	rep, err := l.Sync(ctx, true)
	if err != nil || !rep.Restored || rep.Sent != 3 || rep.Added != 1 || rep.Epoch == epoch {
		t.Fatalf("audit = %+v, %v; want 3 sent, 1 re-added, and a new epoch (was %s)", rep, err, epoch)
	}
	refusedBy(t, l, "one", quota.Rebuild)
	score, err := rdb.ZScore(ctx, redisKey(cred, "log", "only"), "last|1").Result()
	if err != nil || int64(score) != last.At.UnixMicro() {
		t.Errorf("re-added entry at %v (%v), want its grant time %d", int64(score), err, last.At.UnixMicro())
	}
	if rep, err := l.Sync(ctx, true); err != nil || rep.Added != 0 {
		t.Errorf("second audit = %+v, %v; want nothing added", rep, err)
	}
	if u := used(t, l)["only"]; u != 15 {
		t.Errorf("used = %d, want 15", u)
	}
}

// TestLedgerEmptiedIsALoss: on the embedded ledger, an emptied log (or a
// deleted epoch) is detected as a loss, never taken as an empty day.
func TestLedgerEmptiedIsALoss(t *testing.T) {
	t.Parallel()
	for _, tables := range []string{"quota_log", "quota_log, quota_epoch"} {
		t.Run(tables, func(t *testing.T) {
			t.Parallel()
			db := openStore(t)
			cfg := lossCfg("main")
			l := newLimiter(t, cfg, quota.NewSQLite(db.Writer()), quota.WithRecord(db.Writer()))
			spend(t, l, "seven", 3)
			for _, table := range strings.Split(tables, ", ") {
				if _, err := db.Writer().Exec(`DELETE FROM ` + table); err != nil {
					t.Fatal(err)
				}
			}
			other := newLimiter(t, cfg, quota.NewSQLite(db.Writer())) // keeps no record
			refusedBy(t, other, "one", quota.Rebuild)
			refusedBy(t, l, "one", quota.Rebuild)
			if st := status(t, l); st.Limits[0].Used != 21 || st.Ledger.Restored != 3 {
				t.Errorf("used %d, restored %d; want 21 from 3 grants", st.Limits[0].Used, st.Ledger.Restored)
			}
		})
	}
}

// TestLedgerDroppedTable: a dropped ledger table is an error that says so,
// never an empty day.
func TestLedgerDroppedTable(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	l := newLimiter(t, testConfig(), quota.NewSQLite(db.Writer()))
	mustGrant(t, l, "videos.list")
	if _, err := db.Writer().Exec(`DROP TABLE quota_log`); err != nil {
		t.Fatal(err)
	}
	res, err := l.Reserve(context.Background(), "videos.list")
	if !errors.Is(err, quota.ErrLedgerDamaged) || res.Granted {
		t.Errorf("Reserve = %+v, %v; want ErrLedgerDamaged", res, err)
	}
	if _, err := l.Status(context.Background()); !errors.Is(err, quota.ErrLedgerDamaged) {
		t.Errorf("Status = %v, want ErrLedgerDamaged", err)
	}
}

// TestConflictingDefinitions: a process that gives a limit another window
// than the processes already spending from it is refused with an error
// naming both, and prunes nothing. Once the limit holds no entries, the new
// definition takes over. Another capacity is a configuration change, and
// is accepted.
func TestConflictingDefinitions(t *testing.T) {
	t.Parallel()
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cred := redistest.Prefix(t)
			hour := newLimiter(t, oneLimit(cred, 100, time.Hour, smallCosts), b.backend)
			mustGrant(t, hour, "seven", quota.WithID("first"))
			for _, other := range []quota.Config{
				oneLimit(cred, 100, time.Minute, smallCosts),
				oneLimit(cred, 50, time.Minute, smallCosts),
			} {
				l := newLimiter(t, other, b.backend)
				_, err := l.Reserve(context.Background(), "one")
				var conflict *quota.ConflictError
				if !errors.As(err, &conflict) || !errors.Is(err, quota.ErrLimitConflict) {
					t.Fatalf("Reserve with %+v = %v, want a ConflictError", other.Limits[0], err)
				}
				want := quota.ConflictError{Limit: "only", Stored: quota.Limit{Units: 100, Window: time.Hour},
					Mine: quota.Limit{Units: other.Limits[0].Units, Window: other.Limits[0].Window}}
				if conflict.Limit != want.Limit || conflict.Stored.Units != 100 || conflict.Stored.Window != time.Hour ||
					conflict.Mine.Units != want.Mine.Units || conflict.Mine.Window != want.Mine.Window {
					t.Errorf("conflict = %+v, want %+v", *conflict, want)
				}
				if msg := err.Error(); !strings.Contains(msg, "100 units per 1h0m0s") || !strings.Contains(msg, want.Mine.Window.String()) {
					t.Errorf("message %q does not name both definitions", msg)
				}
				if _, err := l.Status(context.Background()); !errors.Is(err, quota.ErrLimitConflict) {
					t.Errorf("Status = %v, want ErrLimitConflict", err)
				}
			}
			if u := used(t, hour)["only"]; u != 7 {
				t.Errorf("used = %d after the refused definitions, want 7", u)
			}
			smaller := newLimiter(t, oneLimit(cred, 10, time.Hour, smallCosts), b.backend)
			if r := mustGrant(t, smaller, "one", quota.WithID("second")); r.Limits[0].Used != 8 || r.Limits[0].Units != 10 {
				t.Errorf("a smaller capacity, same window: %+v, want granted against the same 7 units", r.Limits[0])
			}
			mustRefuse(t, smaller, "seven")
			if err := hour.Release(context.Background(), "first"); err != nil {
				t.Fatal(err)
			}
			// One entry is left in the window: still a conflict.
			if _, err := newLimiter(t, oneLimit(cred, 100, time.Minute, smallCosts), b.backend).Reserve(context.Background(), "one"); !errors.Is(err, quota.ErrLimitConflict) {
				t.Fatalf("another window with an entry left = %v, want ErrLimitConflict", err)
			}
			if err := smaller.Release(context.Background(), "second"); err != nil {
				t.Fatal(err)
			}
			minute := newLimiter(t, oneLimit(cred, 100, time.Minute, smallCosts), b.backend)
			mustGrant(t, minute, "one")
		})
	}
}

// TestIDReusedWithAnotherCost: reserving an ID again with another cost is an
// error on both backends, never a second charge; a release then gives back
// exactly the first.
func TestIDReusedWithAnotherCost(t *testing.T) {
	t.Parallel()
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := newLimiter(t, oneLimit(redistest.Prefix(t), 100, time.Hour, mixedCosts), b.backend)
			mustGrant(t, l, "", quota.WithCost(5), quota.WithID("job-1"))
			res, err := l.Reserve(context.Background(), "", quota.WithCost(7), quota.WithID("job-1"))
			if !errors.Is(err, quota.ErrIDReused) || res.Granted {
				t.Errorf("reuse = %+v, %v; want ErrIDReused", res, err)
			}
			if r := mustGrant(t, l, "", quota.WithCost(5), quota.WithID("job-1")); !r.Duplicate {
				t.Errorf("same ID, same cost = %+v, want a duplicate", r)
			}
			if u := used(t, l)["only"]; u != 5 {
				t.Errorf("used = %d, want 5", u)
			}
			if err := l.Release(context.Background(), "job-1"); err != nil {
				t.Fatal(err)
			}
			if u := used(t, l)["only"]; u != 0 {
				t.Errorf("used after release = %d, want 0", u)
			}
		})
	}
}

// TestFencing: only the current lease spends. A leader whose lease expired
// and was taken over (a paused or partitioned replica) is refused with
// ErrFenced and charges nothing; the new leader's token is larger.
func TestFencing(t *testing.T) {
	t.Parallel()
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			l := newLimiter(t, oneLimit(redistest.Prefix(t), 100, time.Hour, mixedCosts), b.backend)
			const ttl = 2 * time.Second // outlasts the steps below on a loaded machine
			a, err := l.Leases().Acquire(ctx, "replica-a", ttl)
			if err != nil || !a.Held || a.Fence.Holder != "replica-a" || a.Fence.Token <= 0 {
				t.Fatalf("a = %+v, %v", a, err)
			}
			if again, err := l.Leases().Acquire(ctx, "replica-a", ttl); err != nil || !again.Held || again.Fence != a.Fence {
				t.Errorf("re-acquire by the holder = %+v, %v; want the same fence", again, err)
			}
			if b, err := l.Leases().Acquire(ctx, "replica-b", ttl); err != nil || b.Held || b.Fence.Token != a.Fence.Token || b.TTL <= 0 {
				t.Errorf("b while a holds = %+v, %v; want refused, a's token and its remaining ttl", b, err)
			}
			mustGrant(t, l, "seven", quota.WithFence(a.Fence))
			if st := status(t, l); st.Leader == nil || *st.Leader != a.Fence {
				t.Errorf("status leader = %+v, want %+v", st.Leader, a.Fence)
			}

			time.Sleep(ttl + 50*time.Millisecond) // a is paused past its lease
			bl, err := l.Leases().Acquire(ctx, "replica-b", ttl)
			if err != nil || !bl.Held || bl.Fence.Token <= a.Fence.Token {
				t.Fatalf("b after a's lease ran out = %+v, %v; want a larger token", bl, err)
			}
			res, err := l.Reserve(ctx, "seven", quota.WithFence(a.Fence))
			if !errors.Is(err, quota.ErrFenced) || res.Granted {
				t.Errorf("a wakes up and reserves: %+v, %v; want ErrFenced", res, err)
			}
			if ok, err := l.Leases().Renew(ctx, a.Fence, ttl); ok || err != nil {
				t.Errorf("a renews = %v, %v; want false (lost)", ok, err)
			}
			mustGrant(t, l, "seven", quota.WithFence(bl.Fence))
			if u := used(t, l)["only"]; u != 14 {
				t.Errorf("used = %d, want 14: the fenced reservation charged nothing", u)
			}
			if ok, err := l.Leases().Renew(ctx, bl.Fence, ttl); !ok || err != nil {
				t.Errorf("b renews = %v, %v; want true", ok, err)
			}
			if err := l.Leases().Release(ctx, bl.Fence); err != nil {
				t.Fatal(err)
			}
			if c, err := l.Leases().Acquire(ctx, "replica-c", ttl); err != nil || !c.Held || c.Fence.Token <= bl.Fence.Token {
				t.Errorf("c after b released = %+v, %v; want it at once, with a larger token", c, err)
			}
		})
	}
}

// TestReplayBeforeDecision: after an outage, the first reservation and the
// first status count the fail-open grants made during it.
func TestReplayBeforeDecision(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	p := redistest.NewProxy(t, rdb.Options().Addr)
	client := proxied(t, p)
	cfg := oneLimit(redistest.Prefix(t), 10, time.Hour, map[string]int64{"one": 1, "five": 5})
	cfg.Policies = map[string]quota.Policy{"one": quota.FailOpen}
	cfg.Timeout = 3 * time.Second // the dead proxy refuses at once; a loaded machine needs the slack
	l := newLimiter(t, cfg, quota.NewRedis(client), quota.WithRecord(openStore(t).Writer()))
	mustGrant(t, l, "one")
	p.Set(redistest.Dead)
	for range 7 {
		if res, err := l.Reserve(context.Background(), "one"); err != nil || !res.FailOpen {
			t.Fatalf("while dead: %+v, %v", res, err)
		}
	}
	p.Set(redistest.Forwarding)
	if u := used(t, l)["only"]; u != 8 {
		t.Errorf("first status after the outage: used %d, want 8", u)
	}
	refusedBy(t, l, "five", "only")
}

// wipe deletes every Redis key of cred: what a restart without persistence
// or a FLUSHALL does to it.
func wipe(tb testing.TB, cred string) {
	tb.Helper()
	rdb := redistest.Client(tb)
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "ytrend:{"+cred+"}:*").Result()
	if err != nil {
		tb.Fatal(err)
	}
	if len(keys) > 0 {
		if err := rdb.Del(ctx, keys...).Err(); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestRestoredOncePerLoss: a CLI that spent before a loss restores its
// grants at its next start, and says so; at the start after that, with no
// new grant in between, it has nothing new to say.
func TestRestoredOncePerLoss(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := lossCfg(redistest.Prefix(t))
	begin(t, cfg, quota.NewRedis(rdb))
	archive := openStore(t)
	spend(t, newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(archive.Writer())), "seven", 2)
	wipe(t, cfg.Credential)

	var reports []quota.Rebuilt
	start := func() {
		l := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(archive.Writer()),
			quota.WithRebuildObserver(func(r quota.Rebuilt) { reports = append(reports, r) }))
		refusedBy(t, l, "one", quota.Rebuild)
	}
	start()
	start()
	if len(reports) != 1 || reports[0].Sent != 2 {
		t.Errorf("restores reported over two starts = %+v, want one, of 2 grants", reports)
	}
}

// TestReusedIDTakesItsNewTime: an ID used again after its grant left the
// window is a new grant, and the record keeps the new time: kept at the
// old one, a replay would take it for expired and drop it.
func TestReusedIDTakesItsNewTime(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := oneLimit(redistest.Prefix(t), 100, 200*time.Millisecond, smallCosts)
	archive := openStore(t)
	l := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(archive.Writer()))
	first := mustGrant(t, l, "one", quota.WithID("again"))
	for status(t, l).At.Before(first.At.Add(cfg.Limits[0].Window)) {
		time.Sleep(20 * time.Millisecond)
	}
	second := mustGrant(t, l, "one", quota.WithID("again"))
	if second.Duplicate || !second.At.After(first.At) {
		t.Fatalf("second grant = %+v, want a new grant after %s", second, first.At)
	}
	var at int64
	if err := archive.Writer().QueryRow(`SELECT at FROM quota_grants WHERE credential = ? AND id = 'again'`,
		cfg.Credential).Scan(&at); err != nil {
		t.Fatal(err)
	}
	if at != second.At.UnixMicro() {
		t.Errorf("record keeps the ID at %d, want the new grant's %d (the old was %d)", at, second.At.UnixMicro(), first.At.UnixMicro())
	}
}

// TestLateRestoreIsReported: a process that returns after a loss's grace
// has ended (paused, cut off, a CLI run later) restores grants that others
// have been deciding without. Its restore says how many, the observer sees
// them, and the log says so as an error. A restore within the grace reports
// none late. The grace is set by whoever finds the loss: an hour in the
// first case, the tests' grace in the second, which is waited out.
func TestLateRestoreIsReported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		grace    time.Duration
		wantLate int
	}{
		{"within the grace", time.Hour, 0},
		{"after the grace", grace, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rdb := redistest.Client(t)
			cfg := lossCfg(redistest.Prefix(t))
			begin(t, cfg, quota.NewRedis(rdb))
			finderCfg := cfg
			finderCfg.RebuildGrace = tc.grace
			var finderSaw, awaySaw []quota.Rebuilt
			finder := newLimiter(t, finderCfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()),
				quota.WithRebuildObserver(func(r quota.Rebuilt) { finderSaw = append(finderSaw, r) }))
			var logs logbuf.Buffer
			away := newLimiter(t, cfg, quota.NewRedis(redistest.Client(t)), quota.WithRecord(openStore(t).Writer()),
				quota.WithRebuildObserver(func(r quota.Rebuilt) { awaySaw = append(awaySaw, r) }),
				quota.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			spend(t, finder, "seven", 2)
			spend(t, away, "seven", 3)
			wipe(t, cfg.Credential)

			ctx := context.Background()
			rep, err := finder.Sync(ctx, false)
			if err != nil || !rep.Restored || rep.Added != 2 || rep.Late != 0 {
				t.Fatalf("finder's Sync = %+v, %v; want its 2 grants restored, none late", rep, err)
			}
			if tc.wantLate > 0 {
				waitGrace(t, finder)
				spend(t, finder, "one", 1) // decided without away's grants
			}
			rep, err = away.Sync(ctx, false)
			if err != nil || !rep.Restored || rep.Added != 3 || rep.Late != tc.wantLate {
				t.Fatalf("away's Sync = %+v, %v; want its 3 grants restored, %d late", rep, err, tc.wantLate)
			}
			if len(finderSaw) != 1 || finderSaw[0].Late != 0 {
				t.Errorf("finder's rebuilds = %+v, want one, none late", finderSaw)
			}
			if len(awaySaw) != 1 || awaySaw[0].Added != 3 || awaySaw[0].Late != tc.wantLate {
				t.Errorf("away's rebuilds = %+v, want one of 3 added, %d late", awaySaw, tc.wantLate)
			}
			errLine := strings.Contains(logs.String(), "level=ERROR") &&
				strings.Contains(logs.String(), "after the rebuild grace had ended") &&
				strings.Contains(logs.String(), fmt.Sprintf("late=%d", tc.wantLate))
			if errLine != (tc.wantLate > 0) {
				t.Errorf("away's log (error line wanted: %v):\n%s", tc.wantLate > 0, logs.String())
			}
		})
	}
}
