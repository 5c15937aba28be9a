// Package budget opens ytrend's shared quota budget from its configuration:
// Redis when redis.url is set, else the embedded ledger in the archive.
//
// It is the one place that makes that choice, so every process (a command,
// the daemon, the server) gets the same backend with the same options; what
// differs between them is said by Options, not by a second constructor.
package budget

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/internal/redisclient"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
)

// ledgerTimeout is the least time a budget call on the embedded ledger may
// wait for the archive's write lock.
const ledgerTimeout = 5 * time.Second

// Config is the budget's part of ytrend's configuration.
type Config struct {
	Quota   quota.Config
	Archive string // the archive's path, where the embedded ledger gets a handle of its own
	Redis   string // redis.url; "" = the embedded ledger
	Timeout time.Duration
	// WaitReplicas and WaitTimeout are redis.wait_replicas and
	// redis.wait_timeout; WaitDefaulted says wait_replicas was left unset.
	WaitReplicas  int
	WaitDefaulted bool
	WaitTimeout   time.Duration
	Warnings      []string // what the configuration risks, logged once by a process that spends
}

// ConfigFrom is the budget's part of cfg, once validated.
func ConfigFrom(cfg *config.Config) Config {
	c := Config{
		Quota: cfg.QuotaConfig(), Archive: cfg.Store.Path,
		Redis: cfg.Redis.URL, Timeout: cfg.Redis.Timeout.D(),
		WaitDefaulted: cfg.WaitReplicasDefaulted(), WaitTimeout: cfg.Redis.WaitTimeout.D(),
		Warnings: cfg.Warnings(),
	}
	if cfg.Redis.WaitReplicas != nil {
		c.WaitReplicas = *cfg.Redis.WaitReplicas
	}
	return c
}

// Options say what a process does with the budget.
type Options struct {
	// Archive is the process's archive, open for writing: it holds the
	// embedded ledger and this process's record of its grants. Nil (a
	// read-only server) with StatusOnly: the embedded ledger gets a handle
	// of its own, closed by Close.
	Archive *store.DB
	// StatusOnly is for a process that only reads the budget's status
	// (serve): it keeps no record of grants, waits for no replica and is
	// not warned about failover, since it never writes a grant.
	StatusOnly bool
	// Mirror keeps a copy of the whole shared log (Redis only: the
	// embedded ledger is the archive itself), for a long-lived process.
	Mirror bool
	// Observer and OnRebuild see every reservation and every rebuild.
	Observer  func(quota.Result)
	OnRebuild func(quota.Rebuilt)
	Log       *slog.Logger
}

// ArchiveError is Open's failure to open the handle on the archive that
// the embedded ledger needs (with a nil Options.Archive): the caller says
// which archive, as it does for its own.
type ArchiveError struct{ Err error }

func (e *ArchiveError) Error() string { return e.Err.Error() }
func (e *ArchiveError) Unwrap() error { return e.Err }

// Budget is an open budget: the limiter, and the Redis client it runs on
// (nil for the embedded ledger).
type Budget struct {
	Limiter *quota.Limiter
	Redis   redis.UniversalClient

	closers []func()
}

// Open opens the budget cfg names. Close releases what it opened (never
// o.Archive).
func Open(ctx context.Context, cfg Config, o Options) (*Budget, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Archive == nil && !o.StatusOnly {
		return nil, fmt.Errorf("budget: a process that spends needs its archive for the record of its grants")
	}
	b := &Budget{}
	var backend quota.Backend
	if cfg.Redis == "" {
		ledger := o.Archive
		if ledger == nil {
			// The embedded ledger's status transaction may store the
			// limits' definitions on first use, and moves their window
			// totals: a read-only archive cannot, so the ledger gets a
			// handle of its own that can.
			db, err := store.Open(ctx, cfg.Archive)
			if err != nil {
				return nil, &ArchiveError{Err: err}
			}
			b.closers = append(b.closers, func() { db.Close() })
			ledger = db
		}
		backend = quota.NewSQLite(ledger.Writer())
	} else {
		rdb, err := redisclient.Open(cfg.Redis, cfg.Timeout)
		if err != nil {
			return nil, err
		}
		b.Redis = rdb
		b.closers = append(b.closers, func() { rdb.Close() })
		var ropts []quota.RedisOption
		if !o.StatusOnly {
			ropts = append(ropts, quota.WithWaitReplicas(waitReplicas(ctx, cfg, rdb, o.Log), cfg.WaitTimeout))
			for _, w := range cfg.Warnings {
				o.Log.Warn(w)
			}
		}
		backend = quota.NewRedis(rdb, ropts...)
	}
	lopts := []quota.Option{quota.WithLogger(o.Log)}
	qcfg := cfg.Quota
	if !o.StatusOnly {
		// Every process keeps its own record of its grants in its archive,
		// so that the books survive the ledger losing them.
		lopts = append(lopts, quota.WithRecord(o.Archive.Writer()),
			quota.WithObserver(o.Observer), quota.WithRebuildObserver(o.OnRebuild))
		if o.Mirror && b.Redis != nil {
			lopts = append(lopts, quota.WithMirror())
		}
		if b.Redis == nil {
			// The embedded ledger is local: waiting means another process
			// is writing a page, not an outage, so it gets the archive's
			// lock wait before the failure policy applies.
			qcfg.Timeout = max(qcfg.Timeout, ledgerTimeout)
		}
	}
	l, err := quota.New(qcfg, backend, lopts...)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.Limiter = l
	return b, nil
}

// Close releases what Open opened.
func (b *Budget) Close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
	b.closers = nil
}

// Name is the backend's name for logs and `ytrend quota status`.
func (b *Budget) Name() string {
	if b.Redis != nil {
		return "redis"
	}
	return "embedded ledger"
}

// Durability says how the budget's Redis could lose the books (see
// redisclient.Durability); nothing for the embedded ledger, or when the
// server cannot be asked (the caller hears about that elsewhere).
func (b *Budget) Durability(ctx context.Context) []string {
	if b.Redis == nil {
		return nil
	}
	w, err := redisclient.Durability(ctx, b.Redis)
	if err != nil {
		return nil
	}
	return w
}

// waitReplicas is redis.wait_replicas, but for one case: left to its default
// on a Cluster whose master for the credential has no replica. No failover
// can lose that master's writes (there is nothing to promote), and WAIT 1
// would refuse every grant, so none is waited for; a replica attached later
// counts from the next start.
func waitReplicas(ctx context.Context, cfg Config, rdb redis.UniversalClient, log *slog.Logger) int {
	n := cfg.WaitReplicas
	if n == 0 || !cfg.WaitDefaulted {
		return n
	}
	if kind, _ := redisclient.KindOf(cfg.Redis); kind != redisclient.Cluster {
		return n
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	got, err := redisclient.Replicas(cctx, rdb, "ytrend:{"+cfg.Quota.Credential+"}:epoch")
	if err != nil {
		log.Warn("redis: cannot count the credential's master's replicas; waiting for one per grant", "err", err)
		return n
	}
	if got == 0 {
		log.Info("redis: the credential's Cluster master has no replica, so no failover can lose its writes; "+
			"grants are not waited for (restart after attaching a replica to wait for it)", "wait_replicas", n)
		return 0
	}
	return n
}

// Notes are what an operator should know about the budget's ledger
// (each reads after "ledger "):
// a rebuild after lost books, and a grace period in force.
func Notes(st quota.Status) []string {
	var out []string
	l := st.Ledger
	if !l.Rebuilt.IsZero() {
		out = append(out, fmt.Sprintf("rebuilt at %s from %d local grants (epoch %s)",
			l.Rebuilt.UTC().Format(time.RFC3339), l.Restored, l.Epoch))
	}
	if l.GraceUntil.After(st.At) {
		out = append(out, fmt.Sprintf("admitting nothing until %s while processes restore their grants",
			l.GraceUntil.UTC().Format(time.RFC3339)))
	}
	return out
}
