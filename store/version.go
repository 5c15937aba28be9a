package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Version identifies the archive's charts as they stand. Every page stored
// moves LastPage or LastRun, and every import, even of history older than
// anything the archive holds, creates a run and so moves LastRun: two equal
// Versions read the same charts. (A run's status is not in it: it changes
// without a page, and is only shown on /runs.)
type Version struct {
	LastRun  int64 // the newest run's id
	LastPage int64 // the newest page's fetch time, unix µs
}

// Version reads the archive's version on a connection of its own, so that a
// server asking at every request never queues behind searches for one of
// the readers. Two indexed lookups.
func (db *DB) Version(ctx context.Context) (Version, error) {
	var v Version
	var run, page sql.NullInt64
	err := db.probe.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM runs), (SELECT max(last_page_at) FROM runs)`).Scan(&run, &page)
	if err != nil {
		return v, fmt.Errorf("store: version: %w", err)
	}
	return Version{LastRun: run.Int64, LastPage: page.Int64}, nil
}

// Commits counts the transactions this process committed that may have
// changed the Version: a server in the same process (ytrend run --serve)
// knows at once that it must read the Version again, without asking.
func (db *DB) Commits() int64 { return db.commits.Load() }
