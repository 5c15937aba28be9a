package main

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/daemon"
	"github.com/ytrend/ytrend/ingest/sim"
)

// simDefaultKey is the key the simulator accepts when none is configured.
const simDefaultKey = "ytrend-sim-key"

func (c *cli) simulateCmd() *cobra.Command {
	var (
		addr        string
		quota       int64
		day         time.Duration
		churn       time.Duration
		faultSpec   string
		keys        []string
		searchCalls int64
		seed        uint64
	)
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Serve a simulated YouTube Data API (videos, search, i18nRegions, videoCategories) with its own quota",
		Long: `Simulate serves the part of the YouTube Data API v3 that ytrend uses, with
Google's paths, parameters, JSON and error bodies, deterministic made-up
content for every region, and Google's quota rules per API key: 10,000 units
a day, resetting at midnight Pacific, every request charged. Point ytrend at it
with YOUTUBE_ENDPOINT=<the URL it prints>.

The first line on stdout is "listening on http://HOST:PORT"; with port 0 the
port is chosen free. Keys come from --key (repeatable), else SIM_API_KEYS
(comma-separated), else "ytrend-sim-key".

--faults injects failures: comma-separated name=fraction pairs among 5xx,
500, 503, ratelimit, ratelimit403, ratelimit429, malformed and drop, plus
latency=DURATION; e.g. "5xx=0.1,ratelimit=0.05,latency=200ms". Change them
while running with POST /sim/faults (same syntax, or JSON). GET /sim/usage
shows the units charged per key fingerprint; GET /sim/chart?regionCode=US the
current chart's video IDs.

SIGINT/SIGTERM stop it gracefully.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			faults, err := sim.ParseFaults(faultSpec)
			if err != nil {
				return usageError{err} // "faults: 5xx: ..." names the flag already
			}
			if !cmd.Flags().Changed("key") {
				keys = simKeysFromEnv(c.getenv("SIM_API_KEYS"))
			}
			log, err := c.newLogger()
			if err != nil {
				return err
			}
			srv, err := sim.New(sim.Config{
				Keys:              keys,
				Quota:             quota,
				Day:               day,
				SearchCallsPerDay: searchCalls,
				Churn:             churn,
				Seed:              seed,
				Faults:            faults,
				Logger:            log,
			})
			if err != nil {
				return usageError{err}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			fmt.Fprintf(c.stdout, "listening on http://%s\n", ln.Addr())

			fps := make([]string, len(keys))
			for i, k := range keys {
				fps[i] = sim.Fingerprint(k)
			}
			days := "Pacific days"
			if day > 0 {
				days = day.String() + " days"
			}
			log.Info("simulated YouTube ready", "addr", ln.Addr().String(), "quota", quota,
				"days", days, "keys", strings.Join(fps, ","), "search_calls_per_day", searchCalls,
				"faults", faults.String(), "seed", seed)

			st := daemon.OnSignals(cmd.Context(), nil)
			defer st.Close()
			if err := srv.Serve(st.Soft, ln); err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
			log.Info("stopped", "total_charged", srv.TotalCharged(), "total_requests", srv.TotalRequests())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8089", "address to listen on; port 0 picks a free port")
	f.Int64Var(&quota, "quota", sim.DefaultQuota, "units per API key per quota day")
	f.DurationVar(&day, "day", 0, "length of a quota day, e.g. 20s (0 = real days ending at midnight Pacific)")
	f.DurationVar(&churn, "churn", 0, "how often charts reshuffle (0 = 1h, or a 24th of --day)")
	f.StringVar(&faultSpec, "faults", "", `failures to inject, e.g. "5xx=0.1,ratelimit=0.05,latency=200ms,malformed=0.02,drop=0.01"`)
	f.StringArrayVar(&keys, "key", nil, "an accepted API key (repeatable; default: env SIM_API_KEYS, comma-separated, else "+simDefaultKey+")")
	f.Int64Var(&searchCalls, "search-calls-per-day", 0, "2026 pricing: search.list gets its own bucket of N calls a day (0 = 100 units each from the pool)")
	f.Uint64Var(&seed, "seed", 0, "seed of the generated content and of fault draws")
	return cmd
}

// simKeysFromEnv splits SIM_API_KEYS; no keys means the default one.
func simKeysFromEnv(v string) []string {
	var keys []string
	for _, k := range strings.Split(v, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		keys = []string{simDefaultKey}
	}
	return keys
}
