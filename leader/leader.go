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
package leader

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ytrend/ytrend/quota"
)

// leaser is the part of *quota.Limiter that keeps the lease.
type leaser interface {
	AcquireLease(ctx context.Context, holder string, ttl time.Duration) (quota.Lease, error)
	RenewLease(ctx context.Context, f quota.Fence, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, f quota.Fence) error
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

	mu      sync.Mutex
	fence   quota.Fence
	leading bool
	until   time.Time // local (monotonic) end of the lease last renewed
	wake    chan struct{}
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
		change: func(bool) {}, now: time.Now, wake: make(chan struct{}, 1)}
	for _, opt := range opts {
		opt(e)
	}
	e.log = e.log.With("holder", holder)
	return e
}

// Fence returns the lease to reserve with, and whether this replica leads
// right now: it holds the lease, and by its own clock the lease has not
// run out since it was last renewed.
func (e *Elector) Fence() (quota.Fence, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leading || !e.now().Before(e.until) {
		return quota.Fence{}, false
	}
	return e.fence, true
}

// Leading reports whether Fence would succeed.
func (e *Elector) Leading() bool {
	_, ok := e.Fence()
	return ok
}

// StepDown stops leading at once, because the budget refused this
// replica's fence (another replica leads now). The loop then competes for
// the lease again like any standby.
func (e *Elector) StepDown(why string) {
	e.mu.Lock()
	was := e.leading
	e.leading = false
	e.mu.Unlock()
	if was {
		e.log.Warn("leader: stepping down", "why", why)
		e.change(false)
	}
	select {
	case e.wake <- struct{}{}:
	default:
	}
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

// tick renews the lease held, or tries to acquire it.
func (e *Elector) tick(ctx context.Context) {
	start := e.now()
	e.mu.Lock()
	leading, fence := e.leading, e.fence
	e.mu.Unlock()

	if leading {
		ok, err := e.lease.RenewLease(ctx, fence, e.ttl)
		switch {
		case err != nil:
			// Not renewed, not lost either: keep leading while the lease
			// certainly lasts, and try again at the next tick.
			e.log.Warn("leader: lease not renewed", "err", err)
			if !e.Leading() {
				e.lose("the lease ran out while the backend did not answer")
			}
		case ok:
			e.mu.Lock()
			e.until = start.Add(e.ttl)
			e.mu.Unlock()
		default:
			e.lose("the lease was taken over")
		}
		return
	}
	l, err := e.lease.AcquireLease(ctx, e.holder, e.ttl)
	if err != nil {
		e.log.Debug("leader: lease not acquired", "err", err)
		return
	}
	if !l.Held {
		e.log.Debug("leader: standing by", "leader_token", l.Fence.Token, "lease_left", l.TTL)
		return
	}
	e.mu.Lock()
	e.fence, e.leading, e.until = l.Fence, true, start.Add(e.ttl)
	e.mu.Unlock()
	e.log.Info("leader: leading", "token", l.Fence.Token, "ttl", e.ttl)
	e.change(true)
}

func (e *Elector) lose(why string) {
	e.mu.Lock()
	was := e.leading
	e.leading = false
	e.mu.Unlock()
	if was {
		e.log.Warn("leader: lost the lease; standing by", "why", why)
		e.change(false)
	}
}

func (e *Elector) resign() {
	e.mu.Lock()
	leading, fence := e.leading, e.fence
	e.leading = false
	e.mu.Unlock()
	if !leading {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := e.lease.ReleaseLease(ctx, fence); err != nil {
		e.log.Warn("leader: lease not released; a standby takes over when it runs out", "err", err)
	} else {
		e.log.Info("leader: lease released")
	}
	e.change(false)
}
