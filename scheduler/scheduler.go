// Package scheduler fires each region's fetch on its own staggered cron
// schedule, for months at a time.
//
// Key decisions: robfig/cron/v3 runs the schedules with SkipIfStillRunning
// before Recover in the chain (a region never overlaps itself, and a panic is
// logged without leaving the region skipped forever, which the other order
// does); shutdown is two-staged: stop firing and let in-flight pages finish
// and be stored, then, past a deadline, cancel.
package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/ytrend/ytrend/config"
)

// Func runs one region's fetch. stop is closed when a graceful shutdown
// begins (finish the page in flight, then return); ctx is cancelled when the
// shutdown deadline passes.
type Func func(ctx context.Context, job config.Job, stop <-chan struct{})

// Scheduler owns the cron runner.
type Scheduler struct {
	jobs []config.Job
	fn   Func
	log  *slog.Logger
	cron *cron.Cron
	ids  map[cron.EntryID]string // region code or task name, for Next

	ctx    context.Context // cancelled at the hard deadline
	cancel context.CancelFunc
	stop   chan struct{} // closed at the soft stop
	once   sync.Once

	// RunOnce's runs, which cron does not know about. Adds happen under mu
	// and only before the stop, so Shutdown's Wait never races an Add.
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// New prepares a scheduler; nothing fires before Start.
func New(jobs []config.Job, fn Func, log *slog.Logger) *Scheduler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{jobs: jobs, fn: fn, log: log, ctx: ctx, cancel: cancel, stop: make(chan struct{}), ids: map[cron.EntryID]string{}}
	s.cron = cron.New(cron.WithLocation(time.UTC), cron.WithLogger(cronLogger{log: log}))
	for _, job := range jobs {
		s.schedule(job.Schedule, job.Code.String(), log.With("region", job.Code.String()), func() {
			s.fn(s.ctx, job, s.stop)
		})
	}
	return s
}

// schedule adds one cron entry, named for Next, that runs fn unless the
// soft stop has begun. Each entry has its own chain so its log lines name
// it. Order matters: SkipIfStillRunning must wrap Recover. The other way
// round, a panic unwinds past SkipIfStillRunning's release and the entry is
// skipped forever.
func (s *Scheduler) schedule(sched cron.Schedule, name string, log *slog.Logger, fn func()) {
	cl := cronLogger{log: log}
	chain := cron.NewChain(cron.SkipIfStillRunning(cl), cron.Recover(cl))
	id := s.cron.Schedule(sched, chain.Then(cron.FuncJob(func() {
		select {
		case <-s.stop:
			return
		default:
		}
		fn()
	})))
	s.ids[id] = name
}

// Task is upkeep that runs on its own schedule beside the regions, such as
// the archive's maintenance. It must be resumable: its ctx ends as soon as a
// graceful shutdown begins, since a shutdown does not wait for upkeep.
type Task struct {
	Name     string
	Schedule cron.Schedule
	Run      func(ctx context.Context)
}

// AddTask registers t, with the regions' guarantees: it never overlaps
// itself, and a panic is logged and the next tick still runs. Call it
// before Start.
func (s *Scheduler) AddTask(t Task) {
	s.schedule(t.Schedule, t.Name, s.log.With("task", t.Name), func() {
		ctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		t.Run(ctx)
	})
}

// Start begins firing.
func (s *Scheduler) Start() { s.cron.Start() }

// Next lists each region's and task's next fire time, soonest first.
func (s *Scheduler) Next() []Fire {
	var out []Fire
	for _, e := range s.cron.Entries() {
		out = append(out, Fire{Name: s.ids[e.ID], At: e.Next})
	}
	slices.SortFunc(out, func(a, b Fire) int { return a.At.Compare(b.At) })
	return out
}

// Fire is a planned run of a region (its code) or a task (its name).
type Fire struct {
	Name string
	At   time.Time
}

// Shutdown stops firing and asks in-flight runs to finish their page. If
// they have not returned when ctx is done, their context is cancelled and
// Shutdown waits up to grace more for them to record their end.
func (s *Scheduler) Shutdown(ctx context.Context, grace time.Duration) error {
	s.stopNow()
	done := s.cron.Stop() // no new fires; done when running jobs return
	waitOnce := make(chan struct{})
	go func() {
		<-done.Done()
		s.wg.Wait()
		close(waitOnce)
	}()
	select {
	case <-waitOnce:
		s.cancel()
		return nil
	case <-ctx.Done():
	}
	s.log.Warn("shutdown deadline passed, or a second signal; cancelling in-flight runs")
	s.cancel()
	select {
	case <-waitOnce:
		return fmt.Errorf("scheduler: in-flight runs were cancelled at the shutdown deadline")
	case <-time.After(grace):
		return fmt.Errorf("scheduler: runs still busy %s after cancellation", grace)
	}
}

// stopNow begins the soft stop: no run starts after it.
func (s *Scheduler) stopNow() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.once.Do(func() { close(s.stop) })
}

// begin registers a RunOnce run; false once the stop has begun.
func (s *Scheduler) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.wg.Add(1)
	return true
}

// RunOnce fires every region once, in stagger order (by offset, then file
// order), one after another; with stagger set each region instead starts at
// its offset from now, overlapping if an earlier one runs long. It returns
// when all have finished or the stop began.
func (s *Scheduler) RunOnce(stagger bool) {
	order := slices.Clone(s.jobs)
	slices.SortStableFunc(order, func(a, b config.Job) int { return int(a.Offset - b.Offset) })
	start := time.Now()
	defer s.wg.Wait()
	for _, job := range order {
		if stagger {
			if wait := time.Until(start.Add(job.Offset)); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-s.stop:
					t.Stop()
					return
				case <-t.C:
				}
			}
		}
		if !s.begin() {
			return
		}
		if !stagger {
			s.run(job)
			s.wg.Done()
			continue
		}
		go func() {
			defer s.wg.Done()
			s.run(job)
		}()
	}
}

// run is one --once fire with the same panic safety as the cron chain.
func (s *Scheduler) run(job config.Job) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("run panicked", "region", job.Code.String(), "panic", fmt.Sprint(r))
		}
	}()
	s.fn(s.ctx, job, s.stop)
}

// cronLogger adapts slog to cron's logger interface.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) {
	// cron logs every wake-up and schedule at Info; only skips matter to an
	// operator at that level.
	if msg == "skip" {
		l.log.Warn("region still running; tick skipped", kv...)
		return
	}
	l.log.Debug("cron: "+msg, kv...)
}

func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append(kv, "err", err)...)
}
