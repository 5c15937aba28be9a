package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	// ErrSchemaTooNew is returned when the database was migrated by a newer
	// ytrend than this one.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this binary")
	// ErrBadMigrations is returned for a migration set with gaps, duplicates
	// or misnamed files, and for a database whose applied set has gaps.
	ErrBadMigrations = errors.New("store: inconsistent migrations")
)

// Migration is one numbered schema change.
type Migration struct {
	Version   int
	Name      string // file name, e.g. "0001_init.sql"
	SQL       string
	AppliedAt time.Time // zero when pending
}

// Status describes the schema of one database against a migration set.
type Status struct {
	Applied []Migration
	Pending []Migration
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// load reads and checks a migration set: names must be
// NNNN_name.sql, versions must start at 1 and have no gaps or duplicates.
func load(fsys fs.FS) ([]Migration, error) {
	ms, err := list(fsys)
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		body, err := fs.ReadFile(fsys, m.Name)
		if err != nil {
			return nil, fmt.Errorf("store: read migration %s: %w", m.Name, err)
		}
		ms[i].SQL = string(body)
	}
	return ms, nil
}

// list is load without the SQL.
func list(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("store: read migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		if e.IsDir() || !isSQL(e.Name()) {
			continue
		}
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("%w: %q does not match NNNN_name.sql", ErrBadMigrations, e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		ms = append(ms, Migration{Version: v, Name: e.Name()})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range ms {
		want := i + 1
		switch {
		case m.Version < want:
			return nil, fmt.Errorf("%w: version %d appears twice (%s and %s)", ErrBadMigrations, m.Version, ms[i-1].Name, m.Name)
		case m.Version > want:
			return nil, fmt.Errorf("%w: version %d is missing (next file is %s)", ErrBadMigrations, want, m.Name)
		}
	}
	return ms, nil
}

func isSQL(name string) bool { return len(name) > 4 && name[len(name)-4:] == ".sql" }

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL -- unix microseconds
) STRICT`

// Apply applies every pending migration in fsys to db, each in its own
// IMMEDIATE transaction together with its schema_migrations row, and returns
// the versions it applied. Several processes may call it at once: each
// re-reads the applied set inside the write lock and skips what another
// applied first.
func Apply(ctx context.Context, db *sql.DB, fsys fs.FS) ([]int, error) {
	ms, err := load(fsys)
	if err != nil {
		return nil, err
	}
	// The common case, a database already up to date, reads only: opening
	// the archive to search must not queue for the write lock behind another
	// process's transaction.
	applied, err := appliedVersions(ctx, db)
	if err != nil && !isNoSuchTable(err) {
		return nil, err
	}
	if err := checkApplied(applied, len(ms)); err != nil {
		return nil, err
	}
	if err == nil && len(applied) == len(ms) {
		return nil, nil
	}
	if _, err := db.ExecContext(ctx, createMigrationsTable); err != nil {
		return nil, fmt.Errorf("store: create schema_migrations: %w", err)
	}
	var done []int
	for _, m := range ms {
		applied, err := applyOne(ctx, db, m, len(ms))
		if err != nil {
			return done, err
		}
		if applied {
			done = append(done, m.Version)
		}
	}
	return done, nil
}

func applyOne(ctx context.Context, db *sql.DB, m Migration, known int) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: migration %s: begin: %w", m.Name, err)
	}
	defer tx.Rollback()

	applied, err := appliedVersions(ctx, tx)
	if err != nil {
		return false, err
	}
	if err := checkApplied(applied, known); err != nil {
		return false, err
	}
	if slices.Contains(applied, m.Version) {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("store: migration %s: %w", m.Name, err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixMicro()); err != nil {
		return false, fmt.Errorf("store: migration %s: record: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: migration %s: commit: %w", m.Name, err)
	}
	return true, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func appliedVersions(ctx context.Context, q querier) ([]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("store: read schema_migrations: %w", err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, rows.Err()
}

// checkApplied refuses a database that is newer than this binary, or whose
// applied set has holes (it was migrated by some other tool).
func checkApplied(applied []int, known int) error {
	for i, v := range applied {
		if v > known {
			return fmt.Errorf("%w: the database is at schema version %d, this ytrend knows versions up to %d; upgrade ytrend (the database was left untouched)",
				ErrSchemaTooNew, applied[len(applied)-1], known)
		}
		if v != i+1 {
			return fmt.Errorf("%w: applied versions %v have a gap before %d", ErrBadMigrations, applied, v)
		}
	}
	return nil
}

// Pending returns how many of the migrations in fsys the database has not
// applied, reading only their versions: the check of a process that must
// not touch a database whose schema is not current. Its errors are Read's.
func Pending(ctx context.Context, db *sql.DB, fsys fs.FS) (int, error) {
	ms, err := list(fsys)
	if err != nil {
		return 0, err
	}
	applied, err := appliedVersions(ctx, db)
	if isNoSuchTable(err) { // a brand-new file
		return len(ms), nil
	}
	if err != nil {
		return 0, err
	}
	if err := checkApplied(applied, len(ms)); err != nil {
		return 0, err
	}
	return len(ms) - len(applied), nil
}

// Read reports which of the migrations in fsys the database has applied.
// For a database migrated by a newer ytrend it returns the full status —
// Applied includes the versions this binary does not know, named as the
// database recorded them — together with ErrSchemaTooNew.
func Read(ctx context.Context, db *sql.DB, fsys fs.FS) (Status, error) {
	ms, err := load(fsys)
	if err != nil {
		return Status{}, err
	}
	var st Status
	rows, err := db.QueryContext(ctx, `SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		// A brand-new file has no table yet: everything is pending.
		if isNoSuchTable(err) {
			st.Pending = ms
			return st, nil
		}
		return st, fmt.Errorf("store: read schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]bool{}
	var versions []int
	for rows.Next() {
		var m Migration
		var at int64
		if err := rows.Scan(&m.Version, &m.Name, &at); err != nil {
			return st, err
		}
		m.AppliedAt = time.UnixMicro(at).UTC()
		if m.Version >= 1 && m.Version <= len(ms) {
			m.SQL = ms[m.Version-1].SQL
		}
		st.Applied = append(st.Applied, m)
		applied[m.Version] = true
		versions = append(versions, m.Version)
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	for _, m := range ms {
		if !applied[m.Version] {
			st.Pending = append(st.Pending, m)
		}
	}
	return st, checkApplied(versions, len(ms))
}

func isNoSuchTable(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "no such table")
}
