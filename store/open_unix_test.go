//go:build unix

package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ytrend/ytrend/store"
)

// TestOpenRefusesWhatIsNoArchive: a named pipe (never opened: an open can
// block on one) and a file that is not SQLite's are refused with what the
// path holds, read-only or not, and left as they were.
func TestOpenRefusesWhatIsNoArchive(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.db")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	text := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(text, []byte("not an archive\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "store: " + fifo + " is not a regular file (a named pipe): not a ytrend archive"},
		{text, "store: " + text + " is not a SQLite database (not a ytrend archive)"},
	} {
		for _, opts := range [][]store.Option{nil, {store.ReadOnly()}} {
			db, err := store.Open(context.Background(), tc.path, opts...)
			if err == nil {
				db.Close()
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("Open(%s, %d options) = %v, want %q", tc.path, len(opts), err, tc.want)
			}
		}
	}
	if got, err := os.ReadFile(text); err != nil || string(got) != "not an archive\n" {
		t.Errorf("the file now holds %q (%v)", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries in the directory, want the 2 files alone", len(entries))
	}
}

// TestOpenRefusesASideFileThatIsNoFile: a named pipe at an archive's -wal
// was deleted by SQLite as a leftover, and a directory at its -shm failed
// with "disk I/O error" (red team). Both are refused, named and left.
func TestOpenRefusesASideFileThatIsNoFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "archive.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, side := range []struct {
		suffix, kind string
		make         func(string) error
	}{
		{"-wal", "a named pipe", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"-shm", "a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		os.Remove(path + "-wal")
		os.Remove(path + "-shm")
		if err := side.make(path + side.suffix); err != nil {
			t.Fatal(err)
		}
		want := "store: " + path + side.suffix + " is not a regular file (" + side.kind + ")"
		for _, opts := range [][]store.Option{nil, {store.ReadOnly()}} {
			db, err := store.Open(ctx, path, opts...)
			if err == nil {
				db.Close()
			}
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Open with %s at %s (%d options) = %v, want %q...", side.kind, side.suffix, len(opts), err, want)
			}
			if fi, err := os.Stat(path + side.suffix); err != nil || fi.Mode().IsRegular() {
				t.Fatalf("%s at %s: now %v, %v; want it left as it was", side.kind, side.suffix, fi, err)
			}
		}
		if err := os.Remove(path + side.suffix); err != nil {
			t.Fatal(err)
		}
	}
}
