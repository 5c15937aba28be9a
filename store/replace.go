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
func (db *DB) ReplaceWith(ctx context.Context, src string) error {
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: replace with %s: %w", src, err)
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
	conn.Close()
	if err != nil {
		return fmt.Errorf("store: replace with %s: %w", src, err)
	}
	db.channels.mu.Lock()
	db.channels.m = nil
	db.channels.mu.Unlock()
	if _, err := migrations.Apply(ctx, db.writer, db.migrations); err != nil {
		return err
	}
	return nil
}
