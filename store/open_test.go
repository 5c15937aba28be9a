package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/store"
)

// TestOpenWithoutWAL: a database that cannot be put in WAL mode (here an
// in-memory one) is a clear error at once. It used to spin at 100% CPU
// forever: the retry loop's continue skipped its own limit.
func TestOpenWithoutWAL(t *testing.T) {
	t.Parallel()
	done := make(chan error, 1)
	go func() {
		db, err := store.Open(context.Background(), ":memory:")
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrNoWAL) {
			t.Errorf("Open(:memory:) = %v, want ErrNoWAL", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Open(:memory:) has not returned after 30s: it spins")
	}
}

// TestOpenPathIsAPath: "//tmp/x.db" is the file /tmp/x.db, not a URI with
// an authority ("invalid uri authority").
func TestOpenPathIsAPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), "/"+dir+"//archive.db")
	if err != nil {
		t.Fatalf("Open(//...): %v", err)
	}
	db.Close()
	if _, err := os.Stat(filepath.Join(dir, "archive.db")); err != nil {
		t.Errorf("the archive is not at the cleaned path: %v", err)
	}
}

// TestOpenRefusesAWALBesideAnEmptyFile: SQLite deletes the -wal beside a
// 0-byte database when it first reads it, taking it for a leftover. Here
// the -wal is a live archive's, copied before any checkpoint, beside an
// empty file, as a truncated or failed-copy archive leaves it: it holds
// every page of the archive. Open, to write or to read, refuses it with
// an error naming both files and leaves both byte for byte as they were;
// the copy is then recovered from the -wal alone, which shows what the
// deletion would have lost.
func TestOpenRefusesAWALBesideAnEmptyFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	live, err := store.Open(ctx, filepath.Join(dir, "live.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(filepath.Join(dir, "live.db-wal"))
	live.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(wal) < 2*4096 {
		t.Fatalf("the live archive's -wal holds %d bytes; want its migrations' pages", len(wal))
	}
	// A file of 1 byte ("echo > archive.db") is empty to SQLite too.
	for _, content := range []string{"", "\n"} {
		path := filepath.Join(dir, fmt.Sprintf("archive%d.db", len(content)))
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+"-wal", wal, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			opts []store.Option
		}{{"write", nil}, {"read-only", []store.Option{store.ReadOnly()}}} {
			db, err := store.Open(ctx, path, tc.opts...)
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, store.ErrWALBesideEmpty) || !strings.Contains(err.Error(), fmt.Sprintf("%s is empty (%d bytes)", path, len(content))) ||
				!strings.Contains(err.Error(), fmt.Sprintf("%s-wal beside it holds %d bytes", path, len(wal))) {
				t.Errorf("Open (%s) = %v; want ErrWALBesideEmpty naming %s and %s-wal", tc.name, err, path, path)
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != content {
				t.Fatalf("Open (%s) changed the empty file: %q, %v", tc.name, got, err)
			}
			if got, err := os.ReadFile(path + "-wal"); err != nil || !bytes.Equal(got, wal) {
				t.Fatalf("Open (%s) lost the -wal: %d bytes, %v; want its %d bytes unchanged", tc.name, len(got), err, len(wal))
			}
		}
	}
	path := filepath.Join(dir, "archive0.db")

	// The -wal alone is the archive: beside a page of zeros (so that
	// SQLite reads it instead of deleting it) it opens at the current
	// schema, which a read-only Open checks.
	if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path, store.ReadOnly())
	if err != nil {
		t.Fatalf("the archive from its -wal alone: %v", err)
	}
	db.Close()

	// An empty -wal holds nothing: SQLite's to delete, and the empty file
	// is opened (and initialised) as before.
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty+"-wal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if db, err = store.Open(ctx, empty); err != nil {
		t.Fatalf("an empty file with an empty -wal: %v", err)
	}
	db.Close()
}
