package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/ratelimit"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// ConfigFrom is the server's part of ytrend's configuration.
func ConfigFrom(cfg *config.Config) Config {
	return Config{
		Listen:                  cfg.Serve.Listen,
		RateLimit:               ratelimit.Limit{Requests: cfg.Serve.RateLimit.Requests, Window: cfg.Serve.RateLimit.Window.D()},
		TrustedProxies:          cfg.Serve.ProxyPrefixes(),
		CORSOrigins:             cfg.Serve.CORSOrigins,
		MaxConnections:          cfg.Serve.MaxConnections,
		MaxConnectionsPerClient: cfg.Serve.MaxConnectionsPerClient,
		ClientInFlight:          cfg.Serve.ClientInFlight,
		ClientQueueWait:         cfg.Serve.ClientQueueWait.D(),
		ShutdownTimeout:         cfg.Scheduler.ShutdownTimeout.D(),
	}
}

// NewLimiter is the per-client limiter for cfg: on rdb when there is one
// (shared by every serve process, with this process's own in reserve for
// when Redis fails: ratelimit.Fallback), else in memory.
func NewLimiter(cfg Config, rdb redis.UniversalClient, log *slog.Logger) (Limiter, error) {
	if err := cfg.RateLimit.Validate(); err != nil {
		return nil, err
	}
	if rdb != nil {
		return ratelimit.NewFallback(ratelimit.NewRedis(rdb, cfg.RateLimit), ratelimit.NewMemory(cfg.RateLimit), 0, log), nil
	}
	return ratelimit.NewMemory(cfg.RateLimit), nil
}

// Open builds everything ytrend serve needs: the archive at path opened
// read-only, the budget's status (Redis, or the embedded ledger in the
// archive), the limiter and the metrics (served at /metrics to loopback
// clients only). access is the access log (nil: none). A daemon that
// already holds these calls InProcess. The returned func closes what Open
// opened.
func Open(ctx context.Context, cfg Config, path string, bc budget.Config, log *slog.Logger, access *AccessLog) (*Server, func(), error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	db, err := store.Open(ctx, path, store.ReadOnly())
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	closers = append(closers, func() { db.Close() })
	// serve only reads the budget's status: no record, no observer. The
	// embedded ledger gets a handle of its own that can write, used only
	// by /quota (cached for a second, so visitors cannot turn it into lock
	// traffic).
	bud, err := budget.Open(ctx, bc, budget.Options{StatusOnly: true, Log: log})
	if err != nil {
		closeAll()
		if ae := (*budget.ArchiveError)(nil); errors.As(err, &ae) {
			return nil, nil, fmt.Errorf("serve: %w", err)
		}
		return nil, nil, err
	}
	closers = append(closers, bud.Close)
	rdb, limiter := bud.Redis, bud.Limiter
	lim, err := NewLimiter(cfg, rdb, log)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	m := metrics.New(limiter)
	s, err := New(cfg, Deps{Archive: db, Budget: &cachedStatus{budget: limiter, ttl: time.Second}, Limiter: lim, Metrics: m.HTTP(),
		Log: log, AccessLog: access})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	s.mountMetrics(m.Handler(func(ctx context.Context) ([]string, error) {
		if err := db.Ping(ctx); err != nil {
			return nil, err
		}
		return nil, limiter.Ping(ctx)
	}))
	return s, closeAll, nil
}

// InProcess builds the server for a process that already holds the
// archive, the budget and the metrics (ytrend run --serve): it reads the
// archive through db's reader pool, which never waits for the fetches'
// writes, answers /quota from the budget the process spends from, and adds
// its HTTP collectors to m (nil: a registry of its own, not served), and
// writes its access log to access (nil: none).
func InProcess(sc Config, db *store.DB, budget *quota.Limiter, rdb redis.UniversalClient,
	m *metrics.Metrics, log *slog.Logger, access *AccessLog) (*Server, error) {
	lim, err := NewLimiter(sc, rdb, log)
	if err != nil {
		return nil, err
	}
	var hm *metrics.HTTP
	if m != nil {
		hm = m.HTTP()
	} else {
		hm = metrics.NewHTTP(prometheus.NewRegistry())
	}
	return New(sc, Deps{Archive: db, Budget: &cachedStatus{budget: budget, ttl: time.Second}, Limiter: lim, Metrics: hm,
		Log: log, AccessLog: access})
}

// mountMetrics serves /metrics, /livez and /readyz to the operator only
// (operatorRequest); anyone else gets the 404 of a page that is not there.
func (s *Server) mountMetrics(h http.Handler) {
	inner := s.handler
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics", "/livez", "/readyz":
			if operatorRequest(r, s.cfg.TrustedProxies) {
				h.ServeHTTP(w, r)
				return
			}
		}
		inner.ServeHTTP(w, r)
	})
}

// cachedStatus answers the budget's status from a copy at most ttl old.
type cachedStatus struct {
	budget view.Budget
	ttl    time.Duration

	mu  sync.Mutex
	at  time.Time
	st  quota.Status
	err error
}

func (c *cachedStatus) Status(ctx context.Context) (quota.Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < c.ttl {
		return c.st, c.err
	}
	c.st, c.err = c.budget.Status(ctx)
	c.at = time.Now()
	return c.st, c.err
}
