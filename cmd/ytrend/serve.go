package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/daemon"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/server"
)

func (c *cli) serveCmd() *cobra.Command {
	var listen string
	var follow []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the archive as web pages and a JSON API (/api/v1), read-only, with per-client rate limits",
		Long: `Serve answers on --listen (default serve.listen, 127.0.0.1:8080): the current
charts with thumbnails and movement, search, past charts, each video's rank and
views over time, runs and the quota budget, as pages and as JSON under /api/v1
(OpenAPI document at /api/v1/openapi.json).

It opens the archive read-only, so it never holds a lock a fetch needs, and
answers reflect new pages as they land. Each client (the remote IP, or the
X-Forwarded-For address from a serve.trusted_proxies proxy) gets
serve.rate_limit; with redis.url the limits live in Redis and are shared by
every serve process.

With --follow it is a read-only serving replica on a host that does not
fetch: it restores the newest leadership term of the archive's replicas
into --db (a copy of its own, never an archive that ytrend run writes), keeps
it current with Litestream's follow mode (every archive.follow_interval),
switches to a newer term after a takeover, and serves that copy. /readyz and
ytrend_archive_follow_lag_seconds report how far behind it is. --follow takes
replica URLs (repeat it, or separate them with commas); --follow '' takes
archive.replicas (or YTREND_ARCHIVE_REPLICA). A restart resumes from the
copy's position.

SIGINT/SIGTERM let requests in flight finish (up to scheduler.shutdown_timeout);
a second signal stops at once.`,
		Example: `  ytrend serve
  ytrend serve --listen :8080 --db /var/lib/ytrend/ytrend.db
  ytrend serve --follow file:///backups/ytrend --db /var/lib/ytrend/copy.db
  ytrend serve --follow '' --db /var/lib/ytrend/copy.db   # archive.replicas`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig(cmd)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("listen") {
				if err := config.ValidateListen(listen); err != nil {
					return usageError{fmt.Errorf("--listen %v", err)}
				}
				cfg.Serve.Listen = listen
			}
			log, err := c.newLogger()
			if err != nil {
				return err
			}
			access, err := c.accessLog(cfg, log)
			if err != nil {
				return err
			}
			stop := daemon.OnSignals(cmd.Context(), tellUser(c.stderr, "finishing the requests in flight"))
			defer stop.Close()
			var s *server.Server
			var closeDeps func()
			if cmd.Flags().Changed("follow") {
				urls := follow
				if len(urls) == 0 {
					urls = cfg.Archive.Replicas
				}
				if len(urls) == 0 {
					return usageError{fmt.Errorf("--follow '': no archive.replicas (or YTREND_ARCHIVE_REPLICA) to follow")}
				}
				f, err := replication.Follow(stop.Hard, cfg.Store.Path, urls,
					replication.FollowOptions{Interval: cfg.Archive.FollowInterval.D(), Logger: log})
				if err != nil {
					return err
				}
				defer f.Close()
				st := f.Status()
				fmt.Fprintf(c.stderr, "ytrend: following replica %s generation %s into %s\n", st.Replica, st.Generation, cfg.Store.Path)
				s, closeDeps, err = server.OpenFollow(stop.Hard, server.ConfigFrom(cfg), f, budget.ConfigFrom(cfg), log, access)
				if err != nil {
					return err
				}
			} else {
				// A followed copy may not exist yet (it is restored
				// above); the archive served as it is must.
				if err := requireArchive(cfg.Store.Path); err != nil {
					return err
				}
				s, closeDeps, err = server.Open(stop.Hard, server.ConfigFrom(cfg), cfg.Store.Path, budget.ConfigFrom(cfg), log, access)
				if err != nil {
					return err
				}
			}
			defer closeDeps()
			return s.Run(stop.Hard, stop.Soft.Done(), func(addr net.Addr) {
				fmt.Fprintf(c.stderr, "ytrend: serving http://%s/ (API under /api/v1)\n", addr)
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", config.DefaultServeListen, "address to serve on (default serve.listen)")
	cmd.Flags().StringSliceVar(&follow, "follow", nil, "serve a followed copy of these archive replica URLs (repeat or comma-separate; '' = archive.replicas) kept at --db")
	return cmd
}
