package store

import (
	"context"
	"fmt"
	"time"

	"modernc.org/sqlite"

	"github.com/ytrend/ytrend/internal/sqliteerr"
	"github.com/ytrend/ytrend/migrations"
)

// ReplaceWith replaces the whole archive with the archive in the file src
// (a copy restored from a replica), through SQLite's online backup on the
// writer: one write transaction, so that every connection, in this process
// or another, sees the old archive or the new one and nothing between.
// A leader taking over (package replica) uses it to adopt what the previous
// term replicated before it writes. The caches of the old content are
// dropped, and the copy is brought up to this binary's schema.
//
// The rows of the tables named in keep survive: they are added to the
// copy's, a row the copy has already winning. It is for records keyed by a
// unique id, where the union forgets nothing and counts nothing twice (the
// budget's quota_grants and quota_mirror).
func (db *DB) ReplaceWith(ctx context.Context, src string, keep ...string) error {
	if err := db.replace(ctx, src, keep); err != nil {
		return err
	}
	db.channels.mu.Lock()
	db.channels.m = nil
	db.channels.mu.Unlock()
	_, err := migrations.Apply(ctx, db.writer, db.migrations)
	return err
}

// replace copies src over the archive on the writer's one connection. The
// rows to keep are added to src first, so that the one backup carries them:
// a crash leaves the old archive or the union, never the copy without them.
func (db *DB) replace(ctx context.Context, src string, keep []string) error {
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: replace with %s: %w", src, err)
	}
	defer conn.Close()
	if len(keep) > 0 {
		if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS incoming`, src); err != nil {
			return fmt.Errorf("store: replace with %s: %w", src, err)
		}
		for _, t := range keep {
			if _, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO incoming.`+t+` SELECT * FROM main.`+t); err != nil {
				conn.ExecContext(ctx, `DETACH DATABASE incoming`)
				return fmt.Errorf("store: replace with %s: keep %s: %w", src, t, err)
			}
		}
		if _, err := conn.ExecContext(ctx, `DETACH DATABASE incoming`); err != nil {
			return fmt.Errorf("store: replace with %s: %w", src, err)
		}
	}
	err = conn.Raw(func(dc any) error {
		r, ok := dc.(interface {
			NewRestore(string) (*sqlite.Backup, error)
		})
		if !ok {
			return fmt.Errorf("driver connection %T cannot restore", dc)
		}
		for attempt := 0; ; attempt++ {
			b, err := r.NewRestore(src)
			if err != nil {
				return err
			}
			_, err = b.Step(-1)
			if ferr := b.Finish(); err == nil {
				err = ferr
			}
			if err == nil || !sqliteerr.Busy(err) || attempt >= 100 {
				return err
			}
			select { // another process holds the write lock for a moment
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	if err != nil {
		return fmt.Errorf("store: replace with %s: %w", src, err)
	}
	return nil
}
