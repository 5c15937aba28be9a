package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HeartbeatInterval is how often a process that has started a run refreshes
// its row in instances; a row older than staleHeartbeat is a process that
// died (or hangs: see MarkInterrupted).
const (
	HeartbeatInterval = 15 * time.Second
	staleHeartbeat    = 4 * HeartbeatInterval
)

// instance is this process's identity in the archive: host:pid:random, so
// that a restarted container (pid 1 again) or a reused pid is a new owner.
type instance struct {
	id    string
	host  string
	pid   int
	pidns string        // the pid namespace, e.g. "pid:[4026531836]"; "" if unknown
	every time.Duration // heartbeat interval; HeartbeatInterval but in tests

	mu         sync.Mutex
	registered bool // its row exists and beat runs
	closed     bool
	stop       chan struct{}
	stopped    chan struct{} // closed when beat returns
}

func newInstance() *instance {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [6]byte
	rand.Read(b[:])
	pid := os.Getpid()
	pidns, _ := os.Readlink("/proc/self/ns/pid")
	return &instance{
		id: host + ":" + strconv.Itoa(pid) + ":" + hex.EncodeToString(b[:]), host: host, pid: pid, pidns: pidns, every: HeartbeatInterval,
		stop: make(chan struct{}), stopped: make(chan struct{}),
	}
}

// Instance is this process's owner id in runs.owner: host:pid:random.
func (db *DB) Instance() string { return db.self.id }

// register records this process in instances and keeps its heartbeat until
// Close. A process only registers when it starts a run: a search or a
// read-only command leaves no trace. A failed registration (the archive
// locked past the busy timeout) is tried again at the next run.
func (db *DB) register(ctx context.Context) error {
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
