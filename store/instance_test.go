package store_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ytrend/ytrend/store"
)

// A registration that fails (here: a cancelled context) is tried again at
// the next StartRun instead of failing every later run.
func TestRegisterRetriesAfterFailure(t *testing.T) {
	db, _ := openDB(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.StartRun(cancelled, "US", store.TriggerCLI, t0); err == nil {
		t.Fatal("StartRun with a cancelled context: no error")
	}
	if _, err := db.StartRun(context.Background(), "US", store.TriggerCLI, t0); err != nil {
		t.Fatalf("StartRun after a failed registration: %v", err)
	}
}

// A process's run is never taken for abandoned by another process's
// MarkInterrupted, even when it registers and starts while that runs.
func TestMarkInterruptedSparesRunsStartingMeanwhile(t *testing.T) {
	if testing.Short() {
		t.Skip("opens the archive 30 times")
	}
	b, path := openDB(t)
	ctx := context.Background()
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			b.MarkInterrupted(ctx, time.Now())
			time.Sleep(time.Millisecond) // let the other process take the lock
		}
	}()
	defer func() { stop.Store(true); <-done }()
	for i := 0; i < 30; i++ {
		a, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		id, err := a.StartRun(ctx, "US", store.TriggerCLI, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		runs, err := a.Runs(ctx, store.RunFilter{Limit: 1})
		if err != nil || len(runs) != 1 || runs[0].ID != id {
			t.Fatalf("runs %+v, %v", runs, err)
		}
		if runs[0].Status != store.StatusRunning {
			t.Fatalf("iteration %d: a live run was marked %s: %s", i, runs[0].Status, runs[0].Error)
		}
		a.FinishRun(ctx, id, store.RunEnd{Status: store.StatusOK, At: time.Now()})
		a.Close()
	}
}

// A run another process took for abandoned (its owner paused past the
// heartbeat, or its clock off) is running again at its owner's next page:
// the page is kept, not refused. A run its own process ended stays ended.
func TestMarkedRunRevivesAtItsOwnersNextPage(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	id := startRun(t, db, "US", t0)
	if _, err := db.Writer().ExecContext(ctx, `UPDATE runs SET status = 'interrupted', finished_at = ?,
		error = 'interrupted: process x stopped its heartbeat at T' WHERE id = ?`, t0.UnixMicro(), id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SavePage(ctx, store.Page{RunID: id, Region: "US", FetchedAt: t0, Kind: store.PageChart, FirstRank: 1,
		Videos: []store.Video{{ID: "a", Title: "A"}}}); err != nil {
		t.Fatalf("page of a revived run: %v", err)
	}
	runs, _ := db.Runs(ctx, store.RunFilter{})
	if r := runs[0]; r.Status != store.StatusRunning || r.Error != "" || !r.FinishedAt.IsZero() || r.Pages != 1 {
		t.Errorf("revived run %+v", r)
	}
	// Another owner's run is not revived, nor one its own process ended.
	if err := db.FinishRun(ctx, id, store.RunEnd{Status: store.StatusInterrupted, At: t0, Error: "stopped by shutdown"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SavePage(ctx, store.Page{RunID: id, Region: "US", FetchedAt: t0, Kind: store.PageChart, FirstRank: 1,
		Videos: []store.Video{{ID: "b", Title: "B"}}}); err == nil {
		t.Error("a page for a run its own process ended: no error")
	}
	other := startRun(t, db, "US", t0)
	db.Writer().ExecContext(ctx, `UPDATE runs SET owner = 'elsewhere:1:ab', status = 'interrupted', error = 'interrupted: x' WHERE id = ?`, other)
	if _, err := db.SavePage(ctx, store.Page{RunID: other, Region: "US", FetchedAt: t0, Kind: store.PageChart, FirstRank: 1,
		Videos: []store.Video{{ID: "c", Title: "C"}}}); err == nil {
		t.Error("a page for another owner's interrupted run: no error")
	}
}

// Heartbeat rows of processes that stopped beating are deleted once they own
// no running run (here: in the same check that marks their run); a fresh
// one is kept.
func TestMarkInterruptedForgetsDeadInstances(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	now := time.Now()
	beat := func(id string, at time.Time) {
		if _, err := db.Writer().ExecContext(ctx, `INSERT INTO instances (id, host, pid, started_at, heartbeat_at) VALUES (?, 'h', 1, 0, ?)`,
			id, at.UnixMicro()); err != nil {
			t.Fatal(err)
		}
	}
	beat("gone:1:aa", now.Add(-time.Hour))
	beat("fresh:1:bb", now.Add(-time.Second))
	beat("stale-with-run:1:cc", now.Add(-time.Hour))
	id := startRun(t, db, "US", now)
	db.Writer().ExecContext(ctx, `UPDATE runs SET owner = 'stale-with-run:1:cc' WHERE id = ?`, id)
	if n, err := db.MarkInterrupted(ctx, now); n != 1 || err != nil {
		t.Fatalf("MarkInterrupted: %d, %v", n, err)
	}
	var left []string
	rows, _ := db.Writer().QueryContext(ctx, `SELECT id FROM instances ORDER BY id`)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		left = append(left, s)
	}
	rows.Close()
	want := sortStrings([]string{"fresh:1:bb", db.Instance()})
	if strings.Join(left, ",") != strings.Join(want, ",") {
		t.Errorf("instances after the check: %v, want %v", left, want)
	}
}

// The store takes parsed region codes in every filter.
func TestRunsRefusesUnparsedRegion(t *testing.T) {
	db, _ := openDB(t)
	if _, err := db.Runs(context.Background(), store.RunFilter{Region: "us"}); err == nil {
		t.Error(`Runs(Region "us"): no error`)
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Sweep repeats MarkInterrupted until its context ends: the run of a
// process that exited while it was running is found by another process's
// sweep, which is told, and ends as interrupted.
func TestSweepFindsAbandonedRuns(t *testing.T) {
	b, path := openDB(t)
	store.SetSweep(b, 10*time.Millisecond)
	ctx := context.Background()
	a, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.StartRun(ctx, "US", store.TriggerCLI, time.Now()); err != nil {
		t.Fatal(err)
	}
	a.Close() // its instance row goes; its run stays "running"

	found := make(chan int, 1)
	sweepCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Sweep(sweepCtx, func(n int, err error) {
			if err != nil {
				t.Error(err)
			}
			if n > 0 {
				found <- n
			}
		})
	}()
	select {
	case n := <-found:
		if n != 1 {
			t.Errorf("sweep marked %d runs, want 1", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sweep never found the abandoned run")
	}
	cancel()
	<-done
	runs, err := b.Runs(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != store.StatusInterrupted || !strings.HasSuffix(runs[0].Error, "has exited") {
		t.Errorf("runs %+v, want one interrupted: its process has exited", runs)
	}
}
