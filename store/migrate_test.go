package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ytrend/ytrend/migrations"
	"github.com/ytrend/ytrend/store"
)

// embedded returns the binary's migration files in version order.
func embedded(tb testing.TB) []string {
	tb.Helper()
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(names) == 0 {
		tb.Fatalf("no embedded migrations: %v", err)
	}
	sort.Strings(names)
	return names
}

// migrationSet builds an in-memory migration set from embedded files plus
// extra ones (name -> SQL).
func migrationSet(tb testing.TB, names []string, extra map[string]string) fstest.MapFS {
	tb.Helper()
	m := fstest.MapFS{}
	for _, n := range names {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			tb.Fatal(err)
		}
		m[n] = &fstest.MapFile{Data: b}
	}
	for n, s := range extra {
		m[n] = &fstest.MapFile{Data: []byte(s)}
	}
	return m
}

func versions(ms []store.Migration) []int {
	out := []int{}
	for _, m := range ms {
		out = append(out, m.Version)
	}
	return out
}

func seq(from, to int) []int {
	out := []int{}
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

func TestMigrateFresh(t *testing.T) {
	ctx := context.Background()
	all := embedded(t)
	db, _ := openDB(t)
	st, err := migrations.Read(ctx, db.Reader(), migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := versions(st.Applied), seq(1, len(all)); !slices.Equal(got, want) || len(st.Pending) != 0 {
		t.Fatalf("applied %v pending %v, want applied %v and none pending", got, versions(st.Pending), want)
	}
	for i, m := range st.Applied {
		if m.Name != all[i] || m.AppliedAt.IsZero() {
			t.Errorf("applied[%d] = %s at %v, want %s with a time", i, m.Name, m.AppliedAt, all[i])
		}
	}
	for _, table := range []string{"runs", "channels", "videos", "video_stats", "trending_snapshots", "video_regions", "archive_totals", "video_fts"} {
		var n int
		if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = ?`, table).Scan(&n); err != nil || n != 1 {
			t.Errorf("table %s: %d, %v", table, n, err)
		}
	}
	// Migrating again applies nothing.
	applied, err := migrations.Apply(ctx, db.Writer(), migrations.FS)
	if err != nil || len(applied) != 0 {
		t.Errorf("second Migrate applied %v, %v", applied, err)
	}
}

// A database created by any earlier binary (any prefix of today's migration
// set) is upgraded on open, keeping its data.
func TestMigrateUpgradeFromEachVersion(t *testing.T) {
	ctx := context.Background()
	all := embedded(t)
	for k := 1; k < len(all); k++ {
		t.Run(all[k-1], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			old, err := store.Open(ctx, path, store.WithMigrations(migrationSet(t, all[:k], nil)))
			if err != nil {
				t.Fatalf("open at version %d: %v", k, err)
			}
			// Data written at the old version (0001 holds the archive), as
			// the binaries of that version wrote it.
			saveOldChart(t, old, "DE", t0, 1, store.Video{ID: "old1", Title: "Alte Aufnahme"})
			st, err := migrations.Read(ctx, old.Reader(), migrations.FS)
			if err != nil {
				t.Fatal(err)
			}
			if got := versions(st.Pending); !slices.Equal(got, seq(k+1, len(all))) {
				t.Errorf("pending against the full set: %v, want %v", got, seq(k+1, len(all)))
			}
			old.Close()

			db, err := store.Open(ctx, path)
			if err != nil {
				t.Fatalf("upgrade from %d: %v", k, err)
			}
			defer db.Close()
			st, err = migrations.Read(ctx, db.Reader(), migrations.FS)
			if err != nil || len(st.Pending) != 0 || len(st.Applied) != len(all) {
				t.Fatalf("after upgrade: applied %v pending %v, %v", versions(st.Applied), versions(st.Pending), err)
			}
			hits, err := db.Search(ctx, store.Query{Text: "aufnahme"})
			if err != nil || len(hits) != 1 || hits[0].VideoID != "old1" {
				t.Errorf("data from version %d after upgrade: %v, %v", k, ids(hits), err)
			}
			ftsIntegrity(t, db)
		})
	}
}

// A database migrated by a newer ytrend is refused, with a message saying
// so, and left exactly as it was.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	all := embedded(t)
	path := filepath.Join(t.TempDir(), "new.db")
	future := migrationSet(t, all, map[string]string{
		versionName(len(all)+1, "future"): `CREATE TABLE future_thing (x INTEGER) STRICT;`,
	})
	db, err := store.Open(ctx, path, store.WithMigrations(future))
	if err != nil {
		t.Fatal(err)
	}
	schemaBefore := dumpSchema(t, db)
	db.Close()

	_, err = store.Open(ctx, path)
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("open newer database: %v, want ErrSchemaTooNew", err)
	}
	for _, want := range []string{"schema version", "upgrade ytrend", "untouched"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	db, err = store.Open(ctx, path, store.WithMigrations(future))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if after := dumpSchema(t, db); after != schemaBefore {
		t.Errorf("refused open changed the schema:\nbefore %s\nafter  %s", schemaBefore, after)
	}
	// Status still tells what the database has, for `ytrend migrate --status`.
	st, err := migrations.Read(ctx, db.Reader(), migrations.FS)
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Errorf("Status against older set: %v, want ErrSchemaTooNew", err)
	}
	if got := versions(st.Applied); !slices.Equal(got, seq(1, len(all)+1)) || len(st.Pending) != 0 || st.Applied[len(all)].Name != versionName(len(all)+1, "future") {
		t.Errorf("status of a newer database: applied %v pending %v", st.Applied, versions(st.Pending))
	}
}

func versionName(v int, name string) string { return fmt.Sprintf("%04d_%s.sql", v, name) }

func dumpSchema(tb testing.TB, db *store.DB) string {
	tb.Helper()
	rows, err := db.Reader().Query(`SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_schema ORDER BY name`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		parts = append(parts, s)
	}
	var applied []string
	r2, err := db.Reader().Query(`SELECT version || ':' || name FROM schema_migrations ORDER BY version`)
	if err != nil {
		tb.Fatal(err)
	}
	defer r2.Close()
	for r2.Next() {
		var s string
		r2.Scan(&s)
		applied = append(applied, s)
	}
	return strings.Join(parts, "\n") + "\n" + strings.Join(applied, ",")
}

func TestMigrateRejectsBadSets(t *testing.T) {
	ctx := context.Background()
	ok := "CREATE TABLE t1 (x INTEGER);"
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"gap", map[string]string{"0001_a.sql": ok, "0003_c.sql": ok}},
		{"duplicate", map[string]string{"0001_a.sql": ok, "0001_b.sql": ok}},
		{"not from 1", map[string]string{"0002_b.sql": ok}},
		{"no number", map[string]string{"init.sql": ok}},
		{"short number", map[string]string{"1_init.sql": ok}},
		{"dash", map[string]string{"0001-init.sql": ok}},
		{"upper case", map[string]string{"0001_Init.sql": ok}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := fstest.MapFS{}
			for n, s := range tc.files {
				set[n] = &fstest.MapFile{Data: []byte(s)}
			}
			path := filepath.Join(t.TempDir(), "x.db")
			_, err := store.Open(ctx, path, store.WithMigrations(set))
			if !errors.Is(err, store.ErrBadMigrations) {
				t.Fatalf("Open: %v, want ErrBadMigrations", err)
			}
		})
	}
	// A database whose applied set has a hole was not migrated by ytrend.
	path := filepath.Join(t.TempDir(), "hole.db")
	set := fstest.MapFS{"0001_a.sql": {Data: []byte(ok)}, "0002_b.sql": {Data: []byte("CREATE TABLE t2 (x INTEGER);")}}
	db, err := store.Open(ctx, path, store.WithMigrations(set))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().Exec(`DELETE FROM schema_migrations WHERE version = 1`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := store.Open(ctx, path, store.WithMigrations(set)); !errors.Is(err, store.ErrBadMigrations) {
		t.Fatalf("Open with a hole in schema_migrations: %v, want ErrBadMigrations", err)
	}
}

// A failing migration leaves nothing of itself behind: it and its
// schema_migrations row are one transaction.
func TestMigrateFailureIsAtomic(t *testing.T) {
	ctx := context.Background()
	set := fstest.MapFS{
		"0001_a.sql": {Data: []byte("CREATE TABLE t1 (x INTEGER);")},
		"0002_b.sql": {Data: []byte("CREATE TABLE t2 (x INTEGER); INSERT INTO nowhere VALUES (1);")},
	}
	path := filepath.Join(t.TempDir(), "x.db")
	if _, err := store.Open(ctx, path, store.WithMigrations(set)); err == nil || !strings.Contains(err.Error(), "0002_b.sql") {
		t.Fatalf("Open: %v, want an error naming 0002_b.sql", err)
	}
	db, err := store.Open(ctx, path, store.WithMigrations(set), store.WithoutMigrate())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := migrations.Read(ctx, db.Reader(), set)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(versions(st.Applied), []int{1}) || !slices.Equal(versions(st.Pending), []int{2}) {
		t.Errorf("applied %v pending %v, want [1] and [2]", versions(st.Applied), versions(st.Pending))
	}
	var n int
	db.Reader().QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 't2'`).Scan(&n)
	if n != 0 {
		t.Error("table t2 of the failed migration exists")
	}
}

func TestStatusBeforeMigrate(t *testing.T) {
	ctx := context.Background()
	all := embedded(t)
	db, _ := openDB(t, store.WithoutMigrate())
	st, err := migrations.Read(ctx, db.Reader(), migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Applied) != 0 || !slices.Equal(versions(st.Pending), seq(1, len(all))) {
		t.Fatalf("fresh file: applied %v pending %v", versions(st.Applied), versions(st.Pending))
	}
	applied, err := db.Migrate(ctx)
	if err != nil || !slices.Equal(applied, seq(1, len(all))) {
		t.Fatalf("Migrate: %v, %v", applied, err)
	}
	st, err = db.MigrationStatus(ctx)
	if err != nil || len(st.Pending) != 0 || len(st.Applied) != len(all) {
		t.Fatalf("after Migrate: %v %v %v", versions(st.Applied), versions(st.Pending), err)
	}
}

// Several processes opening a brand-new file at once (ytrend run and a
// fetch started together) all succeed and apply each migration once.
func TestMigrateConcurrentOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "race.db")
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := store.Open(ctx, path)
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, distinct int
	db.Reader().QueryRow(`SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&n, &distinct)
	if n != len(embedded(t)) || distinct != n {
		t.Errorf("schema_migrations has %d rows (%d distinct), want %d", n, distinct, len(embedded(t)))
	}
}

// Opening an up-to-date archive and searching it only read: they work while
// another process holds the write lock for longer than the busy timeout.
func TestOpenAndSearchDuringAnotherWrite(t *testing.T) {
	ctx := context.Background()
	db, path := openDB(t)
	saveChart(t, db, "US", t0, 1, store.Video{ID: "v", Title: "locked out"})

	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE runs SET pages = pages`); err != nil {
		t.Fatal(err)
	}

	reader, err := store.Open(ctx, path, store.WithBusyTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatalf("open during another write: %v", err)
	}
	defer reader.Close()
	hits, err := reader.Search(ctx, store.Query{Text: "locked"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search during another write: %v %v", ids(hits), err)
	}
	// A write, by contrast, waits for the lock and gives up after the busy
	// timeout.
	if _, err := reader.StartRun(ctx, "US", store.TriggerCLI, t0); err == nil {
		t.Error("write succeeded while another connection held the write lock")
	}
}

// An archive this build cannot use is refused before anything in its file
// changes: Open, migrating or not, does not first switch an archive kept in
// rollback-journal mode (a copy made by sqlite3's .backup, say) to WAL, and
// leaves no -wal, -shm or -journal beside it.
func TestOpenRefusesAnArchiveAsItIs(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, sql string
		want      error
	}{
		{"newer schema", `INSERT INTO schema_migrations(version, name, applied_at) VALUES (99, '0099_future.sql', 0)`, store.ErrSchemaTooNew},
		{"gap", `DELETE FROM schema_migrations WHERE version = 2`, store.ErrBadMigrations},
	}
	opens := []struct {
		name string
		open func(path string) error
	}{
		{"Open", func(path string) error {
			db, err := store.Open(ctx, path)
			if err == nil {
				db.Close()
			}
			return err
		}},
		{"Open without migrating, then Migrate", func(path string) error {
			db, err := store.Open(ctx, path, store.WithoutMigrate())
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.Migrate(ctx)
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "archive.db")
			db, err := store.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			raw.SetMaxOpenConns(1)
			if _, err := raw.Exec(c.sql); err != nil {
				t.Fatal(err)
			}
			var mode string
			if err := raw.QueryRow(`PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil || mode != "delete" {
				t.Fatalf("journal mode %q, %v; want delete", mode, err)
			}
			raw.Close()
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range opens {
				if err := o.open(path); !errors.Is(err, c.want) {
					t.Errorf("%s: %v, want %v", o.name, err, c.want)
				}
				after, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(after, before) {
					t.Fatalf("%s changed the archive it refused (header bytes 18-19 %v, were %v: 1 1 is rollback journal, 2 2 WAL)",
						o.name, after[18:20], before[18:20])
				}
				for _, suffix := range []string{"-wal", "-shm", "-journal"} {
					if _, err := os.Stat(path + suffix); err == nil {
						t.Errorf("%s left %s behind", o.name, path+suffix)
					}
				}
			}
		})
	}
}

// A read-only open, short-lived or not, refuses an archive whose schema is
// not exactly this binary's (older, newer, or not an archive yet), and
// leaves it as it was; an archive at the current version opens.
func TestOpenReadOnlyRefusesOtherSchemas(t *testing.T) {
	ctx := context.Background()
	all := embedded(t)
	future := migrationSet(t, all, map[string]string{versionName(len(all)+1, "future"): `CREATE TABLE future_things (id INTEGER PRIMARY KEY)`})
	cases := []struct {
		name string
		set  fs.FS // the set the archive is built with; nil: an empty file
		want string
	}{
		{"current", migrations.FS, ""},
		{"older by one", migrationSet(t, all[:len(all)-1], nil), "1 pending migrations"},
		{"first version only", migrationSet(t, all[:1], nil), fmt.Sprintf("%d pending migrations", len(all)-1)},
		{"empty file", nil, fmt.Sprintf("%d pending migrations", len(all))},
		{"newer", future, "schema version"},
	}
	for _, c := range cases {
		for _, short := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/short-lived=%v", c.name, short), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "archive.db")
				var before string
				if c.set != nil {
					db, err := store.Open(ctx, path, store.WithMigrations(c.set))
					if err != nil {
						t.Fatal(err)
					}
					before = dumpSchema(t, db)
					db.Close()
				} else if err := os.WriteFile(path, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				opts := []store.Option{store.ReadOnly()}
				if short {
					opts = append(opts, store.ShortLived())
				}
				db, err := store.Open(ctx, path, opts...)
				if c.want == "" {
					if err != nil {
						t.Fatalf("read-only open of a current archive: %v", err)
					}
					if hits, err := db.Search(ctx, store.Query{Text: "anything"}); err != nil || len(hits) != 0 {
						t.Errorf("search: %v, %v", hits, err)
					}
					db.Close()
					return
				}
				if err == nil {
					db.Close()
					t.Fatalf("read-only open succeeded, want an error saying %q", c.want)
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Errorf("read-only open: %v, want it to say %q", err, c.want)
				}
				if pending := strings.Contains(c.want, "pending"); errors.Is(err, store.ErrPendingMigrations) != pending {
					t.Errorf("read-only open: %v; is ErrPendingMigrations %v, want %v", err, !pending, pending)
				}
				if c.set == nil {
					if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
						t.Errorf("the empty file changed: %v, %v", fi, err)
					}
					return
				}
				db, err = store.Open(ctx, path, store.WithMigrations(c.set))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if after := dumpSchema(t, db); after != before {
					t.Errorf("refused open changed the schema:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// An archive that is not there, where none can be created, is refused with
// the reason; SQLite says only "unable to open database file".
func TestOpenSaysWhyNoArchiveCanBeCreated(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "a.db"), "no directory " + filepath.Join(dir, "missing")},
		{filepath.Join(file, "a.db"), file + " is not a directory"},
	} {
		db, err := store.Open(context.Background(), c.path)
		if err == nil {
			db.Close()
			t.Fatalf("Open(%s) succeeded", c.path)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s): %v; want it to say %q", c.path, err, c.want)
		}
	}
}
