package daemon

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

const testKey = "AIzaDaemon-test-key"

// newDaemon is a daemon on a fresh archive with the embedded ledger,
// fetching regions from the simulated YouTube over real HTTP, one page
// each.
func newDaemon(t *testing.T, opts Options, codes ...regions.Code) (*Daemon, *store.DB) {
	d, db, _ := newDaemonSim(t, opts, codes...)
	return d, db
}

func newDaemonSim(t *testing.T, opts Options, codes ...regions.Code) (*Daemon, *store.DB, *sim.Server) {
	t.Helper()
	s, err := sim.New(sim.Config{Keys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	cfg := config.Default()
	cfg.YouTube.Endpoint = hs.URL
	cfg.YouTube.Retries = 0
	cfg.Store.Path = filepath.Join(t.TempDir(), "ytrend.db")
	for _, c := range codes {
		cfg.Regions = append(cfg.Regions, config.Region{Code: c, Pages: 1})
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), cfg.Store.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env := func(k string) (string, bool) {
		if k == cfg.APIKeyEnv {
			return testKey, true
		}
		return "", false
	}
	d, err := New(context.Background(), cfg, Deps{Archive: db, Env: env, Log: slog.New(slog.DiscardHandler)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d, db, s
}

// With Once every region runs once, outside the election, in stagger
// order, and Done says when; each run's report is kept for the exit status.
func TestOnceRunsEveryRegionThenIsDone(t *testing.T) {
	d, db := newDaemon(t, Options{Once: true}, "US", "GB")
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	case <-time.After(time.Minute):
		t.Fatal("the runs never finished")
	}
	d.Close()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.reports) != 2 {
		t.Fatalf("%d reports, want 2", len(d.reports))
	}
	for i, want := range []regions.Code{"US", "GB"} {
		if r := d.reports[i]; r.Region != want || r.Status != ingest.StatusOK || r.Pages != 1 {
			t.Errorf("report %d: %s %s, %d pages; want %s ok, 1 page", i, r.Region, r.Status, r.Pages, want)
		}
	}
	runs, err := db.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Errorf("%d runs stored, want 2", len(runs))
	}
}

// StopAndCancel abandons the page in flight at once: the run ends as
// interrupted, with its end recorded, and the stop says it cancelled it.
func TestStopAndCancelAbandonsTheRunInFlight(t *testing.T) {
	d, db, s := newDaemonSim(t, Options{Once: true}, "US")
	s.SetFaults(sim.Faults{Latency: 10 * time.Minute}) // every answer hangs
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; s.TotalRequests() == 0; i++ { // charged before the delay: the request is in flight
		if i == 6000 {
			t.Fatal("no request reached the simulator")
		}
		time.Sleep(10 * time.Millisecond)
	}
	err := d.StopAndCancel(context.Background())
	if err == nil || !strings.Contains(err.Error(), "in-flight runs were cancelled") {
		t.Errorf("StopAndCancel: %v, want the in-flight run cancelled", err)
	}
	select {
	case <-d.Done():
	default:
		t.Fatal("StopAndCancel returned before the run did")
	}
	d.mu.Lock()
	reps := d.reports
	d.mu.Unlock()
	if len(reps) != 1 || reps[0].Status != ingest.StatusInterrupted || reps[0].Pages != 0 {
		t.Fatalf("reports %+v, want one interrupted run with no page", reps)
	}
	runs, err := db.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
		t.Errorf("stored runs %+v, want one, interrupted", runs)
	}
}

// Stop with nothing in flight ends the schedule at once; Close after it
// ends the upkeep and the election, and a second Close does nothing.
func TestStopWithNothingInFlight(t *testing.T) {
	d, _ := newDaemon(t, Options{}, "US")
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(context.Background()); err != nil {
		t.Errorf("Stop: %v, want nil: no run was in flight", err)
	}
	d.Close()
	d.Close()
	if d.Done() != nil {
		t.Error("Done is not nil without Once")
	}
}

// Every delay of the shutdown derives from scheduler.shutdown_timeout: the
// grace is a quarter of it (5 s at the default 20 s).
func TestGraceDerivesFromShutdownTimeout(t *testing.T) {
	for _, tt := range []struct{ timeout, grace time.Duration }{
		{20 * time.Second, 5 * time.Second},
		{8 * time.Second, 2 * time.Second},
	} {
		cfg := config.Default()
		cfg.Scheduler.ShutdownTimeout = config.Duration(tt.timeout)
		if got := (&Daemon{cfg: cfg}).grace(); got != tt.grace {
			t.Errorf("shutdown_timeout %s: grace %s, want %s", tt.timeout, got, tt.grace)
		}
	}
}
