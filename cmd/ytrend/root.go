package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/internal/humanfmt"
)

// Exit codes shared by every command.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitTempFail = 75 // EX_TEMPFAIL: refused by the quota budget; try again later
)

// cli holds what every command shares: the output streams, the environment
// and the global flags. It replaces package-level command and flag variables,
// so tests can build as many independent command trees as they like.
type cli struct {
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)

	// Global flags.
	configPath string
	redisURL   string
	dbPath     string
	logFormat  string
	logLevel   string
}

func newCLI(stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) *cli {
	return &cli{stdout: stdout, stderr: stderr, lookupEnv: lookupEnv}
}

func (c *cli) getenv(key string) string {
	v, _ := c.lookupEnv(key)
	return v
}

// exitCodeError carries a specific process exit code through cobra.
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitCodeError) Unwrap() error { return e.err }

// withCode makes a command exit with code; a nil err exits silently.
func withCode(code int, err error) error { return &exitCodeError{code: code, err: err} }

type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func (c *cli) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "ytrend",
		Short: "Keep a YouTube trending archive fresh within the API quota, and search it locally",
		Long: `ytrend fetches YouTube's most-popular charts for many regions on a staggered
schedule, reserving every API call's units from a shared sliding-window budget
first, so it never runs the key out of quota. Results land in a local SQLite
archive with a full-text index that "ytrend search" queries at zero quota.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath())}
	})

	pf := root.PersistentFlags()
	pf.StringVar(&c.configPath, "config", envOr(c, "YTREND_CONFIG", "schedule.yaml"), "configuration file (env YTREND_CONFIG)")
	// No default from REDIS_URL: a flag's default is printed by --help, and
	// the URL may hold a password. The environment is applied with the
	// config (config.ApplyEnv); the flag, when given, overrides both.
	pf.StringVar(&c.redisURL, "redis", "", "Redis URL for the shared budget: a node, a Sentinel (master_name=) or a Cluster (several addr=) (env REDIS_URL; empty = embedded ledger in the archive)")
	pf.StringVar(&c.dbPath, "db", c.getenv("YTREND_DB"), "archive database path (env YTREND_DB; default from the config file)")
	pf.StringVar(&c.logFormat, "log-format", envOr(c, "LOG_FORMAT", "text"), "log format: text or json (env LOG_FORMAT)")
	pf.StringVar(&c.logLevel, "log-level", envOr(c, "LOG_LEVEL", "info"), "log level: debug, info, warn, error (env LOG_LEVEL)")

	root.AddCommand(c.versionCmd())
	for _, add := range c.subcommands() {
		root.AddCommand(add())
	}
	return root
}

func envOr(c *cli, key, def string) string {
	if v, ok := c.lookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// subcommands lists the constructors of every command other than version.
// Each lives in its own file.
func (c *cli) subcommands() []func() *cobra.Command {
	return []func() *cobra.Command{
		c.runCmd, c.fetchCmd, c.searchCmd, c.runsCmd, c.quotaCmd,
		c.scheduleCmd, c.migrateCmd, c.optimizeCmd, c.simulateCmd,
		c.chartCmd, c.historyCmd, c.exportCmd, c.importCmd, c.serveCmd, c.archiveCmd,
	}
}

func (c *cli) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the ytrend version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "ytrend", version())
			return nil
		},
	}
}

// execute runs the command line and maps the outcome to an exit code.
func (c *cli) execute(ctx context.Context, args []string) int {
	root := c.rootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ec *exitCodeError
	if errors.As(err, &ec) {
		if ec.err != nil {
			fmt.Fprintln(c.stderr, "ytrend:", humanfmt.Terminal(ec.err.Error()))
		}
		return ec.code
	}
	// An error can quote what came from outside (an object store's reply,
	// a name in the archive): its controls print as escapes. Its line
	// breaks stay, as some errors are written on several lines.
	fmt.Fprintln(c.stderr, "ytrend:", humanfmt.Terminal(err.Error()))
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitError
}
