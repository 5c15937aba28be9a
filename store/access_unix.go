//go:build unix

package store

import "golang.org/x/sys/unix"

// canWrite reports whether this process may open the file at path for
// writing. It asks the kernel without opening the file: closing a
// descriptor of a file SQLite has open would drop this process's locks on
// it (sharedlock.go).
func canWrite(path string) bool { return unix.Access(path, unix.W_OK) == nil }

// canRead reports whether this process may open the file at path for
// reading, asking as canWrite does.
func canRead(path string) bool { return unix.Access(path, unix.R_OK) == nil }
