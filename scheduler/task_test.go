package scheduler

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
)

// A task runs on its own schedule beside the regions, and a panic in one
// tick does not stop the next.
func TestTaskFiresAndSurvivesPanic(t *testing.T) {
	var regionFires, taskRuns atomic.Int32
	log, buf := testLogger()
	s := New([]config.Job{job("US", 100*time.Millisecond, 0)}, func(context.Context, config.Job, <-chan struct{}) {
		regionFires.Add(1)
	}, log)
	s.AddTask(Task{Name: "maintenance", Schedule: aligned{100 * time.Millisecond}, Run: func(context.Context) {
		if taskRuns.Add(1) == 1 {
			panic("first upkeep blew up")
		}
	}})
	names := map[string]bool{}
	for _, f := range s.Next() {
		names[f.Name] = true
	}
	if !names["US"] || !names["maintenance"] || len(names) != 2 {
		t.Errorf("Next names %v, want US and maintenance", names)
	}
	s.Start()
	defer s.Kill()
	waitFor(t, func() bool { return taskRuns.Load() >= 3 })
	if err := s.Shutdown(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if regionFires.Load() == 0 {
		t.Error("the region never fired beside the task")
	}
	if out := buf.String(); !strings.Contains(out, "first upkeep blew up") || !strings.Contains(out, "task=maintenance") {
		t.Errorf("panic not logged with the task's name:\n%s", out)
	}
}

// A shutdown does not wait for upkeep: the task's context ends when the
// soft stop begins, and Shutdown returns as soon as the task does.
func TestTaskCancelledAtShutdown(t *testing.T) {
	log, _ := testLogger()
	s := New(nil, nil, log)
	started := make(chan struct{})
	var runs atomic.Int32
	var cause atomic.Value
	s.AddTask(Task{Name: "maintenance", Schedule: aligned{50 * time.Millisecond}, Run: func(ctx context.Context) {
		if runs.Add(1) == 1 {
			close(started)
		}
		<-ctx.Done()
		cause.Store(ctx.Err())
	}})
	s.Start()
	defer s.Kill()
	<-started
	// Shutdown errs if its deadline passes with work still running: a nil
	// error shows the task was told to stop at the soft stop, not cancelled
	// at the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx, time.Second); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err, _ := cause.Load().(error); err != context.Canceled {
		t.Errorf("task's ctx ended with %v, want context.Canceled", err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("task ran %d times; it never overlaps itself and nothing fires after the stop", n)
	}
}
