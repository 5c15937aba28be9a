package ratelimit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// limiter is what Fallback needs of its two limiters.
type limiter interface {
	Allow(ctx context.Context, client string) (Decision, error)
	Limit() Limit
}

// DefaultCooldown is how long Fallback keeps to memory after its shared
// limiter failed before trying it again.
const DefaultCooldown = 5 * time.Second

// Fallback is a shared limiter (Redis) behind a circuit breaker, with a
// process's own (Memory) in reserve. While the shared one answers, it
// decides; when it fails (Redis down: every call would wait for its
// timeout), the breaker opens and the process's own limiter decides for a
// cooldown, without calling Redis at all; then one request tries the shared
// limiter again (half-open) and closes the breaker if it answers. Each
// change between shared and local limits is one log line.
//
// The limits stay enforced through an outage, per process instead of
// across processes, and no request waits on a Redis that is not there.
type Fallback struct {
	shared, local limiter
	cooldown      time.Duration
	log           *slog.Logger
	now           func() time.Time

	mu      sync.Mutex
	open    bool      // deciding locally
	retryAt time.Time // when open: when to try the shared limiter again
	probing bool      // one request is trying it
}

// NewFallback returns shared behind a breaker, local in reserve. log gets
// one line per state change; cooldown <= 0 takes DefaultCooldown.
func NewFallback(shared, local limiter, cooldown time.Duration, log *slog.Logger) *Fallback {
	if cooldown <= 0 {
		cooldown = DefaultCooldown
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Fallback{shared: shared, local: local, cooldown: cooldown, log: log, now: time.Now}
}

// Limit is the limit every client gets.
func (f *Fallback) Limit() Limit { return f.shared.Limit() }

// Local reports whether the process's own limiter is deciding.
func (f *Fallback) Local() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

// Allow decides one request of client: by the shared limiter unless the
// breaker is open. It fails only when the local limiter does (never, for
// Memory).
func (f *Fallback) Allow(ctx context.Context, client string) (Decision, error) {
	f.mu.Lock()
	try := !f.open || (!f.probing && !f.now().Before(f.retryAt))
	if f.open && try {
		f.probing = true
	}
	f.mu.Unlock()
	if !try {
		return f.local.Allow(ctx, client)
	}
	d, err := f.shared.Allow(ctx, client)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.probing = false
	switch {
	case err == nil && f.open:
		f.open = false
		f.log.Info("rate limiter: Redis answers again; limits are shared again")
	case err != nil && errors.Is(err, ErrBackend):
		if !f.open {
			f.open = true
			f.log.Warn("rate limiter: Redis failed; limiting in this process until it answers", "err", err, "retry_in", f.cooldown)
		}
		f.retryAt = f.now().Add(f.cooldown)
	}
	if err != nil {
		return f.local.Allow(ctx, client)
	}
	return d, nil
}
