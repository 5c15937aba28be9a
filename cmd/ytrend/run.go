package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/daemon"
)

func (c *cli) runCmd() *cobra.Command {
	var opts daemon.Options
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the scheduler: fetch every region on its staggered schedule",
		Long: `Run fires each region's fetch on its cron schedule (schedule.yaml), reserving
every call from the shared budget. A refused fetch ends as stopped_quota and
the region's next tick tries again; other regions keep their schedule.

SIGINT/SIGTERM stop firing and let in-flight pages finish and be stored, up to
scheduler.shutdown_timeout (default 20s); a second signal stops at once.

With --serve ADDR the same process also serves the archive's pages and JSON
API (what "ytrend serve" serves, with its serve: settings), reading while it
fetches.

The leader streams the archive to archive.replicas (Litestream). A standby
(on Redis) follows the leader's replica into <archive>.standby, and its
--serve answers from that copy until it leads. A run that finds no archive,
or one without a run, while a replica holds one, restores it first
(restore-on-start).

With --once every region is fetched once, in stagger order, and the exit
status is that of "ytrend fetch": 0 ok, 75 a region stopped on quota, 1 errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Serve != "" {
				if err := config.ValidateListen(opts.Serve); err != nil {
					return usageError{fmt.Errorf("--serve %v", err)}
				}
			}
			if err := c.restoreOnStart(cmd); err != nil {
				return err
			}
			a, err := c.open(cmd, openOpts{}) // the daemon opens the budget it needs
			if err != nil {
				return err
			}
			defer a.close()
			deps := daemon.Deps{Archive: a.db, Env: config.Env(c.lookupEnv), Log: a.log}
			if opts.Serve != "" {
				if deps.AccessLog, err = c.accessLog(a.cfg, a.log); err != nil {
					return err
				}
			}
			reports, err := daemon.Run(cmd.Context(), a.cfg, deps, opts)
			if err != nil {
				return err
			}
			return exitFor(reports)
		},
	}
	cmd.Flags().BoolVar(&opts.Once, "once", false, "fetch every region once, in stagger order, then exit")
	cmd.Flags().BoolVar(&opts.Stagger, "stagger", false, "with --once: wait each region's offset instead of running them back to back")
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "serve /metrics, /livez and /readyz on this address (e.g. 127.0.0.1:9108)")
	cmd.Flags().StringVar(&opts.Serve, "serve", "", "also serve the archive's pages and API, as ytrend serve does, on this address (e.g. 127.0.0.1:8080)")
	return cmd
}

// restoreOnStart restores the archive from its replicas when there is none
// here (daemon.RestoreOnStart), before the archive is opened.
func (c *cli) restoreOnStart(cmd *cobra.Command) error {
	cfg, err := c.loadConfig(cmd)
	if err != nil {
		return err
	}
	log, err := c.newLogger()
	if err != nil {
		return err
	}
	return daemon.RestoreOnStart(cmd.Context(), cfg, log)
}
