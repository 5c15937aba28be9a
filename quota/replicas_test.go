package quota_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
	"github.com/ytrend/ytrend/testkit/wait"
)

// TestWaitReplicasTooFewAcks: a replica that does not acknowledge in time
// (paused), or fewer replicas than asked, turn a grant into a backend error,
// ErrBackend (never ErrRefused), whatever the call's policy: too few acks
// is an answer from Redis, not an outage, so even a fail-open call is
// refused. The units stay spent in Redis. A
// refusal by the budget needs no ack and is returned as such, though the
// record sync that runs before it (a fail-open grant is pending) is not
// acknowledged either.
func TestWaitReplicasTooFewAcks(t *testing.T) {
	t.Parallel()
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	rdb := openURL(t, master.URL())
	ctx := context.Background()

	tests := []struct {
		name   string
		n      int
		pause  bool
		detail string
	}{
		{"PausedReplica", 1, true, "0 of 1 replicas acknowledged the write within 100ms"},
		{"TooFewReplicas", 2, false, "1 of 2 replicas acknowledged the write within 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not parallel: one of them pauses the shared replica.
			cred := redistest.Prefix(t)
			cfg := oneLimit(cred, 100, time.Hour, smallCosts)
			cfg.Policies = map[string]quota.Policy{"one": quota.FailOpen}
			l := newLimiter(t, cfg, quota.NewRedis(rdb, quota.WithWaitReplicas(tt.n, 100*time.Millisecond)),
				quota.WithRecord(openStore(t).Writer()))
			plain := newLimiter(t, cfg, quota.NewRedis(rdb)) // no WAIT: reads the books
			if tt.pause {
				mustGrant(t, l, "seven", quota.WithID("before"))
				replica.Pause()
			}
			res, err := l.Reserve(ctx, "seven")
			if !errors.Is(err, quota.ErrBackend) || errors.Is(err, quota.ErrRefused) || res.Granted {
				t.Fatalf("Reserve(closed call) = %+v, %v; want ErrBackend", res, err)
			}
			if !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("error %q does not say %q", err, tt.detail)
			}
			open, err := l.Reserve(ctx, "one")
			if !errors.Is(err, quota.ErrBackend) || open.Granted || open.FailOpen {
				t.Errorf("Reserve(open call) = %+v, %v; want ErrBackend, not a grant by policy", open, err)
			}
			// A refusal grants nothing and needs no ack: it stands.
			if r := mustRefuse(t, l, "", quota.WithCost(100)); r.RefusedBy != "only" {
				t.Errorf("refused by %q, want only", r.RefusedBy)
			}
			if tt.pause {
				if err := l.Release(ctx, "before"); !errors.Is(err, quota.ErrBackend) {
					t.Errorf("Release = %v, want ErrBackend (the release is on no replica)", err)
				}
				replica.Resume()
			}
			// Every script ran on the master: 7 + 1 units are spent (and the
			// 7 granted before the pause released), whatever the replicas.
			if u := used(t, plain)["only"]; u != 8 {
				t.Errorf("after the failed waits the master holds %d units, want 8 (spent, not lost)", u)
			}
		})
	}
	// Acked again: the same limiter grants.
	cred := redistest.Prefix(t)
	l := newLimiter(t, oneLimit(cred, 100, time.Hour, smallCosts), quota.NewRedis(rdb, quota.WithWaitReplicas(1, time.Second)))
	if r := mustGrant(t, l, "seven"); r.Limits[0].Used != 7 {
		t.Errorf("after resume used = %d, want 7", r.Limits[0].Used)
	}
}

// TestWaitReplicasNoScript: after SCRIPT FLUSH (a restart, a failover to a
// fresh node) the script is sent again with EVAL on the same connection as
// its WAIT, and the grant still waits for the replica.
func TestWaitReplicasNoScript(t *testing.T) {
	t.Parallel()
	master := redistest.StartServer(t)
	redistest.StartReplica(t, master)
	ctx := context.Background()
	l := newLimiter(t, oneLimit(redistest.Prefix(t), 100, time.Hour, smallCosts),
		quota.NewRedis(openURL(t, master.URL()), quota.WithWaitReplicas(1, time.Second)))
	mustGrant(t, l, "seven")
	for range 2 {
		if err := master.Client().ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		mustGrant(t, l, "seven")
	}
	if u := used(t, l)["only"]; u != 21 {
		t.Errorf("used = %d, want 21", u)
	}
}

// TestWaitReplicasCluster: on a Cluster the script and its WAIT go to the
// master of the credential's slot, on one connection: the script runs there
// (a wrong node would answer MOVED), and WAIT counts that master's replicas,
// of which this cluster has none.
func TestWaitReplicasCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	rdb := openURL(t, c.URL())
	cc := rdb.(*redis.ClusterClient)
	ctx := context.Background()
	masters := map[string]bool{}
	for range 8 {
		cred := redistest.Prefix(t)
		node, err := cc.MasterForKey(ctx, "ytrend:{"+cred+"}:x")
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
		cfg := oneLimit(cred, 100, time.Hour, smallCosts)
		l := newLimiter(t, cfg, quota.NewRedis(rdb, quota.WithWaitReplicas(1, 50*time.Millisecond)))
		_, err = l.Reserve(ctx, "seven")
		if !errors.Is(err, quota.ErrBackend) || !strings.Contains(err.Error(), "0 of 1 replicas") {
			t.Fatalf("Reserve on a cluster without replicas = %v, want ErrBackend with 0 of 1 acks", err)
		}
		plain := newLimiter(t, cfg, quota.NewRedis(rdb))
		if u := used(t, plain)["only"]; u != 7 {
			t.Errorf("cred %s on %s: used %d, want 7 (the script ran on the slot's master)", cred, node.Options().Addr, u)
		}
	}
	if len(masters) < 2 {
		t.Errorf("8 credentials landed on %d masters; the test did not cover routing", len(masters))
	}
	t.Run("SlotMoved", func(t *testing.T) { testClusterSlotMoved(t, c, rdb) })
}

// TestWaitReplicasNoFailOpenPastAFullLimit: a process's first reservation
// syncs its record, a write that WAITs too. A replica that does not
// acknowledge it must not make the sync an outage: the ledger still
// decides, and a fail-open call meets the full limit's refusal instead of
// a grant by policy.
func TestWaitReplicasNoFailOpenPastAFullLimit(t *testing.T) {
	t.Parallel()
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	rdb := openURL(t, master.URL())
	cfg := oneLimit(redistest.Prefix(t), 10, time.Hour, smallCosts)
	cfg.Policies = map[string]quota.Policy{"one": quota.FailOpen}
	process := func() *quota.Limiter {
		return newLimiter(t, cfg, quota.NewRedis(rdb, quota.WithWaitReplicas(1, 100*time.Millisecond)),
			quota.WithRecord(openStore(t).Writer()))
	}
	a := process()
	for range 10 {
		mustGrant(t, a, "one")
	}
	replica.Pause()
	defer replica.Resume()
	if r := mustRefuse(t, process(), "one"); r.RefusedBy != "only" || r.FailOpen {
		t.Errorf("a new process on a full limit = %+v, want refused by only", r)
	}
	if u := used(t, newLimiter(t, cfg, quota.NewRedis(rdb)))["only"]; u != 10 {
		t.Errorf("used = %d, want 10", u)
	}
}

// testClusterSlotMoved: the credential's slot moves to another master (a
// resharding) after the client loaded the slot map. A write with WAIT goes
// to the old master on a pinned connection, which answers MOVED; it is run
// on the new owner, rather than failing every write until something else
// refreshes the client's map.
func testClusterSlotMoved(t *testing.T, c *redistest.Cluster, rdb redis.UniversalClient) {
	cc := rdb.(*redis.ClusterClient)
	ctx := context.Background()
	// A credential whose slot holds no keys yet (the other tests' slots
	// do), so it can be moved by decree.
	var (
		cred, key string
		from      *redis.Client
		slot      int64
	)
	for {
		cred = redistest.Prefix(t)
		key = "ytrend:{" + cred + "}:x"
		var err error
		if from, err = cc.MasterForKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		if slot, err = from.ClusterKeySlot(ctx, key).Result(); err != nil {
			t.Fatal(err)
		}
		if n, err := from.ClusterCountKeysInSlot(ctx, int(slot)).Result(); err == nil && n == 0 {
			break
		}
	}
	var to *redistest.Server
	for _, n := range c.Nodes {
		if n.Addr() != from.Options().Addr {
			to = n
			break
		}
	}
	toID, err := to.Client().ClusterMyID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The slot is empty: every master is simply told its new owner. The
	// new owner then takes the highest config epoch: a heartbeat the old
	// owner sent before it was told carries the slot under its own epoch,
	// and could hand the slot back to it on a node already told (a CI run
	// saw the client redirected between the two until it gave up with
	// MOVED). Every node must name the new owner before the test goes on.
	for _, n := range c.Nodes {
		if err := n.Client().Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", toID).Err(); err != nil {
			t.Fatalf("CLUSTER SETSLOT on %s: %v", n.Addr(), err)
		}
	}
	if err := to.Client().Do(ctx, "CLUSTER", "BUMPEPOCH").Err(); err != nil {
		t.Fatalf("CLUSTER BUMPEPOCH on %s: %v", to.Addr(), err)
	}
	wait.Until(t, "every node to name the slot's new owner", 30*time.Second, func() (bool, string) {
		for _, n := range c.Nodes {
			shards, err := n.Client().ClusterShards(ctx).Result()
			if err != nil {
				return false, err.Error()
			}
			owner := ""
			for _, sh := range shards {
				for _, r := range sh.Slots {
					if r.Start <= slot && slot <= r.End {
						for _, node := range sh.Nodes {
							if node.Role == "master" {
								owner = node.ID
							}
						}
					}
				}
			}
			if owner != toID {
				return false, fmt.Sprintf("%s names %q for slot %d, want %q", n.Addr(), owner, slot, toID)
			}
		}
		return true, ""
	})

	cfg := oneLimit(cred, 100, time.Hour, smallCosts)
	l := newLimiter(t, cfg, quota.NewRedis(rdb, quota.WithWaitReplicas(1, 50*time.Millisecond)))
	_, err = l.Reserve(ctx, "seven")
	if !errors.Is(err, quota.ErrBackend) || !strings.Contains(err.Error(), "0 of 1 replicas") {
		t.Fatalf("Reserve after the slot moved = %v, want the new owner's missing ack (this cluster has no replicas)", err)
	}
	n, err := to.Client().ClusterCountKeysInSlot(ctx, int(slot)).Result()
	if err != nil || n == 0 {
		t.Errorf("the new owner %s holds %d keys in slot %d (%v), want the reservation's", to.Addr(), n, slot, err)
	}
}
