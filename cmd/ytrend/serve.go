package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/daemon"
	"github.com/ytrend/ytrend/server"
)

func (c *cli) serveCmd() *cobra.Command {
	var listen string
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

SIGINT/SIGTERM let requests in flight finish (up to scheduler.shutdown_timeout);
a second signal stops at once.`,
		Example: `  ytrend serve
  ytrend serve --listen :8080 --db /var/lib/ytrend/ytrend.db`,
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
			stop := daemon.OnSignals(cmd.Context(), tellUser(c.stderr, "finishing the requests in flight"))
			defer stop.Close()
			s, closeDeps, err := server.Open(stop.Hard, server.ConfigFrom(cfg), cfg.Store.Path, budget.ConfigFrom(cfg), log)
			if err != nil {
				return err
			}
			defer closeDeps()
			return s.Run(stop.Hard, stop.Soft.Done(), func(addr net.Addr) {
				fmt.Fprintf(c.stderr, "ytrend: serving http://%s/ (API under /api/v1)\n", addr)
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", config.DefaultServeListen, "address to serve on (default serve.listen)")
	return cmd
}
