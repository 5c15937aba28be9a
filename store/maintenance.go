package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrArchiveInUse is Compact's refusal while another process writes to the
// archive (a scheduler, a fetch, an import): compacting holds the write
// lock longer than that process would wait for it.
var ErrArchiveInUse = errors.New("another process is writing to this archive")

// optimizeStep is how many index pages (about 4 KB each) one Optimize
// transaction merges: a fraction of a second of work, so a concurrent fetch
// waits that long for the write lock at most.
const optimizeStep = 500

// Optimize merges the full-text index into a single segment and refreshes
// the query planner's statistics. FTS5 keeps an index as a few segments per
// size level (13-18 at a million videos built page by page), and re-indexed
// videos leave superseded entries in them until segments merge; a query pays
// a lookup in every segment and skips those entries. Measured here: a third
// off the median search at 100k videos; at a million, within this machine's
// run-to-run noise (searches meet their targets without it). The merge runs
// in many short transactions, so a fetch running at the same time is delayed,
// not refused. It rewrites the whole index (16 s and about half a gigabyte at
// a million videos): run it now and then (daily, say), not after every page.
//
// It first finishes any pending upgrade of stored index data (Regram), in
// the same short steps.
func (db *DB) Optimize(ctx context.Context) error {
	if err := db.Regram(ctx, nil); err != nil {
		return fmt.Errorf("store: optimize: %w", err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		done, err := db.mergeStep(ctx)
		if err != nil {
			return fmt.Errorf("store: optimize: %w", err)
		}
		if done {
			break
		}
	}
	if _, err := db.writer.ExecContext(ctx, `PRAGMA optimize`); err != nil {
		return fmt.Errorf("store: optimize: %w", err)
	}
	return nil
}

// mergeStep runs one bounded FTS5 'merge' (negative: every segment is
// eligible, so repeated steps end with one) and reports whether there was
// nothing left to merge: FTS5 documents that total_changes() then grows by
// less than 2.
func (db *DB) mergeStep(ctx context.Context) (done bool, err error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var before, after int64
	if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO video_fts (video_fts, rank) VALUES ('merge', ?)`, -optimizeStep); err != nil {
		return false, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	return after-before < 2, nil
}

// IndexSegments reports how many segments the full-text index has: what
// Optimize brings down to one. It decodes FTS5's structure record
// (fts5_index.c: a 4-byte cookie, an optional 4-byte version-2 marker, then
// varints nLevel, nSegment, ...).
func (db *DB) IndexSegments(ctx context.Context) (int, error) {
	var b []byte
	err := db.reader.QueryRowContext(ctx, `SELECT block FROM video_fts_data WHERE id = 10`).Scan(&b)
	if err != nil {
		return 0, fmt.Errorf("store: index structure: %w", err)
	}
	p := 4
	if len(b) >= 8 && b[4] == 0xff && b[5] == 0 && b[6] == 0 && b[7] == 1 {
		p += 4
	}
	varint := func() (int, error) {
		v := 0
		for i := 0; i < 9; i++ {
			if p >= len(b) {
				return 0, errors.New("store: index structure record is truncated")
			}
			c := b[p]
			p++
			v = v<<7 | int(c&0x7f)
			if c&0x80 == 0 {
				break
			}
		}
		return v, nil
	}
	if _, err := varint(); err != nil { // levels
		return 0, err
	}
	return varint()
}

// Compact rewrites the archive file (SQLite's VACUUM) so that each table's
// and index's pages lie together and no free page is left. An archive
// built by a large import has its tables' pages interleaved, as each grew
// in turn: a search then touches pages scattered over the whole file.
// Compacted, a million-video archive's searches took 11% less CPU in a
// long-lived process and 20-25% less in a fresh one (ytrend search), whose
// first reads fault its pages in (BENCHMARKS.md, issue 21).
//
// It holds the write lock throughout (30-60 s at a million videos), longer
// than another process's write waits for it (the busy timeout): a fetch
// would fail, after spending its quota. So it refuses while OtherWriters
// names a process (ErrArchiveInUse); searches and pages go on meanwhile. It needs free disk for
// a temporary copy of the archive (in SQLite's temporary directory,
// SQLITE_TMPDIR or /tmp) and as much again beside the archive for the WAL
// it writes through. Cancelling ctx interrupts it: SQLite keeps a VACUUM
// whole or not at all, and an interrupt that lands as it commits may find
// it done, so a ctx error says only that the archive is intact.
func (db *DB) Compact(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	others, err := db.OtherWriters(ctx)
	if err != nil {
		return fmt.Errorf("store: compact: %w", err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w (%s)", ErrArchiveInUse, strings.Join(others, ", "))
	}
	if _, err := db.writer.ExecContext(ctx, `VACUUM`); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("store: compact: %w", err)
	}
	// The WAL now holds the whole file; checkpoint it back, so that the
	// space it takes is given back now rather than at the next close.
	if _, err := db.writer.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil && ctx.Err() == nil {
		return fmt.Errorf("store: compact: checkpoint: %w", err)
	}
	return nil
}
