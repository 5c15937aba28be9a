package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/logbuf"
	"github.com/ytrend/ytrend/testkit/synth"
)

// replicaOf streams a fresh archive of one stored run (one chart page) to
// a new file replica under term token 5, and returns the replica's URL.
func replicaOf(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	db, path := archivetest.Open(t)
	url := "file://" + filepath.Join(t.TempDir(), "replica")
	s, err := replication.Start(ctx, path, []string{url}, 5, replication.Options{SyncInterval: 100 * time.Millisecond,
		SnapshotInterval: time.Hour, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	g := synth.New(synth.Config{Seed: 3})
	vs := []store.Video{g.Video(1), g.Video(2)}
	archivetest.SaveChart(t, db, "US", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 1, vs...)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	return url
}

func restoreConfig(path, url string) *config.Config {
	cfg := config.Default()
	cfg.Store.Path = path
	cfg.Archive.Replicas = []string{url}
	return cfg
}

// Restore-on-start restores a missing or empty archive, says so, and
// leaves an archive holding runs alone.
func TestRestoreOnStart(t *testing.T) {
	ctx := context.Background()
	url := replicaOf(t)
	runs := func(path string) int {
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		archivetest.Integrity(t, db)
		rs, err := db.Runs(ctx, store.RunFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}

	missing := filepath.Join(t.TempDir(), "ytrend.db")
	empty, _ := archivetest.Open(t) // created, migrated, never fetched into
	emptyPath := empty.Path()
	for name, path := range map[string]string{"missing": missing, "empty": emptyPath} {
		var logs logbuf.Buffer
		if err := RestoreOnStart(ctx, restoreConfig(path, url), slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(logs.String(), "restore on start: restored the archive") || !strings.Contains(logs.String(), "term-0000000000000000005") {
			t.Errorf("%s: the log does not say it restored, from which term:\n%s", name, logs.String())
		}
		if n := runs(path); n != 1 {
			t.Errorf("%s: %d runs after the restore, want the replica's 1", name, n)
		}
	}
	// The empty archive was open in this process all along: it sees the copy.
	if rs, err := empty.Runs(ctx, store.RunFilter{Limit: 10}); err != nil || len(rs) != 1 {
		t.Errorf("the archive open during the restore sees %d runs (%v), want 1", len(rs), err)
	}

	// An archive with a run is not restored over.
	var logs logbuf.Buffer
	if err := RestoreOnStart(ctx, restoreConfig(missing, replicaOf(t)), slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "restored") {
		t.Errorf("an archive holding a run was restored over:\n%s", logs.String())
	}
}

// A replica that cannot be read stops the start with an error naming it
// and its generation; nothing is written beside the archive.
func TestRestoreOnStartFromACorruptReplica(t *testing.T) {
	url := replicaOf(t)
	dir := strings.TrimPrefix(url, "file://")
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, "term-0000000000000000005") && strings.HasSuffix(p, ".ltx") {
			data, _ := os.ReadFile(p)
			for i := 100; i < len(data)-16; i += 97 {
				data[i] ^= 0xff
			}
			os.WriteFile(p, data, 0o644)
		}
		return nil
	})
	home := t.TempDir()
	err := RestoreOnStart(context.Background(), restoreConfig(filepath.Join(home, "ytrend.db"), url), slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "term-0000000000000000005") {
		t.Errorf("restore on start from a corrupt replica: %v; want an error naming %s and its generation", err, dir)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("left %d files where the archive would be", len(entries))
	}
}
