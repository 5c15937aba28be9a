package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/leader"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/scheduler"
	"github.com/ytrend/ytrend/store"
)

func (c *cli) runCmd() *cobra.Command {
	var (
		once    bool
		stagger bool
		listen  string
	)
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
			var m *metrics.Metrics
			var observe func(quota.Result)
			var onRebuild func(quota.Rebuilt)
			if listen != "" {
				// The collectors need the limiter, which needs the observer:
				// build the metrics first and hand the budget over below.
				m = metrics.New(nil)
				observe, onRebuild = m.ObserveReservation, m.ObserveRebuild
			}
			a, err := c.open(cmd, openOpts{limiter: true, observer: observe, onRebuild: onRebuild})
			if err != nil {
				return err
			}
			defer a.close()
			if m != nil {
				m.WatchBudget(a.limiter)
			}
			key, err := a.cfg.APIKey(config.Env(c.lookupEnv))
			if err != nil {
				return err
			}
			jobs, err := a.cfg.Jobs()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if n, err := a.db.MarkInterrupted(ctx, time.Now()); err != nil {
				return err
			} else if n > 0 {
				a.log.Warn("runs left running by a crashed process marked interrupted", "runs", n)
			}

			opts := fetcherOptions(a.cfg, key, a.log)
			var mu sync.Mutex
			var reports []ingest.Report
			opts.Observe = func(rep ingest.Report) {
				if m != nil {
					m.ObserveRun(rep)
				}
				mu.Lock()
				reports = append(reports, rep)
				mu.Unlock()
			}
			f, err := ingest.New(ctx, a.limiter, a.db, opts)
			if err != nil {
				return err
			}

			// The books and the leader lease live as long as the command:
			// the epoch check and the audit keep this process's grants in
			// the ledger; the elector decides whether this replica fires.
			bg, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
			var background sync.WaitGroup
			defer func() { stopBackground(); background.Wait() }()
			background.Go(func() {
				a.limiter.Watch(bg, a.cfg.Redis.EpochCheck.D(), a.cfg.Redis.AuditInterval.D())
			})
			for _, w := range a.durability(ctx) {
				a.log.Warn("the budget's Redis can lose the books", "why", w)
			}
			instance := instanceID()
			elector := leader.New(a.limiter, instance, a.cfg.Scheduler.LeaderTTL.D(), leader.WithLogger(a.log),
				leader.OnChange(func(leading bool) {
					if m != nil {
						m.SetLeader(leading)
					}
				}))
			if !once {
				background.Go(func() { elector.Run(bg) })
			}

			sched := scheduler.New(jobs, func(ctx context.Context, job config.Job, stop <-chan struct{}) {
				j := jobFor(a.cfg.Region(job.Region), store.TriggerSchedule, stop)
				if !once {
					fence, ok := elector.Fence()
					if !ok {
						a.log.Debug("standing by: another replica leads; tick not fired", "region", job.Region.String())
						return
					}
					j.Fence = &fence
				}
				if rep := f.Fetch(ctx, j); rep.Status == store.StatusFenced {
					elector.StepDown("the budget refused this replica's fence")
				}
			}, a.log)
			if spec, ok, _ := a.cfg.MaintenanceSchedule(); ok { // validated at load
				sched.AddTask(scheduler.Task{Name: "maintenance", Schedule: spec, Run: func(ctx context.Context) {
					err := maintain(ctx, a)
					if m != nil {
						m.ObserveMaintenance(time.Now(), err, err != nil && ctx.Err() != nil)
					}
				}})
			}

			if listen != "" {
				srv, addr, err := serveMetrics(listen, m.Handler(func(ctx context.Context) ([]string, error) {
					var detail []string
					if !once {
						if elector.Leading() {
							detail = append(detail, "leading: this replica fires the schedule ("+instance+")")
						} else {
							detail = append(detail, "standing by: another replica leads, or none yet ("+instance+")")
						}
					}
					if err := a.ready(ctx); err != nil {
						return detail, err
					}
					if st, err := a.limiter.Status(ctx); err == nil {
						for _, n := range ledgerNotes(st) {
							detail = append(detail, "ledger "+n)
						}
					}
					for _, w := range a.durability(ctx) {
						detail = append(detail, "warning: the budget can be lost: "+w)
					}
					return detail, nil
				}))
				if err != nil {
					return err
				}
				defer srv.Close()
				a.log.Info("serving /metrics, /livez, /readyz", "addr", addr)
			}

			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)

			finished := make(chan struct{})
			if once {
				go func() {
					defer close(finished)
					sched.RunOnce(stagger)
				}()
			} else {
				sched.Start()
				a.log.Info("scheduler started", "regions", len(jobs), "credential", a.cfg.Credential, "budget", budgetName(a))
				for _, fire := range sched.Next() {
					a.log.Info("next run", "job", fire.Name, "at", fire.At.Format(time.RFC3339))
				}
			}

			select {
			case <-finished:
			case sig := <-sigs:
				a.log.Info("shutting down: letting in-flight pages finish", "signal", sig.String(),
					"deadline", a.cfg.Scheduler.ShutdownTimeout.String())
				sctx, cancel := context.WithTimeout(context.Background(), a.cfg.Scheduler.ShutdownTimeout.D())
				done := make(chan error, 1)
				go func() { done <- sched.Shutdown(sctx, 5*time.Second) }()
				select {
				case err := <-done:
					if err != nil {
						a.log.Warn("shutdown", "err", err)
					}
				case sig := <-sigs:
					a.log.Warn("second signal: stopping now", "signal", sig.String())
					sched.Kill()
					select {
					case <-done:
					case <-time.After(2 * time.Second):
					}
				}
				cancel()
				if once {
					<-finished
				}
			}
			if once {
				mu.Lock()
				defer mu.Unlock()
				return exitFor(reports)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "fetch every region once, in stagger order, then exit")
	cmd.Flags().BoolVar(&stagger, "stagger", false, "with --once: wait each region's offset instead of running them back to back")
	cmd.Flags().StringVar(&listen, "listen", "", "serve /metrics, /livez and /readyz on this address (e.g. 127.0.0.1:9108)")
	return cmd
}

// maintain runs the archive's upkeep (store.Optimize) and logs how it went.
// Optimize commits in short steps, so a shutdown that cuts it off loses
// nothing and the next run carries on.
func maintain(ctx context.Context, a *app) error {
	start := time.Now()
	before, err := a.db.IndexSegments(ctx)
	if err != nil {
		a.log.Error("maintenance failed", "err", err)
		return err
	}
	a.log.Info("maintenance started", "archive", a.cfg.Store.Path, "index_segments", before)
	err = a.db.Optimize(ctx)
	took := time.Since(start).Round(time.Millisecond).String()
	switch {
	case err != nil && ctx.Err() != nil:
		a.log.Info("maintenance stopped by shutdown; the next run carries on", "duration", took)
	case err != nil:
		a.log.Error("maintenance failed", "err", err, "duration", took)
	default:
		after, serr := a.db.IndexSegments(ctx)
		if serr != nil {
			a.log.Error("maintenance finished but the index could not be read", "err", serr, "duration", took)
			return serr
		}
		a.log.Info("maintenance finished", "index_segments", after, "duration", took)
	}
	return err
}

func budgetName(a *app) string {
	if a.rdb != nil {
		return "redis"
	}
	return "embedded ledger"
}

// serveMetrics listens on addr and serves h in the background.
func serveMetrics(addr string, h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "ytrend: metrics server:", err)
		}
	}()
	return srv, ln.Addr().String(), nil
}

// instanceID names this process among replicas: host, pid and a random part,
// so that a restarted process with a reused pid is a new holder.
func instanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%x", host, os.Getpid(), b)
}
