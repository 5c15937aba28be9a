package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Liveness is the archive's own: whether a run still marked running has an
// owner alive. Two halves, both here:
//
//   - the heartbeat: a process that starts a run (or a long-lived writer,
//     at its start: Register) registers in instances and refreshes its row
//     every HeartbeatInterval until Close, by itself (a search or a
//     read-only command leaves no trace);
//   - the sweep: MarkInterrupted ends the runs whose owner died; a
//     long-lived process runs it at its start and then Sweep, which repeats
//     it every SweepInterval. It decides nothing about when: the daemon
//     schedules it.

const (
	// HeartbeatInterval is how often a process that has started a run
	// refreshes its row in instances; a row older than staleHeartbeat is a
	// process that died (or hangs: see MarkInterrupted).
	HeartbeatInterval = 15 * time.Second
	staleHeartbeat    = 4 * HeartbeatInterval
	// SweepInterval is how often Sweep looks for abandoned runs: a process
	// that died is noticed within two minutes of its last beat, not only at
	// the next start.
	SweepInterval = 4 * HeartbeatInterval
)

// Register records this process in instances and keeps its heartbeat until
// Close. StartRun and ImportChart register by themselves: a search or a
// read-only command leaves no trace. A long-lived writer (ytrend run)
// registers at its start, so that OtherWriters (Compact) names it before
// its first run. A failed registration (the archive locked past the busy
// timeout) is tried again at the next run.
func (db *DB) Register(ctx context.Context) error {
	in := db.self
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case in.closed:
		return errClosed
	case in.registered:
		return nil
	}
	now := time.Now().UnixMicro()
	if _, err := db.writer.ExecContext(ctx, `INSERT INTO instances (id, host, pid, pidns, started_at, heartbeat_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
		in.id, in.host, in.pid, in.pidns, now, now); err != nil {
		return fmt.Errorf("store: register this process: %w", err)
	}
	in.registered = true
	go db.beat()
	return nil
}

// beat refreshes the heartbeat until Close. A failed beat (the archive
// busy for longer than the busy timeout) is retried at the next tick; only
// four missed in a row make the process look dead.
func (db *DB) beat() {
	in := db.self
	defer close(in.stopped)
	t := time.NewTicker(in.every)
	defer t.Stop()
	for {
		select {
		case <-in.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), in.every)
			db.writer.ExecContext(ctx, `UPDATE instances SET heartbeat_at = ? WHERE id = ?`, time.Now().UnixMicro(), in.id)
			cancel()
		}
	}
}

// unregister stops the heartbeat and removes this process's row: its runs
// have ended, and a run still marked running under a missing owner is
// abandoned.
func (db *DB) unregister() {
	in := db.self
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.closed = true
	close(in.stop)
	if in.registered {
		<-in.stopped
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		db.writer.ExecContext(ctx, `DELETE FROM instances WHERE id = ?`, in.id)
	}
}

// Sweep runs MarkInterrupted every SweepInterval until ctx ends, and tells
// swept, if not nil, each result.
func (db *DB) Sweep(ctx context.Context, swept func(n int, err error)) {
	t := time.NewTicker(db.self.sweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := db.MarkInterrupted(ctx, time.Now())
			if ctx.Err() != nil {
				return // stopped mid-sweep: its own cancellation is no failure to report
			}
			if swept != nil {
				swept(n, err)
			}
		}
	}
}

// staleRunAge is when a run still marked running is taken as dead whatever
// its host: no fetch of one region takes a day.
const staleRunAge = 24 * time.Hour

// MarkInterrupted marks as interrupted the runs left "running" by processes
// that died, on any host sharing the archive: runs whose owner's heartbeat
// is older than four heartbeat intervals, whose owner left no row in
// instances, or whose owner's pid no longer exists on this host. A live pid
// proves nothing (in a container ytrend is pid 1; pids are reused). Runs of
// binaries older than the heartbeat (owner host:pid) fall back to a day's
// age. A run of a live process (a concurrent ytrend fetch) is never touched.
// It returns how many it marked.
//
// Heartbeats are written with each owner's clock and compared with now:
// hosts sharing an archive must agree on the time to well within a minute.
func (db *DB) MarkInterrupted(ctx context.Context, now time.Time) (int, error) {
	// One write transaction: a process that registers and starts a run
	// between reading the heartbeats and reading the runs would otherwise
	// look like an owner without a heartbeat.
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	defer tx.Rollback()
	beats := map[string]ownerRow{}
	brows, err := tx.QueryContext(ctx, `SELECT id, heartbeat_at, pidns FROM instances`)
	if err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	for brows.Next() {
		var id string
		var row ownerRow
		if err := brows.Scan(&id, &row.heartbeat, &row.pidns); err != nil {
			brows.Close()
			return 0, fmt.Errorf("store: mark interrupted: %w", err)
		}
		beats[id] = row
	}
	brows.Close()
	if err := brows.Err(); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, owner, started_at FROM runs WHERE status = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	type dead struct {
		id  int64
		why string
	}
	var marks []dead
	for rows.Next() {
		var id, started int64
		var own string
		if err := rows.Scan(&id, &own, &started); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: mark interrupted: %w", err)
		}
		if why, ok := db.abandoned(own, started, beats, now); ok {
			marks = append(marks, dead{id, why})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	for _, m := range marks {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', finished_at = ?, error = ?
			WHERE id = ?`, now.UnixMicro(), m.why, m.id); err != nil {
			return 0, fmt.Errorf("store: mark interrupted: %w", err)
		}
	}
	// Heartbeats of processes that stopped beating and own no running run
	// are history: without this the table would keep every crash.
	if _, err := tx.ExecContext(ctx, `DELETE FROM instances WHERE heartbeat_at < ? AND id != ?
		AND NOT EXISTS (SELECT 1 FROM runs WHERE status = 'running' AND owner = instances.id)`,
		now.Add(-staleHeartbeat).UnixMicro(), db.self.id); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	return len(marks), nil
}

// ownerRow is what instances says of a run's owner.
type ownerRow struct {
	heartbeat int64 // unix µs, the owner's clock
	pidns     string
}

// abandoned decides whether a run still marked running, owned by own and
// started at started (unix µs), was abandoned by a process that died, and
// says why; beats maps an owner id to its row in instances.
func (db *DB) abandoned(own string, started int64, beats map[string]ownerRow, now time.Time) (string, bool) {
	if own == db.self.id {
		return "", false // this process: alive by definition
	}
	parts := strings.Split(own, ":")
	onThisHost := len(parts) >= 2 && parts[0] == db.self.host
	pidGone := false
	if onThisHost {
		if pid, err := strconv.Atoi(parts[1]); err == nil && pid > 0 && !pidAlive(pid) {
			pidGone = true // a dead pid is proof of death; a live one proves nothing
		}
	}
	if row, ok := beats[own]; ok {
		// A pid is only asked about in its own namespace: two processes
		// with one hostname in separate pid namespaces (a container on the
		// host's network) cannot see each other's pids.
		if pidGone && row.pidns != "" && row.pidns == db.self.pidns {
			return "interrupted: process " + own + " is gone", true
		}
		if now.Sub(micros(row.heartbeat)) > staleHeartbeat {
			return fmt.Sprintf("interrupted: process %s stopped its heartbeat at %s", own, micros(row.heartbeat).Format(time.RFC3339)), true
		}
		return "", false
	}
	if len(parts) == 3 {
		// An instance id without its row: the process exited (a clean exit
		// deletes the row only after its runs ended) or never beat.
		return "interrupted: process " + own + " has exited", true
	}
	// host:pid from a binary older than the heartbeat, or unreadable.
	if pidGone {
		return "interrupted: process " + own + " is gone", true
	}
	if now.Sub(micros(started)) > staleRunAge {
		return fmt.Sprintf("interrupted: still running %s after it started (owner %s)", staleRunAge, own), true
	}
	return "", false
}

// OtherWriters lists the other processes that keep a heartbeat in this
// archive (they started a run, and have not exited or stopped beating for
// staleHeartbeat): a scheduler, a fetch or an import, on any host. Work
// that holds the write lock for longer than a writer waits for it
// (Compact) asks first.
func (db *DB) OtherWriters(ctx context.Context) ([]string, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id FROM instances WHERE id <> ? AND heartbeat_at > ? ORDER BY id`,
		db.self.id, time.Now().Add(-staleHeartbeat).UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("store: other writers: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: other writers: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
