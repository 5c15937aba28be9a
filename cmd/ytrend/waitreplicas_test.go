package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// TestWaitReplicasFromConfig: redis.wait_replicas reaches the budget. With
// the replica acknowledging, `quota reserve` is granted; with it paused,
// the grant is not returned (exit 1, naming the missing acks) though its
// units stay spent; a refusal still stands (exit 75).
func TestWaitReplicasFromConfig(t *testing.T) {
	t.Parallel()
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = master.URL()
	w.config(fmt.Sprintf(`credential: %s
costs: {videos.list: 1, search.list: 100}
limits:
  - {name: daily, units: 100, window: 24h}
redis: {timeout: 2s, wait_replicas: 1, wait_timeout: 200ms}
`, redistest.Prefix(t)))

	if r := w.mustRun("quota", "reserve", "--cost", "7"); !strings.HasPrefix(r.stdout, "granted ") {
		t.Fatalf("with the replica up: %q", r.stdout)
	}
	replica.Pause()
	r := w.run("quota", "reserve", "--cost", "7")
	if r.code != 1 || !strings.Contains(r.stderr, "0 of 1 replicas acknowledged the write within 200ms") {
		t.Errorf("with the replica paused: exit %d, %q; want 1 and the missing ack", r.code, r.stderr)
	}
	r = w.run("quota", "reserve", "--cost", "90")
	if r.code != exitTempFail || !strings.Contains(r.stderr, `refused by limit "daily"`) {
		t.Errorf("a refusal with the replica paused: exit %d, %q; want 75", r.code, r.stderr)
	}
	replica.Resume()
	st := decode[quotaStatusJSON](t, w.mustRun("quota", "status", "--json").stdout)
	if st.Limits[0].Used != 14 {
		t.Errorf("used %d, want 14: the unacknowledged grant stays spent", st.Limits[0].Used)
	}
}

// TestUnwaitedFailoverWarnsOnce: with a Sentinel URL, wait_replicas unset
// waits for a replica and says nothing; an explicit 0 is allowed and
// warned about once, at start (before Redis is even reached: this one does
// not answer).
func TestUnwaitedFailoverWarnsOnce(t *testing.T) {
	t.Parallel()
	const warning = "writes are not waited for on a replica: a failover can lose the last grants"
	for _, tt := range []struct {
		redis string
		warns int
	}{
		{"{timeout: 300ms, wait_timeout: 100ms}", 0},
		{"{timeout: 300ms, wait_timeout: 100ms, wait_replicas: 0}", 1},
	} {
		w := newWorld(t, sim.Config{})
		// quota status warns as a process that spends: one with an
		// archive, where it keeps its record of grants.
		w.mustRun("migrate")
		w.config("redis: " + tt.redis + "\n") // before REDIS_URL: there are no books to settle
		w.env["REDIS_URL"] = "redis://127.0.0.1:1?master_name=main"
		r := w.run("quota", "status")
		if got := strings.Count(r.stderr, warning); got != tt.warns {
			t.Errorf("redis: %s: the warning logged %d times, want %d; stderr:\n%s", tt.redis, got, tt.warns, r.stderr)
		}
	}
}

// TestClusterWithoutReplicasDefaultsToNoWait: on a Cluster whose masters
// have no replica, the default wait_replicas (1 for a Cluster URL) would
// refuse every grant for want of an acknowledgement no failover could ever
// need. Left to its default, it waits for none; set explicitly, it is kept.
func TestClusterWithoutReplicasDefaultsToNoWait(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = c.URL()
	cred := redistest.Prefix(t)
	w.config(fmt.Sprintf("credential: %s\nlimits: [{name: daily, units: 100, window: 24h}]\n", cred))
	r := w.mustRun("quota", "reserve", "--cost", "7")
	if !strings.HasPrefix(r.stdout, "granted ") || !strings.Contains(r.stderr, "no failover can lose its writes") {
		t.Errorf("default wait_replicas on a replica-less Cluster: %q, %q; want granted, and the reason logged", r.stdout, r.stderr)
	}
	w.config(fmt.Sprintf("credential: %s\nlimits: [{name: daily, units: 100, window: 24h}]\nredis: {wait_replicas: 1}\n", cred))
	r = w.run("quota", "reserve", "--cost", "7")
	if r.code != 1 || !strings.Contains(r.stderr, "0 of 1 replicas acknowledged") {
		t.Errorf("explicit wait_replicas 1: exit %d, %q; want refused for the missing ack", r.code, r.stderr)
	}
}
