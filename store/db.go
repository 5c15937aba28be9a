package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/ytrend/ytrend/migrations"
)

// DB is an open archive: one writer connection and a pool of readers over the
// same SQLite file. It is safe for concurrent use, and several processes may
// open the same file at once (SQLite's WAL locking arbitrates; a writer that
// finds the file locked waits up to BusyTimeout instead of failing).
type DB struct {
	path   string
	writer *sql.DB
	reader *sql.DB
}

// Option changes how Open prepares the database.
type Option func(*options)

type options struct {
	busyTimeout time.Duration
	readers     int
	migrations  fs.FS
	noMigrate   bool
}

// WithBusyTimeout sets how long a connection waits for another process's lock
// before giving up with SQLITE_BUSY. The default is 10s.
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// WithReaders sets the size of the reader pool (default: GOMAXPROCS, at least 2).
func WithReaders(n int) Option { return func(o *options) { o.readers = n } }

// WithMigrations replaces the embedded migrations; tests use it to build
// databases at older versions or with broken migration sets.
func WithMigrations(fsys fs.FS) Option { return func(o *options) { o.migrations = fsys } }

// WithoutMigrate opens the database without applying pending migrations. The
// schema must then be brought up to date with Migrate before use.
func WithoutMigrate() Option { return func(o *options) { o.noMigrate = true } }

// Open opens (creating if needed) the archive at path, switches it to WAL,
// and applies any pending migrations.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	o := options{busyTimeout: 10 * time.Second, readers: max(2, runtime.GOMAXPROCS(0)), migrations: migrations.FS}
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" {
		return nil, errors.New("store: empty database path")
	}

	writer, err := sql.Open("sqlite", dsn(path, o.busyTimeout, true))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One writer: SQLite allows one at a time anyway, and a single pooled
	// connection turns contention inside this process into Go-side queueing
	// instead of busy-waiting on the file lock.
	writer.SetMaxOpenConns(1)
	writer.SetConnMaxIdleTime(0)

	db := &DB{path: path, writer: writer}
	// WAL is a property of the file, so set it once here rather than in the
	// DSN: setting it on every new pooled connection from several processes at
	// once is a documented race on a brand-new file.
	if err := db.exec(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		writer.Close()
		return nil, fmt.Errorf("store: enable WAL on %s: %w", path, err)
	}

	reader, err := sql.Open("sqlite", dsn(path, o.busyTimeout, false))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	reader.SetMaxOpenConns(o.readers)
	reader.SetMaxIdleConns(o.readers)
	db.reader = reader

	if !o.noMigrate {
		if _, err := Migrate(ctx, db.writer, o.migrations); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// dsn builds the modernc connection string. Every _pragma runs on each new
// pooled connection; _txlock=immediate makes BeginTx take the write lock up
// front, so a transaction never fails half way with SQLITE_BUSY_SNAPSHOT
// (which ignores busy_timeout).
func dsn(path string, busy time.Duration, write bool) string {
	q := []string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", busy.Milliseconds()),
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(ON)",
	}
	if write {
		q = append(q, "_txlock=immediate")
	} else {
		q = append(q, "_pragma=query_only(1)")
	}
	return "file:" + escapePath(path) + "?" + strings.Join(q, "&")
}

// escapePath escapes the characters SQLite's URI parser treats specially.
func escapePath(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

func (db *DB) exec(ctx context.Context, query string, args ...any) error {
	_, err := db.writer.ExecContext(ctx, query, args...)
	return err
}

// Path is the database file's path as given to Open.
func (db *DB) Path() string { return db.path }

// Writer is the single-connection pool that every write goes through. Other
// packages that keep tables in the archive (the quota ledger) use it so that
// their transactions queue behind the store's instead of contending.
func (db *DB) Writer() *sql.DB { return db.writer }

// Reader is the read-only pool used by searches and listings.
func (db *DB) Reader() *sql.DB { return db.reader }

// Ping checks that the database answers a query.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Close closes both pools.
func (db *DB) Close() error {
	var errs []error
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	if db.writer != nil {
		errs = append(errs, db.writer.Close())
	}
	return errors.Join(errs...)
}
