package quota_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/internal/redisclient"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// The budget on real topologies the tests start themselves: a Redis that
// restarts, a 3-master Cluster, and a master with a replica and three
// sentinels that fail over after a SIGKILL.

func openURL(tb testing.TB, url string) redis.UniversalClient {
	tb.Helper()
	c, err := redisclient.Open(url, 2*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// TestRestartWithoutPersistence: Redis restarts and comes back empty; the
// two processes restore their grants, and the day is exactly as full as it
// was. With AOF every grant survives, and the restart still costs a grace:
// the ledger cannot tell an AOF that kept everything from a snapshot that
// did not.
func TestRestartWithoutPersistence(t *testing.T) {
	t.Parallel()
	for _, aof := range []bool{false, true} {
		t.Run(fmt.Sprintf("aof=%v", aof), func(t *testing.T) {
			t.Parallel()
			var args []string
			if aof {
				args = []string{"--appendonly", "yes", "--appendfsync", "always"}
			}
			srv := redistest.StartServer(t, args...)
			cfg := lossCfg("main")
			begin(t, cfg, quota.NewRedis(openURL(t, srv.URL())))
			a := newLimiter(t, cfg, quota.NewRedis(openURL(t, srv.URL())), quota.WithRecord(openStore(t).Writer()))
			b := newLimiter(t, cfg, quota.NewRedis(openURL(t, srv.URL())), quota.WithRecord(openStore(t).Writer()))
			spend(t, a, "seven", 6) // 42
			spend(t, b, "seven", 6) // 84
			epoch := status(t, a).Ledger.Epoch
			srv.Restart()

			if aof {
				// Another server process holds the books: a loss to the
				// ledger, though AOF kept every grant.
				refusedBy(t, a, "seven", quota.Rebuild)
				if st := status(t, b); st.Ledger.Epoch == epoch || st.Limits[0].Used != 84 {
					t.Errorf("ledger after an AOF restart = %+v, used %d; want a new epoch, the 84 units kept",
						st.Ledger, st.Limits[0].Used)
				}
				waitGrace(t, a)
				if r := mustGrant(t, a, "seven"); r.Limits[0].Used != 91 {
					t.Errorf("after an AOF restart used %d, want 91", r.Limits[0].Used)
				}
				return
			}
			refusedBy(t, a, "seven", quota.Rebuild)
			refusedBy(t, b, "seven", quota.Rebuild)
			if st := status(t, a); st.Limits[0].Used != 84 || st.Ledger.Restored != 12 {
				t.Errorf("after the restart: used %d, restored %d; want 84 from 12 grants", st.Limits[0].Used, st.Ledger.Restored)
			}
			time.Sleep(grace)
			spend(t, a, "seven", 2) // 98
			refusedBy(t, b, "seven", "only")
		})
	}
}

// TestConformanceCluster: the whole conformance suite on a 3-master
// Cluster: every script's keys share the credential's slot.
func TestConformanceCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	client := openURL(t, c.URL())
	// The client's first call loads the slot map: pay that before the
	// suite's timing checks start.
	mustGrant(t, newLimiter(t, oneLimit(redistest.Prefix(t), 10, time.Second, smallCosts), quota.NewRedis(client)), "one")
	testConformance(t, func(t *testing.T) quota.Backend { return quota.NewRedis(client) })
}

// TestClusterProcesses: 40 concurrent processes, each reserving 7 units
// once against a 100-unit limit on a Cluster: exactly 14 are granted.
func TestClusterProcesses(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	cred := redistest.Prefix(t)
	const procs = 40
	var wg sync.WaitGroup
	outs := make([]string, procs)
	errs := make([]error, procs)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestClusterChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "QUOTA_CLUSTER_CHILD="+c.URL(), "QUOTA_CLUSTER_CRED="+cred)
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		})
	}
	wg.Wait()
	granted, refused := 0, 0
	for i := range procs {
		switch {
		case errs[i] != nil:
			t.Errorf("child %d: %v\n%s", i, errs[i], outs[i])
		case strings.Contains(outs[i], "RESULT granted"):
			granted++
		case strings.Contains(outs[i], "RESULT refused"):
			refused++
		default:
			t.Errorf("child %d said nothing: %s", i, outs[i])
		}
	}
	if granted != 14 || refused != 26 {
		t.Errorf("granted %d, refused %d; want exactly 14 and 26", granted, refused)
	}
	l := newLimiter(t, oneLimit(cred, 100, time.Hour, smallCosts), quota.NewRedis(openURL(t, c.URL())))
	if u := used(t, l)["only"]; u != 98 {
		t.Errorf("used = %d, want 98", u)
	}
}

// TestClusterChild is one process of TestClusterProcesses; run directly it
// does nothing.
func TestClusterChild(t *testing.T) {
	url := os.Getenv("QUOTA_CLUSTER_CHILD")
	if url == "" {
		return
	}
	l := newLimiter(t, oneLimit(os.Getenv("QUOTA_CLUSTER_CRED"), 100, time.Hour, smallCosts), quota.NewRedis(openURL(t, url)))
	res, err := l.Reserve(context.Background(), "seven")
	switch {
	case err == nil && res.Granted:
		fmt.Println("RESULT granted")
	case errors.Is(err, quota.ErrRefused):
		fmt.Println("RESULT refused")
	default:
		t.Fatalf("reserve: %+v, %v", res, err)
	}
}

// TestSentinelFailover: with wait_replicas 1 every grant is on the replica
// before it is returned, so after the master is SIGKILLed and the replica
// promoted the books hold every granted unit: a full limit stays full, and
// the grants made under load while the master died are all there.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	cfg := oneLimit("main", 1000, time.Hour, map[string]int64{"one": 1, "ten": 10})
	cfg.Timeout = 2 * time.Second
	ctx := context.Background()
	limiter := func(t *testing.T, s *redistest.Sentinel) *quota.Limiter {
		return newLimiter(t, cfg, quota.NewRedis(openURL(t, s.URL()), quota.WithWaitReplicas(1, time.Second)))
	}

	t.Run("full limit", func(t *testing.T) {
		t.Parallel()
		s := redistest.StartSentinel(t)
		l := limiter(t, s)
		for range 100 {
			mustGrant(t, l, "ten")
		}
		refusedBy(t, l, "one", "only")
		s.KillMaster()
		waitUntil(t, "a reservation decided by the new master", func() bool {
			_, err := l.Reserve(ctx, "one")
			return errors.Is(err, quota.ErrRefused)
		})
		if u := used(t, l)["only"]; u != 1000 {
			t.Errorf("after the failover used = %d, want the full 1000", u)
		}
	})

	t.Run("under load", func(t *testing.T) {
		t.Parallel()
		s := redistest.StartSentinel(t)
		l := limiter(t, s)
		var mu sync.Mutex
		var granted int64
		var failures int
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					res, err := l.Reserve(ctx, "one")
					mu.Lock()
					if err == nil && res.Granted {
						granted += res.Cost
					} else if !errors.Is(err, quota.ErrRefused) {
						failures++
					}
					mu.Unlock()
					if err != nil {
						time.Sleep(20 * time.Millisecond)
					}
				}
			})
		}
		total := func() int64 { mu.Lock(); defer mu.Unlock(); return granted }
		waitUntil(t, "grants before the failover", func() bool { return total() > 20 })
		s.KillMaster()
		// The promoted replica has no replica of its own, so with
		// wait_replicas 1 it grants nothing more: stop here.
		close(stop)
		wg.Wait()
		// The client learns the new master from the sentinels; until then
		// it may still dial the dead one.
		var st quota.Status
		waitUntil(t, "a status from the new master", func() bool {
			var err error
			st, err = l.Status(ctx)
			return err == nil
		})
		t.Logf("granted %d units under load, %d calls failed during the failover; the new master holds %d",
			granted, failures, st.Limits[0].Used)
		// Every grant returned is on the promoted replica. A call that
		// failed may have been recorded on the old master and replicated
		// anyway: it counts (the safe direction), at most a unit a failure.
		if st.Limits[0].Used < granted || st.Limits[0].Used > granted+int64(failures) {
			t.Errorf("the new master holds %d units; %d were granted (%d failures)", st.Limits[0].Used, granted, failures)
		}
	})
}

func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
