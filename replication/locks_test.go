package replication_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/testkit/archivetest"
)

// otherProcess opens the archive in another process, counts its videos and
// closes it. That process is python3's sqlite3 module, not ytrend: the
// SQLite that ytrend embeds (modernc, 3.5x) declines to delete a WAL while
// another process holds the -shm's DMS lock (unixIsSharingShmNode, "extra
// robustness in cases where database file locks have been erroneously
// deleted"), but any older SQLite on the host (python's, the sqlite3 shell,
// a backup script) trusts the database file's locks alone.
func otherProcess(t *testing.T, path string) int {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is needed as the other SQLite process")
		}
		t.Skip("python3 is needed as the other SQLite process")
	}
	out, err := exec.Command(py, "-c", `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n = c.execute("SELECT count(*) FROM videos").fetchone()[0]
c.close()
print(n)`, path).CombinedOutput()
	if err != nil {
		t.Fatalf("other process: %v\n%s", err, out)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("other process: %s", out)
	}
	return n
}

// deletedFiles lists this process's open files whose name starts with
// prefix and that were unlinked.
func deletedFiles(t *testing.T, prefix string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var out []string
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(l, prefix) && strings.HasSuffix(l, " (deleted)") {
			out = append(out, l)
		}
	}
	return out
}

// TestStopKeepsTheProcessLocks: SQLite's locks are POSIX advisory (fcntl)
// locks, which belong to the process, and closing ANY descriptor of the
// file drops all of them (sqlite.org/howtocorrupt.html, 2.2). Litestream
// keeps a descriptor of the archive open while it streams and closes it
// when it stops (DB.Close). When a term's stream stops in a process that
// goes on using the archive (a term ends and the next begins, in ytrend
// run), that process's SHARED lock must survive: else the next other
// process to close the archive believes it was the last user, checkpoints
// and deletes the -wal and -shm, and every later write of this process
// goes into the deleted WAL, seen by no one else.
func TestStopKeepsTheProcessLocks(t *testing.T) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	saveCharts(t, db, 0, 1)
	url := fileURL(t)

	// One term streams, then ends; the next begins in the same process.
	s := start(t, path, []string{url}, 7)
	saveCharts(t, db, 50, 1)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	start(t, path, []string{url}, 8)

	if got := otherProcess(t, path); got != 100 {
		t.Fatalf("the other process counted %d videos, want 100", got)
	}
	if gone := deletedFiles(t, path); len(gone) > 0 {
		t.Errorf("after another process closed the archive, this one holds deleted files: %v", gone)
	}
	saveCharts(t, db, 100, 1)
	if got := otherProcess(t, path); got != 150 {
		t.Errorf("after this process stored a third page, another process counts %d videos, want 150: the write went into a deleted WAL", got)
	}
}
