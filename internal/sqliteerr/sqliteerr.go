// Package sqliteerr classifies the errors of modernc.org/sqlite, for the
// archive (store) and the embedded ledger (quota) that shares its file.
package sqliteerr

import (
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Busy reports whether err is SQLite's "another connection holds the lock"
// (SQLITE_BUSY or SQLITE_LOCKED, any extended code): worth waiting for.
func Busy(err error) bool {
	switch primary(err) {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// Transient reports whether err says "not now" rather than "never": a lock
// held past the busy timeout, an interrupted statement, an I/O error, a full
// disk, or a file that cannot be opened at the moment.
func Transient(err error) bool {
	switch primary(err) {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// ReadOnlyDirectory reports whether err is SQLITE_READONLY_DIRECTORY: SQLite
// had to create a file beside the database (a rollback journal, or the -wal
// and -shm of a database in WAL mode, which even a read needs) and the
// directory does not let this process create files.
func ReadOnlyDirectory(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_READONLY_DIRECTORY
}

// NotADatabase reports whether err is SQLITE_NOTADB: the file SQLite
// opened is not a SQLite database.
func NotADatabase(err error) bool { return primary(err) == sqlite3.SQLITE_NOTADB }

// primary is err's primary result code (the low byte of an extended code),
// or -1 when err is no SQLite error.
func primary(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return -1
}
