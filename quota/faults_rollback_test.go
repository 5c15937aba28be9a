package quota_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// The tests in this file come from a second red-team round against issue
// 18's fixes: servers rolled back under a warm script cache, a grace's
// answer taken for room to fail open in, a retried ID taken for a loss.
// Each failed before its fix.

// TestFaultRestartScriptCachedByAFencedCall: Redis crashes and comes back
// from a snapshot older than the last grants (as in
// TestFaultStaleSnapshotRestart). The first call to the new server is a
// deposed leader's fenced reservation: EVALSHA meets NOSCRIPT, the EVAL
// loads reserve.lua into the new server's cache, and the script raises
// YTREND_FENCED before it reaches epoch_check. From then on every process's
// EVALSHA finds the script, so no reservation checks the run id: a
// long-lived process whose last seen write count is in the snapshot spends
// the units the snapshot lost, and the owner of those grants, coming back
// at once, restores them on top.
func TestFaultRestartScriptCachedByAFencedCall(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	cfg := faultCfg()
	begin(t, cfg, quota.NewRedis(openURL(t, srv.URL())))
	var book ledgerBook
	lim := func() *quota.Limiter {
		return newLimiter(t, cfg, quota.NewRedis(openURL(t, srv.URL())), quota.WithRecord(openStore(t).Writer()),
			quota.WithObserver(book.add))
	}
	daemon, owner, deposed := lim(), lim(), lim()
	for range 5 {
		mustGrant(t, daemon, "videos.list")
	}
	if _, err := deposed.Status(context.Background()); err != nil { // its first contact is done
		t.Fatal(err)
	}
	if err := srv.Client().Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	for range 15 {
		mustGrant(t, owner, "videos.list")
	}
	srv.Restart() // SIGKILL, then reload dump.rdb: the daemon's 5 grants, not the owner's 15

	// A leader deposed before the crash still holds its old fence.
	_, err := deposed.Reserve(context.Background(), "videos.list",
		quota.WithFence(quota.Fence{Token: 41, Holder: "replica-old"}))
	if !errors.Is(err, quota.ErrFenced) {
		t.Fatalf("the deposed leader's reservation: %v, want ErrFenced", err)
	}

	// The daemon reserves before its next epoch check.
	n, err := spendAll(t, daemon, "videos.list")
	var refused *quota.RefusedError
	if n != 0 || !errors.As(err, &refused) || refused.Limit != quota.Rebuild {
		t.Errorf("after the restart the daemon got %d units (%v), want the grace: another server holds the books", n, err)
	}
	// The owner comes back at once, within any grace, and restores its 15.
	if _, err := owner.Sync(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if got := book.total(); got > 20 {
		t.Errorf("granted %d units in the window, limit 20", got)
	}
	if u := used(t, owner)["day"]; u > 20 {
		t.Errorf("the window holds %d units, limit 20", u)
	}
}

// TestFaultFailbackToAServerThatKeptItsScripts: a master demoted by a
// failover keeps its script cache (REPLICAOF, even through a full resync,
// does not flush it). When it is promoted again (a failback), it holds
// every script already: no EVALSHA meets NOSCRIPT, so no reservation checks
// the run id, and its epoch key, copied from the other master, names that
// master, not this one. Without WAIT (wait_replicas: 0, allowed), the
// grants it missed are lost, and the README says "the first call to it,
// by anyone, finds the loss": a process that did not make them does not.
func TestFaultFailbackToAServerThatKeptItsScripts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := redistest.StartServer(t)
	b := redistest.StartReplica(t, a)
	var target atomic.Value
	target.Store(a.Addr())
	client := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: "failover", ContextTimeoutEnabled: true,
			Dialer: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", target.Load().(string))
			}})
		t.Cleanup(func() { c.Close() })
		return c
	}
	cfg := faultCfg()
	begin(t, cfg, quota.NewRedis(client()))
	var book ledgerBook
	lim := func() *quota.Limiter {
		return newLimiter(t, cfg, quota.NewRedis(client()), quota.WithRecord(openStore(t).Writer()),
			quota.WithObserver(book.add))
	}
	daemon, owner := lim(), lim()
	for range 5 {
		mustGrant(t, daemon, "videos.list") // reserve.lua is now in a's cache
		mustGrant(t, owner, "videos.list")
	}
	inSync := func(from, to *redistest.Server) {
		waitUntil(t, to.Addr()+" to hold "+from.Addr()+"'s epoch", func() bool {
			want, err1 := from.Client().Get(ctx, "ytrend:{main}:epoch").Result()
			got, err2 := to.Client().Get(ctx, "ytrend:{main}:epoch").Result()
			return err1 == nil && err2 == nil && got == want
		})
	}
	inSync(a, b)

	// Failover to b (what Sentinel does): b is promoted, a demoted and
	// resynced from b. The first calls to b meet NOSCRIPT: a loss, a grace.
	if err := b.Client().ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.Client().ReplicaOf(ctx, "127.0.0.1", strconv.Itoa(b.Port)).Err(); err != nil {
		t.Fatal(err)
	}
	target.Store(b.Addr())
	a.Client().ClientKillByFilter(ctx, "TYPE", "normal") // the clients move to b
	if _, err := owner.Sync(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.Sync(ctx, false); err != nil {
		t.Fatal(err)
	}
	waitGrace(t, owner)
	mustGrant(t, owner, "videos.list")
	inSync(b, a)

	// a stops hearing b; the owner spends 4 more on b, which a misses.
	a.Pause()
	if err := b.Client().ClientKillByFilter(ctx, "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		mustGrant(t, owner, "videos.list")
	}
	// Failback: b dies, a is promoted again.
	b.Kill()
	a.Resume()
	if err := a.Client().ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	target.Store(a.Addr())

	// The daemon, which did not make the lost grants, calls first.
	n, err := spendAll(t, daemon, "videos.list")
	var refused *quota.RefusedError
	if n != 0 || !errors.As(err, &refused) || refused.Limit != quota.Rebuild {
		t.Errorf("after the failback the daemon got %d units (%v), want the grace: the books are another server's", n, err)
	}
	if _, err := owner.Sync(ctx, true); err != nil { // the owner is back at once
		t.Fatal(err)
	}
	if got := book.total(); got > 20 {
		t.Errorf("granted %d units in the window, limit 20", got)
	}
	if u := used(t, owner)["day"]; u > 20 {
		t.Errorf("the window holds %d units, limit 20", u)
	}
}

// TestFaultNoFailOpenRoomFromAGraceAnswer: the ledger loses its books (a
// restart without persistence), and a process meets the loss first. Redis'
// answer is a refusal for the grace, and it reports the log as it is
// during the restore: empty. The process takes that for room: cut off from
// Redis right after, it grants the whole limit by policy, on top of the
// grants the owner restores.
func TestFaultNoFailOpenRoomFromAGraceAnswer(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	p := redistest.NewProxy(t, srv.Addr())
	cfg := faultCfg()
	// Long enough for a call to a live Redis on a loaded machine under
	// -race (300 ms failed once there); the dead proxy closes at once, so
	// nothing here waits for it.
	cfg.Timeout = 2 * time.Second
	begin(t, cfg, quota.NewRedis(srv.Client()))
	var book ledgerBook
	owner := newLimiter(t, cfg, quota.NewRedis(openURL(t, srv.URL())), quota.WithRecord(openStore(t).Writer()),
		quota.WithObserver(book.add))
	fetcher := newLimiter(t, cfg, quota.NewRedis(proxied(t, p)), quota.WithRecord(openStore(t).Writer()),
		quota.WithObserver(book.add))
	for range 20 {
		mustGrant(t, owner, "videos.list")
	}
	refusedBy(t, fetcher, "videos.list", "day") // the fetcher has seen the full day
	srv.Restart()                               // empty: the books are lost

	refusedBy(t, fetcher, "videos.list", quota.Rebuild) // its last answer: the grace, over an empty log
	p.Set(redistest.Dead)
	n, _ := spendAll(t, fetcher, "videos.list")
	if _, err := owner.Sync(context.Background(), false); err != nil { // the owner restores its 20
		t.Fatal(err)
	}
	if got := book.total(); got > 20 {
		t.Errorf("granted %d units in the window (%d of them by policy after a grace answer), limit 20", got, n)
	}
}

// TestFaultRetriedIDAuditIsNoLoss: a reservation with a caller-chosen ID is
// retried after a lost reply and answered as a duplicate. The record then
// keeps the retry's time, not the grant's, so for as long as the retry
// came after the grant, the grant has left Redis' window but not the
// record's: the next audit re-adds it and takes that for lost books. Every
// process is refused for a grace, and the re-added grant counts again.
func TestFaultRetriedIDAuditIsNoLoss(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := faultCfg()
	cfg.Credential = redistest.Prefix(t)
	cfg.Limits = []quota.Limit{{Name: "day", Units: 20, Window: 3 * time.Second}}
	begin(t, cfg, quota.NewRedis(rdb))
	l := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()))
	other := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()))
	first := mustGrant(t, l, "videos.list", quota.WithID("job-42"))
	waitUntil(t, "a second after the grant", func() bool { return status(t, l).At.Sub(first.At) > time.Second })
	if res := mustGrant(t, l, "videos.list", quota.WithID("job-42")); !res.Duplicate {
		t.Fatalf("the retry = %+v, want a duplicate", res)
	}
	waitUntil(t, "the grant to leave the window", func() bool { return used(t, l)["day"] == 0 })

	rep, err := l.Sync(context.Background(), true) // the periodic audit
	if err != nil {
		t.Fatal(err)
	}
	if rep.Restored || rep.Added != 0 {
		t.Errorf("the audit after a retried ID left the window = %+v, want nothing re-added and no loss", rep)
	}
	if res := reserve(t, other, "videos.list"); !res.Granted {
		t.Errorf("another process was refused by %q after the audit, want a grant: nothing was lost", res.RefusedBy)
	}
}
