package store

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ofdLocks: Linux has open file description locks (F_OFD_SETLKW).
const ofdLocks = true

// fileID names a file whatever the path it was opened by.
type fileID struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo) fileID {
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil {
		return fileID{}
	}
	return fileID{uint64(st.Dev), st.Ino}
}

// lockShared takes an OFD read lock on SQLite's SHARED range, waiting for
// a process that holds the EXCLUSIVE lock (at its last close) to let go.
func lockShared(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart, Start: sharedFirst, Len: sharedSize}
	for {
		err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLKW, &lk)
		if err != unix.EINTR {
			return err
		}
	}
}
