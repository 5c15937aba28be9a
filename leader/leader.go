// Package leader decides which of several `ytrend run` replicas fires the
// schedule: the one holding the credential's leader lease in the budget's
// backend (Redis, or the archive's embedded ledger on one host).
//
// Key decisions. The lease is a lease, not a lock: the replica acts as the
// leader only while its own monotonic clock says the lease it last renewed
// has not run out (a replica paused by SIGSTOP or a long GC stop wakes up
// knowing it is no longer sure). That alone cannot stop a replica that was
// paused between its check and its request, so every reservation a leader
// makes carries the lease's fencing token, and the budget itself refuses a
// stale one (quota.WithFence): a deposed leader can spend nothing. When that
// happens the run ends as fenced and the replica steps down at once.
//
// Work done for the leader belongs to a Term: one stretch of leading under
// one fence. A term ends the moment the replica is no longer sure it leads:
// the backend says the lease was taken over, the budget refuses the fence
// (StepDown), the replica shuts down, or, without waiting for any answer,
// the lease runs out by the replica's own clock. A timer at the lease's end
// does that last one, because in a partition the renewal is stuck and the
// budget cannot refuse anything: only the term's end stops the runs.
package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ytrend/ytrend/quota"
)

// Why a term ended (Term.Err).
var (
	// ErrExpired: the lease ran out by this replica's clock before a
	// renewal was confirmed (the backend did not answer in time, or the
	// process was paused). Another replica may lead by now.
	ErrExpired = errors.New("leader: the lease ran out by this replica's clock")
	// ErrTakenOver: the backend answered that the lease is no longer this
	// replica's.
	ErrTakenOver = errors.New("leader: the lease was taken over")
	// ErrSteppedDown: the holder gave the term up (Term.StepDown), because
	// the budget refused its fence.
	ErrSteppedDown = errors.New("leader: stepped down")
	// ErrResigned: the replica shut down and released the lease.
	ErrResigned = errors.New("leader: the lease was released at shutdown")
)

// leaser is *quota.Leases: the lease as the budget keeps it.
type leaser interface {
	Acquire(ctx context.Context, holder string, ttl time.Duration) (quota.Lease, error)
	Renew(ctx context.Context, f quota.Fence, ttl time.Duration) (bool, error)
	Release(ctx context.Context, f quota.Fence) error
}

// DefaultTTL is how long a lease lasts without renewal.
const DefaultTTL = 15 * time.Second

// Elector keeps trying to hold the lease for one replica and says whether it
// leads. It is safe for concurrent use.
type Elector struct {
	lease  leaser
	holder string
	ttl    time.Duration
	every  time.Duration
	log    *slog.Logger
	change func(leading bool)
	now    func() time.Time // monotonic readings only
	// afterFunc calls f once d has passed on the clock now reads.
	afterFunc func(d time.Duration, f func()) (stop func() bool)

	mu   sync.Mutex
	term *Term // the last term begun, until the elector's goroutine sees it ended
	wake chan struct{}
}

// Term is one stretch of this replica's leading under one fence, from
// acquiring the lease to losing it. It is safe for concurrent use.
type Term struct {
	e     *Elector
	fence quota.Fence
	ctx   context.Context // ended, with the reason as its cause, when the term ends
	end   context.CancelCauseFunc

	// guarded by e.mu
	until time.Time   // local (monotonic) end of the lease last renewed
	timer func() bool // stops the timer that ends the term at until
}

// Option changes an Elector.
type Option func(*Elector)

// WithLogger sets the logger (default: discard).
func WithLogger(log *slog.Logger) Option { return func(e *Elector) { e.log = log } }

// OnChange registers f, called (on the elector's goroutine) each time the
// replica starts or stops leading; metrics and readiness hang off it.
func OnChange(f func(leading bool)) Option { return func(e *Elector) { e.change = f } }

// New returns an elector for holder (this replica's instance id) with the
// given lease TTL (DefaultTTL when zero). It renews every third of the TTL,
// so a leader that dies is replaced within the TTL plus one renewal.
func New(l leaser, holder string, ttl time.Duration, opts ...Option) *Elector {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	e := &Elector{lease: l, holder: holder, ttl: ttl, every: ttl / 3, log: slog.New(slog.DiscardHandler),
		change: func(bool) {}, now: time.Now, wake: make(chan struct{}, 1),
		afterFunc: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
	for _, opt := range opts {
		opt(e)
	}
	e.log = e.log.With("holder", holder)
	return e
}

// Term returns the term this replica leads in right now, if any.
func (e *Elector) Term() (*Term, bool) {
	e.mu.Lock()
	t := e.term
	e.mu.Unlock()
	if t == nil || !t.Leading() {
		return nil, false
	}
	return t, true
}

// Leading reports whether this replica leads right now.
func (e *Elector) Leading() bool {
	_, ok := e.Term()
	return ok
}

// Fence is the lease to reserve with during the term.
func (t *Term) Fence() quota.Fence { return t.fence }

// Done is closed when the term ends.
func (t *Term) Done() <-chan struct{} { return t.ctx.Done() }

// Err is nil while the term lasts, then why it ended: ErrExpired,
// ErrTakenOver, ErrSteppedDown or ErrResigned (possibly wrapped).
func (t *Term) Err() error { return context.Cause(t.ctx) }

// Leading reports whether the term lasts and, by this replica's clock, the
// lease has not run out since it was last renewed. It is exact even in the
// instant before the timer ends the term, so it is what a fail-open
// reservation asks (quota.WithLeading).
func (t *Term) Leading() bool {
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	return t.ctx.Err() == nil && t.e.now().Before(t.until)
}

// StepDown ends the term at once, because the budget refused its fence
// (another replica leads now). A later term is not affected. The elector
// then competes for the lease again like any standby.
func (t *Term) StepDown(why string) {
	t.end(fmt.Errorf("%w: %s", ErrSteppedDown, why))
	t.e.poke()
}

// Run keeps the lease until ctx ends, then releases it if held, so that a
// standby takes over at once after a clean shutdown.
func (e *Elector) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			e.resign()
			return
		case <-t.C:
		case <-e.wake:
		}
		e.tick(ctx)
		t.Reset(e.every)
	}
}

// tick renews the term's lease, or tries to acquire the lease.
func (e *Elector) tick(ctx context.Context) {
	e.mu.Lock()
	t := e.term
	e.mu.Unlock()
	if t != nil {
		if t.ctx.Err() == nil {
			e.renew(ctx, t)
		}
		if t.ctx.Err() == nil {
			return
		}
		e.ended(t)
	}
	start := e.now()
	l, err := e.lease.Acquire(ctx, e.holder, e.ttl)
	if err != nil {
		e.log.Debug("leader: lease not acquired", "err", err)
		return
	}
	if !l.Held {
		e.log.Debug("leader: standing by", "leader_token", l.Fence.Token, "lease_left", l.TTL)
		return
	}
	t = &Term{e: e, fence: l.Fence}
	t.ctx, t.end = context.WithCancelCause(context.Background())
	e.mu.Lock()
	e.term = t
	e.extend(t, start.Add(e.ttl))
	e.mu.Unlock()
	e.log.Info("leader: leading", "token", l.Fence.Token, "ttl", e.ttl)
	e.change(true)
}

func (e *Elector) renew(ctx context.Context, t *Term) {
	start := e.now()
	ok, err := e.lease.Renew(ctx, t.fence, e.ttl)
	switch {
	case err != nil:
		// Not renewed, not lost either: the term lasts while the lease
		// certainly does (its timer ends it), and the next tick tries again.
		e.log.Warn("leader: lease not renewed", "err", err)
	case ok:
		e.mu.Lock()
		e.extend(t, start.Add(e.ttl))
		e.mu.Unlock()
	default:
		t.end(ErrTakenOver)
	}
}

// extend moves t's end to until, and its timer there: the term ends when
// the lease runs out by this clock, whatever the backend is doing. A
// renewal answered after the term ended does not revive it. e.mu is held.
func (e *Elector) extend(t *Term, until time.Time) {
	if t.ctx.Err() != nil {
		return
	}
	t.until = until
	if t.timer != nil {
		t.timer()
	}
	t.timer = e.afterFunc(until.Sub(e.now()), func() {
		e.mu.Lock()
		if !e.now().Before(t.until) { // not renewed since this timer was set
			t.end(ErrExpired)
		}
		e.mu.Unlock()
		e.poke()
	})
}

// ended forgets t, which has ended, and says so: once per term, on the
// elector's goroutine.
func (e *Elector) ended(t *Term) {
	e.mu.Lock()
	if e.term != t {
		e.mu.Unlock()
		return
	}
	e.term = nil
	t.timer()
	e.mu.Unlock()
	why := t.Err()
	if errors.Is(why, ErrResigned) {
		e.log.Info("leader: no longer leading", "token", t.fence.Token, "why", why)
	} else {
		e.log.Warn("leader: no longer leading; standing by", "token", t.fence.Token, "why", why)
	}
	e.change(false)
}

// poke makes the elector's goroutine tick now.
func (e *Elector) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *Elector) resign() {
	e.mu.Lock()
	t := e.term
	e.mu.Unlock()
	if t == nil {
		return
	}
	t.end(ErrResigned)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := e.lease.Release(ctx, t.fence); err != nil {
		e.log.Warn("leader: lease not released; a standby takes over when it runs out", "err", err)
	} else {
		e.log.Info("leader: lease released")
	}
	e.ended(t)
}
