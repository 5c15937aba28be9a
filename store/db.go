package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver Open asks database/sql for

	"github.com/ytrend/ytrend/internal/sqliteerr"
	"github.com/ytrend/ytrend/migrations"
	"github.com/ytrend/ytrend/search"
)

// DB is an open archive: one writer connection and a pool of readers over the
// same SQLite file. It is safe for concurrent use, and several processes may
// open the same file at once (SQLite's WAL locking arbitrates; a writer that
// finds the file locked waits up to BusyTimeout instead of failing).
type DB struct {
	path   string
	writer *sql.DB
	reader *sql.DB
	finder *sql.DB // the search engine's pool, apart from reader's (reader itself if ShortLived)
	probe  *sql.DB // one connection, for Version only

	shortLived bool // see ShortLived

	commits atomic.Int64 // see Commits

	mu        sync.Mutex
	stmts     map[string]*sql.Stmt // writer statements, prepared once
	readStmts map[string]*sql.Stmt // reader statements of the pages, prepared once (readStmt)
	search    *search.Engine       // over finder

	pageTxHook func() // runs inside each page transaction before its commit (tests' option)

	held       *sharedLock  // a writable archive's own SHARED lock (sharedlock.go); nil read-only
	self       *instance    // this process as a runs owner
	ftsWrites  atomic.Int64 // statements that changed the full-text index
	channels   channelCache // channel row ids this process has committed
	migrations fs.FS
}

// Option changes how Open prepares the database.
type Option func(*options)

type options struct {
	busyTimeout time.Duration
	readers     int
	searchers   int
	migrations  fs.FS
	noMigrate   bool
	readOnly    bool
	shortLived  bool
	search      []search.Option
	pageTxHook  func()
}

// WithBusyTimeout sets how long a connection waits for another process's lock
// before giving up with SQLITE_BUSY. The default is 10s.
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// WithSearch passes options to the search engine (package search).
func WithSearch(opts ...search.Option) Option {
	return func(o *options) { o.search = append(o.search, opts...) }
}

// WithSearchers sets the size of the search engine's own pool of read
// connections (default 4). Searches get a pool apart from every other read,
// so that slow searches never keep a chart, a video page or the runs
// waiting for a connection (unless ShortLived: there searches use the
// readers).
func WithSearchers(n int) Option { return func(o *options) { o.searchers = n } }

// WithReaders sets the size of the reader pool (default: GOMAXPROCS, at least 2).
func WithReaders(n int) Option { return func(o *options) { o.readers = n } }

// WithMigrations replaces the embedded migrations; tests use it to build
// databases at older versions or with broken migration sets.
func WithMigrations(fsys fs.FS) Option { return func(o *options) { o.migrations = fsys } }

// WithoutMigrate opens the database without applying pending migrations. The
// schema must then be brought up to date with Migrate before use.
func WithoutMigrate() Option { return func(o *options) { o.noMigrate = true } }

// ReadOnly opens an existing, migrated archive for reading only (ytrend
// serve): every connection is query_only, nothing is migrated or converted,
// so the process never takes the write lock a fetch needs. An archive that
// does not exist or has pending migrations is an error.
func ReadOnly() Option { return func(o *options) { o.readOnly = true } }

// ShortLived opens the archive for a process that runs one command and
// exits (ytrend search, chart, history, export). Searches share the reader
// pool instead of a pool of their own, and statements are prepared when a
// read first runs them instead of up front, so that the process opens one
// connection and prepares only what it runs: each connection parses the
// whole schema, and preparing a statement costs about as much as running
// it. A server or daemon keeps the default, where searches never wait for a
// connection behind pages and statements prepared once serve every request.
func ShortLived() Option { return func(o *options) { o.shortLived = true } }

// Open opens (creating if needed) the archive at path, checks its schema,
// switches it to WAL, and applies any pending migrations. An archive this
// build cannot migrate (ErrSchemaTooNew, ErrBadMigrations) is refused before
// anything in its file changes.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	o := options{busyTimeout: 10 * time.Second, readers: max(2, runtime.GOMAXPROCS(0)), searchers: 4, migrations: migrations.FS}
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" {
		return nil, errors.New("store: empty database path")
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}

	if o.readOnly {
		return openReadOnly(ctx, path, o)
	}
	if err := checkCreatable(path); err != nil {
		return nil, err
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

	db := &DB{path: path, writer: writer, stmts: map[string]*sql.Stmt{},
		migrations: o.migrations, self: newInstance(), pageTxHook: o.pageTxHook, shortLived: o.shortLived}
	// The schema first, by reading only: WAL is a property of the file, so
	// switching an archive kept in rollback-journal mode is a change, and
	// an archive this build cannot use (a newer schema, a gap in the
	// applied set) must be refused as it is. WithoutMigrate hands it over
	// unswitched, for its status; Migrate then refuses it.
	_, err = migrations.Pending(ctx, writer, o.migrations)
	usable := !errors.Is(err, ErrSchemaTooNew) && !errors.Is(err, ErrBadMigrations)
	switch {
	case sqliteerr.ReadOnlyDirectory(err):
		writer.Close()
		return nil, readOnlyDirError(path, true, err)
	case sqliteerr.NotADatabase(err):
		writer.Close()
		return nil, notADatabase(path)
	case !usable && !o.noMigrate:
		writer.Close()
		return nil, err
	}
	// Any other error (not a database, say) is ensureWAL's to report, as
	// before.
	if usable {
		if err := checkWALFiles(path); err != nil {
			writer.Close()
			return nil, err
		}
		if err := db.ensureWAL(ctx); err != nil {
			writer.Close()
			if sqliteerr.ReadOnlyDirectory(err) { // the switch, which writes
				return nil, readOnlyDirError(path, false, err)
			}
			return nil, fmt.Errorf("store: enable WAL on %s: %w", path, err)
		}
	}
	if db.held, err = holdShared(path); err != nil {
		writer.Close()
		return nil, err
	}

	reader, err := sql.Open("sqlite", dsn(path, o.busyTimeout, false))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	reader.SetMaxOpenConns(o.readers)
	reader.SetMaxIdleConns(o.readers)
	db.reader = reader
	if db.probe, err = openPool(path, o, 1); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.openSearch(path, o); err != nil {
		db.Close()
		return nil, err
	}

	if !o.noMigrate {
		if _, err := migrations.Apply(ctx, db.writer, o.migrations); err != nil {
			db.Close()
			return nil, err
		}
		db.prepareReads(ctx)
	}
	return db, nil
}

func openReadOnly(ctx context.Context, path string, o options) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("store: open %s read-only: %w", path, err)
	}
	reader, err := sql.Open("sqlite", dsn(path, o.busyTimeout, false))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	reader.SetMaxOpenConns(o.readers)
	reader.SetMaxIdleConns(o.readers)
	// The writer is a query_only connection too: Writer() users get an
	// error instead of a lock.
	writer, err := sql.Open("sqlite", dsn(path, o.busyTimeout, false))
	if err != nil {
		reader.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	db := &DB{path: path, writer: writer, reader: reader, stmts: map[string]*sql.Stmt{}, migrations: o.migrations,
		self: newInstance(), shortLived: o.shortLived}
	if db.probe, err = openPool(path, o, 1); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.openSearch(path, o); err != nil {
		db.Close()
		return nil, err
	}
	n, err := migrations.Pending(ctx, db.reader, db.migrations)
	if err == nil && n > 0 {
		err = fmt.Errorf("%w: %d pending migrations (run ytrend migrate, or any fetch)", ErrPendingMigrations, n)
	}
	if sqliteerr.ReadOnlyDirectory(err) {
		db.Close()
		return nil, readOnlyDirError(path, true, err)
	}
	if sqliteerr.NotADatabase(err) {
		db.Close()
		return nil, notADatabase(path)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s read-only: %w", path, err)
	}
	db.prepareReads(ctx)
	return db, nil
}

// readOnlyDirError says what SQLITE_READONLY_DIRECTORY means for the
// archive at path. SQLite reads an archive in WAL mode only with its -wal
// and -shm beside it: they exist while some process has the archive open
// (and then a reader that cannot write them still reads), and otherwise
// the first process to open it creates them, which a user who cannot
// create files in the directory cannot do. The one way around,
// ?immutable=1, promises SQLite that nobody changes the file while it is
// read; a directory this user cannot write says nothing of what its owner
// does, and a fetch that checkpoints under such a read can make it return
// wrong rows or SQLITE_CORRUPT, so the archive is refused with the reason
// instead. An archive in rollback-journal mode reads without any file
// beside it; writing it (or switching it to WAL) needs a journal.
func readOnlyDirError(path string, reading bool, err error) error {
	dir, name := filepath.Dir(path), filepath.Base(path)
	if reading {
		return fmt.Errorf("%w: %s: SQLite opens an archive in WAL mode, even to read it, only with its -wal and -shm beside it "+
			"(%s-wal, %s-shm); they exist while a process has the archive open, and this user cannot create them in %s "+
			"(run ytrend as a user who can, such as the archive's owner, or use a copy of the archive): %v",
			ErrReadOnlyDir, path, name, name, dir, err)
	}
	return fmt.Errorf("%w: to write %s SQLite must create %s-journal beside it, and this user cannot create files in %s "+
		"(run ytrend as a user who can, such as the archive's owner): %v", ErrReadOnlyDir, path, name, dir, err)
}

// checkFile refuses, before SQLite opens it, a path that holds something
// no archive can be, with the reason; SQLite's own words were "disk I/O
// error" (a named pipe, which SQLite's open could also block on) and
// "unable to open database file". It only asks the kernel about the path:
// opening the file here and closing it again would drop the locks another
// DB of this process holds on it (canWrite). A path that does not exist is
// the open's to create or refuse.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("store: %s is not a regular file (%s): not a ytrend archive", path, fileKind(fi.Mode()))
	}
	if !canRead(path) {
		return fmt.Errorf("store: cannot read %s: permission denied (mode %v)", path, fi.Mode().Perm())
	}
	// SQLite deletes a -wal it takes for a leftover, a named pipe too (red
	// team), and says "unable to open database file" or "disk I/O error"
	// for a directory or a pipe at either.
	var wal fs.FileInfo // the -wal beside it, nil if none
	for _, suffix := range []string{"-wal", "-shm"} {
		side, err := os.Stat(path + suffix)
		if err != nil {
			continue
		}
		if !side.Mode().IsRegular() {
			return fmt.Errorf("store: %s%s is not a regular file (%s), and SQLite keeps an archive's latest writes "+
				"and its readers' index there; left as it is (move it away)", path, suffix, fileKind(side.Mode()))
		}
		if suffix == "-wal" {
			wal = side
		}
	}
	if EmptyToSQLite(fi.Size()) && wal != nil && wal.Size() > 0 {
		return walBesideEmpty(path, fi.Size(), wal.Size())
	}
	return nil
}

// EmptyToSQLite reports whether SQLite takes a file of size bytes for an
// empty database, one it writes a new database over: a file of 0 bytes,
// and one of exactly 1, which its unix layer reports as 0 (os_unix.c,
// unixFileSize: a byte some file systems made it write into a new file).
// "echo > archive.db" leaves such a byte.
func EmptyToSQLite(size int64) bool { return size <= 1 }

// fileKind names what a path that is no regular file holds.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// notADatabase is SQLITE_NOTADB at the archive's path: a file that is not
// SQLite's (no "SQLite format 3" header). It was left as it was.
func notADatabase(path string) error {
	return fmt.Errorf("store: %s is not a SQLite database (not a ytrend archive)", path)
}

// checkCreatable refuses an archive that does not exist and cannot be
// created, with the reason: SQLite says only "unable to open database
// file", which reached the user as a failure to enable WAL.
func checkCreatable(path string) error {
	if _, err := os.Stat(path); err == nil || errors.Is(err, fs.ErrPermission) {
		return nil // there (or not ours to judge: SQLite says why)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("store: there is no archive at %s, and no directory %s to create it in", path, dir)
	case err == nil && !fi.IsDir():
		return fmt.Errorf("store: there is no archive at %s, and %s is not a directory", path, dir)
	case err == nil && !canWrite(dir):
		return fmt.Errorf("%w: there is no archive at %s, and this user cannot create one in %s", ErrReadOnlyDir, path, dir)
	}
	return nil
}

// checkWALFiles refuses, before anything is written, an archive this user
// can write whose -wal or -shm exists and this user cannot write: SQLite
// opens such a file read-only and then fails every write with "attempt to
// write a readonly database", which names neither the file nor the cause
// (ytrend run would start, and fail every fetch). A process that could
// read the archive but not write it (a read command of another user, on an
// archive whose file it cannot write in a directory it can) leaves them
// so: it had to create them to read, with the archive's mode bits but as
// their owner, and SQLite removes them only at a close that can
// checkpoint, which a read-only file cannot. A user who cannot write the
// archive itself reads it as before.
func checkWALFiles(path string) error {
	if !canWrite(path) {
		return nil
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		fi, err := os.Stat(path + suffix)
		if err != nil || canWrite(path+suffix) {
			continue // absent (SQLite creates it), or writable
		}
		return fmt.Errorf("store: open %s: %s%s is not writable by this user (mode %v), and SQLite writes an archive in WAL mode "+
			"through its -wal and -shm; a process that could read the archive but not write it probably left them "+
			"(run any ytrend command on the archive once as root: its SQLite can write them, and removes both when it "+
			"closes the archive last)", path, filepath.Base(path), suffix, fi.Mode().Perm())
	}
	return nil
}

// walBesideEmpty is checkFile's refusal of the empty file at path when the
// -wal beside it is not empty. SQLite deletes the -wal of a 0-byte database when it first
// reads it (pager.c, pagerOpenWalIfPresent), in a read-only
// open too: it takes it for a leftover. SQLite never makes that state
// itself (switching a file to WAL writes page 1 into the file before any
// -wal exists), so it means the file was truncated or replaced (a failed
// copy, a "> archive.db") after its last writes went to the -wal, which
// had not been checkpointed: those frames can hold every page of the
// archive (TestOpenRefusesAWALBesideAnEmptyFile recovers one), and
// deleting them would lose them for good. Which of the two to keep is the
// operator's call, so both are left as they are. An empty -wal holds
// nothing and is SQLite's to delete, as is one beside a missing file.
// Another process could truncate the file between this check and SQLite's
// read; nothing short of SQLite's own locks closes that window, and
// nothing short of a deliberate truncation opens it.
func walBesideEmpty(path string, size, walSize int64) error {
	return fmt.Errorf("%w: %s is empty (%d bytes), but %s-wal beside it holds %d bytes, which may be the archive's latest writes "+
		"or all of it (SQLite writes to the -wal first; the archive file was truncated or replaced since), and SQLite "+
		"would delete it on opening; both are left as they are (restore the archive file from a copy, or move "+
		"%s-wal away if it is not wanted)", ErrWALBesideEmpty, path, size, path, walSize, path)
}

// openPool opens a pool of n read-only connections: Version's probe, the
// search engine's.
func openPool(path string, o options, n int) (*sql.DB, error) {
	pool, err := sql.Open("sqlite", dsn(path, o.busyTimeout, false))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	pool.SetMaxOpenConns(max(1, n))
	pool.SetMaxIdleConns(max(1, n))
	return pool, nil
}

// openSearch gives the search engine its pool: one of its own, so that slow
// searches never keep a page waiting for a connection, or, in a short-lived
// process, the reader pool.
func (db *DB) openSearch(path string, o options) error {
	opts := o.search
	if o.shortLived {
		db.finder = db.reader
		opts = append(slices.Clip(opts), search.ShortLived())
	} else {
		var err error
		if db.finder, err = openPool(path, o, o.searchers); err != nil {
			return err
		}
	}
	db.search = search.New(db.finder, searchCategoryNames, opts...)
	return nil
}

// ensureWAL switches a new file to WAL. WAL is a property of the file, so it
// is set once rather than in the DSN (setting it on every pooled connection
// from several processes at once races on a brand-new file), and only when
// the file is not in WAL yet: asking to change the mode of a file in use by
// other processes can fail with SQLITE_BUSY without waiting, which reached
// users as "database is locked" when ytrend run and ytrend fetch started
// together.
func (db *DB) ensureWAL(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		var mode string
		err := db.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
		if err == nil && strings.EqualFold(mode, "wal") {
			return nil
		}
		if err == nil {
			// SQLite answers the request with the mode it ended up in: not
			// an error when WAL is impossible (an in-memory database, a file
			// system without shared memory), just another mode.
			err = db.writer.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
			if err == nil && strings.EqualFold(mode, "wal") {
				return nil
			}
			if err == nil {
				return fmt.Errorf("%w: the journal mode stays %q; the archive needs WAL, "+
					"so give it a file on a local file system (not :memory:)", ErrNoWAL, mode)
			}
		}
		if !sqliteerr.Busy(err) || attempt >= 100 {
			return err
		}
		// Another process is creating or converting the file right now.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dsn builds the modernc connection string. Every _pragma runs on each new
// pooled connection; _txlock=immediate makes BeginTx take the write lock up
// front, so a transaction never fails half way with SQLITE_BUSY_SNAPSHOT
// (which ignores busy_timeout).
//
// Reads go through a memory map (up to SQLite's 2 GiB cap) and a 32 MiB page
// cache per connection: without them a search spends a quarter of its time
// copying pages in with pread.
func dsn(path string, busy time.Duration, write bool) string {
	q := []string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", busy.Milliseconds()),
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(ON)",
		"_pragma=mmap_size(2147418112)",
		"_pragma=cache_size(-32768)",
	}
	if write {
		// Keep the WAL file from staying large after a burst of writes.
		q = append(q, "_pragma=journal_size_limit(67108864)", "_txlock=immediate")
	} else {
		q = append(q, "_pragma=query_only(1)")
	}
	return "file:" + escapePath(filepath.Clean(path)) + "?" + strings.Join(q, "&")
}

// escapePath escapes the characters SQLite's URI parser treats specially.
// The path is cleaned first: "//tmp/x.db" would otherwise be read as a URI
// authority ("file://tmp/x.db"), and a path is a path.
func escapePath(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

var errClosed = errors.New("store: database is closed")

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

// prepared returns the writer statement for key, preparing build() the
// first time. SavePage's multi-row statements differ only by row count, so
// there are few of them, and preparing each once saves most of a page's
// statement overhead.
func (db *DB) prepared(ctx context.Context, key string, build func() string) (*sql.Stmt, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.stmts == nil {
		return nil, errClosed
	}
	if st, ok := db.stmts[key]; ok {
		return st, nil
	}
	st, err := db.writer.PrepareContext(ctx, build())
	if err != nil {
		return nil, err
	}
	db.stmts[key] = st
	return st, nil
}

// readQueries are the pages' statements that readStmt serves, prepared
// once on the reader pool when the archive opens, after its migrations
// (preparing takes a connection of the pool, so it is done before any
// transaction holds one).
var readQueries = []string{sqlChartRuns, sqlChartRows, sqlVideo, sqlVideoRegions, sqlHistoryVideo, sqlHistoryPoints, sqlCategoryNames}

// prepareReads prepares readQueries. One that does not prepare (an archive
// opened without its migrations) is left to readStmt to prepare per use, as
// all of them are in a short-lived process (ShortLived): it shows a page or
// two, if any.
func (db *DB) prepareReads(ctx context.Context) {
	if db.shortLived {
		return
	}
	stmts := map[string]*sql.Stmt{}
	for _, q := range readQueries {
		if st, err := db.reader.PrepareContext(ctx, q); err == nil {
			stmts[q] = st
		}
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.stmts == nil { // closed meanwhile
		for _, st := range stmts {
			st.Close()
		}
		return
	}
	for q, st := range db.readStmts {
		st.Close()
		delete(db.readStmts, q)
	}
	db.readStmts = stmts
}

// readStmt returns query, one of readQueries, for use in tx (a transaction
// of the reader pool). A page's statements are few and fixed, and preparing
// one cost about as much as running it (the chart's and the video's,
// BENCHMARKS.md); database/sql keeps each connection's prepared copy, so a
// statement is parsed once per connection.
func (db *DB) readStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	db.mu.Lock()
	st, ok := db.readStmts[query]
	db.mu.Unlock()
	if !ok {
		return tx.PrepareContext(ctx, query)
	}
	return tx.StmtContext(ctx, st), nil
}

// querier is what a read needs: a pool, a connection or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Close closes both pools.
func (db *DB) Close() error {
	if db.writer != nil {
		db.unregister()
	}
	// Nothing is written any more: the last close of the file may drop the
	// process's locks, and its last connection checkpoint and delete the WAL.
	var errs []error
	errs = append(errs, db.held.release())
	db.held = nil
	db.mu.Lock()
	for _, st := range db.stmts {
		errs = append(errs, st.Close())
	}
	for _, st := range db.readStmts {
		errs = append(errs, st.Close())
	}
	db.stmts, db.readStmts = nil, nil
	db.mu.Unlock()
	if db.search != nil {
		errs = append(errs, db.search.Close())
	}
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	if db.probe != nil {
		errs = append(errs, db.probe.Close())
	}
	if db.finder != nil && db.finder != db.reader {
		errs = append(errs, db.finder.Close())
	}
	if db.writer != nil {
		errs = append(errs, db.writer.Close())
	}
	return errors.Join(errs...)
}
