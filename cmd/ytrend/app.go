package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/internal/redisclient"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
)

// loadConfig applies, in order: defaults, the config file, the environment,
// then the global flags that were set. The file is required only when the
// user named it (flag or YTREND_CONFIG); otherwise a missing ./schedule.yaml
// means "defaults".
func (c *cli) loadConfig(cmd *cobra.Command) (*config.Config, error) {
	_, envSet := c.lookupEnv("YTREND_CONFIG")
	required := envSet || cmd.Flags().Changed("config")
	cfg, err := config.Load(c.configPath, required)
	if err != nil {
		return nil, err
	}
	cfg.ApplyEnv(config.Env(c.lookupEnv))
	if f := cmd.Flags().Lookup("redis"); f != nil && f.Changed {
		cfg.Redis.URL = c.redisURL
	}
	if f := cmd.Flags().Lookup("db"); f != nil && f.Changed {
		cfg.Store.Path = c.dbPath
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// newLogger builds the process's one slog handler.
func (c *cli) newLogger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, usageError{fmt.Errorf("--log-level %q: allowed debug, info, warn, error", c.logLevel)}
	}
	opts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	switch c.logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(c.stderr, opts))
	case "json":
		log = slog.New(slog.NewJSONHandler(c.stderr, opts))
	default:
		return nil, usageError{fmt.Errorf("--log-format %q: allowed text, json", c.logFormat)}
	}
	redisclient.RouteLogs(log)
	return log, nil
}

// ledgerTimeout is the least time a budget call on the embedded ledger may
// wait for the archive's write lock.
const ledgerTimeout = 5 * time.Second

// app is what the commands that touch the archive or the budget share.
type app struct {
	cfg     *config.Config
	log     *slog.Logger
	db      *store.DB
	limiter *quota.Limiter
	rdb     redis.UniversalClient
}

type openOpts struct {
	limiter   bool
	mirror    bool // keep a mirror of the shared log (Redis only: the embedded ledger is the archive itself)
	observer  func(quota.Result)
	onRebuild func(quota.Rebuilt)
}

// open opens the archive and, if asked, the budget: Redis when a URL is
// configured, else the embedded ledger in the archive.
func (c *cli) open(cmd *cobra.Command, o openOpts) (*app, error) {
	cfg, err := c.loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	log, err := c.newLogger()
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, log: log}
	ctx := cmd.Context()
	if dir := filepath.Dir(cfg.Store.Path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create archive directory: %w", err)
		}
	}
	a.db, err = store.Open(ctx, cfg.Store.Path)
	if err != nil {
		return nil, err
	}
	if !o.limiter {
		return a, nil
	}
	var backend quota.Backend
	if cfg.Redis.URL == "" {
		backend = quota.NewSQLite(a.db.Writer())
	} else {
		a.rdb, err = redisclient.Open(cfg.Redis.URL, cfg.Redis.Timeout.D())
		if err != nil {
			a.close()
			return nil, err
		}
		backend = quota.NewRedis(a.rdb, quota.WithWaitReplicas(waitReplicas(ctx, cfg, a.rdb, log), cfg.Redis.WaitTimeout.D()))
		for _, w := range cfg.Warnings() {
			log.Warn(w)
		}
	}
	// Every process keeps its own record of its grants in its archive, so
	// that the books survive the ledger losing them.
	lopts := []quota.Option{quota.WithLogger(log), quota.WithRecord(a.db.Writer()),
		quota.WithObserver(o.observer), quota.WithRebuildObserver(o.onRebuild)}
	if o.mirror && cfg.Redis.URL != "" {
		lopts = append(lopts, quota.WithMirror())
	}
	qcfg := cfg.QuotaConfig()
	if cfg.Redis.URL == "" {
		// The embedded ledger is local: waiting means another process is
		// writing a page, not an outage, so it gets the archive's lock wait
		// before the failure policy applies.
		qcfg.Timeout = max(qcfg.Timeout, ledgerTimeout)
	}
	a.limiter, err = quota.New(qcfg, backend, lopts...)
	if err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// waitReplicas is redis.wait_replicas, but for one case: left to its default
// on a Cluster whose master for the credential has no replica. No failover
// can lose that master's writes (there is nothing to promote), and WAIT 1
// would refuse every grant, so none is waited for; a replica attached later
// counts from the next start.
func waitReplicas(ctx context.Context, cfg *config.Config, rdb redis.UniversalClient, log *slog.Logger) int {
	n := *cfg.Redis.WaitReplicas
	if n == 0 || !cfg.WaitReplicasDefaulted() {
		return n
	}
	if kind, _ := redisclient.KindOf(cfg.Redis.URL); kind != redisclient.Cluster {
		return n
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.Redis.Timeout.D())
	defer cancel()
	got, err := redisclient.Replicas(cctx, rdb, "ytrend:{"+cfg.Credential+"}:epoch")
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

func (a *app) close() {
	if a.rdb != nil {
		a.rdb.Close()
	}
	if a.db != nil {
		a.db.Close()
	}
}

// ready reports whether the archive and the budget backend answer.
func (a *app) ready(ctx context.Context) error {
	if err := a.db.Ping(ctx); err != nil {
		return err
	}
	if a.limiter != nil {
		if err := a.limiter.Ping(ctx); err != nil {
			return fmt.Errorf("quota backend: %w", err)
		}
	}
	return nil
}

// durability says how the budget's Redis could lose the books (see
// redisclient.Durability); nothing for the embedded ledger, or when the
// server cannot be asked (the caller hears about that elsewhere).
func (a *app) durability(ctx context.Context) []string {
	if a.rdb == nil {
		return nil
	}
	w, err := redisclient.Durability(ctx, a.rdb)
	if err != nil {
		return nil
	}
	return w
}

// ledgerNotes are what an operator should know about the budget's ledger
// (each reads after "ledger "):
// a rebuild after lost books, and a grace period in force.
func ledgerNotes(st quota.Status) []string {
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

// isTerminal reports whether w is a terminal, for bold highlights and bars.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
