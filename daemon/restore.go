package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
)

// RestoreOnStart is `ytrend run`'s restore-on-start, before the archive is
// opened: an archive that does not exist, or holds no run (a file a start
// created and never fetched into), is first restored from the replicas when
// one holds data. A replica holding nothing is a first start, not an error;
// one that cannot be read is an error naming it and its generation, and the
// archive is left as it was, rather than silently beginning a new history.
//
// The copy is built beside the archive and put in place only when complete:
// linked into place when there is no archive (never over one another
// process created meanwhile), or copied into the empty archive through
// SQLite's online backup when there is one (another process may have it
// open).
func RestoreOnStart(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	urls, path := cfg.Archive.Replicas, cfg.Store.Path
	if len(urls) == 0 {
		return nil
	}
	missing, empty, err := archiveEmpty(ctx, path)
	if err != nil || !empty {
		return err
	}
	tmp := fmt.Sprintf("%s.restoring-%d", path, os.Getpid())
	clean := func() {
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", tmp + ".tmp"} {
			os.Remove(p)
		}
	}
	clean()
	defer clean()
	start := time.Now()
	r, err := replication.Restore(ctx, urls, tmp, replication.RestoreOptions{UpToDamage: true, Logger: log})
	if errors.Is(err, replication.ErrEmpty) {
		log.Info("restore on start: no replica holds an archive; starting a new one", "archive", path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore on start: %w", err)
	}
	how := "linked into place"
	if missing {
		// A WAL left without its database would be replayed into the copy.
		for _, p := range []string{path + "-wal", path + "-shm"} {
			os.Remove(p)
		}
		if err := os.Link(tmp, path); errors.Is(err, os.ErrExist) {
			missing = false // another process created it meanwhile
		} else if err != nil {
			return fmt.Errorf("restore on start: %w", err)
		}
	}
	if !missing {
		how = "copied into the empty archive"
		if err := replaceInto(ctx, path, tmp); err != nil {
			return fmt.Errorf("restore on start: %w", err)
		}
	}
	log.Info("restore on start: restored the archive from its replica before running", "archive", path,
		"replica", r.Replica, "generation", r.Generation, "txid", r.TXID, "how", how,
		"took", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// replaceInto copies the archive in src into the one at path, which holds
// no run, unless a run appeared meanwhile (another process fetched).
func replaceInto(ctx context.Context, path, src string) error {
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, empty, err := archiveEmpty(ctx, path); err != nil || !empty {
		return err
	}
	return db.ReplaceWith(ctx, src)
}

// archiveEmpty reports whether the archive at path is missing, or holds no
// run.
func archiveEmpty(ctx context.Context, path string) (missing, empty bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return true, true, nil
	}
	if err != nil {
		return false, false, err
	}
	if fi.Size() == 0 {
		return false, true, nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return false, false, err
	}
	defer db.Close()
	var runs bool
	err = db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM runs)`).Scan(&runs)
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return false, true, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("archive %s: %w", path, err)
	}
	return false, !runs, nil
}
