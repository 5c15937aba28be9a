package store

import (
	"errors"
	"strings"
)

var (
	// ErrNotFound is returned when a requested row does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrNoWAL is returned by Open when the file cannot be put in WAL mode
	// (":memory:", a file system without shared memory).
	ErrNoWAL = errors.New("store: WAL cannot be enabled")
	// ErrSchemaTooNew is returned when the database was migrated by a newer
	// ytrend than this one.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this binary")
	// ErrBadMigrations is returned for a migration set with gaps, duplicates
	// or misnamed files, and for a database whose applied set has gaps.
	ErrBadMigrations = errors.New("store: inconsistent migrations")
	// ErrBadQuery is returned by Search for a Raw query FTS5 cannot parse.
	// Plain (non-raw) queries never produce it.
	ErrBadQuery = errors.New("store: bad search query")
	// ErrRunFinished is returned by SavePage for a run that is no longer
	// running (finished, or marked interrupted).
	ErrRunFinished = errors.New("store: run is not running")
)

func containsFold(s, sub string) bool { return strings.Contains(strings.ToLower(s), sub) }
