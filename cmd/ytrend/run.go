package main

import (
	"github.com/spf13/cobra"
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

With --once every region is fetched once, in stagger order, and the exit
status is that of "ytrend fetch": 0 ok, 75 a region stopped on quota, 1 errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	return cmd
}
