package scheduler

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/testkit/logbuf"
)

// aligned fires at every multiple of period: an injected sub-second schedule.
type aligned struct{ period time.Duration }

func (a aligned) Next(t time.Time) time.Time { return t.Truncate(a.period).Add(a.period) }

func job(code string, period, offset time.Duration) config.Job {
	return config.Job{Region: config.Region{Code: regions.MustParse(code), Cron: "test", Pages: 4}, Offset: offset,
		Schedule: config.Offset(aligned{period}, offset)}
}

func testLogger() (*slog.Logger, *logbuf.Buffer) {
	buf := &logbuf.Buffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

func TestRegionsFireStaggeredInOrder(t *testing.T) {
	var mu sync.Mutex
	var fired []string
	jobs := []config.Job{
		job("DE", time.Second, 600*time.Millisecond),
		job("US", time.Second, 0),
		job("GB", time.Second, 300*time.Millisecond),
	}
	log, _ := testLogger()
	s := New(jobs, func(ctx context.Context, j config.Job, stop <-chan struct{}) {
		mu.Lock()
		fired = append(fired, j.Code.String())
		mu.Unlock()
	}, log)
	s.Start()
	defer s.Kill()
	deadline := time.After(10 * time.Second)
	for {
		mu.Lock()
		n := len(fired)
		mu.Unlock()
		if n >= 6 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("only %d fires", n)
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.Shutdown(context.Background(), time.Second)
	mu.Lock()
	defer mu.Unlock()
	// The first fire depends on where in the second the test started; from
	// there the regions must follow their offsets: US, GB, DE, US, ...
	next := map[string]string{"US": "GB", "GB": "DE", "DE": "US"}
	for i := 1; i < 6; i++ {
		if fired[i] != next[fired[i-1]] {
			t.Fatalf("fire order %v: %s followed %s, want offsets order US (0) GB (300ms) DE (600ms)", fired[:6], fired[i], fired[i-1])
		}
	}
}

func TestSlowRegionIsSkippedNotStacked(t *testing.T) {
	var running, maxRunning, calls atomic.Int32
	release := make(chan struct{})
	log, buf := testLogger()
	s := New([]config.Job{job("US", 100*time.Millisecond, 0)}, func(ctx context.Context, j config.Job, stop <-chan struct{}) {
		calls.Add(1)
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		if calls.Load() == 1 {
			<-release // the first run is slow: several ticks pass meanwhile
		}
	}, log)
	s.Start()
	defer s.Kill()
	waitFor(t, func() bool { return strings.Count(buf.String(), "tick skipped") >= 3 })
	close(release)
	waitFor(t, func() bool { return calls.Load() >= 2 })
	s.Shutdown(context.Background(), time.Second)
	if m := maxRunning.Load(); m != 1 {
		t.Errorf("a region ran %d times at once; want never more than 1", m)
	}
	if !strings.Contains(buf.String(), "region=US") {
		t.Errorf("skip lines do not name the region:\n%s", buf.String())
	}
}

func TestPanickingRunDoesNotStopLaterTicks(t *testing.T) {
	var calls atomic.Int32
	log, buf := testLogger()
	s := New([]config.Job{job("US", 100*time.Millisecond, 0)}, func(ctx context.Context, j config.Job, stop <-chan struct{}) {
		if calls.Add(1) == 1 {
			panic("boom")
		}
	}, log)
	s.Start()
	defer s.Kill()
	waitFor(t, func() bool { return calls.Load() >= 3 })
	s.Shutdown(context.Background(), time.Second)
	if !strings.Contains(buf.String(), "boom") {
		t.Errorf("panic not logged:\n%s", buf.String())
	}
}

func TestShutdownLetsInFlightRunFinish(t *testing.T) {
	started := make(chan struct{})
	var finishedCleanly atomic.Bool
	log, _ := testLogger()
	s := New([]config.Job{job("US", 100*time.Millisecond, 0)}, func(ctx context.Context, j config.Job, stop <-chan struct{}) {
		select {
		case started <- struct{}{}:
		default:
			return
		}
		<-stop                            // graceful stop asked: finish the page in flight
		time.Sleep(50 * time.Millisecond) // storing it
		finishedCleanly.Store(ctx.Err() == nil)
	}, log)
	s.Start()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx, time.Second); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if !finishedCleanly.Load() {
		t.Error("in-flight run was cancelled instead of finishing")
	}
}

func TestShutdownDeadlineCancelsStuckRun(t *testing.T) {
	started := make(chan struct{}, 1)
	sawCancel := make(chan struct{})
	log, _ := testLogger()
	s := New([]config.Job{job("US", 100*time.Millisecond, 0)}, func(ctx context.Context, j config.Job, stop <-chan struct{}) {
		select {
		case started <- struct{}{}:
		default:
			return
		}
		<-ctx.Done() // ignores the soft stop
		close(sawCancel)
	}, log)
	s.Start()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx, 2*time.Second); err == nil {
		t.Error("Shutdown reported success although the run had to be cancelled")
	}
	select {
	case <-sawCancel:
	default:
		t.Error("stuck run's context was not cancelled")
	}
}

func TestRunOnceFiresEveryRegionInStaggerOrder(t *testing.T) {
	var fired []string
	jobs := []config.Job{job("DE", time.Hour, 20*time.Minute), job("US", time.Hour, 0), job("GB", time.Hour, 10*time.Minute)}
	s := New(jobs, func(ctx context.Context, j config.Job, stop <-chan struct{}) {
		fired = append(fired, j.Code.String())
		if j.Code == "GB" {
			panic("a panic in one region")
		}
	}, nil)
	s.RunOnce(false)
	if got := strings.Join(fired, " "); got != "US GB DE" {
		t.Errorf("RunOnce order %q, want US GB DE", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestShutdownDuringRunOnceLetsThePageFinish: run --once stops like the
// daemon does: the region in flight finishes its page with a live context,
// and the regions after it do not start.
func TestShutdownDuringRunOnceLetsThePageFinish(t *testing.T) {
	started := make(chan struct{})
	var clean atomic.Bool
	var calls atomic.Int32
	s := New([]config.Job{job("US", time.Hour, 0), job("GB", time.Hour, time.Minute)}, func(ctx context.Context, j config.Job, stop <-chan struct{}) {
		calls.Add(1)
		close(started)
		<-stop
		time.Sleep(50 * time.Millisecond) // storing the page in flight
		clean.Store(ctx.Err() == nil)
	}, nil)
	done := make(chan struct{})
	go func() {
		s.RunOnce(false)
		close(done)
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx, time.Second); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	<-done
	if !clean.Load() {
		t.Error("the run in flight was cancelled instead of finishing its page")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d regions ran; none may start after the stop", n)
	}
}
