package quota_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
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

// operation is one call a flush test makes after emptying the server's
// script or function cache.
type operation struct {
	name string
	run  func() error
}

// everyOperation is every kind of call the limiter makes, in an order whose
// results the flush tests check (extra runs before the mark and the
// refusal it causes): each must still work and count.
func everyOperation(t *testing.T, l *quota.Limiter, extra ...operation) []operation {
	ctx := context.Background()
	ops := []operation{
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
	}
	ops = append(ops, extra...)
	return append(ops, []operation{
		{"mark", func() error { return l.MarkExhausted(ctx, time.Now().Add(time.Minute), "test") }},
		{"refusal", func() error {
			if r := mustRefuse(t, l, "videos.list"); r.RefusedBy != "upstream" || r.Limits[0].Used != 1 {
				t.Errorf("after flush: %+v", r)
			}
			return nil
		}},
	}...)
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
	for _, s := range everyOperation(t, l) {
		flush()
		if err := s.run(); err != nil {
			t.Fatalf("%s after SCRIPT FLUSH: %v", s.name, err)
		}
	}
}

// TestRedisFunctionFlush: the scripts are a function library, and a server
// that lost it (FUNCTION FLUSH; a restart without persistence, a new node)
// answers "Function not found": every operation loads it again, and still
// works and counts. A private server, since FUNCTION FLUSH empties every
// library of the server.
func TestRedisFunctionFlush(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	cfg := testConfig()
	cfg.Credential = redistest.Prefix(t)
	l := newLimiter(t, cfg, quota.NewRedis(openURL(t, srv.URL())))
	ctx := context.Background()
	rdb := srv.Client()
	flush := func() {
		t.Helper()
		if err := rdb.FunctionFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{}).Result(); err != nil || len(libs) != 0 {
			t.Fatalf("after FUNCTION FLUSH: libraries %v (%v), want none", libs, err)
		}
	}
	leaseAndSync := []operation{
		{"lease", func() error { _, err := l.Leases().Acquire(ctx, "replica-a", time.Minute); return err }},
		{"sync", func() error { _, err := l.Sync(ctx, true); return err }},
	}
	for _, s := range everyOperation(t, l, leaseAndSync...) {
		flush()
		if err := s.run(); err != nil {
			t.Fatalf("%s after FUNCTION FLUSH: %v", s.name, err)
		}
		libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "ytrend_*"}).Result()
		if err != nil || len(libs) != 1 {
			t.Fatalf("%s: libraries %v (%v), want ytrend's loaded again", s.name, libs, err)
		}
	}
}

// TestRedisSharesBooksWithEvalScripts: during an upgrade, processes of the
// version before the function library (its EVAL scripts, in testdata/eval)
// and of this one spend from the same credential. The library keeps every
// key and format, so each counts the other's grants, the write count goes
// on, and neither takes the other's books for lost.
func TestRedisSharesBooksWithEvalScripts(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := oneLimit(redistest.Prefix(t), 20, time.Hour, smallCosts)
	cred := cfg.Credential
	ctx := context.Background()
	var src []byte
	for _, f := range []string{"window.lua", "reserve.lua"} {
		b, err := os.ReadFile(filepath.Join("testdata", "eval", f))
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	old := redis.NewScript(string(src))
	keys := []string{redisKey(cred, "exhausted", ""), redisKey(cred, "exhausted", ""), redisKey(cred, "epoch", ""),
		redisKey(cred, "epoch", "info"), redisKey(cred, "leader", ""), redisKey(cred, "log", "only"),
		redisKey(cred, "total", "only")}
	// oldReserve is the old version's reservation of cost units, in epoch.
	oldReserve := func(id, epoch string, cost int) []any {
		t.Helper()
		v, err := old.Run(ctx, rdb, keys, id, epoch, "fresh-"+id, 0, "", "0", 0,
			20, time.Hour.Microseconds(), time.Hour.Milliseconds()+1000, cost).Slice()
		if err != nil {
			t.Fatalf("old reserve.lua: %v", err)
		}
		return v
	}
	// The old version starts the books and spends 14 units.
	first := oldReserve("o0", "", 7)
	epoch, _ := first[5].(string)
	if first[0] != int64(2) || epoch != "fresh-o0" {
		t.Fatalf("old first contact = %v, want code 2 in a new epoch fresh-o0", first)
	}
	for _, id := range []string{"o1", "o2"} {
		if v := oldReserve(id, epoch, 7); v[0] != int64(1) {
			t.Fatalf("old reserve %s = %v, want granted", id, v)
		}
	}

	l := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()))
	if r := mustGrant(t, l, "one", quota.WithID("n1")); r.Limits[0].Used != 15 {
		t.Errorf("the library's first grant: used %d, want the old version's 14 + 1", r.Limits[0].Used)
	}
	if r := mustRefuse(t, l, "seven"); r.RefusedBy != "only" || r.Limits[0].Used != 15 {
		t.Errorf("the library past the limit: %+v, want refused by only at 15", r)
	}
	if v := oldReserve("o3", epoch, 7); v[0] != int64(0) || v[1] != int64(1) || v[9] != int64(15) {
		t.Errorf("old reserve past the limit = %v, want refused by limit 1 at 15 units", v)
	}
	if v := oldReserve("o4", epoch, 1); v[0] != int64(1) || v[7] != int64(4) || v[9] != int64(16) {
		t.Errorf("old reserve = %v, want granted as the epoch's 4th write, 16 units", v)
	}
	if r := mustGrant(t, l, "one", quota.WithID("n2")); r.Limits[0].Used != 17 {
		t.Errorf("the library after the old grant: used %d, want 17", r.Limits[0].Used)
	}
	st := status(t, l)
	if st.Ledger.Epoch != epoch || !st.Ledger.Rebuilt.Equal(st.Ledger.Created) {
		t.Errorf("ledger = %+v, want the old version's epoch %s, never rebuilt since", st.Ledger, epoch)
	}
	got, _ := rdb.ZRange(ctx, redisKey(cred, "log", "only"), 0, -1).Result()
	if want := "o1|7,o2|7,n1|1,o4|1,n2|1,~" + epoch + "|0"; strings.Join(got, ",") != want {
		t.Errorf("log = %v, want %s", got, want)
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
	first, _ := rdb.ZScore(ctx, redisKey(cred, "log", "daily"), "s1|100").Result()
	if got, _ := rdb.Get(ctx, redisKey(cred, "total", "daily")).Result(); got != fmt.Sprintf("102 9500 86400000000 %d", int64(first)) {
		t.Errorf("daily total = %q, want 102 units with its definition, 9500 units per 24h in µs, and its oldest entry's time, %d",
			got, int64(first))
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
	waitUntil(t, "the grant to leave its window", func() bool { return !status(t, l).At.Before(at.Add(cfg.Limits[0].Window)) })
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
	oldest := mustGrant(t, l, "seven").At.UnixMicro()
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
		if got, _ := rdb.Get(ctx, total).Result(); got != fmt.Sprintf("%d 100 3600000000 %d", want, oldest) {
			t.Errorf("%s total: stored total = %q, want %d with its definition and the oldest entry's time %d",
				tt.name, got, want, oldest)
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

// TestRedisReplayBelowTheBound: a total keeps a bound below which no
// member is scored, and a reservation prunes only once the bound has left
// the window. A replay can add an entry older than every member (a grant
// made while Redis was unreachable): it must lower the bound, or that entry
// would count past its window. Here it leaves the window two seconds after
// the replay, while the grant beside it counts for an hour.
func TestRedisReplayBelowTheBound(t *testing.T) {
	t.Parallel()
	cfg := oneLimit("", 100, time.Hour, smallCosts)
	l, rdb := redisLimiter(t, cfg)
	cred := l.Config().Credential
	ctx := context.Background()
	granted := mustGrant(t, l, "seven").At
	st := status(t, l)

	// The replay, as sync.lua takes it: one entry of cost 5, older than
	// the grant, that leaves the window 2 s after it.
	old := granted.Add(-time.Hour + 2*time.Second)
	name, _ := quota.Library()
	keys := []string{redisKey(cred, "epoch", ""), redisKey(cred, "epoch", "info"), redisKey(cred, "log", "only"),
		redisKey(cred, "total", "only")}
	v, err := rdb.FCall(ctx, name+"_sync", keys, st.Ledger.Epoch, "fresh", 0, 1, "0", 0,
		100, time.Hour.Microseconds(), "", "replayed", old.UnixMicro(), 5).Slice()
	if err != nil || len(v) < 1 || v[0] != int64(1) {
		t.Fatalf("sync = %v, %v; want the entry added (a stall of 2 s would have left it outside the window)", v, err)
	}
	if u := used(t, l)["only"]; u != 12 {
		t.Fatalf("used after the replay = %d, want 7 + 5", u)
	}
	// Wait by Redis' clock until the replayed entry has left the window.
	waitUntil(t, "the replayed entry to leave its window", func() bool { return !status(t, l).At.Before(old.Add(time.Hour)) })
	if r := mustGrant(t, l, "one"); r.Limits[0].Used != 8 {
		t.Errorf("used after the replayed entry left the window = %d, want 7 + 1", r.Limits[0].Used)
	}
}

// TestRedisTwoCredentialsInTurn: the library remembers the last epoch value
// and totals it wrote, to skip parsing them when a process spending alone
// reads them back. Two credentials with the same limits, spending and
// asking for their status in turn on one server, must each still read their
// own: exact usage, and no loss taken for the other's epoch.
func TestRedisTwoCredentialsInTurn(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	ctx := context.Background()
	var ls []*quota.Limiter
	var epochs []string // as the keys hold them
	for _, name := range []string{"a", "b"} {
		cfg := oneLimit(redistest.Prefix(t)+"-"+name, 100, time.Hour, smallCosts)
		begin(t, cfg, quota.NewRedis(rdb))
		ls = append(ls, newLimiter(t, cfg, quota.NewRedis(rdb)))
		v, err := rdb.Get(ctx, redisKey(cfg.Credential, "epoch", "")).Result()
		if err != nil {
			t.Fatal(err)
		}
		epochs = append(epochs, strings.Fields(v)[0])
	}
	for i := range 6 {
		a, b := ls[i%2], ls[1-i%2]
		if r := mustGrant(t, a, "seven"); r.Limits[0].Used != int64(7*(i/2+1)) {
			t.Fatalf("step %d: used %d, want %d", i, r.Limits[0].Used, 7*(i/2+1))
		}
		status(t, b) // reads b's epoch and total, writes neither
	}
	for i, l := range ls {
		if st := status(t, l); st.Ledger.Epoch != epochs[i] || st.Limits[0].Used != 21 {
			t.Errorf("credential %d: epoch %s, used %d; want %s, 21", i, st.Ledger.Epoch, st.Limits[0].Used, epochs[i])
		}
	}
}
