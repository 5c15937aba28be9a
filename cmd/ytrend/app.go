package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/internal/redisclient"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/server"
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
		cfg.SetFrom("redis.url", "--redis")
	}
	if f := cmd.Flags().Lookup("db"); f != nil && f.Changed {
		cfg.Store.Path = c.dbPath
		cfg.SetFrom("store.path", "--db")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// newLogger builds the process's log: its one handler, on stderr.
func (c *cli) newLogger() (*slog.Logger, error) {
	format, err := c.logHandler()
	if err != nil {
		return nil, err
	}
	log := slog.New(format(c.stderr))
	redisclient.RouteLogs(log)
	return log, nil
}

// logHandler is the process's log format (--log-format, --log-level) over
// a writer: the process's log on stderr, and ytrend serve's access log,
// which batches its lines before they reach stderr (accessLog). Either way
// outside text in a line cannot act on the terminal that shows it
// (logLines).
func (c *cli) logHandler() (func(io.Writer) slog.Handler, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, usageError{fmt.Errorf("--log-level %q: allowed debug, info, warn, error", c.logLevel)}
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.logFormat {
	case "text":
		return func(w io.Writer) slog.Handler { return slog.NewTextHandler(logLines{w: w, text: true}, opts) }, nil
	case "json":
		return func(w io.Writer) slog.Handler { return slog.NewJSONHandler(logLines{w: w}, opts) }, nil
	}
	return nil, usageError{fmt.Errorf("--log-format %q: allowed text, json", c.logFormat)}
}

// accessLog is ytrend serve's access log (serve.access_log; nil when it
// is off): a line per request on stderr, in the process's log format,
// written in batches; log reports the lines it drops.
func (c *cli) accessLog(cfg *config.Config, log *slog.Logger) (*server.AccessLog, error) {
	if !cfg.Serve.AccessLog {
		return nil, nil
	}
	format, err := c.logHandler()
	if err != nil {
		return nil, err
	}
	return server.NewAccessLog(c.stderr, format, log), nil
}

// app is what the commands that touch the archive or the budget share.
type app struct {
	cfg     *config.Config
	log     *slog.Logger
	db      *store.DB
	budget  *budget.Budget // nil unless asked for
	limiter *quota.Limiter // budget's
}

type openOpts struct {
	limiter bool // open the budget too
	// readOnly opens an existing, migrated archive without the write side
	// (no WAL switch, no migration, no write lock): a command that only
	// reads starts in a few milliseconds whatever the archive's size. An
	// archive with pending migrations is opened the usual way instead,
	// which migrates it; any other refusal (a newer schema, a gap, a
	// directory SQLite cannot create the WAL's files in) is the command's
	// error, the archive untouched. Either way the archive is opened for
	// a short-lived process (store.ShortLived): one connection, and only
	// the statements the command runs. It implies existing.
	readOnly bool
	// existing says the command only reads the archive, so a path with
	// none is refused (requireArchive) instead of given a new, empty one.
	existing bool
	// status says the command only reads the budget (ytrend quota
	// status). With the embedded ledger the archive is the budget, and
	// must exist. With Redis the archive is only this host's record of
	// its grants, which a host that has never spent has not got: with no
	// archive (or an empty file) the budget is read without one, creating
	// nothing.
	status bool
}

// requireArchive refuses a path with no archive, for a command that only
// reads: SQLite would create an empty archive there, and the command would
// answer that it found nothing, when the path was mistyped. Nothing is
// created, not even the directory. An empty file is no archive either
// (a touch, a copy that failed): SQLite takes it for an empty database,
// which the open would migrate, writing a new archive into it; it is
// refused, and left as it is. The commands that write go on and
// initialise it, as they create a missing one. Any other trouble with the
// path is the open's to report, with its reason.
func requireArchive(path string) error {
	const create = `(create one with "ytrend fetch", "ytrend import" or "ytrend run", ` +
		"or point --db, YTREND_DB or store.path at yours)"
	if err := archiveFileName(path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no archive at %s %s", path, create)
	case err == nil && fi.Mode().IsRegular() && store.EmptyToSQLite(fi.Size()):
		if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
			return nil // the open refuses it, naming the -wal that may hold the archive
		}
		return fmt.Errorf("%s is empty: not a ytrend archive %s", path, create)
	}
	return nil
}

// archiveFileName refuses an archive path that can only name a directory:
// one that ends in a separator (filepath.Dir would take the archive's own
// name for the directory to make), or an existing directory.
func archiveFileName(path string) error {
	example := filepath.Join(path, "ytrend.db")
	if path != "" && os.IsPathSeparator(path[len(path)-1]) {
		return fmt.Errorf("the archive's path %s ends in %q: name the archive's file, such as %s",
			path, path[len(path)-1:], example)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory: not a ytrend archive (name the archive's file, such as %s)", path, example)
	}
	return nil
}

// makeArchiveDir makes the directory of the archive at path, and its
// parents, if missing: the commands that create an archive (fetch, import,
// run, migrate) create where it goes too. A read command never calls it.
func makeArchiveDir(path string) error {
	if err := archiveFileName(path); err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create archive directory: %w", err)
		}
	}
	return nil
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
	if missing := requireArchive(cfg.Store.Path); missing != nil {
		switch {
		case o.readOnly || o.existing || (o.status && cfg.Redis.URL == ""):
			return nil, missing
		case o.status:
			if a.budget, err = budget.Open(ctx, budget.ConfigFrom(cfg), budget.Options{StatusOnly: true, Log: log}); err != nil {
				return nil, err
			}
			a.limiter = a.budget.Limiter
			return a, nil
		}
	}
	if err := makeArchiveDir(cfg.Store.Path); err != nil {
		return nil, err
	}
	var opts []store.Option
	pending := false // a read command's archive, migrated first
	if o.readOnly && !o.limiter {
		opts = append(opts, store.ShortLived())
		if a.db, err = store.Open(ctx, cfg.Store.Path, append(opts, store.ReadOnly())...); err == nil {
			return a, nil
		}
		// Only what the usual open can mend falls back to it: its own
		// error would hide the first one (for a directory this user
		// cannot write, it said "enable WAL"). An archive gone since
		// requireArchive looked is not recreated either.
		if pending = errors.Is(err, store.ErrPendingMigrations); !pending {
			return nil, err
		}
	}
	a.db, err = store.Open(ctx, cfg.Store.Path, opts...)
	if err != nil && pending {
		return nil, fmt.Errorf("the archive has migrations to apply before it can be read: %w", err)
	}
	if err != nil {
		return nil, err
	}
	if !o.limiter {
		return a, nil
	}
	a.budget, err = budget.Open(ctx, budget.ConfigFrom(cfg), budget.Options{Archive: a.db, Log: log})
	if err != nil {
		a.close()
		return nil, err
	}
	a.limiter = a.budget.Limiter
	return a, nil
}

func (a *app) close() {
	if a.budget != nil {
		a.budget.Close()
	}
	if a.db != nil {
		a.db.Close()
	}
}

// isTerminal reports whether w is a terminal, for bold highlights and bars:
// not merely a character device, which /dev/null is too.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
