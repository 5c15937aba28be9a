package store

import (
	"errors"

	"github.com/ytrend/ytrend/migrations"
	"github.com/ytrend/ytrend/search"
)

var (
	// ErrNotFound is returned when a requested row does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrNoWAL is returned by Open when the file cannot be put in WAL mode
	// (":memory:", a file system without shared memory).
	ErrNoWAL = errors.New("store: WAL cannot be enabled")
	// ErrSchemaTooNew is returned when the database was migrated by a newer
	// ytrend than this one (the migration runner's error).
	ErrSchemaTooNew = migrations.ErrSchemaTooNew
	// ErrBadMigrations is returned for a migration set with gaps, duplicates
	// or misnamed files, and for a database whose applied set has gaps.
	ErrBadMigrations = migrations.ErrBadMigrations
	// ErrPendingMigrations is returned by a ReadOnly open of an archive
	// whose schema is older than this binary's (or a file with no schema
	// yet): it needs migrating, which only the usual Open does.
	ErrPendingMigrations = errors.New("store: the archive's schema is older than this ytrend's")
	// ErrReadOnlyDir is returned by Open when SQLite must create a file
	// beside the archive and its directory does not let this user: the
	// -wal and -shm of an archive in WAL mode, which even a read needs
	// when no other process has the archive open
	// (https://sqlite.org/wal.html#readonly), or a rollback journal.
	ErrReadOnlyDir = errors.New("store: the archive's directory is not writable")
	// ErrWALBesideEmpty is returned by Open for an empty archive file with
	// a non-empty -wal beside it: SQLite would delete the -wal, which can
	// hold the archive's data (walBesideEmpty says why), so both are
	// left as they are for the operator to decide.
	ErrWALBesideEmpty = errors.New("store: an empty archive file has a -wal beside it")
	// ErrBadQuery is returned by Search for a Raw query FTS5 cannot parse.
	// Plain (non-raw) queries never produce it (the search engine's error).
	ErrBadQuery = search.ErrBadQuery
	// ErrRunFinished is returned by SavePage for a run that is no longer
	// running (finished, or marked interrupted).
	ErrRunFinished = errors.New("store: run is not running")
)
