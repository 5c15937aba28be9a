package quota_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// Tests of what only the Redis backend has: the script cache, keys and TTLs.

func redisLimiter(tb testing.TB, cfg quota.Config) (*quota.Limiter, *redis.Client) {
	tb.Helper()
	rdb := redistest.Client(tb)
	cfg.Credential = redistest.Prefix(tb)
	return newLimiter(tb, cfg, quota.NewRedis(rdb)), rdb
}

func redisKey(cred, kind, limit string) string {
	if limit == "" {
		return "ytrend:{" + cred + "}:" + kind
	}
	return "ytrend:{" + cred + "}:" + kind + ":" + limit
}

// TestRedisScriptFlush: SCRIPT FLUSH between calls (a restart or failover
// empties the cache) is invisible: every operation still works and counts.
func TestRedisScriptFlush(t *testing.T) {
	t.Parallel()
	l, rdb := redisLimiter(t, testConfig())
	ctx := context.Background()
	flush := func() {
		t.Helper()
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"reserve", func() error { mustGrant(t, l, "videos.list"); return nil }},
		{"reserve search", func() error { mustGrant(t, l, "search.list", quota.WithID("s")); return nil }},
		{"status", func() error {
			if u := used(t, l); u["daily"] != 101 || u["search"] != 100 {
				t.Errorf("used = %v, want daily 101 search 100", u)
			}
			return nil
		}},
		{"release", func() error { return l.Release(ctx, "s") }},
		{"ping", func() error { return l.Ping(ctx) }},
		{"mark", func() error { return l.MarkExhausted(ctx, time.Now().Add(time.Minute), "test") }},
		{"refusal", func() error {
			if r := mustRefuse(t, l, "videos.list"); r.RefusedBy != "upstream" || r.Limits[0].Used != 1 {
				t.Errorf("after flush: %+v", r)
			}
			return nil
		}},
	}
	for _, s := range steps {
		flush()
		if err := s.run(); err != nil {
			t.Fatalf("%s after SCRIPT FLUSH: %v", s.name, err)
		}
	}
}

// TestRedisKeys: the documented layout - one hash tag per credential, one
// sorted-set member "<id>|<cost>" per reservation (not per unit) plus the
// epoch's certificate, a total beside it - and no TTL on any budget key, so
// that a volatile-* eviction policy never picks one.
func TestRedisKeys(t *testing.T) {
	t.Parallel()
	l, rdb := redisLimiter(t, testConfig())
	cred := l.Config().Credential
	ctx := context.Background()
	mustGrant(t, l, "search.list", quota.WithID("s1"))
	mustGrant(t, l, "videos.list", quota.WithID("v1"))
	mustGrant(t, l, "videos.list", quota.WithID("v2"))

	keys, err := rdb.Keys(ctx, "ytrend:{"+cred+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		redisKey(cred, "log", "daily"): true, redisKey(cred, "total", "daily"): true,
		redisKey(cred, "log", "search"): true, redisKey(cred, "total", "search"): true,
		"ytrend:{" + cred + "}:epoch": true, redisKey(cred, "epoch", "info"): true,
	}
	if len(keys) != len(want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	for _, k := range keys {
		if !want[k] {
			t.Errorf("unexpected key %q", k)
		}
	}
	epoch := status(t, l).Ledger.Epoch
	cert := "~" + epoch + "|0"
	if got, _ := rdb.ZRange(ctx, redisKey(cred, "log", "daily"), 0, -1).Result(); strings.Join(got, ",") != "s1|100,v1|1,v2|1,"+cert {
		t.Errorf("daily members = %v, want one per reservation: s1|100 v1|1 v2|1, then %s", got, cert)
	}
	if got, _ := rdb.ZRange(ctx, redisKey(cred, "log", "search"), 0, -1).Result(); strings.Join(got, ",") != "s1|100,"+cert {
		t.Errorf("search members = %v, want s1|100 %s", got, cert)
	}
	if score, err := rdb.ZScore(ctx, redisKey(cred, "log", "daily"), cert).Result(); err != nil || !math.IsInf(score, 1) {
		t.Errorf("certificate scored %v (%v), want +inf: it never leaves the window", score, err)
	}
	runID := regexp.MustCompile(`run_id:(\w+)`).FindStringSubmatch(rdb.Info(ctx, "server").Val())
	if got, _ := rdb.Get(ctx, redisKey(cred, "epoch", "")).Result(); !strings.HasPrefix(got, epoch+" ") {
		t.Errorf("epoch = %q, want %q followed by its grace, write count and server", got, epoch)
	} else if f := strings.Fields(got); len(f) != 4 || f[2] != "3" || runID == nil || f[3] != runID[1] {
		t.Errorf("epoch = %q, want 3 writes counted, held by the server %v", got, runID)
	}
	if got, _ := rdb.Get(ctx, redisKey(cred, "total", "daily")).Result(); got != "102 9500 86400000000" {
		t.Errorf("daily total = %q, want 102 units with its definition, 9500 units per 24h in µs", got)
	}

	for _, k := range keys {
		if pttl, err := rdb.PTTL(ctx, k).Result(); err != nil || pttl != -time.Nanosecond {
			t.Errorf("PTTL %s = %s (%v), want none (-1)", k, pttl, err)
		}
	}

	until := time.Now().Add(90 * time.Second)
	if err := l.MarkExhausted(ctx, until, "quotaExceeded"); err != nil {
		t.Fatal(err)
	}
	pttl, _ := rdb.PTTL(ctx, redisKey(cred, "exhausted", "")).Result()
	within(t, "PTTL of the mark", pttl, time.Until(until), 100*time.Millisecond)
	if err := l.MarkExhausted(ctx, until, "quota limit search", "search.list"); err != nil {
		t.Fatal(err)
	}
	pttl, _ = rdb.PTTL(ctx, redisKey(cred, "exhausted", "search.list")).Result()
	within(t, "PTTL of the search.list mark", pttl, time.Until(until), 100*time.Millisecond)
}

// TestRedisIdleKeysStay: a credential nobody uses keeps its few keys, with
// its log down to the certificate: an idle log that expired could not be
// told from one that was evicted.
func TestRedisIdleKeysStay(t *testing.T) {
	t.Parallel()
	cfg := oneLimit("", 10, 100*time.Millisecond, smallCosts)
	l, rdb := redisLimiter(t, cfg)
	cred := l.Config().Credential
	mustGrant(t, l, "seven")
	ctx := context.Background()
	// Wait by Redis' clock until the grant has left its window.
	at := status(t, l).At
	for status(t, l).At.Before(at.Add(cfg.Limits[0].Window)) {
		time.Sleep(20 * time.Millisecond)
	}
	if n, _ := rdb.ZCard(ctx, redisKey(cred, "log", "only")).Result(); n != 1 {
		t.Errorf("idle log holds %d members, want the certificate alone", n)
	}
	if r := mustGrant(t, l, "seven"); r.Limits[0].Used != 7 {
		t.Errorf("after the idle window used = %d, want 7", r.Limits[0].Used)
	}
	if st := status(t, l); !st.Ledger.Rebuilt.Before(at) {
		t.Errorf("an idle window was taken for a loss: %+v", st.Ledger)
	}
}

// TestRedisTotalSelfHeals: a total that went missing (evicted, deleted by
// hand) is recomputed from the log, so usage stays exact.
func TestRedisTotalSelfHeals(t *testing.T) {
	t.Parallel()
	l, rdb := redisLimiter(t, oneLimit("", 100, time.Hour, mixedCosts))
	cred := l.Config().Credential
	ctx := context.Background()
	mustGrant(t, l, "seven")
	mustGrant(t, l, "one")
	total := redisKey(cred, "total", "only")
	tests := []struct {
		name   string
		damage func()
	}{
		{"deleted", func() { rdb.Del(ctx, total) }},
		{"zeroed", func() { rdb.Set(ctx, total, 0, time.Hour) }},
	}
	want := int64(8)
	for _, tt := range tests {
		tt.damage()
		want += 7
		if r := mustGrant(t, l, "seven"); r.Limits[0].Used != want {
			t.Errorf("%s total: used = %d after the next reservation, want %d", tt.name, r.Limits[0].Used, want)
		}
		if got, _ := rdb.Get(ctx, total).Result(); got != fmt.Sprintf("%d 100 3600000000", want) {
			t.Errorf("%s total: stored total = %q, want %d with its definition", tt.name, got, want)
		}
		if pttl, _ := rdb.PTTL(ctx, total).Result(); pttl != -time.Nanosecond {
			t.Errorf("%s total: healed total has a TTL (%s)", tt.name, pttl)
		}
	}
}

// TestRedisKeysShareOneSlot: every key of a credential carries the same
// hash tag - the first {...} of the key, which alone decides the Cluster
// slot - so a script touching all of them is legal on Redis Cluster.
func TestRedisKeysShareOneSlot(t *testing.T) {
	t.Parallel()
	l, rdb := redisLimiter(t, testConfig())
	cred := l.Config().Credential
	ctx := context.Background()
	mustGrant(t, l, "search.list")
	if err := l.MarkExhausted(ctx, time.Now().Add(time.Minute), "x"); err != nil {
		t.Fatal(err)
	}
	if err := l.MarkExhausted(ctx, time.Now().Add(time.Minute), "x", "search.list"); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "ytrend:*"+cred+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 8 {
		t.Fatalf("keys = %v, want 2 logs, 2 totals, 2 marks and the epoch's 2", keys)
	}
	for _, k := range keys {
		open := strings.IndexByte(k, '{')
		end := strings.IndexByte(k[open+1:], '}')
		if open < 0 || end < 0 || k[open+1:open+1+end] != cred {
			t.Errorf("key %q: hash tag is not {%s}", k, cred)
		}
	}
}
