package quota_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
	"github.com/ytrend/ytrend/testkit/wait"
)

// A red-team harness: the library's functions (and the EVAL scripts of the
// version before it) called directly on a private redis-server, against a
// brute-force model of every member ever added. Each grant is checked
// against the exact sliding window at the grant's own Redis time, and every
// reported usage against the model.

type rqLimit struct {
	name   string
	units  int64
	window time.Duration
}

type rqMember struct {
	at   int64 // µs, Redis time
	cost int64
}

type rqCred struct {
	name    string
	epoch   string
	seen    int64
	members []map[string]rqMember // per limit: member "<id>|<cost>" -> entry
}

type rqHarness struct {
	t      *testing.T
	ctx    context.Context
	rdb    *redis.Client
	limits []rqLimit
	creds  []*rqCred
	old    *redis.Script // the EVAL version (testdata/eval)
	bac    string        // the name of bac461f's library, '' for none
	n      int           // ids issued
	grants int
	// onReplay, when set, runs when a reservation is told to replay (the
	// epoch is not the harness's): a process with a record restores it.
	onReplay func(c *rqCred)
}

func newRQ(t *testing.T, rdb *redis.Client, limits []rqLimit, creds ...string) *rqHarness {
	h := &rqHarness{t: t, ctx: context.Background(), rdb: rdb, limits: limits}
	var src []byte
	for _, f := range []string{"window.lua", "reserve.lua"} {
		b, err := os.ReadFile(filepath.Join("testdata", "eval", f))
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	h.old = redis.NewScript(string(src))
	for _, c := range creds {
		rc := &rqCred{name: c}
		for range limits {
			rc.members = append(rc.members, map[string]rqMember{})
		}
		h.creds = append(h.creds, rc)
	}
	return h
}

func (h *rqHarness) key(c *rqCred, kind, limit string) string { return redisKey(c.name, kind, limit) }

func (h *rqHarness) id() string {
	h.n++
	return "r" + strconv.Itoa(h.n)
}

// inWindow is the model's usage of limit i of c at now.
func (h *rqHarness) inWindow(c *rqCred, i int, now int64) int64 {
	var sum int64
	cut := now - h.limits[i].window.Microseconds()
	for _, m := range c.members[i] {
		if m.at > cut {
			sum += m.cost
		}
	}
	return sum
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return -1 << 62
}

// replyFields is a reserve reply as an array: since 2026-11-26 a plain
// grant comes as one string of space-separated fields, other replies (and
// every reply of the libraries before) as an array.
func replyFields(v any, err error) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, err
	case string:
		var out []any
		for _, f := range strings.Fields(x) {
			out = append(out, f)
		}
		return out, err
	}
	if err == nil {
		err = fmt.Errorf("reserve: unexpected reply %T %v", v, v)
	}
	return nil, err
}

// checkUsed compares reported usage with the model at now.
func (h *rqHarness) checkUsed(what string, c *rqCred, now int64, used []int64) {
	h.t.Helper()
	for i := range h.limits {
		if want := h.inWindow(c, i, now); used[i] != want {
			h.t.Fatalf("%s on %s: limit %s reports %d used at %d, the model %d", what, c.name, h.limits[i].name,
				used[i], now, want)
		}
	}
}

// reserve is one reservation of costs (0: the limit does not count it) by
// the library (fn the reserve function's name) or, with old, the EVAL
// version. It returns whether it was granted.
func (h *rqHarness) reserve(c *rqCred, costs []int64, old bool, fn string) bool {
	h.t.Helper()
	for attempt := 0; ; attempt++ {
		id := h.id()
		var v []any
		var err error
		if old {
			keys := []string{h.key(c, "exhausted", ""), h.key(c, "exhausted", ""), h.key(c, "epoch", ""),
				h.key(c, "epoch", "info"), h.key(c, "leader", "")}
			args := []any{id, c.epoch, "e-" + id, 1, "", "0", c.seen}
			for i, l := range h.limits {
				keys = append(keys, h.key(c, "log", l.name), h.key(c, "total", l.name))
				args = append(args, l.units, l.window.Microseconds(), 0, costs[i])
			}
			v, err = h.old.Run(h.ctx, h.rdb, keys, args...).Slice()
		} else {
			keys := []string{h.key(c, "exhausted", ""), h.key(c, "exhausted", ""), h.key(c, "epoch", ""),
				h.key(c, "leader", "")}
			for _, l := range h.limits {
				keys = append(keys, h.key(c, "total", l.name))
			}
			keys = append(keys, h.key(c, "epoch", "info"))
			for _, l := range h.limits {
				keys = append(keys, h.key(c, "log", l.name))
			}
			if strings.HasPrefix(fn, h.bac) && h.bac != "" {
				// bac461f's reserve: grace, fence, '0', seen, then units, window, cost.
				args := []any{id, c.epoch, "e-" + id, 1, "", "0", c.seen}
				for i, l := range h.limits {
					args = append(args, l.units, l.window.Microseconds(), costs[i])
				}
				v, err = replyFields(h.rdb.FCall(h.ctx, fn, keys, args...).Result())
			} else {
				spec := "1"
				for i, l := range h.limits {
					spec += fmt.Sprintf(" %d %d %d", l.units, l.window.Microseconds(), costs[i])
				}
				v, err = replyFields(h.rdb.FCall(h.ctx, fn, keys, id, c.epoch, "e-"+id, "", "0", c.seen, spec).Result())
			}
		}
		if err != nil {
			h.t.Fatalf("reserve (old=%v): %v", old, err)
		}
		n := len(h.limits)
		var code, refusedBy, now, seq int64
		var epoch string
		var used []int64
		if len(v) == 3+n && !old && len(v) != 9+n {
			code, now, seq = 1, asInt(v[0]), asInt(v[2])
			epoch, _ = v[1].(string)
			for i := range n {
				used = append(used, asInt(v[3+i]))
			}
		} else {
			code, refusedBy, now, seq = asInt(v[0]), asInt(v[1]), asInt(v[3]), asInt(v[7])
			epoch, _ = v[5].(string)
			if asInt(v[4]) != 0 {
				h.t.Fatalf("reserve of fresh id %s: duplicate %v", id, v)
			}
			for i := range n {
				used = append(used, asInt(v[9+i]))
			}
		}
		if epoch != c.epoch {
			c.epoch, c.seen = epoch, 0
		}
		if seq > c.seen {
			c.seen = seq
		}
		switch code {
		case 2:
			if attempt > 3 {
				h.t.Fatalf("reserve: replay asked %d times: %v", attempt, v)
			}
			if h.onReplay != nil {
				h.onReplay(c)
			}
			// Wait out the 1 µs grace.
			continue
		case 1:
			h.grants++
			for i, cost := range costs {
				if cost == 0 {
					continue
				}
				c.members[i][id+"|"+strconv.FormatInt(cost, 10)] = rqMember{now, cost}
				if got := h.inWindow(c, i, now); got > h.limits[i].units {
					h.t.Fatalf("OVER-GRANT (old=%v, fn=%s): %s on %s granted %d at %d: %d units in its window of %d",
						old, fn, id, c.name, cost, now, got, h.limits[i].units)
				}
			}
			h.checkUsed(fmt.Sprintf("grant %s (old=%v)", id, old), c, now, used)
			return true
		case 0:
			if refusedBy == -2 {
				continue // the grace of a loss this harness did not cause
			}
			if refusedBy <= 0 {
				h.t.Fatalf("refused by %d: %v", refusedBy, v)
			}
			i := int(refusedBy - 1)
			if got := h.inWindow(c, i, now); got+costs[i] <= h.limits[i].units {
				h.t.Fatalf("LOST GRANT (old=%v): %s on %s refused by %s at %d with %d+%d of %d in its window",
					old, id, c.name, h.limits[i].name, now, got, costs[i], h.limits[i].units)
			}
			h.checkUsed(fmt.Sprintf("refusal %s (old=%v)", id, old), c, now, used)
			return false
		default:
			h.t.Fatalf("reserve: %v", v)
		}
	}
}

// sync replays one entry of costs granted ago before Redis' now (taken from
// a TIME read just before: the entry is a little older still).
func (h *rqHarness) sync(c *rqCred, costs []int64, ago time.Duration, fn string) {
	h.t.Helper()
	v := h.syncOne(c, costs, ago, fn)
	if ep, _ := v[2].(string); ep != c.epoch {
		h.t.Fatalf("sync: epoch %s, the harness's %s: %v", ep, c.epoch, v)
	}
	if s := asInt(v[5]); s > c.seen {
		c.seen = s
	}
}

// syncOne calls sync function fn for one entry of costs granted ago before
// Redis' now, adds the entry to the model if the sync took it, and returns
// the reply.
func (h *rqHarness) syncOne(c *rqCred, costs []int64, ago time.Duration, fn string) []any {
	h.t.Helper()
	tm, err := h.rdb.Time(h.ctx).Result()
	if err != nil {
		h.t.Fatal(err)
	}
	at := tm.UnixMicro() - ago.Microseconds()
	id := h.id()
	keys := []string{h.key(c, "epoch", ""), h.key(c, "epoch", "info")}
	args := []any{c.epoch, "e-" + id, 1, 1, "0", c.seen}
	for _, l := range h.limits {
		keys = append(keys, h.key(c, "log", l.name), h.key(c, "total", l.name))
		args = append(args, l.units, l.window.Microseconds(), "")
	}
	args = append(args, id, at)
	for _, cost := range costs {
		args = append(args, cost)
	}
	v, err := h.rdb.FCall(h.ctx, fn, keys, args...).Slice()
	if err != nil {
		h.t.Fatalf("sync: %v", err)
	}
	if asInt(v[0]) == 1 {
		now := asInt(v[1])
		for i, cost := range costs {
			if cost > 0 && at > now-h.limits[i].window.Microseconds() {
				c.members[i][id+"|"+strconv.FormatInt(cost, 10)] = rqMember{at, cost}
			}
		}
	}
	return v
}

// release removes a random member of c from the books.
func (h *rqHarness) release(c *rqCred, r *rand.Rand, fn string) {
	h.t.Helper()
	var ids []string
	for _, m := range c.members {
		for k := range m {
			ids = append(ids, k[:strings.IndexByte(k, '|')])
		}
	}
	if len(ids) == 0 {
		return
	}
	id := ids[r.Intn(len(ids))]
	var keys []string
	args := []any{id}
	for _, l := range h.limits {
		keys = append(keys, h.key(c, "log", l.name), h.key(c, "total", l.name))
		args = append(args, l.units, l.window.Microseconds())
	}
	if _, err := h.rdb.FCall(h.ctx, fn, keys, args...).Result(); err != nil {
		h.t.Fatalf("release: %v", err)
	}
	for _, m := range c.members {
		for k := range m {
			if strings.HasPrefix(k, id+"|") {
				delete(m, k)
			}
		}
	}
}

// status checks the usage status.lua reports.
func (h *rqHarness) status(c *rqCred, fn string) {
	h.t.Helper()
	keys := []string{h.key(c, "exhausted", ""), h.key(c, "epoch", ""), h.key(c, "epoch", "info"),
		h.key(c, "leader", "")}
	args := []any{0}
	for _, l := range h.limits {
		keys = append(keys, h.key(c, "log", l.name), h.key(c, "total", l.name))
		args = append(args, l.units, l.window.Microseconds())
	}
	v, err := h.rdb.FCall(h.ctx, fn, keys, args...).Slice()
	if err != nil {
		h.t.Fatalf("status: %v", err)
	}
	now := asInt(v[0])
	var used []int64
	for i := range h.limits {
		used = append(used, asInt(v[len(v)-3*len(h.limits)+3*i]))
	}
	h.checkUsed("status", c, now, used)
}

// loadOther loads a second build's library (this one's text with a comment
// more: another name, its own Lua locals) and returns its name.
func loadOther(t *testing.T, rdb *redis.Client, tag string) string {
	t.Helper()
	_, code := quota.Library()
	name, _ := quota.Library()
	text := strings.ReplaceAll(code, name, quota.LibraryPlaceholder) + "-- another build " + tag + "\n"
	other := quota.LibraryName(text)
	if err := rdb.FunctionLoadReplace(context.Background(), strings.ReplaceAll(text, quota.LibraryPlaceholder, other)).Err(); err != nil {
		t.Fatal(err)
	}
	return other
}

// rqOp is one step of a random schedule; rqWeights gives each its share.
type rqOp int

const (
	opReserve   rqOp = iota // a reservation with a fresh id
	opReuse                 // the EVAL version, reusing an id (once an epoch is known)
	opSync                  // a replay from up to maxAgo back (once an epoch is known)
	opRelease               // a release of a granted id
	opStatus                // a status call
	opDropTotal             // fault: DEL of a total
	opFlush                 // fault: FUNCTION FLUSH, every library reloaded
	opWait                  // let up to maxWait pass by Redis' clock
)

type rqWeights [opWait + 1]int

// pick draws a step with weights w.
func (w rqWeights) pick(r *rand.Rand) rqOp {
	total := 0
	for _, n := range w {
		total += n
	}
	k := r.Intn(total)
	for op, n := range w {
		if k < n {
			return rqOp(op)
		}
		k -= n
	}
	panic("unreachable")
}

// rqSchedule is a random schedule's shape.
type rqSchedule struct {
	weights         rqWeights
	specs           [][]int64     // the costs a step draws from
	maxAgo, maxWait time.Duration // of a replay, of a wait
	library         func(r *rand.Rand) string
	faults          func(op rqOp, c *rqCred, r *rand.Rand) // runs opDropTotal and opFlush; nil for none
}

// rqRand is the schedule's source: RQ_SEED, or the time (logged, so a
// failure can be replayed).
func rqRand(t *testing.T) *rand.Rand {
	seed := time.Now().UnixNano()
	if s := os.Getenv("RQ_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	return rand.New(rand.NewSource(seed))
}

// run plays 3,000 steps (600 with -short; at most 40 s), each checked
// against the model by the harness.
func (h *rqHarness) run(r *rand.Rand, sc rqSchedule) {
	steps := 3000
	if testing.Short() {
		steps = 600
	}
	deadline := time.Now().Add(40 * time.Second)
	for step := 0; step < steps && time.Now().Before(deadline); step++ {
		c := h.creds[r.Intn(len(h.creds))]
		fn := sc.library(r)
		costs := sc.specs[r.Intn(len(sc.specs))]
		switch op := sc.weights.pick(r); op {
		case opReserve:
			h.reserve(c, costs, false, fn+"_reserve")
		case opReuse:
			if c.epoch != "" {
				h.reserve(c, costs, true, "")
			}
		case opSync:
			if c.epoch != "" {
				h.sync(c, costs, time.Duration(r.Int63n(int64(sc.maxAgo))), fn+"_sync")
			}
		case opRelease:
			h.release(c, r, fn+"_release")
		case opStatus:
			h.status(c, fn+"_status")
		case opDropTotal, opFlush:
			sc.faults(op, c, r)
		case opWait:
			h.advance(time.Duration(r.Int63n(int64(sc.maxWait))))
		}
	}
	h.t.Logf("grants: %d", h.grants)
}

// advance waits until d has passed by Redis' clock, the one the windows
// are kept by.
func (h *rqHarness) advance(d time.Duration) {
	from, err := h.rdb.Time(h.ctx).Result()
	if err != nil {
		h.t.Fatal(err)
	}
	wait.For(h.t, "Redis' clock to move on", time.Minute, func() bool {
		now, err := h.rdb.Time(h.ctx).Result()
		return err == nil && now.Sub(from) >= d
	})
}

// TestRedQuotaRandomSchedule: a long random schedule of reservations (by
// this build, another build and the EVAL version), replays from the past,
// releases and status calls on two credentials with the same two small
// windows, each step checked against the model.
func TestRedQuotaRandomSchedule(t *testing.T) {
	srv := redistest.StartServer(t)
	rdb := srv.Client()
	name, _ := quota.Library()
	other := loadOther(t, rdb, "a")
	// Load ours too (the harness calls FCALL directly).
	_, code := quota.Library()
	if err := rdb.FunctionLoadReplace(context.Background(), code).Err(); err != nil {
		t.Fatal(err)
	}
	limits := []rqLimit{{"daily", 12, 1500 * time.Millisecond}, {"minute", 5, 400 * time.Millisecond}}
	h := newRQ(t, rdb, limits, "cA", "cB")
	h.run(rqRand(t), rqSchedule{
		weights: rqWeights{opReserve: 11, opReuse: 2, opSync: 2, opRelease: 1, opStatus: 2, opWait: 2},
		specs:   [][]int64{{1, 1}, {1, 0}, {3, 0}, {3, 3}, {0, 1}, {1, 2}},
		maxAgo:  1600 * time.Millisecond, maxWait: 60 * time.Millisecond,
		library: func(r *rand.Rand) string {
			if r.Intn(4) == 0 {
				return other
			}
			return name
		},
	})
}

// loadBac loads the library of main at bac461f (before the total kept its
// bound), as a rolling upgrade from it runs beside this build.
func loadBac(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fcall-bac461f", "library.lua"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if err := rdb.FunctionLoadReplace(context.Background(), string(b)).Err(); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(first, "#!lua name=")
}

// TestRedQuotaRollingUpgradeWithFaults: the random schedule with bac461f's
// library spending beside this build's, and faults between steps: a total
// deleted, FUNCTION FLUSH (every library reloaded, its locals lost).
func TestRedQuotaRollingUpgradeWithFaults(t *testing.T) {
	srv := redistest.StartServer(t)
	rdb := srv.Client()
	ctx := context.Background()
	name, code := quota.Library()
	bac := loadBac(t, rdb)
	other := loadOther(t, rdb, "b")
	if err := rdb.FunctionLoadReplace(ctx, code).Err(); err != nil {
		t.Fatal(err)
	}
	limits := []rqLimit{{"daily", 30, 1200 * time.Millisecond}, {"minute", 8, 300 * time.Millisecond}}
	h := newRQ(t, rdb, limits, "cA", "cB")
	h.bac = bac
	h.run(rqRand(t), rqSchedule{
		weights: rqWeights{opReserve: 22, opReuse: 3, opSync: 4, opRelease: 2, opStatus: 3, opDropTotal: 1, opFlush: 1, opWait: 4},
		specs:   [][]int64{{1, 1}, {1, 0}, {5, 0}, {5, 5}, {0, 1}, {1, 2}},
		maxAgo:  1300 * time.Millisecond, maxWait: 40 * time.Millisecond,
		library: func(r *rand.Rand) string {
			switch r.Intn(6) {
			case 0:
				return other
			case 1, 2:
				return bac
			}
			return name
		},
		faults: func(op rqOp, c *rqCred, r *rand.Rand) {
			switch op {
			case opDropTotal:
				if err := rdb.Del(ctx, h.key(c, "total", limits[r.Intn(len(limits))].name)).Err(); err != nil {
					t.Fatal(err)
				}
			case opFlush:
				if err := rdb.FunctionFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				loadBac(t, rdb)
				loadOther(t, rdb, "b")
				if err := rdb.FunctionLoadReplace(ctx, code).Err(); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
}

// promote makes replica r a master, cut off from its master m, and waits
// until m sees it gone: what m grants from then on r never gets.
func promote(t *testing.T, r, m *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	if err := r.Client().ReplicaOf(ctx, "no", "one").Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the old master to see its replica gone", func() bool {
		info, err := m.Client().Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "connected_slaves:0")
	})
}

// failBack makes the old master m a replica of the promoted r until it has
// synced r's books, then promotes m again: the same server process (its
// run id unchanged) with r's copy.
func failBack(t *testing.T, m, r *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	if err := m.Client().ReplicaOf(ctx, "127.0.0.1", strconv.Itoa(r.Port)).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the old master to full-sync from the new", func() bool {
		info, err := m.Client().Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up") &&
			strings.Contains(info, "master_sync_in_progress:0")
	})
	if err := m.Client().ReplicaOf(ctx, "no", "one").Err(); err != nil {
		t.Fatal(err)
	}
}

// TestRedQuotaFailbackWithoutWait: the same failback with wait_replicas 0.
// The old master grants the 20th unit while cut off, then full-syncs the
// promoted replica's books (which lack it) under its own run id, and is
// promoted again. The first call to it must find the loss (its replication
// id is not the one the epoch started under) and start the grace, so that
// the process holding the lost grant replays it before anyone spends:
// before, a fresh process was granted at once, and the grant's holder then
// saw nothing wrong (21 of 20).
func TestRedQuotaFailbackWithoutWait(t *testing.T) {
	t.Parallel()
	m := redistest.StartServer(t)
	r := redistest.StartReplica(t, m)
	cfg := oneLimit("failback-nowait", 20, time.Hour, smallCosts)
	// a keeps a record of its grants in its archive, as every ytrend
	// process does: what it replays when the books turn out lost.
	a := newLimiter(t, cfg, quota.NewRedis(m.Client()), quota.WithRecord(openStore(t).Writer()))
	for range 19 {
		mustGrant(t, a, "one")
	}
	loseTheLastAndFailBack(t, m, r, a)
	failbackCaught(t, cfg, m, a)
}

// TestRedQuotaFailbackTwoCredentials: the failback of
// TestRedQuotaFailbackWithoutWait on a server that also holds another
// budget (another ytrend deployment's credential). The other budget's
// process calls first after the failback: its own epoch is found lost,
// and the check must still be made for this budget's epoch, which lost
// the 20th unit too. Before, the check was made once per load of the
// library, for whichever epoch came first: a fresh process of this budget
// was granted at once (21 of 20).
func TestRedQuotaFailbackTwoCredentials(t *testing.T) {
	t.Parallel()
	m := redistest.StartServer(t)
	r := redistest.StartReplica(t, m)
	cfg := oneLimit("failback-main", 20, time.Hour, smallCosts)
	other := oneLimit("failback-other", 20, time.Hour, smallCosts)
	a := newLimiter(t, cfg, quota.NewRedis(m.Client()), quota.WithRecord(openStore(t).Writer()))
	o := newLimiter(t, other, quota.NewRedis(m.Client()))
	mustGrant(t, o, "one")
	for range 19 {
		mustGrant(t, a, "one")
	}
	loseTheLastAndFailBack(t, m, r, a)
	// The other budget calls first; what it is told is its own affair.
	reserve(t, newLimiter(t, other, quota.NewRedis(m.Client())), "one")
	failbackCaught(t, cfg, m, a)
}

// TestRedQuotaFailbackAfterOlderEpoch: the failback of
// TestRedQuotaFailbackWithoutWait during a rolling upgrade, after a process
// of the build before (bac461f's library, which records no replication id)
// started the epoch: it found a log evicted, with this build's library
// already loaded and checked. This build's next call must record the id
// the epoch holds now, so that the failback is still found. Before, the
// check was made once per load, so the id was adopted only after the
// failback reloaded the library, as the failback's own (21 of 20).
func TestRedQuotaFailbackAfterOlderEpoch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := redistest.StartServer(t)
	r := redistest.StartReplica(t, m)
	bac := loadBac(t, m.Client())
	cfg := oneLimit("failback-upgrade", 20, time.Hour, smallCosts)
	a := newLimiter(t, cfg, quota.NewRedis(m.Client()), quota.WithRecord(openStore(t).Writer()))
	for range 10 {
		mustGrant(t, a, "one")
	}
	// A log evicted (allkeys-lru would): the older build's process calls
	// first, finds the certificate gone and starts an epoch; it is granted
	// one unit of its own.
	key := func(kind, limit string) string { return redisKey(cfg.Credential, kind, limit) }
	if err := m.Client().Del(ctx, key("log", "only")).Err(); err != nil {
		t.Fatal(err)
	}
	keys := []string{key("exhausted", ""), key("exhausted", ""), key("epoch", ""), key("leader", ""),
		key("total", "only"), key("epoch", "info"), key("log", "only")}
	v, err := m.Client().FCall(ctx, bac+"_reserve", keys, "older-1", "", "older-epoch", 1, "", "0", 0,
		20, time.Hour.Microseconds(), 1).Slice()
	if err != nil {
		t.Fatalf("the older build's reserve: %v", err)
	}
	if info, err := m.Client().HGetAll(ctx, key("epoch", "info")).Result(); err != nil || info["replid"] != "" {
		t.Fatalf("the older build's epoch info %v (%v), want no replid: %v", info, err, v)
	}
	// This build replays its 10 (its record) and spends up to 19 in all.
	for used := int64(0); used < 19; {
		res := mustGrant(t, a, "one")
		used = res.Limits[0].Used
	}
	loseTheLastAndFailBack(t, m, r, a)
	failbackCaught(t, cfg, m, a)
}

// TestRedQuotaFailoverAndBack: a failover to a replica that missed the last
// grant, and back again before anyone reserved on the replica. The old
// master, made a replica of the new one, full-syncs: its data is now the
// replica's, without the grant, but the epoch key in it still names the
// old master's run id, which is again the server holding the books, so no
// loss is seen. What keeps the grant from being spent twice is WAIT, which
// a replicated Redis gets by default (redis.wait_replicas 1 with a Sentinel
// or Cluster URL): the old master, cut off from its replica, cannot have
// the grant acknowledged, so it is refused and never used. Without WAIT
// this failback lost what the failover lost, and the replication id the
// epoch records finds it (TestRedQuotaFailbackWithoutWait).
func TestRedQuotaFailoverAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := redistest.StartServer(t)
	r := redistest.StartReplica(t, m)
	cfg := oneLimit("failback", 20, time.Hour, smallCosts)
	wait := quota.WithWaitReplicas(1, 500*time.Millisecond)
	a := newLimiter(t, cfg, quota.NewRedis(m.Client(), wait))
	var granted int64
	for range 19 {
		mustGrant(t, a, "one")
		granted++
	}
	// The failover: the replica is promoted with all 19; the old master,
	// cut off from it, is asked for the 20th.
	promote(t, r, m)
	if res, err := a.Reserve(ctx, "one"); err == nil && res.Granted {
		t.Fatal("the old master granted a unit that no replica acknowledged")
	}
	// The old master rejoins as the new one's replica, and fails back
	// before anything was reserved on the new one.
	failBack(t, m, r)
	if err := r.Client().ReplicaOf(ctx, "127.0.0.1", strconv.Itoa(m.Port)).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the replica to rejoin the old master", func() bool {
		info, err := m.Client().Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "connected_slaves:1")
	})
	// A fresh process spends from the master until refused.
	b := newLimiter(t, cfg, quota.NewRedis(m.Client(), wait))
	for {
		res := reserve(t, b, "one")
		if !res.Granted {
			if res.RefusedBy == quota.Rebuild {
				waitGrace(t, b)
				continue
			}
			break
		}
		granted++
	}
	if granted != 20 {
		t.Errorf("granted %d units in the hour, limit 20", granted)
	}
}

// loseTheLastAndFailBack waits until r has everything a was granted on m,
// promotes r, has a granted one more unit on m alone (the grant the
// failover loses), and fails back: m full-syncs r and is promoted again.
func loseTheLastAndFailBack(t *testing.T, m, r *redistest.Server, a *quota.Limiter) {
	t.Helper()
	replicated(t, m)
	promote(t, r, m)
	mustGrant(t, a, "one")
	failBack(t, m, r)
}

// replicated waits until m's one replica has every write so far (the
// test's own WAIT: the limiters of these tests ask for none).
func replicated(t *testing.T, m *redistest.Server) {
	t.Helper()
	if n, err := m.Client().Do(context.Background(), "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d replicas, %v", n, err)
	}
}

// failbackCaught checks what must follow a failback that lost a's 20th
// unit of cfg's 20 on m: a fresh process's first call finds the loss and
// is refused for the grace (long enough here that nothing waits it out),
// and a, the lost grant's holder, calling within it replays the grant, so
// the books hold the 20 granted.
func failbackCaught(t *testing.T, cfg quota.Config, m *redistest.Server, a *quota.Limiter) {
	t.Helper()
	cfg.RebuildGrace = time.Minute
	b := newLimiter(t, cfg, quota.NewRedis(m.Client()))
	if res := reserve(t, b, "one"); res.Granted || res.RefusedBy != quota.Rebuild {
		t.Fatalf("the first call after the failback: granted=%v refused by %q, want the grace (%q)",
			res.Granted, res.RefusedBy, quota.Rebuild)
	}
	if res := reserve(t, a, "one"); res.Granted {
		t.Fatal("a grant past the limit during the grace")
	}
	if used := status(t, b).Limits[0].Used; used != 20 {
		t.Errorf("the books hold %d units after the replay, want the 20 granted", used)
	}
}
