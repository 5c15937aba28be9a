package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/leader"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/scheduler"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
)

// daemon is ytrend's long-running process. It owns the regions' jobs and the
// fetcher they share, the budget's upkeep (the epoch check and the audit of
// this process's grants), the leader election among replicas, the HTTP
// listeners, and their shutdown by one stop.
type daemon struct {
	app      *app
	opts     daemonOptions
	metrics  *metrics.Metrics // nil without a listener
	fetcher  *ingest.Fetcher
	sched    *scheduler.Scheduler
	jobs     []config.Job
	elector  *leader.Elector
	instance string
	replicas *archiveReplication

	servers []*http.Server
	web     *server.Server // with opts.serve
	mu      sync.Mutex
	reports []ingest.Report // with once: every run's report, for the exit status
}

type daemonOptions struct {
	once    bool   // fetch every region once (outside the election), then return
	stagger bool   // with once: each region at its offset from now
	listen  string // /metrics, /livez and /readyz; "" = none
	serve   string // the archive's pages and API (ytrend serve's), "" = none
}

// openDaemon wires a daemon from the configuration: the archive, the budget
// (with metrics observing it when there is a listener), the fetcher, the
// scheduler and the elector. Nothing runs before run.
func (c *cli) openDaemon(ctx context.Context, a *app, m *metrics.Metrics, opts daemonOptions) (*daemon, error) {
	// One identity for the archive's runs and the leader lease.
	d := &daemon{app: a, opts: opts, metrics: m, instance: a.db.Instance()}
	key, err := a.cfg.APIKey(config.Env(c.lookupEnv))
	if err != nil {
		return nil, err
	}
	if d.jobs, err = a.cfg.Jobs(); err != nil {
		return nil, err
	}
	fopts := fetcherOptions(a.cfg, key, a.log)
	fopts.Observe = d.observe
	if d.fetcher, err = ingest.New(ctx, a.limiter, a.db, fopts); err != nil {
		return nil, err
	}
	d.elector = leader.New(a.limiter.Leases(), d.instance, a.cfg.Scheduler.LeaderTTL.D(), leader.WithLogger(a.log),
		leader.OnChange(func(leading bool) {
			if d.metrics != nil {
				d.metrics.SetLeader(leading)
			}
		}))
	d.replicas = newReplication(a, m)
	d.sched = scheduler.New(d.jobs, d.fire, a.log)
	if spec, ok, _ := a.cfg.MaintenanceSchedule(); ok { // validated at load
		d.sched.AddTask(scheduler.Task{Name: "maintenance", Schedule: spec, Run: d.maintain})
	}
	return d, nil
}

// logSignals tells the log what each stage of the stop means.
func logSignals(a *app) func(string, bool) {
	return func(sig string, hard bool) {
		if hard {
			a.log.Warn("second signal: stopping now", "signal", sig)
			return
		}
		a.log.Info("signal received", "signal", sig)
	}
}

// withMetrics returns the budget options that let metrics observe every
// reservation and rebuild: the collectors exist before the budget does,
// which gets them at construction.
func withMetrics(listen string) (*metrics.Metrics, openOpts) {
	// A long-lived process mirrors the whole shared log, so that a loss of
	// the books is restored even for the processes that never run again.
	o := openOpts{limiter: true, mirror: true}
	if listen == "" {
		return nil, o
	}
	m := metrics.New(nil)
	o.observer, o.onRebuild = m.ObserveReservation, m.ObserveRebuild
	return m, o
}

// fire runs one tick of a region: on a replica that leads (or with once),
// a fetch for the leader's term. The run ends as fenced when the term ends
// (the lease lost, or run out by this replica's clock) or the budget
// refuses its fence; in the second case the replica steps down at once.
func (d *daemon) fire(ctx context.Context, job config.Job, stop <-chan struct{}) {
	j := ingest.Job{Region: job.Region, Trigger: ingest.TriggerSchedule, Stop: stop}
	var term *leader.Term
	if !d.opts.once {
		var ok bool
		if term, ok = d.elector.Term(); !ok {
			d.app.log.Debug("standing by: another replica leads; tick not fired", "region", job.Code.String())
			return
		}
		j.Term = term
		if !d.replicas.await(ctx, term) { // a takeover adopts the previous terms first
			return
		}
	}
	if rep := d.fetcher.Fetch(ctx, j); rep.Status == ingest.StatusFenced && term != nil {
		term.StepDown("the budget refused this replica's fence")
	}
}

func (d *daemon) observe(rep ingest.Report) {
	if d.metrics != nil {
		d.metrics.ObserveRun(rep)
	}
	d.mu.Lock()
	d.reports = append(d.reports, rep)
	d.mu.Unlock()
}

// run starts everything and returns after the stop's soft stage (or, with
// once, after every region ran) once in-flight work has finished or been
// abandoned. With once it returns the exit status of the runs.
func (d *daemon) run(st *stop) error {
	a := d.app
	if err := d.markInterrupted(st.Hard); err != nil {
		return err
	}

	// The books and the lease live until run returns, past the stop: the
	// runs that finish during the shutdown still reserve.
	bg, stopBackground := context.WithCancel(context.WithoutCancel(st.Hard))
	var background sync.WaitGroup
	defer func() { stopBackground(); background.Wait() }()
	background.Go(func() {
		a.limiter.Watch(bg, a.cfg.Redis.EpochCheck.D(), a.cfg.Redis.AuditInterval.D())
	})
	for _, w := range a.durability(st.Hard) {
		a.log.Warn("the budget's Redis can lose the books", "why", w)
	}
	d.replicas.logStart(d.opts.once)
	if !d.opts.once {
		background.Go(func() { d.elector.Run(bg) })
		background.Go(func() { d.replicas.run(bg, d.elector) })
		// A process that dies on another host leaves its runs "running";
		// this one notices within a minute or two, not only at its start.
		background.Go(func() {
			t := time.NewTicker(store.HeartbeatInterval * 4)
			defer t.Stop()
			for {
				select {
				case <-bg.Done():
					return
				case <-t.C:
					d.markInterrupted(bg)
				}
			}
		})
	}

	if d.metrics != nil {
		d.metrics.WatchBudget(a.limiter)
		addr, err := d.serve(d.opts.listen, d.metrics.Handler(d.readiness))
		if err != nil {
			return err
		}
		a.log.Info("serving /metrics, /livez, /readyz", "addr", addr)
	}
	defer d.closeServers()
	if d.opts.serve != "" {
		if err := d.serveArchive(); err != nil {
			return err
		}
	}

	finished := make(chan struct{})
	if d.opts.once {
		go func() {
			defer close(finished)
			d.sched.RunOnce(d.opts.stagger)
		}()
	} else {
		d.sched.Start()
		a.log.Info("scheduler started", "regions", len(d.jobs), "credential", a.cfg.Credential, "budget", budgetName(a))
		for _, fire := range d.sched.Next() {
			a.log.Info("next run", "job", fire.Name, "at", fire.At.Format(time.RFC3339))
		}
	}
	select {
	case <-finished:
	case <-st.Soft.Done():
		d.shutdown(st)
		if d.opts.once {
			<-finished
		}
	}
	if !d.opts.once {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return exitFor(d.reports)
}

// markInterrupted ends the runs that crashed processes left running.
func (d *daemon) markInterrupted(ctx context.Context) error {
	n, err := d.app.db.MarkInterrupted(ctx, time.Now())
	if err != nil {
		d.app.log.Error("could not mark the runs of crashed processes interrupted", "err", err)
		return err
	}
	if n > 0 {
		d.app.log.Warn("runs left running by a crashed process marked interrupted", "runs", n)
	}
	return nil
}

// shutdown stops firing and lets in-flight pages finish and be stored, up to
// scheduler.shutdown_timeout or the stop's hard stage, whichever comes first.
func (d *daemon) shutdown(st *stop) {
	timeout := d.app.cfg.Scheduler.ShutdownTimeout
	d.app.log.Info("shutting down: letting in-flight pages finish", "deadline", timeout.String())
	ctx, cancel := context.WithTimeout(st.Hard, timeout.D())
	defer cancel()
	if err := d.sched.Shutdown(ctx, 5*time.Second); err != nil {
		d.app.log.Warn("shutdown", "err", err)
	}
}

// readiness is /readyz's check and detail: whether this replica leads, the
// archive and the budget answer, and what an operator should know about
// the ledger.
func (d *daemon) readiness(ctx context.Context) ([]string, error) {
	var detail []string
	if !d.opts.once {
		if d.elector.Leading() {
			detail = append(detail, "leading: this replica fires the schedule ("+d.instance+")")
		} else {
			detail = append(detail, "standing by: another replica leads, or none yet ("+d.instance+")")
		}
	}
	detail = append(detail, d.replicas.detail()...)
	if err := d.app.ready(ctx); err != nil {
		return detail, err
	}
	if st, err := d.app.limiter.Status(ctx); err == nil {
		for _, n := range ledgerNotes(st) {
			detail = append(detail, "ledger "+n)
		}
	}
	for _, w := range d.app.durability(ctx) {
		detail = append(detail, "warning: the budget can be lost: "+w)
	}
	return detail, nil
}

// serve listens on addr and serves h until run returns; it reports the
// address it listens on (port 0 picks one).
func (d *daemon) serve(addr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("--listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	d.servers = append(d.servers, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.app.log.Error("http server", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return ln.Addr().String(), nil
}

// serveArchive serves ytrend serve's pages and API from this process, on
// the archive's reader pool (never in a fetch's way) and with the budget
// this process spends from.
func (d *daemon) serveArchive() error {
	a := d.app
	s, err := server.InProcess(a.cfg, d.opts.serve, a.db, a.limiter, a.rdb, d.metrics, a.log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", d.opts.serve)
	if err != nil {
		return fmt.Errorf("--serve %s: %w", d.opts.serve, err)
	}
	d.web = s
	go func() {
		if err := s.Serve(ln); err != nil {
			a.log.Error("serving the archive", "addr", ln.Addr().String(), "err", err)
		}
	}()
	a.log.Info("serving the archive's pages and API", "addr", "http://"+ln.Addr().String()+"/")
	return nil
}

// closeServers lets the requests in flight finish (a few seconds at most)
// and closes the listeners.
func (d *daemon) closeServers() {
	if d.web != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		d.web.Stop(ctx)
		cancel()
	}
	for _, srv := range d.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(ctx)
		cancel()
	}
}

// maintain runs the archive's upkeep (store.Optimize) and logs how it went.
// Optimize commits in short steps, so a shutdown that cuts it off loses
// nothing and the next run carries on.
func (d *daemon) maintain(ctx context.Context) {
	err := d.app.maintain(ctx)
	if d.metrics != nil {
		d.metrics.ObserveMaintenance(time.Now(), err, err != nil && ctx.Err() != nil)
	}
}

func (a *app) maintain(ctx context.Context) error {
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
