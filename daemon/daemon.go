// Package daemon is ytrend's long-running process, `ytrend run`: one type
// that owns the regions' jobs and the fetcher they share, the budget's
// upkeep (the epoch check and the audit of this process's grants), the
// leader election among replicas, the leader's stream of the archive to its
// replicas (replication.go: one term each, adopting the previous term
// first), a standby's copy that follows the leader's replica (standby.go:
// --serve answers from it while the process does not lead, from the live
// archive while it does), the sweep of runs that crashed processes
// abandoned, the archive's maintenance, and the HTTP listeners (metrics and
// --serve).
//
// Its life is river's Client's: New wires it from the configuration,
// Start starts every part, Stop is the soft stop (no new run; in-flight
// pages finish and are stored, up to scheduler.shutdown_timeout) and
// StopAndCancel the hard one. Every delay of the shutdown derives from
// scheduler.shutdown_timeout. Run maps the two-stage stop of Signals onto
// them, for `ytrend run`.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/leader"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/scheduler"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
)

// Options are `ytrend run`'s flags.
type Options struct {
	Once    bool   // fetch every region once (outside the election), then return
	Stagger bool   // with Once: each region at its offset from now
	Listen  string // /metrics, /livez and /readyz; "" = none
	Serve   string // the archive's pages and API (ytrend serve's), "" = none
}

// Deps are what the command opened for the daemon.
type Deps struct {
	Archive *store.DB    // open for writing; the command closes it
	Env     config.Env   // where the API key is read
	Log     *slog.Logger // the process's one handler
	// AccessLog is --serve's access log (nil: none); the daemon closes it.
	AccessLog *server.AccessLog
}

// Daemon is ytrend's long-running process.
type Daemon struct {
	cfg      *config.Config
	opts     Options
	log      *slog.Logger
	access   *server.AccessLog // --serve's
	db       *store.DB
	budget   *budget.Budget
	limiter  *quota.Limiter
	metrics  *metrics.Metrics // nil without a listener
	fetcher  *ingest.Fetcher
	sched    *scheduler.Scheduler
	jobs     []config.Job
	elector  *leader.Elector
	instance string
	replicas *replicator // the archive's replicas: streamed by the leader
	standby  *standby    // while not leading: a copy that follows the leader's replica

	servers []*http.Server
	web     *server.Server // with opts.Serve

	// The books and the lease live until the daemon is closed, past the
	// stop: the runs that finish during the shutdown still reserve.
	stopBackground context.CancelFunc
	background     sync.WaitGroup
	done           chan struct{} // with Once: closed when every region ran
	closeOnce      sync.Once

	mu      sync.Mutex
	reports []ingest.Report // with Once: every run's report, for the exit status
}

// New wires a daemon from the configuration on the archive in deps: the
// budget (with metrics observing it when there is a listener), the fetcher,
// the scheduler and the elector. Nothing runs before Start; Close releases
// what New opened.
func New(ctx context.Context, cfg *config.Config, deps Deps, opts Options) (*Daemon, error) {
	// One identity for the archive's runs and the leader lease.
	d := &Daemon{cfg: cfg, opts: opts, log: deps.Log, access: deps.AccessLog, db: deps.Archive, instance: deps.Archive.Instance()}
	// A long-lived process mirrors the whole shared log, so that a loss of
	// the books is restored even for the processes that never run again.
	bo := budget.Options{Archive: deps.Archive, Mirror: true, Log: deps.Log}
	if opts.Listen != "" {
		// The collectors exist before the budget does, which gets them at
		// construction.
		d.metrics = metrics.New(nil)
		bo.Observer, bo.OnRebuild = d.metrics.ObserveReservation, d.metrics.ObserveRebuild
	}
	var err error
	if d.budget, err = budget.Open(ctx, budget.ConfigFrom(cfg), bo); err != nil {
		return nil, err
	}
	d.limiter = d.budget.Limiter
	if err := d.wire(ctx, deps.Env); err != nil {
		d.budget.Close()
		return nil, err
	}
	return d, nil
}

func (d *Daemon) wire(ctx context.Context, env config.Env) error {
	key, err := d.cfg.APIKey(env)
	if err != nil {
		return err
	}
	if d.jobs, err = d.cfg.Jobs(); err != nil {
		return err
	}
	fopts := ingest.OptionsFrom(d.cfg, key, d.log)
	fopts.Observe = d.observe
	if d.fetcher, err = ingest.New(ctx, d.limiter, d.db, fopts); err != nil {
		return err
	}
	var obs replication.Observer
	if d.metrics != nil {
		obs = d.metrics
	}
	d.replicas = newReplicator(d.cfg, d.db, obs, d.log)
	d.elector = leader.New(d.limiter.Leases(), d.instance, d.cfg.Scheduler.LeaderTTL.D(), leader.WithLogger(d.log),
		leader.OnChange(func(leading bool) {
			if d.metrics != nil {
				d.metrics.SetLeader(leading)
			}
			d.replicas.poke()
			d.standby.poke()
		}))
	d.sched = scheduler.New(d.jobs, d.fire, d.log)
	if spec, ok, _ := d.cfg.MaintenanceSchedule(); ok { // validated at load
		d.sched.AddTask(scheduler.Task{Name: "maintenance", Schedule: spec, Run: d.maintain})
	}
	return nil
}

// Run is `ytrend run`: it builds the daemon, starts it and stops it by the
// two-stage stop of Signals. The first signal is Stop; the second ends
// what Stop still waits for, as StopAndCancel. With Once it returns, once
// every region ran, every run's report (nil otherwise).
func Run(ctx context.Context, cfg *config.Config, deps Deps, opts Options) ([]ingest.Report, error) {
	sig := OnSignals(ctx, logSignals(deps.Log))
	defer sig.Close()
	d, err := New(sig.Hard, cfg, deps, opts)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := d.Start(sig.Hard); err != nil {
		return nil, err
	}
	select {
	case <-d.done:
	case <-sig.Soft.Done():
		d.Stop(sig.Hard)
	}
	if !opts.Once {
		return nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reports, nil
}

// logSignals tells the log what each stage of the stop means.
func logSignals(log *slog.Logger) func(string, bool) {
	return func(sig string, hard bool) {
		if hard {
			log.Warn("second signal: stopping now", "signal", sig)
			return
		}
		log.Info("signal received", "signal", sig)
	}
}

// Start starts everything and returns: the budget's upkeep, the election
// and the sweep (unless Once), the listeners, then the schedule (or, with
// Once, every region once). ctx is for the start itself.
func (d *Daemon) Start(ctx context.Context) error {
	if err := d.markInterrupted(ctx); err != nil {
		return err
	}
	// A writer from now, not from its first run: a Compact elsewhere
	// (store.OtherWriters) must see it. A failure is retried by that run.
	if err := d.db.Register(ctx); err != nil {
		d.log.Warn("could not register this process in the archive; its first run tries again", "err", err)
	}
	bg, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	d.stopBackground = stopBackground
	d.background.Go(func() {
		d.limiter.Watch(bg, d.cfg.Redis.EpochCheck.D(), d.cfg.Redis.AuditInterval.D())
	})
	for _, w := range d.budget.Durability(ctx) {
		d.log.Warn("the budget's Redis can lose the books", "why", w)
	}
	if !d.opts.Once {
		if d.replicas.enabled() && d.budget.Redis != nil {
			// On the embedded ledger every replica shares the one archive
			// (the lease lives in it): a standby has nothing to follow.
			d.standby = d.newStandby() // before the election: OnChange pokes it
		}
		d.background.Go(func() { d.elector.Run(bg) })
		if d.replicas.enabled() {
			d.replicas.start(d.elector)
		}
		// A process that dies on another host leaves its runs "running";
		// this one notices within a minute or two, not only at its start.
		d.background.Go(func() { d.db.Sweep(bg, d.swept) })
	}

	if d.metrics != nil {
		d.metrics.WatchBudget(d.limiter)
		addr, err := d.serve(d.opts.Listen, d.metrics.Handler(d.readiness))
		if err != nil {
			return err
		}
		d.log.Info("serving /metrics, /livez, /readyz", "addr", addr)
	}
	if d.opts.Serve != "" {
		if err := d.serveArchive(); err != nil {
			return err
		}
	}
	if d.standby != nil {
		d.standby.start(d.elector, d.web)
	}

	if d.opts.Once {
		d.replicas.logStart(true)
		d.done = make(chan struct{})
		go func() {
			defer close(d.done)
			d.sched.RunOnce(d.opts.Stagger)
		}()
		return nil
	}
	d.sched.Start()
	d.log.Info("scheduler started", "regions", len(d.jobs), "credential", d.cfg.Credential, "budget", d.budget.Name())
	d.replicas.logStart(false)
	for _, fire := range d.sched.Next() {
		d.log.Info("next run", "job", fire.Name, "at", fire.At.Format(time.RFC3339))
	}
	return nil
}

// Stop is the soft stop: no run starts after it, and in-flight pages
// finish and are stored, up to scheduler.shutdown_timeout or ctx's end,
// whichever comes first; then they are cancelled, as by StopAndCancel.
// It returns when the runs have ended (or been abandoned after the grace).
func (d *Daemon) Stop(ctx context.Context) error {
	timeout := d.cfg.Scheduler.ShutdownTimeout
	d.log.Info("shutting down: letting in-flight pages finish", "deadline", timeout.String())
	ctx, cancel := context.WithTimeout(ctx, timeout.D())
	defer cancel()
	return d.stop(ctx)
}

// StopAndCancel is the hard stop: in-flight runs are cancelled now and
// get the grace (a quarter of scheduler.shutdown_timeout) to record how
// they ended.
func (d *Daemon) StopAndCancel(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	return d.stop(ctx)
}

func (d *Daemon) stop(ctx context.Context) error {
	err := d.sched.Shutdown(ctx, d.grace())
	if err != nil {
		d.log.Warn("shutdown", "err", err)
	}
	if d.done != nil {
		<-d.done
	}
	return err
}

// grace is how long, once the soft stop is over, anything still busy gets
// to end on its own: cancelled runs recording their end, requests in flight
// on the listeners. A quarter of scheduler.shutdown_timeout: 5 s at its
// default.
func (d *Daemon) grace() time.Duration { return d.cfg.Scheduler.ShutdownTimeout.D() / 4 }

// Done is closed, with Once, when every region ran; nil otherwise.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Close closes the listeners (letting their requests in flight finish, for
// the grace at most), ends the budget's upkeep and the election, and
// releases the budget. Call it after Stop, StopAndCancel or Done.
func (d *Daemon) Close() {
	d.closeOnce.Do(func() {
		d.closeServers()
		d.standby.close()
		// The runs ended (Stop): the term's last pages reach its replicas
		// before the lease is released and a standby adopts the term.
		d.replicas.close()
		if d.stopBackground != nil {
			d.stopBackground()
		}
		d.background.Wait()
		d.budget.Close()
	})
}

// fire runs one tick of a region: on a replica that leads (or with Once),
// a fetch for the leader's term. The run ends as fenced when the term ends
// (the lease lost, or run out by this replica's clock) or the budget
// refuses its fence; in the second case the replica steps down at once.
func (d *Daemon) fire(ctx context.Context, job config.Job, stop <-chan struct{}) {
	j := ingest.Job{Region: job.Region, Trigger: ingest.TriggerSchedule, Stop: stop}
	var term *leader.Term
	if !d.opts.Once {
		var ok bool
		if term, ok = d.elector.Term(); !ok {
			d.log.Debug("standing by: another replica leads; tick not fired", "region", job.Code.String())
			return
		}
		j.Term = term
		if !d.replicas.await(ctx, term) { // the takeover adopts the previous terms first
			return
		}
	}
	rep := d.fetcher.Fetch(ctx, j)
	if rep.Status == ingest.StatusFenced && term != nil {
		term.StepDown("the budget refused this replica's fence")
	}
	d.replicas.runEnded()
}

func (d *Daemon) observe(rep ingest.Report) {
	if d.metrics != nil {
		d.metrics.ObserveRun(rep)
	}
	d.mu.Lock()
	d.reports = append(d.reports, rep)
	d.mu.Unlock()
}

// markInterrupted ends the runs that crashed processes left running.
func (d *Daemon) markInterrupted(ctx context.Context) error {
	n, err := d.db.MarkInterrupted(ctx, time.Now())
	d.swept(n, err)
	return err
}

// swept logs what a sweep of abandoned runs found.
func (d *Daemon) swept(n int, err error) {
	if err != nil {
		d.log.Error("could not mark the runs of crashed processes interrupted", "err", err)
		return
	}
	if n > 0 {
		d.log.Warn("runs left running by a crashed process marked interrupted", "runs", n)
	}
}

// readiness is /readyz's check and detail: whether this replica leads, the
// archive and the budget answer, and what an operator should know about
// the ledger.
func (d *Daemon) readiness(ctx context.Context) ([]string, error) {
	var detail []string
	if !d.opts.Once {
		if d.elector.Leading() {
			detail = append(detail, "leading: this replica fires the schedule ("+d.instance+")")
		} else {
			detail = append(detail, "standing by: another replica leads, or none yet ("+d.instance+")")
		}
	}
	detail = append(detail, d.replicas.detail()...)
	detail = append(detail, d.standby.detail()...)
	if err := d.db.Ping(ctx); err != nil {
		return detail, err
	}
	if err := d.limiter.Ping(ctx); err != nil {
		return detail, fmt.Errorf("quota backend: %w", err)
	}
	if st, err := d.limiter.Status(ctx); err == nil {
		for _, n := range budget.Notes(st) {
			detail = append(detail, "ledger "+n)
		}
	}
	for _, w := range d.budget.Durability(ctx) {
		detail = append(detail, "warning: the budget can be lost: "+w)
	}
	return detail, nil
}

// serve listens on addr and serves h until Close; it reports the address it
// listens on (port 0 picks one).
func (d *Daemon) serve(addr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("--listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	d.servers = append(d.servers, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("http server", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return ln.Addr().String(), nil
}

// serveArchive serves ytrend serve's pages and API from this process, on
// the archive's reader pool (never in a fetch's way) and with the budget
// this process spends from.
func (d *Daemon) serveArchive() error {
	sc := server.ConfigFrom(d.cfg)
	sc.Listen = d.opts.Serve
	s, err := server.InProcess(sc, d.db, d.limiter, d.budget.Redis, d.metrics, d.log, d.access)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", d.opts.Serve)
	if err != nil {
		return fmt.Errorf("--serve %s: %w", d.opts.Serve, err)
	}
	d.web = s
	go func() {
		if err := s.Serve(ln); err != nil {
			d.log.Error("serving the archive", "addr", ln.Addr().String(), "err", err)
		}
	}()
	d.log.Info("serving the archive's pages and API", "addr", "http://"+ln.Addr().String()+"/")
	return nil
}

// closeServers lets the requests in flight finish (for the grace at most)
// and closes the listeners.
func (d *Daemon) closeServers() {
	ctx, cancel := context.WithTimeout(context.Background(), d.grace())
	defer cancel()
	if d.web != nil {
		d.web.Stop(ctx)
	}
	for _, srv := range d.servers {
		srv.Shutdown(ctx)
	}
}

// maintain runs the archive's upkeep on the schedule and tells the metrics
// how it went.
func (d *Daemon) maintain(ctx context.Context) {
	err := Maintain(ctx, d.db, d.cfg.Store.Path, d.log)
	if d.metrics != nil {
		d.metrics.ObserveMaintenance(time.Now(), err, err != nil && ctx.Err() != nil)
	}
}

// Maintain runs the archive's upkeep (store.Optimize) and logs how it went;
// path names the archive in the log. Optimize commits in short steps, so a
// shutdown that cuts it off loses nothing and the next run carries on.
func Maintain(ctx context.Context, db *store.DB, path string, log *slog.Logger) error {
	start := time.Now()
	before, err := db.IndexSegments(ctx)
	if err != nil {
		log.Error("maintenance failed", "err", err)
		return err
	}
	log.Info("maintenance started", "archive", path, "index_segments", before)
	err = db.Optimize(ctx)
	took := time.Since(start).Round(time.Millisecond).String()
	switch {
	case err != nil && ctx.Err() != nil:
		log.Info("maintenance stopped by shutdown; the next run carries on", "duration", took)
	case err != nil:
		log.Error("maintenance failed", "err", err, "duration", took)
	default:
		after, serr := db.IndexSegments(ctx)
		if serr != nil {
			log.Error("maintenance finished but the index could not be read", "err", serr, "duration", took)
			return serr
		}
		log.Info("maintenance finished", "index_segments", after, "duration", took)
	}
	return err
}
