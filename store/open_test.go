package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
