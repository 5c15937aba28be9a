package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// refusedArchives are archives this ytrend cannot migrate: a newer schema,
// and an applied set with a gap (want: what the refusal names).
var refusedArchives = []struct {
	name, sql, want string
}{
	{"newer schema", `INSERT INTO schema_migrations(version, name, applied_at) VALUES (99, '0099_future.sql', 0)`, "newer"},
	{"gap", `DELETE FROM schema_migrations WHERE version = 2`, "gap"},
}

// TestReadCommandsLeaveAnArchiveTheyRefuseAlone: search, chart, history
// and export refuse an archive this ytrend cannot migrate (a newer schema,
// or an applied set with a gap) and leave its file as it was, byte for byte:
// in particular they do not switch an archive kept in rollback-journal mode
// (a copy made by sqlite3's .backup, say) to WAL before refusing it, which
// the usual open, their fallback for a missing or unmigrated archive, does
// first.
func TestReadCommandsLeaveAnArchiveTheyRefuseAlone(t *testing.T) {
	t.Parallel()
	for _, c := range refusedArchives {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, sim.Config{})
			refuseAsItIs(w, c.sql, c.want, [][]string{{"search", "x"}, {"chart", "US"}, {"history", "dQw4w9WgXcQ"}, {"export", "--out", "x.csv"}})
		})
	}
}

// TestWritingCommandsLeaveAnArchiveTheyRefuseAlone: so do the commands
// that open the archive to write it (store.Open checks the schema, reading
// only, before it switches the file to WAL), and serve.
func TestWritingCommandsLeaveAnArchiveTheyRefuseAlone(t *testing.T) {
	t.Parallel()
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	for _, c := range refusedArchives {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, sim.Config{})
			w.write("US_youtube_trending_data.csv", header+
				`plain000001,A plain title,2020-08-11T19:20:14Z,UC2,Channel,22,2020-08-12T00:00:00Z,[None],10,1,0,1,https://i.ytimg.com/vi/plain000001/default.jpg,False,False,text`+"\n")
			refuseAsItIs(w, c.sql, c.want, [][]string{
				{"migrate"}, {"migrate", "--status"}, {"fetch", "US"}, {"run"}, {"import", "US_youtube_trending_data.csv"},
				{"serve", "--listen", "127.0.0.1:0"}, {"runs"}, {"optimize"}, {"quota", "status"},
			})
		})
	}
}

// refuseAsItIs makes w's archive one this ytrend cannot use (sql on a
// migrated archive), kept in rollback-journal mode, and checks that each
// command refuses it, naming want, and leaves it byte for byte as it was,
// with no -wal, -shm or -journal beside it.
func refuseAsItIs(w *world, sqlText, want string, commands [][]string) {
	t := w.t
	t.Helper()
	w.mustRun("migrate")
	path := w.env["YTREND_DB"]
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	if _, err := raw.Exec(sqlText); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := raw.QueryRow(`PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil || mode != "delete" {
		t.Fatalf("journal mode %q, %v; want delete", mode, err)
	}
	raw.Close()
	before := readArchive(t, path)
	for _, args := range commands {
		r := w.runWithin(2*time.Minute, args...)
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("ytrend %v: exit %d, stderr %q; want a refusal naming the %s", args, r.code, r.stderr, want)
		}
		if after := readArchive(t, path); !bytes.Equal(after, before) {
			t.Fatalf("ytrend %v changed the archive it refused (%d bytes, was %d; header bytes 18-19 %v, were %v: 1 1 is rollback journal, 2 2 WAL)",
				args, len(after), len(before), after[18:20], before[18:20])
		}
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(path + suffix); err == nil {
				t.Errorf("ytrend %v left %s behind", args, path+suffix)
			}
		}
	}
}

// runWithin is run for a command that must end by itself (a daemon that
// should refuse to start): one still running after d is killed and fails
// the test, instead of holding it until go test's own timeout.
func (w *world) runWithin(d time.Duration, args ...string) result {
	w.t.Helper()
	return w.runCmd(w.command(args...), d)
}

func readArchive(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadCommandsInAReadOnlyDirectory: an archive in a directory this user
// cannot write. With no process holding it open, SQLite cannot create the
// -wal and -shm it needs to read an archive in WAL mode (and ?immutable=1
// would promise that nobody writes the file meanwhile, which the directory
// does not tell): each read command says so, naming the directory, instead
// of the fallback's "enable WAL", and creates nothing. While a process
// holds the archive open those files exist, and the same commands read it
// as its owner does.
func TestReadCommandsInAReadOnlyDirectory(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	dir := filepath.Join(w.dir, "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "archive.db")
	w.env["YTREND_DB"] = path
	w.mustRun("fetch", "US")
	export := w.mustRun("export").stdout
	id := csvRows(t, export)[1][0]
	commands := [][]string{{"search", "the"}, {"chart", "US"}, {"history", id}, {"export"}}
	want := map[string]string{} // what the archive's owner reads
	for _, args := range commands {
		want[strings.Join(args, " ")] = w.mustRun(args...).stdout
	}
	unprivileged(t, w.dir)
	readOnlyDir(t, dir)

	for _, args := range commands {
		r := w.runUnprivileged(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "cannot create them in "+dir) || !strings.Contains(r.stderr, "archive.db-wal") ||
			strings.Contains(r.stderr, "enable WAL") {
			t.Errorf("ytrend %v in a read-only directory: exit %d, stderr %q; want a refusal naming %s and the files it cannot create there",
				args, r.code, r.stderr, dir)
		}
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"archive.db"}) {
		t.Errorf("the read-only directory holds %v, want the archive alone", names)
	}

	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w.openDB() // held open until the test ends: its -wal and -shm exist
	readOnlyDir(t, dir)
	for _, args := range commands {
		r := w.runUnprivileged(args...)
		if r.code != 0 || r.stdout != want[strings.Join(args, " ")] {
			t.Errorf("ytrend %v while another process holds the archive: exit %d, stderr %q; stdout differs from the owner's: %v",
				args, r.code, r.stderr, r.stdout != want[strings.Join(args, " ")])
		}
	}
}

// runUnprivileged is run as a user whom file modes bind: as root, chmod
// does not keep a process from writing, so there the command runs as
// nobody (65534), which unprivileged lets reach w's files.
func (w *world) runUnprivileged(args ...string) result {
	w.t.Helper()
	if os.Geteuid() == 0 {
		return w.runAs(65534, args...)
	}
	return w.run(args...)
}

// runAs is run as the user uid (group uid too), which only root may ask.
func (w *world) runAs(uid uint32, args ...string) result {
	w.t.Helper()
	cmd := w.command(args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	return w.runCmd(cmd, 0)
}

// unprivileged opens the way to dir (a world's directory) for the user
// runUnprivileged runs as: t.TempDir's own parent is private to its owner.
func unprivileged(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// readOnlyDir makes dir unwritable (until the test ends).
func readOnlyDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestWriterRefusesWALFilesItCannotWrite: a user who can read an archive
// but not write it, in a directory they can write (here: nobody, on an
// archive of uid 1000 in a shared directory), reads it, and SQLite leaves
// the -wal and -shm it had to create, as nobody's: only a close that can
// checkpoint removes them, and nobody's cannot. The archive's owner then
// cannot write them, and SQLite would fail its every write with "attempt
// to write a readonly database", naming neither: ytrend refuses at open
// instead, saying which file and what mends it, and
// root's open mends it (its SQLite writes them and removes both at its
// last close).
func TestWriterRefusesWALFilesItCannotWrite(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("runs ytrend as two other users, which needs root")
	}
	w := newWorld(t, sim.Config{})
	dir := filepath.Join(w.dir, "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	path := filepath.Join(dir, "archive.db")
	w.env["YTREND_DB"] = path
	w.mustRun("fetch", "US")
	const owner = 1000
	if err := os.Chown(path, owner, owner); err != nil {
		t.Fatal(err)
	}
	unprivileged(t, w.dir)
	chart := w.mustRun("chart", "US").stdout

	if r := w.runAs(65534, "chart", "US"); r.code != 0 || r.stdout != chart {
		t.Fatalf("chart as nobody: exit %d, stderr %q", r.code, r.stderr)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"archive.db", "archive.db-shm", "archive.db-wal"}) {
		t.Fatalf("after nobody's read the directory holds %v; the test expects the -wal and -shm SQLite could not remove", names)
	}
	before := readArchive(t, path)
	r := w.runAs(owner, "fetch", "US")
	if r.code != 1 || !strings.Contains(r.stderr, "archive.db-wal is not writable by this user") || !strings.Contains(r.stderr, "as root") {
		t.Errorf("fetch by the archive's owner: exit %d, stderr %q; want a refusal naming archive.db-wal and the mend", r.code, r.stderr)
	}
	if !bytes.Equal(readArchive(t, path), before) {
		t.Error("the refused fetch changed the archive")
	}

	w.mustRun("runs")
	if names := dirNames(t, dir); !slices.Equal(names, []string{"archive.db"}) {
		t.Errorf("after root's open the directory holds %v, want the archive alone", names)
	}
	if r := w.runAs(owner, "fetch", "US"); r.code != 0 {
		t.Errorf("fetch by the archive's owner after root's open: exit %d, stderr %q", r.code, r.stderr)
	}
}

// An archive that is not there and cannot be created there is refused by
// a writing command with that reason; SQLite itself says only "unable to
// open database file", which reached the user as a failure to enable WAL.
// A read command refuses it as it refuses any missing archive, creating
// nothing.
func TestMissingArchiveWhereNoneCanBeCreated(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	dir := filepath.Join(w.dir, "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unprivileged(t, w.dir)
	readOnlyDir(t, dir)
	for _, c := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "archive.db"), "this user cannot create one in " + dir},
		// ytrend makes a missing directory itself, and says when it cannot.
		{filepath.Join(w.dir, "missing", "archive.db"), "create archive directory: mkdir " + filepath.Join(w.dir, "missing")},
	} {
		w.env["YTREND_DB"] = c.path
		for _, args := range [][]string{{"search", "the"}, {"chart", "US"}, {"fetch", "US"}} {
			want := c.want
			if args[0] != "fetch" {
				want = "no archive at " + c.path
			}
			r := w.runUnprivileged(args...)
			if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "enable WAL") {
				t.Errorf("ytrend %v with the archive %s: exit %d, stderr %q; want a refusal saying %q",
					args, c.path, r.code, r.stderr, want)
			}
		}
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("the read-only directory holds %v, want nothing", names)
	}
}

// TestReadCommandsRefuseAMissingArchive: a command that only reads, given
// a path where there is no archive (a mistyped --db, say), says so, naming
// the path and the commands that create one, and creates nothing there:
// no archive, no -wal or -shm, no directory. Before, it created an empty
// archive and answered that it found nothing. The commands that write
// still create the archive, and then the same reads work.
func TestReadCommandsRefuseAMissingArchive(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	readers := [][]string{
		{"search", "x"}, {"chart", "US"}, {"history", "dQw4w9WgXcQ"}, {"export", "--out", "x.csv"}, {"runs"},
		{"optimize"}, {"migrate", "--status"}, {"quota", "status"}, {"serve", "--listen", "127.0.0.1:0"},
	}
	for _, path := range []string{filepath.Join(w.dir, "typo.db"), filepath.Join(w.dir, "typo", "archive.db")} {
		for _, args := range readers {
			before := dirNames(t, w.dir)
			r := w.runWithin(2*time.Minute, append([]string{"--db", path}, args...)...)
			want := "no archive at " + path + ` (create one with "ytrend fetch", "ytrend import" or "ytrend run"`
			if r.code != exitError || !strings.Contains(r.stderr, want) {
				t.Errorf("ytrend --db %s %v: exit %d, stderr %q; want exit %d saying %q", path, args, r.code, r.stderr, exitError, want)
			}
			if after := dirNames(t, w.dir); !slices.Equal(after, before) {
				t.Errorf("ytrend --db %s %v: the directory held %v, now %v; want nothing created", path, args, before, after)
			}
		}
	}

	path := filepath.Join(w.dir, "typo", "archive.db")
	w.mustRun("--db", path, "fetch", "US")
	for _, args := range [][]string{{"search", "x"}, {"chart", "US"}, {"export", "--out", "x.csv"}, {"runs"}, {"quota", "status"}} {
		w.mustRun(append([]string{"--db", path}, args...)...)
	}
}

// TestReadCommandsRefuseAnEmptyFile: a 0-byte file at the archive's path
// (a touch, a copy that failed, a truncation) is no archive either. SQLite
// takes it for an empty database, and a read command took it for one to
// migrate: it wrote a new archive into the file and answered that it found
// nothing (red team). Now it says the file is empty, exit 1, and leaves it
// as it was, with nothing beside it. The commands that write initialise it,
// as SQLite itself would and as they create a missing archive.
func TestReadCommandsRefuseAnEmptyFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	path := filepath.Join(w.dir, "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	readers := [][]string{
		{"search", "x"}, {"chart", "US"}, {"history", "dQw4w9WgXcQ"}, {"export", "--out", "x.csv"}, {"runs"},
		{"optimize"}, {"migrate", "--status"}, {"quota", "status"}, {"serve", "--listen", "127.0.0.1:0"},
	}
	names := dirNames(t, w.dir)
	for _, args := range readers {
		r := w.runWithin(2*time.Minute, append([]string{"--db", path}, args...)...)
		want := path + ` is empty: not a ytrend archive (create one with "ytrend fetch", "ytrend import" or "ytrend run"`
		if r.code != exitError || !strings.Contains(r.stderr, want) {
			t.Errorf("ytrend --db %s %v: exit %d, stderr %q; want exit %d saying %q", path, args, r.code, r.stderr, exitError, want)
		}
		after, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if after.Size() != 0 || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("ytrend %v wrote the empty file: %d bytes, modified %s (was %s)", args, after.Size(), after.ModTime(), before.ModTime())
		}
		if now := dirNames(t, w.dir); !slices.Equal(now, names) {
			t.Errorf("ytrend %v: the directory held %v, now %v; want nothing created", args, names, now)
		}
	}

	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	w.write("US_youtube_trending_data.csv", header+
		`plain000001,A plain title,2020-08-11T19:20:14Z,UC2,Channel,22,2020-08-12T00:00:00Z,[None],10,1,0,1,https://i.ytimg.com/vi/plain000001/default.jpg,False,False,text`+"\n")
	for _, args := range [][]string{{"migrate"}, {"import", "US_youtube_trending_data.csv"}, {"fetch", "US"}} {
		p := filepath.Join(w.dir, args[0]+".db")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		w.mustRun(append([]string{"--db", p}, args...)...)
		if out := w.mustRun("--db", p, "migrate", "--status").stdout; strings.Contains(out, "pending") || !strings.Contains(out, "0001_") {
			t.Errorf("ytrend %v on an empty file left it unmigrated:\n%s", args, out)
		}
		if args[0] != "migrate" {
			if rows := csvRows(t, w.mustRun("--db", p, "export").stdout); len(rows) < 2 {
				t.Errorf("ytrend %v on an empty file: the export holds %d rows, want the header and the charts", args, len(rows))
			}
		}
	}
}

// TestReadCommandsOnAByteOrBesideAWAL: SQLite takes a file of 1 byte for an
// empty one too ("echo > archive.db" leaves one), and wrote a new archive
// over it from a read command (red team); and a read command on an empty
// file with a non-empty -wal beside it sent the user to "ytrend fetch",
// where the -wal, which may hold the whole archive, is the reason to stop.
func TestReadCommandsOnAByteOrBesideAWAL(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	byte1 := filepath.Join(w.dir, "byte.db")
	if err := os.WriteFile(byte1, []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withWAL := filepath.Join(w.dir, "wal.db")
	if err := os.WriteFile(withWAL, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wal := []byte(strings.Repeat("w", 4096)) // not SQLite's, but SQLite would delete it all the same
	if err := os.WriteFile(withWAL+"-wal", wal, 0o644); err != nil {
		t.Fatal(err)
	}
	names := dirNames(t, w.dir)
	for _, tc := range []struct{ path, want string }{
		{byte1, byte1 + " is empty: not a ytrend archive"},
		{withWAL, withWAL + "-wal beside it holds 4096 bytes"},
	} {
		for _, args := range [][]string{{"search", "x"}, {"runs"}} {
			r := w.run(append([]string{"--db", tc.path}, args...)...)
			if r.code != exitError || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("ytrend --db %s %v: exit %d, stderr %q; want exit %d saying %q", tc.path, args, r.code, r.stderr, exitError, tc.want)
			}
		}
	}
	if got, err := os.ReadFile(byte1); err != nil || string(got) != "\n" {
		t.Errorf("the 1-byte file now holds %d bytes (%v); want it as it was", len(got), err)
	}
	if got, err := os.ReadFile(withWAL + "-wal"); err != nil || string(got) != string(wal) {
		t.Errorf("the -wal now holds %d bytes (%v); want its 4096 as they were", len(got), err)
	}
	if now := dirNames(t, w.dir); !slices.Equal(now, names) {
		t.Errorf("the directory held %v, now %v; want nothing created", names, now)
	}
}

// TestQuotaStatusOnRedisWithoutAnArchive: with the budget on Redis, the
// archive is only this host's record of its grants, which a host that
// has never spent does not have: quota status reads the shared budget
// without creating one. (With the embedded ledger the archive is the
// budget, and a missing one is refused as every read command refuses it.)
func TestQuotaStatusOnRedisWithoutAnArchive(t *testing.T) {
	t.Parallel()
	redistest.Client(t)
	w := newWorld(t, sim.Config{})
	w.env["REDIS_URL"] = redistest.URL()
	w.config("credential: " + redistest.Prefix(t) + "\n")
	before := dirNames(t, w.dir)
	st := decode[quotaStatusJSON](t, w.mustRun("quota", "status", "--json").stdout)
	if len(st.Limits) == 0 || st.Limits[0].Used != 0 {
		t.Errorf("status %+v; want the fresh credential's limits, nothing used", st)
	}
	if after := dirNames(t, w.dir); !slices.Equal(after, before) {
		t.Errorf("quota status created %v (the directory held %v)", after, before)
	}
}

// TestArchivePathThatIsNoArchive: a named pipe, a file this user cannot
// read, or a file that is not SQLite's at the archive's path got SQLite's
// words ("disk I/O error", "unable to open database file", "file is not a
// database"), which name neither the path nor the reason (red team). Each
// now says what the path holds, exit 1, for the commands that read and
// those that write alike; the pipe is never opened (an open can block on
// one), and nothing is written or created.
func TestArchivePathThatIsNoArchive(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	fifo := filepath.Join(w.dir, "pipe.db")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(w.dir, "notes.db")
	if err := os.WriteFile(text, []byte(strings.Repeat("not an archive\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(w.dir, "locked.db")
	w.mustRun("--db", locked, "migrate")
	if err := os.Chmod(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	unprivileged(t, w.dir) // runUnprivileged's user must reach the files

	commands := [][]string{{"search", "x"}, {"runs"}, {"quota", "status"}, {"migrate"}, {"fetch", "US", "--pages", "1"}}
	for _, tc := range []struct {
		path, want string
	}{
		{fifo, fifo + " is not a regular file (a named pipe): not a ytrend archive"},
		{text, text + " is not a SQLite database (not a ytrend archive)"},
		{locked, "cannot read " + locked + ": permission denied"},
	} {
		before, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		names := dirNames(t, w.dir)
		for _, args := range commands {
			cmd := w.command(append([]string{"--db", tc.path}, args...)...)
			if tc.path == locked && os.Geteuid() == 0 {
				// root reads any file: the user nobody cannot.
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			r := w.runCmd(cmd, time.Minute)
			if r.code != exitError || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("ytrend --db %s %v: exit %d, stderr %q; want exit %d saying %q", tc.path, args, r.code, r.stderr, exitError, tc.want)
			}
			after, err := os.Stat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
				t.Errorf("ytrend %v changed %s: %v %d bytes, modified %s (was %v %d bytes, %s)", args, tc.path,
					after.Mode(), after.Size(), after.ModTime(), before.Mode(), before.Size(), before.ModTime())
			}
			if now := dirNames(t, w.dir); !slices.Equal(now, names) {
				t.Errorf("ytrend %v on %s: the directory held %v, now %v; want nothing created", args, tc.path, names, now)
			}
		}
	}
	if got := w.sim.TotalRequests(); got != 0 {
		t.Errorf("%d requests reached the API", got)
	}
}
