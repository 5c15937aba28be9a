package quota_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// openStore opens a fresh archive (with the quota tables) in t's temp dir.
// The embedded ledger lives in the archive (see the store package): its
// tables are the archive's migrations, so its tests open a real archive.
func openStore(tb testing.TB) *store.DB {
	tb.Helper()
	return openStoreAt(tb, filepath.Join(tb.TempDir(), "archive.db"))
}

func openStoreAt(tb testing.TB, path string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("open store %s: %v", path, err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// newRedis and newLedger are the conformance suite's backend factories.
func newRedis(t *testing.T) quota.Backend {
	t.Helper()
	return quota.NewRedis(redistest.Client(t))
}

func newLedger(t *testing.T) quota.Backend {
	t.Helper()
	return quota.NewSQLite(openStore(t).Writer())
}

// noGrace is the rebuild grace of tests that are not about it. Every fresh
// credential on Redis starts with a loss (nobody can tell a first start from
// a restart), and a microsecond of grace lets the test spend at once.
const noGrace = time.Microsecond

// testConfig is the default configuration without the first start's grace.
func testConfig() quota.Config {
	cfg := quota.DefaultConfig()
	cfg.RebuildGrace = noGrace
	return cfg
}

// oneLimit is a credential with a single limit and the given cost table.
func oneLimit(cred string, units int64, window time.Duration, costs map[string]int64) quota.Config {
	return quota.Config{
		Credential:   cred,
		Costs:        costs,
		Limits:       []quota.Limit{{Name: "only", Units: units, Window: window}},
		Timeout:      5 * time.Second, // -race on two cores is slow; policies are tested separately
		RebuildGrace: noGrace,
	}
}

func newLimiter(tb testing.TB, cfg quota.Config, b quota.Backend, opts ...quota.Option) *quota.Limiter {
	tb.Helper()
	l, err := quota.New(cfg, b, opts...)
	if err != nil {
		tb.Fatalf("quota.New: %v", err)
	}
	return l
}

// reserve calls Reserve and fails the test on anything but a grant or a
// refusal by the budget.
func reserve(tb testing.TB, l *quota.Limiter, call string, opts ...quota.ReserveOption) quota.Result {
	tb.Helper()
	res, err := l.Reserve(context.Background(), call, opts...)
	if err != nil && !errors.Is(err, quota.ErrRefused) {
		tb.Fatalf("Reserve(%q): %v", call, err)
	}
	if (err == nil) != res.Granted {
		tb.Fatalf("Reserve(%q): granted=%v but err=%v", call, res.Granted, err)
	}
	return res
}

func mustGrant(tb testing.TB, l *quota.Limiter, call string, opts ...quota.ReserveOption) quota.Result {
	tb.Helper()
	res := reserve(tb, l, call, opts...)
	if !res.Granted {
		tb.Fatalf("Reserve(%q) refused by %q (retry after %s), want granted", call, res.RefusedBy, res.RetryAfter)
	}
	return res
}

func mustRefuse(tb testing.TB, l *quota.Limiter, call string, opts ...quota.ReserveOption) quota.Result {
	tb.Helper()
	res := reserve(tb, l, call, opts...)
	if res.Granted {
		tb.Fatalf("Reserve(%q) granted (used %+v), want refused", call, res.Limits)
	}
	return res
}

func status(tb testing.TB, l *quota.Limiter) quota.Status {
	tb.Helper()
	st, err := l.Status(context.Background())
	if err != nil {
		tb.Fatalf("Status: %v", err)
	}
	return st
}

// used returns each limit's used units, by name.
func used(tb testing.TB, l *quota.Limiter) map[string]int64 {
	tb.Helper()
	out := map[string]int64{}
	for _, ls := range status(tb, l).Limits {
		out[ls.Name] = ls.Used
	}
	return out
}

// within fails unless got is want ± tol.
func within(tb testing.TB, what string, got, want, tol time.Duration) {
	tb.Helper()
	if d := got - want; d < -tol || d > tol {
		tb.Errorf("%s = %s, want %s ± %s (off by %s)", what, got, want, tol, d)
	}
}

// fakeClock is an injectable ledger clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *fakeClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// testBackend is a backend with the archive its process would keep its
// record in: for the ledger, the same file.
type testBackend struct {
	backend quota.Backend
	record  *sql.DB
}

// backends returns a fresh Redis and ledger backend, by name.
func backends(t *testing.T) map[string]testBackend {
	t.Helper()
	ledger := openStore(t)
	return map[string]testBackend{
		"redis":  {quota.NewRedis(redistest.Client(t)), openStore(t).Writer()},
		"ledger": {quota.NewSQLite(ledger.Writer()), ledger.Writer()},
	}
}

// proxied is a client that reaches Redis through p.
func proxied(tb testing.TB, p *redistest.Proxy) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: p.Addr()})
	tb.Cleanup(func() { c.Close() })
	return c
}
