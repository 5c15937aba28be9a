package store

import (
	"fmt"
	"os"
	"sync"
)

// Why a writable archive holds a lock of its own (sharedLock).
//
// SQLite's locks are POSIX advisory (fcntl) locks. They belong to the
// process, not to a connection, and closing ANY descriptor of the file
// drops all of them (https://www.sqlite.org/howtocorrupt.html, 2.2).
// SQLite handles its own descriptors, but Litestream, embedded in ytrend
// run, opens the archive with os.Open and closes it when a term's stream
// stops (litestream DB.Close; also when its first sync fails half-way).
// That silently drops the SHARED lock every connection of this process
// holds in WAL mode. Another process's SQLite that closes its last
// connection then takes the EXCLUSIVE lock, believes it was the last user,
// checkpoints and deletes the -wal and -shm, and this process goes on
// writing into the deleted WAL: every later page is lost.
//
// So each writable DB also takes a read lock on SQLite's SHARED byte range
// as an open file description (OFD) lock, held by its own descriptor: no
// other descriptor's close drops it, and it keeps other processes from
// the EXCLUSIVE lock exactly as the SHARED lock would. One descriptor per
// file and process, shared by the DBs open on it: closing it drops the
// process's POSIX locks too, so that happens only when the last of them
// closes, right before its connections do (when nothing is written any
// more, and the last connection may then checkpoint and delete the WAL as
// usual).

// SQLite's os_unix.c lock bytes: PENDING_BYTE is 0x40000000, the SHARED
// range the 510 bytes after PENDING_BYTE+1.
const (
	sharedFirst = 0x40000000 + 2
	sharedSize  = 510
)

var sharedLocks struct {
	sync.Mutex
	m map[fileID]*sharedLock
}

// sharedLock is the process's OFD read lock on one archive file.
type sharedLock struct {
	id   fileID
	f    *os.File
	refs int
}

// holdShared takes (or shares) the process's lock on the file at path.
func holdShared(path string) (*sharedLock, error) {
	if !ofdLocks {
		// Without OFD locks the descriptor would only add a close that
		// drops the process's locks.
		return nil, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("store: hold %s: %w", path, err)
	}
	sharedLocks.Lock()
	defer sharedLocks.Unlock()
	if l := sharedLocks.m[idOf(fi)]; l != nil {
		// Another DB holds it. Never open and close a second descriptor
		// of the file: that close would drop the process's POSIX locks.
		l.refs++
		return l, nil
	}
	f, err := os.Open(path)
	if err == nil {
		fi, err = f.Stat()
	}
	if err == nil {
		err = lockShared(f)
	}
	if err != nil {
		if f != nil {
			f.Close() // only after a failure at open: no connection of this DB is in use yet
		}
		return nil, fmt.Errorf("store: hold %s: %w", path, err)
	}
	if sharedLocks.m == nil {
		sharedLocks.m = map[fileID]*sharedLock{}
	}
	l := &sharedLock{id: idOf(fi), f: f, refs: 1}
	sharedLocks.m[l.id] = l
	return l, nil
}

// release gives the lock back; the last release closes its descriptor
// (and with it every POSIX lock this process holds on the file: the
// caller closes its connections right after).
func (l *sharedLock) release() error {
	if l == nil {
		return nil
	}
	sharedLocks.Lock()
	defer sharedLocks.Unlock()
	if l.refs--; l.refs > 0 {
		return nil
	}
	delete(sharedLocks.m, l.id)
	return l.f.Close()
}
