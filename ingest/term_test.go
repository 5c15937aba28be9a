package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/internal/secret"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// term is a leader's term the test ends by hand (a *leader.Term in ytrend
// run).
type term struct {
	fence   quota.Fence
	leading atomic.Bool
	done    chan struct{}
	once    sync.Once
}

var errTermEnded = errors.New("the test ended the term")

func newTerm(f quota.Fence, leading bool) *term {
	t := &term{fence: f, done: make(chan struct{})}
	t.leading.Store(leading)
	return t
}

func (t *term) Fence() quota.Fence    { return t.fence }
func (t *term) Leading() bool         { return t.leading.Load() }
func (t *term) Done() <-chan struct{} { return t.done }
func (t *term) Err() error {
	select {
	case <-t.done:
		return errTermEnded
	default:
		return nil
	}
}

func (t *term) end() {
	t.leading.Store(false)
	t.once.Do(func() { close(t.done) })
}

func scheduled(code string, pages int, t ingest.Term) ingest.Job {
	return ingest.Job{Region: config.Region{Code: regions.Code(code), Pages: pages}, Trigger: store.TriggerSchedule, Term: t}
}

// TestFencedFetchFailsOpenOnlyWhileLeading: a leader's scheduled fetch
// whose Redis is unreachable (a partition) gets fail-open videos.list
// grants only while its term still leads by its own clock. Not leading, it
// sends nothing and ends fenced.
func TestFencedFetchFailsOpenOnlyWhileLeading(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	for _, leading := range []bool{false, true} {
		t.Run(fmt.Sprintf("leading=%v", leading), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{noFetcher: true})
			p := redistest.NewProxy(t, rdb.Options().Addr)
			client := redis.NewClient(&redis.Options{Addr: p.Addr()})
			t.Cleanup(func() { client.Close() })
			cfg := quota.DefaultConfig()
			cfg.Credential = redistest.Prefix(t)
			cfg.Timeout = 3 * time.Second // the dead proxy refuses at once; a loaded machine needs the slack
			cfg.RebuildGrace = time.Microsecond
			log := slog.New(slog.NewTextHandler(e.logs, nil))
			lim, err := quota.New(cfg, quota.NewRedis(client), quota.WithRecord(e.db.Writer()), quota.WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// This process led before the partition: the fence is real.
			lease, err := lim.Leases().Acquire(ctx, "a", time.Minute)
			if err != nil || !lease.Held {
				t.Fatalf("lease %+v, %v", lease, err)
			}
			f, err := ingest.New(ctx, lim, e.db, ingest.Options{Endpoint: e.srv.URL, APIKey: secret.New(testKey), Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			p.Set(redistest.Dead)

			rep := f.Fetch(ctx, scheduled("US", 2, newTerm(lease.Fence, leading)))
			want := struct {
				status       store.RunStatus
				pages, units int64
			}{store.StatusFenced, 0, 0}
			if leading {
				want.status, want.pages, want.units = store.StatusOK, 2, 2
			}
			if rep.Status != want.status || int64(rep.Pages) != want.pages || rep.Units != want.units {
				t.Fatalf("%+v (err %v); want %s with %d pages and %d units", rep, rep.Err, want.status, want.pages, want.units)
			}
			if got := e.sim.TotalRequests(); got != want.pages {
				t.Errorf("%d requests reached the API, want %d", got, want.pages)
			}
			if !leading && !errors.Is(rep.Err, quota.ErrFenced) {
				t.Errorf("err %v, want ErrFenced", rep.Err)
			}
		})
	}
}

// commandHook signals each Redis command once armed.
type commandHook struct {
	armed atomic.Bool
	sent  chan struct{}
}

func (h *commandHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *commandHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.armed.Load() {
			select {
			case h.sent <- struct{}{}:
			default:
			}
		}
		return next(ctx, cmd)
	}
}
func (h *commandHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.armed.Load() {
			select {
			case h.sent <- struct{}{}:
			default:
			}
		}
		return next(ctx, cmds)
	}
}

// TestTermEndCutsReservationInFlight: Redis stops answering after page 1
// and the term ends while page 2's reservation waits for it (a minute, by
// redis.timeout). The run ends fenced at once, with page 1 stored.
func TestTermEndCutsReservationInFlight(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	e := newEnv(t, envOpts{noFetcher: true})
	p := redistest.NewProxy(t, rdb.Options().Addr)
	client := redis.NewClient(&redis.Options{Addr: p.Addr()})
	t.Cleanup(func() { client.Close() })
	hook := &commandHook{sent: make(chan struct{}, 1)}
	client.AddHook(hook)
	cfg := quota.DefaultConfig()
	cfg.Credential = redistest.Prefix(t)
	cfg.Timeout = time.Minute
	cfg.RebuildGrace = time.Microsecond // a fresh credential's books start with a grace; not this test's subject
	lim, err := quota.New(cfg, quota.NewRedis(client), quota.WithRecord(e.db.Writer()))
	if err != nil {
		t.Fatal(err)
	}
	fence, err := acquire(lim)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ingest.New(context.Background(), lim, e.db, ingest.Options{Endpoint: e.srv.URL, APIKey: secret.New(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	tm := newTerm(fence, true)
	go func() {
		<-hook.sent // page 2's reservation is on its way to the stalled Redis
		tm.end()
	}()
	job := scheduled("US", 4, tm)
	job.Progress = func(pr ingest.Progress) {
		if pr.Page == 1 {
			p.Set(redistest.Stalled)
			hook.armed.Store(true)
		}
	}
	// A guard, not a timing: a reservation left to wait would end interrupted.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep := f.Fetch(ctx, job)
	if rep.Status != store.StatusFenced || rep.Pages != 1 || rep.Units != 1 {
		t.Fatalf("%+v (err %v); want fenced after 1 stored page, 1 unit", rep, rep.Err)
	}
	if got := e.sim.TotalRequests(); got != 1 {
		t.Errorf("%d requests sent, want 1", got)
	}
}

// TestTermEndStoresPageInHandThenFences: the term ends while page 2's
// request is in flight. The page comes back and is stored; no further
// request is sent, and the run ends fenced.
func TestTermEndStoresPageInHandThenFences(t *testing.T) {
	t.Parallel()
	tm := newTerm(quota.Fence{}, true)
	var seen atomic.Int64
	e := newEnv(t, envOpts{handler: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if seen.Add(1) == 2 {
				tm.end()
			}
			h.ServeHTTP(w, r)
		})
	}})
	var err error
	tm.fence, err = acquire(e.limiter)
	if err != nil {
		t.Fatal(err)
	}
	rep := e.f.Fetch(context.Background(), scheduled("US", 4, tm))
	if rep.Status != store.StatusFenced || rep.Pages != 2 || rep.Units != 2 {
		t.Fatalf("%+v (err %v); want fenced after 2 stored pages, 2 units", rep, rep.Err)
	}
	if !errors.Is(rep.Err, quota.ErrFenced) || !errors.Is(rep.Err, errTermEnded) {
		t.Errorf("err %v; want ErrFenced wrapping why the term ended", rep.Err)
	}
	if got := e.sim.TotalRequests(); got != 2 {
		t.Errorf("%d requests sent, want 2", got)
	}
	if c := e.counts(); c.Snapshots != 100 {
		t.Errorf("%d snapshots, want 100 (the page in hand is stored)", c.Snapshots)
	}
	runs, err := e.db.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != store.StatusFenced {
		t.Errorf("runs %+v; want one fenced run", runs)
	}
}

// TestTermEndCutsRetryBackoff: a term that ends while the run waits to
// retry (here a 10-minute backoff) ends the run fenced at once, without
// another request.
func TestTermEndCutsRetryBackoff(t *testing.T) {
	t.Parallel()
	tm := newTerm(quota.Fence{}, true)
	e := newEnv(t, envOpts{
		sim:   sim.Config{Faults: sim.Faults{Error500: 1}},
		fetch: ingest.Options{Retries: 3, Backoff: 10 * time.Minute, MaxBackoff: 10 * time.Minute},
		handler: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				tm.end()
			})
		},
	})
	var err error
	if tm.fence, err = acquire(e.limiter); err != nil {
		t.Fatal(err)
	}
	// A guard, not a timing: waiting out the backoff would end interrupted.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep := e.f.Fetch(ctx, scheduled("US", 4, tm))
	if rep.Status != store.StatusFenced || rep.Pages != 0 || rep.Units != 1 {
		t.Fatalf("%+v (err %v); want fenced with nothing stored, 1 unit spent", rep, rep.Err)
	}
	if got := e.sim.TotalRequests(); got != 1 {
		t.Errorf("%d requests sent, want 1", got)
	}
}

// acquire takes the leader lease of l for a test replica.
func acquire(l *quota.Limiter) (quota.Fence, error) {
	lease, err := l.Leases().Acquire(context.Background(), "test", time.Minute)
	if err != nil {
		return quota.Fence{}, err
	}
	if !lease.Held {
		return quota.Fence{}, errors.New("lease not held")
	}
	return lease.Fence, nil
}
