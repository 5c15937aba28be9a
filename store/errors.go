package store

import (
	"errors"
	"strings"
)

var (
	// ErrNotFound is returned when a requested row does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrSchemaTooNew is returned when the database was migrated by a newer
	// ytrend than this one.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this binary")
	// ErrBadMigrations is returned for a migration set with gaps, duplicates
	// or misnamed files, and for a database whose applied set has gaps.
	ErrBadMigrations = errors.New("store: inconsistent migrations")
)

func containsFold(s, sub string) bool { return strings.Contains(strings.ToLower(s), sub) }
