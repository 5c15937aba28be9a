package store

import (
	"context"
	"fmt"
)

// deleteChunk bounds the number of ids bound in one statement.
const deleteChunk = 200

// DeleteVideos removes videos (by YouTube id) with their statistics,
// snapshots and region aggregates, and their index entries, in one
// transaction. Unknown ids are ignored; it returns how many were deleted.
func (db *DB) DeleteVideos(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	st, err := db.pageStatements(ctx, 0)
	if err != nil {
		return 0, fmt.Errorf("store: delete videos: prepare: %w", err)
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: delete videos: begin: %w", err)
	}
	defer tx.Rollback()
	w := writeTx{tx: tx, ctx: ctx, st: st, ftsWrites: &db.ftsWrites, chans: &db.channels}
	deleted := 0
	var tokens, snapshots int64
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), deleteChunk)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rs, err := tx.QueryContext(ctx, `SELECT v.id, s.doc_len, (SELECT count(*) FROM trending_snapshots t WHERE t.video = v.id)
			FROM videos v JOIN video_stats s ON s.video = v.id WHERE v.video_id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return 0, fmt.Errorf("store: delete videos: %w", err)
		}
		var rowIDs []int64
		for rs.Next() {
			var id, docLen, snaps int64
			if err := rs.Scan(&id, &docLen, &snaps); err != nil {
				rs.Close()
				return 0, fmt.Errorf("store: delete videos: %w", err)
			}
			rowIDs = append(rowIDs, id)
			tokens += docLen
			snapshots += snaps
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return 0, fmt.Errorf("store: delete videos: %w", err)
		}
		if len(rowIDs) == 0 {
			continue
		}
		if err := w.ftsDelete(rowIDs); err != nil {
			return 0, err
		}
		// Statistics and region rows go by ON DELETE CASCADE; snapshots
		// have no foreign key (see 0001_init.sql).
		in := `(` + placeholders(len(rowIDs)) + `)`
		if _, err := tx.ExecContext(ctx, `DELETE FROM trending_snapshots WHERE video IN `+in, int64Args(rowIDs)...); err != nil {
			return 0, fmt.Errorf("store: delete videos: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM videos WHERE id IN `+in, int64Args(rowIDs)...); err != nil {
			return 0, fmt.Errorf("store: delete videos: %w", err)
		}
		deleted += len(rowIDs)
	}
	if deleted > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE archive_totals SET videos = videos - ?, tokens = tokens - ?, snapshots = snapshots - ? WHERE id = 1`,
			deleted, tokens, snapshots); err != nil {
			return 0, fmt.Errorf("store: delete videos: totals: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: delete videos: commit: %w", err)
	}
	db.commits.Add(1)
	return deleted, nil
}
