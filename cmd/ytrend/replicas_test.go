package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/logbuf"
	"github.com/ytrend/ytrend/testkit/redistest"
	"github.com/ytrend/ytrend/view"
)

// replica is one `ytrend run` process of the replica tests, reaching the
// simulator through a counter of its own.
type replica struct {
	name string
	cmd  *exec.Cmd
	logs *logbuf.Buffer
	base string // its /metrics server
	// requests counts its chart page requests (videos.list), one per page
	// stored; all counts every API request, videoCategories.list included.
	requests, all atomic.Int64
	db            string
	mu            sync.Mutex
	sent          []time.Time         // when each API request arrived, by the test's clock
	onRequest     func(*http.Request) // if set, sees each API request before the simulator
}

// startReplica starts `ytrend run` with its own archive db and env (added
// to w's), and waits for its metrics address.
func startReplica(t *testing.T, w *world, name, db string, env ...string) *replica {
	t.Helper()
	return startReplicaArgs(t, w, name, db, nil, env...)
}

// startReplicaArgs is startReplica with more arguments to `ytrend run`.
func startReplicaArgs(t *testing.T, w *world, name, db string, args []string, env ...string) *replica {
	t.Helper()
	r := &replica{name: name, db: db}
	front := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/youtube/") {
			r.mu.Lock()
			r.sent = append(r.sent, time.Now())
			hook := r.onRequest
			r.mu.Unlock()
			r.all.Add(1)
			if hook != nil {
				hook(req)
			}
		}
		if req.URL.Path == "/youtube/v3/videos" {
			r.requests.Add(1)
		}
		w.sim.ServeHTTP(rw, req)
	}))
	t.Cleanup(front.Close)
	cmd := w.command(append([]string{"run", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, "YTREND_DB="+db, "YOUTUBE_ENDPOINT="+front.URL)
	cmd.Env = append(cmd.Env, env...)
	var logs logbuf.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	r.cmd, r.logs = cmd, &logs
	addr := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
	waitFor(t, name+"'s metrics address", 30*time.Second, func() bool {
		m := addr.FindStringSubmatch(r.logs.String())
		if m != nil {
			r.base = "http://" + m[1]
		}
		return m != nil
	})
	return r
}

// sentSince is how many API requests r sent from at on (by the test's
// clock), and when the first of them arrived.
func (r *replica) sentSince(at time.Time) (int, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, first := 0, time.Time{}
	for _, s := range r.sent {
		if !s.Before(at) {
			if n == 0 {
				first = s
			}
			n++
		}
	}
	return n, first
}

func (r *replica) leader(t *testing.T) float64 {
	t.Helper()
	code, body := get(t, r.base+"/metrics")
	if code != 200 {
		return -1
	}
	v, ok := metricsOf(body)["ytrend_leader"]
	if !ok {
		return -1
	}
	return v
}

// leaderOf waits until exactly one of rs reports ytrend_leader 1 and the
// others 0, and returns it.
func leaderOf(t *testing.T, what string, rs ...*replica) *replica {
	t.Helper()
	var lead *replica
	waitFor(t, what, 30*time.Second, func() bool {
		lead = nil
		n := 0
		for _, r := range rs {
			switch r.leader(t) {
			case 1:
				lead = r
				n++
			case 0:
			default:
				return false
			}
		}
		return n == 1
	})
	return lead
}

// TestReplicasOneLeader runs three `ytrend run` replicas of one credential
// against the simulator, one region every 2s, with a 2s leader lease:
// exactly one replica leads (ytrend_leader 1) and only it fetches; after a
// SIGKILL of the leader another takes over and fetching resumes; a leader
// paused with SIGSTOP past its lease and then resumed sends no request.
// Once on Redis (each replica with its own archive), once on the embedded
// ledger (the replicas share one archive, and the lease lives in it).
func TestReplicasOneLeader(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"redis", "ledger"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testReplicas(t, backend)
		})
	}
}

func testReplicas(t *testing.T, backend string) {
	w := newWorld(t, sim.Config{})
	cred := "replicas"
	if backend == "redis" {
		redistest.Client(t)
		cred = redistest.Prefix(t)
		w.env["REDIS_URL"] = redistest.URL()
	}
	const ttl = 2 * time.Second
	w.config(fmt.Sprintf(`
credential: %s
redis: {epoch_check: 500ms}
scheduler: {leader_ttl: 2s, maintenance: "off"}
regions:
  - {code: US, cron: "@every 2s", pages: 1}
`, cred))

	replicas := make([]*replica, 3)
	for i := range replicas {
		name, db := fmt.Sprintf("r%d", i), w.env["YTREND_DB"]
		if backend == "redis" {
			db = filepath.Join(w.dir, name+".db")
		}
		replicas[i] = startReplica(t, w, name, db)
	}
	first := leaderOf(t, "exactly one leader of three", replicas...)
	waitFor(t, "the leader's fetches", 30*time.Second, func() bool { return first.requests.Load() >= 2 })
	for _, r := range replicas {
		if r != first && r.all.Load() != 0 {
			t.Errorf("standby %s sent %d requests", r.name, r.all.Load())
		}
		if r != first {
			if code, body := get(t, r.base+"/readyz"); code != 200 || !strings.Contains(body, "standing by") {
				t.Errorf("standby %s /readyz = %d %q, want ready and standing by", r.name, code, body)
			}
		}
	}
	if code, body := get(t, first.base+"/readyz"); code != 200 || !strings.Contains(body, "leading") {
		t.Errorf("leader /readyz = %d %q", code, body)
	}

	// SIGKILL the leader: another takes over and fetching resumes.
	killed := time.Now()
	first.cmd.Process.Kill()
	rest := without(replicas, first)
	second := leaderOf(t, "a new leader after SIGKILL", rest...)
	before := second.requests.Load()
	waitFor(t, "fetching to resume", 30*time.Second, func() bool { return second.requests.Load() > before })
	t.Logf("fetching resumed %s after the leader's SIGKILL (lease ttl %s)", time.Since(killed).Round(100*time.Millisecond), ttl)

	// SIGSTOP the new leader past its lease; the last replica takes over;
	// resumed, the paused one sends nothing more.
	second.cmd.Process.Signal(syscall.SIGSTOP)
	third := without(rest, second)[0]
	resumed := false
	if !within(15*time.Second, func() bool { return third.leader(t) == 1 }) {
		if backend != "ledger" {
			t.Fatal("no new leader 15 s after pausing the leader")
		}
		// The embedded ledger lives in the archive: a process frozen while
		// it holds the archive's write lock (a page, its lease, its
		// heartbeat) freezes every writer of that archive, and nobody can
		// take the lease until it runs again (README, replicas). Resumed,
		// it finds its lease gone and stands by.
		t.Log("the paused leader held the shared archive's write lock; resuming it")
		second.cmd.Process.Signal(syscall.SIGCONT)
		resumed = true
		// Nobody could take the lease while it was frozen, so either may
		// win it now: the resumed one (its old term ended by its own clock,
		// so it leads under a new one) or the last. The other must stand
		// by and send nothing from here on: name them by what they do.
		var lead *replica
		waitFor(t, "one leader after the resume", 60*time.Second, func() bool {
			a, b := second.leader(t), third.leader(t)
			switch {
			case a == 1 && b == 0:
				lead = second
			case a == 0 && b == 1:
				lead = third
			default:
				return false
			}
			return true
		})
		if lead == second {
			t.Log("the resumed replica won the lease again; the last one stands by")
			second, third = third, second
		}
	}
	waitFor(t, "the last replica to lead", 60*time.Second, func() bool { return third.leader(t) == 1 })
	waitFor(t, "the last replica's fetches", 60*time.Second, func() bool { return third.requests.Load() >= 1 })
	paused := second.all.Load()
	if !resumed {
		second.cmd.Process.Signal(syscall.SIGCONT)
	}
	waitFor(t, "the resumed replica to stand by", 30*time.Second, func() bool { return second.leader(t) == 0 })
	mark := third.requests.Load()
	waitFor(t, "two more of the leader's fetches", 30*time.Second, func() bool { return third.requests.Load() >= mark+2 })
	if got := second.all.Load(); got != paused {
		t.Errorf("the resumed replica sent %d requests after SIGCONT, want none", got-paused)
	}
	if third.leader(t) != 1 {
		t.Error("the last replica stopped leading")
	}

	// Stop the two still running the way an operator would: a page in
	// flight is stored first.
	for _, r := range rest {
		r.cmd.Process.Signal(syscall.SIGTERM)
		exitCode(t, r.cmd, 30*time.Second)
	}
	// Every run is in the archive of a replica that led when it ran; no
	// request went unrecorded.
	total := int64(0)
	for _, r := range replicas {
		total += r.all.Load()
	}
	if used := w.sim.Usage(testKey).Requests; used != total {
		t.Errorf("the simulator saw %d requests, the replicas counted %d", used, total)
	}
	checkRunsByOwner(t, replicas, first, backend)
	for _, r := range replicas {
		w.assertNoKey(r.logs.String())
	}
}

func without(rs []*replica, x *replica) []*replica {
	var out []*replica
	for _, r := range rs {
		if r != x {
			out = append(out, r)
		}
	}
	return out
}

// checkRunsByOwner: taken in time order, the runs that stored pages come
// in one stretch per leader (two replicas firing the same ticks would
// interleave), there were exactly two handovers, and each replica's stored
// pages match the requests it sent (the SIGKILLed one may have lost the
// page of one request in flight).
func checkRunsByOwner(t *testing.T, replicas []*replica, killed *replica, backend string) {
	t.Helper()
	seen := map[string]bool{}
	var runs []store.Run
	for _, r := range replicas {
		if seen[r.db] {
			continue
		}
		seen[r.db] = true
		db, err := store.Open(context.Background(), r.db)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := db.Runs(context.Background(), store.RunFilter{Limit: 1000})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, rs...)
	}
	slices.SortFunc(runs, func(a, b store.Run) int { return a.StartedAt.Compare(b.StartedAt) })
	var owners []string
	byOwner := map[string]int64{}
	for _, r := range runs {
		if r.Pages == 0 {
			continue
		}
		byOwner[r.Owner] += int64(r.Pages)
		if len(owners) == 0 || owners[len(owners)-1] != r.Owner {
			owners = append(owners, r.Owner)
		}
	}
	// One stretch per leader: an owner met again after another would be
	// two leaders writing in turn. Three leaders, or two when the resumed
	// replica won the lease back before the last one stored a page (the
	// test logs that case; the last one then stands by with nothing run).
	distinct := map[string]bool{}
	for _, o := range owners {
		distinct[o] = true
	}
	if len(distinct) != len(owners) || len(owners) < 2 || len(owners) > 3 {
		t.Errorf("%s: the runs' owners in time order are %v, want one stretch per leader, two or three leaders", backend, owners)
	}
	for _, r := range replicas {
		owner := fmt.Sprintf(":%d:", r.cmd.Process.Pid) // host:pid:random
		var pages int64
		for o, p := range byOwner {
			if strings.Contains(o, owner) {
				pages += p
			}
		}
		got := r.requests.Load()
		if pages != got && (r != killed || pages != got-1) {
			t.Errorf("%s (%s): %d pages stored, %d page requests sent", r.name, backend, pages, got)
		}
	}
}

// TestQuotaReserveSurvivesRedisLoss is the first check from the
// command line: two `quota reserve` users with separate archives spend 200
// of a 200-unit day, Redis loses the credential's keys (what a restart
// without persistence or a FLUSHALL does), and the next reservations are
// refused - first by the rebuild's grace, then by the restored books - and
// quota status shows the restored 200 units and where they came from.
func TestQuotaReserveSurvivesRedisLoss(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cred := redistest.Prefix(t)
	alice, bob := newWorld(t, sim.Config{}), newWorld(t, sim.Config{})
	for _, w := range []*world{alice, bob} {
		w.env["REDIS_URL"] = redistest.URL()
		w.config(fmt.Sprintf(`
credential: %s
limits: [{name: daily, units: 200, window: 24h}]
redis: {epoch_check: 100ms, rebuild_grace: 3s}
`, cred))
	}
	alice.mustRun("quota", "reserve", "--cost", "120")
	bob.mustRun("quota", "reserve", "--cost", "80")
	if r := bob.run("quota", "reserve", "--cost", "1"); r.code != 75 {
		t.Fatalf("a full day granted more: exit %d", r.code)
	}
	keys, err := rdb.Keys(context.Background(), "ytrend:{"+cred+"}:*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v %v", keys, err)
	}
	rdb.Del(context.Background(), keys...)

	r := alice.run("quota", "reserve", "--cost", "200", "--json")
	if res := decode[view.Reservation](t, r.stdout); r.code != 75 || res.RefusedBy != "rebuild" {
		t.Fatalf("alice after the loss: exit %d %+v; want refused by the rebuild", r.code, res)
	}
	r = bob.run("quota", "reserve", "--cost", "1", "--json")
	if res := decode[view.Reservation](t, r.stdout); r.code != 75 || res.RefusedBy != "rebuild" {
		t.Fatalf("bob after the loss: exit %d %+v", r.code, res)
	}
	time.Sleep(3 * time.Second) // the grace; long enough that the two refusals above fall in it
	r = alice.run("quota", "reserve", "--cost", "1", "--json")
	if res := decode[view.Reservation](t, r.stdout); r.code != 75 || res.RefusedBy != "daily" {
		t.Fatalf("after the grace: exit %d %+v; want refused by the restored day", r.code, res)
	}
	st := decode[quotaStatusJSON](t, alice.mustRun("quota", "status", "--json").stdout)
	if st.Limits[0].Used != 200 || st.Ledger.RebuiltAt == nil || st.Ledger.RestoredGrants != 2 || st.Ledger.Epoch == "" {
		t.Errorf("status = %+v, ledger %+v; want 200 units, rebuilt from 2 local grants", st.Limits[0], st.Ledger)
	}
	text := alice.mustRun("quota", "status").stdout
	if !regexp.MustCompile(`ledger: rebuilt at \S+ from 2 local grants`).MatchString(text) {
		t.Errorf("quota status does not say the ledger was rebuilt:\n%s", text)
	}
}

// TestRedisPasswordNotInHelp: REDIS_URL may hold a password; --help and a
// bare `ytrend quota` (which prints help) never show it.
func TestRedisPasswordNotInHelp(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	const pw = "s3cret-redis-pass"
	w.env["REDIS_URL"] = "redis://app:" + pw + "@127.0.0.1:1/0"
	for _, args := range [][]string{{"--help"}, {"quota"}, {"quota", "status", "--help"}, {"run", "--help"}} {
		r := w.run(args...)
		if strings.Contains(r.stdout+r.stderr, pw) {
			t.Errorf("ytrend %v prints the Redis password:\n%s%s", args, r.stdout, r.stderr)
		}
	}
}

// TestRedisHostThatDoesNotResolve: quota status on a Redis whose host name
// does not resolve (RFC 2606 keeps .invalid from ever resolving) says that
// the lookup failed, not "context deadline exceeded" alone, and never
// shows the URL's password: on a host that has no archive (the budget is
// read alone) and on one that has (its record of grants is synced first).
func TestRedisHostThatDoesNotResolve(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.config("redis: {timeout: 300ms}\n") // before REDIS_URL: there are no books to settle
	const pw = "s3cret-redis-pass"
	w.env["REDIS_URL"] = "redis://app:" + pw + "@no-such-host.invalid:6379/0"
	for _, archive := range []bool{false, true} {
		if archive {
			w.mustRun("migrate")
		}
		r := w.run("quota", "status")
		if r.code != exitError || !strings.Contains(r.stderr, "lookup no-such-host.invalid") {
			t.Errorf("archive %v: exit %d, stderr %q; want exit %d naming the failed lookup of no-such-host.invalid",
				archive, r.code, r.stderr, exitError)
		}
		if strings.Contains(r.stdout+r.stderr, pw) {
			t.Errorf("archive %v: quota status prints the Redis password:\n%s%s", archive, r.stdout, r.stderr)
		}
	}
}

// TestRedisClientLogsGoThroughSlog: go-redis logs Sentinel events itself
// ("sentinel: new master=..."); with --log-format json every line on stderr
// is JSON, theirs included.
func TestRedisClientLogsGoThroughSlog(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = s.URL()
	r := w.run("quota", "status", "--log-format", "json", "--log-level", "debug")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sawRedis := false
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if line == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("stderr line is not JSON: %q", line)
		}
		if msg, _ := v["msg"].(string); strings.HasPrefix(msg, "redis client: ") {
			sawRedis = true
		}
	}
	if !sawRedis {
		t.Errorf("no go-redis line reached the logger; stderr:\n%s", r.stderr)
	}
}

// TestPartitionedLeaderStopsWhenItsLeaseRunsOut is issue 18's partitioned
// leader with real processes: two `ytrend run` replicas share Redis, and
// the leader's connection goes through a proxy that the test stalls (Redis
// stops answering: a partition, not a refusal) just as a run begins. While
// its lease lasts by its own clock the leader may still spend by the
// fail-open policy; once it runs out, its run ends fenced and it sends
// nothing more, while the other replica takes over and fetches.
func TestPartitionedLeaderStopsWhenItsLeaseRunsOut(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = redistest.URL() // the books are settled on it; each replica's own goes through its proxy
	// A 1s lease (the shortest allowed), renewed every 333ms, and budget
	// calls that wait 500ms for Redis: once the proxy stalls, the run's
	// second reservation ends within the lease, the third after it.
	w.config(fmt.Sprintf(`
credential: %s
redis: {epoch_check: 500ms, timeout: 500ms}
scheduler: {leader_ttl: 1s, maintenance: "off"}
regions:
  - {code: US, cron: "@every 1s", pages: 4}
`, redistest.Prefix(t)))
	proxies := map[*replica]*redistest.Proxy{}
	start := func(name string) *replica {
		p := redistest.NewProxy(t, rdb.Options().Addr)
		r := startReplica(t, w, name, filepath.Join(w.dir, name+".db"), "REDIS_URL=redis://"+p.Addr()+"/0")
		proxies[r] = p
		return r
	}
	first := start("a")
	if leaderOf(t, "a to lead", first) != first {
		t.Fatal("a does not lead")
	}
	second := start("b")
	// A renewal that a loaded machine delays past the 1s lease hands the
	// lease to b, so the test cuts off whichever leads once both are up.
	a := leaderOf(t, "one leader and one standby", first, second)
	b := second
	if a == second {
		b = first
	}
	proxy := proxies[a]
	// A leader that lost the lease before may have logged its end already.
	const ranOut, fenced = "ran out by this replica's clock", "status=fenced"
	ranOutBefore, fencedBefore := strings.Count(a.logs.String(), ranOut), strings.Count(a.logs.String(), fenced)

	// Cut the leader off at the first chart page of its next run.
	cut := make(chan time.Time, 1)
	a.mu.Lock()
	a.onRequest = func(req *http.Request) {
		if req.URL.Path == "/youtube/v3/videos" && req.URL.Query().Get("pageToken") == "" && len(cut) == 0 {
			proxy.Set(redistest.Stalled)
			cut <- time.Now()
		}
	}
	a.mu.Unlock()
	var cutAt time.Time
	select {
	case cutAt = <-cut:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s started no run in 30s", a.name)
	}

	// The leader learns that its lease ran out from its own clock, not
	// from an answer; its run in flight ends fenced.
	var afterEnd int64
	waitFor(t, "the leader's term to end by its clock", 30*time.Second, func() bool {
		afterEnd = a.all.Load()
		return strings.Count(a.logs.String(), ranOut) > ranOutBefore
	})
	waitFor(t, "the leader's run in flight to end fenced", 30*time.Second, func() bool {
		return strings.Count(a.logs.String(), fenced) > fencedBefore
	})
	waitFor(t, "the standby to take over", 30*time.Second, func() bool { return b.leader(t) == 1 })
	reqs := b.requests.Load()
	waitFor(t, "two of the new leader's runs", 30*time.Second, func() bool { return b.requests.Load() >= reqs+8 })
	if got := a.leader(t); got != 0 {
		t.Errorf("%s's ytrend_leader = %v, want 0", a.name, got)
	}
	_, bFirst := b.sentSince(cutAt)
	sinceCut, _ := a.sentSince(cutAt)
	whileB, _ := a.sentSince(bFirst)
	t.Logf("%s sent %d requests after the cut (fail-open while its lease lasted by its clock), "+
		"%d after its lease ran out by its clock, %d while %s fetched",
		a.name, sinceCut, a.all.Load()-afterEnd, whileB, b.name)
	// The standby leads only once the lease ran out in Redis, which is
	// after it ran out by the old leader's clock (which measures from
	// before it sent its renewal), and fetches only at a tick after that.
	if whileB != 0 {
		t.Errorf("the deposed leader sent %d requests while the new one fetched, want 0", whileB)
	}
	if got := a.all.Load(); got != afterEnd {
		t.Errorf("the deposed leader sent %d requests after its lease ran out by its clock, want 0", got-afterEnd)
	}
	w.assertNoKey(a.logs.String(), b.logs.String())
}
