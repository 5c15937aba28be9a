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
	every time.Duration // heartbeat interval; HeartbeatInterval but in tests

	once    sync.Once
	err     error
	stop    chan struct{}
	stopped chan struct{}
}

func newInstance() *instance {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [6]byte
	rand.Read(b[:])
	pid := os.Getpid()
	return &instance{
		id: host + ":" + strconv.Itoa(pid) + ":" + hex.EncodeToString(b[:]), host: host, pid: pid, every: HeartbeatInterval,
		stop: make(chan struct{}), stopped: make(chan struct{}),
	}
}

// Instance is this process's owner id in runs.owner: host:pid:random.
func (db *DB) Instance() string { return db.self.id }

// register records this process in instances (once) and keeps its heartbeat
// until Close. A process only registers when it starts a run: a search or a
// read-only command leaves no trace.
func (db *DB) register(ctx context.Context) error {
	in := db.self
	in.once.Do(func() {
		now := time.Now().UnixMicro()
		_, in.err = db.writer.ExecContext(ctx, `INSERT INTO instances (id, host, pid, started_at, heartbeat_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
			in.id, in.host, in.pid, now, now)
		if in.err != nil {
			in.err = fmt.Errorf("store: register this process: %w", in.err)
			close(in.stopped)
			return
		}
		go db.beat()
	})
	return in.err
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
	in.once.Do(func() { // never registered: nothing to stop or delete
		in.err = errClosed
		close(in.stopped)
	})
	select {
	case <-in.stop:
		return // closed twice
	default:
		close(in.stop)
	}
	<-in.stopped
	if in.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		db.writer.ExecContext(ctx, `DELETE FROM instances WHERE id = ?`, in.id)
	}
}

// abandoned decides whether a run still marked running, owned by own and
// started at started (unix µs), was abandoned by a process that died, and
// says why; beats maps an owner id to its last heartbeat (unix µs).
func (db *DB) abandoned(own string, started int64, beats map[string]int64, now time.Time) (string, bool) {
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
	if hb, ok := beats[own]; ok {
		switch {
		case pidGone:
			return "interrupted: process " + own + " is gone", true
		case now.Sub(micros(hb)) > staleHeartbeat:
			return fmt.Sprintf("interrupted: process %s stopped its heartbeat at %s", own, micros(hb).Format(time.RFC3339)), true
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
