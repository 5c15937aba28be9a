package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/ytrend/ytrend/config"
)

func (c *cli) runCmd() *cobra.Command {
	var opts daemonOptions
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

With --once every region is fetched once, in stagger order, and the exit
status is that of "ytrend fetch": 0 ok, 75 a region stopped on quota, 1 errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.serve != "" {
				if err := config.ValidateListen(opts.serve); err != nil {
					return usageError{fmt.Errorf("--serve %v", err)}
				}
			}
			if err := c.restoreOnStart(cmd); err != nil {
				return err
			}
			m, open := withMetrics(opts.listen)
			a, err := c.open(cmd, open)
			if err != nil {
				return err
			}
			defer a.close()
			st := newStop(cmd.Context(), logSignals(a))
			defer st.close()
			d, err := c.openDaemon(st.Hard, a, m, opts)
			if err != nil {
				return err
			}
			return d.run(st)
		},
	}
	cmd.Flags().BoolVar(&opts.once, "once", false, "fetch every region once, in stagger order, then exit")
	cmd.Flags().BoolVar(&opts.stagger, "stagger", false, "with --once: wait each region's offset instead of running them back to back")
	cmd.Flags().StringVar(&opts.listen, "listen", "", "serve /metrics, /livez and /readyz on this address (e.g. 127.0.0.1:9108)")
	cmd.Flags().StringVar(&opts.serve, "serve", "", "also serve the archive's pages and API, as ytrend serve does, on this address (e.g. 127.0.0.1:8080)")
	return cmd
}
