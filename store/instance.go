package store

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync"
	"time"
)

// instance is this process's identity in the archive: host:pid:random, so
// that a restarted container (pid 1 again) or a reused pid is a new owner.
type instance struct {
	id    string
	host  string
	pid   int
	pidns string        // the pid namespace, e.g. "pid:[4026531836]"; "" if unknown
	every time.Duration // heartbeat interval; HeartbeatInterval but in tests
	sweep time.Duration // Sweep's interval; SweepInterval but in tests

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
		id: host + ":" + strconv.Itoa(pid) + ":" + hex.EncodeToString(b[:]), host: host, pid: pid, pidns: pidns, every: HeartbeatInterval, sweep: SweepInterval,
		stop: make(chan struct{}), stopped: make(chan struct{}),
	}
}

// Instance is this process's owner id in runs.owner: host:pid:random.
func (db *DB) Instance() string { return db.self.id }
