package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// regramStep is how many videos one Regram transaction reads: a fraction of
// a second, so a concurrent fetch waits that long for the write lock at most.
const regramStep = 500

const upgradeGrams = "grams_every_column"

// RegramStatus says how far the re-derivation of CJK/Thai grams (migration
// 0007) has come.
type RegramStatus struct {
	Done    bool
	NextID  int64 // videos.id it resumes from
	Pending int64 // videos at or above NextID
}

// RegramProgress reads where Regram stands.
func (db *DB) RegramProgress(ctx context.Context) (RegramStatus, error) {
	var st RegramStatus
	err := db.reader.QueryRowContext(ctx, `SELECT u.done, u.next_id, (SELECT count(*) FROM videos WHERE id >= u.next_id)
		FROM index_upgrades u WHERE u.name = ?`, upgradeGrams).Scan(&st.Done, &st.NextID, &st.Pending)
	if errors.Is(err, sql.ErrNoRows) {
		return RegramStatus{Done: true}, nil
	}
	if err != nil {
		return st, fmt.Errorf("store: regram progress: %w", err)
	}
	if st.Done {
		st.Pending = 0
	}
	return st, nil
}

// Regram re-derives the index's grams and term counts of the videos stored
// before grams covered every column (tags, channel titles, descriptions),
// in short transactions from where it last stopped, until every row is done
// or ctx ends; progress, if set, is told after each step. A row whose grams
// do not change is only read. Searches keep working throughout: a row not yet
// upgraded is found by its title's grams and its whole runs, as before.
func (db *DB) Regram(ctx context.Context, progress func(RegramStatus)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		done, err := db.regramStep(ctx)
		if err != nil {
			return fmt.Errorf("store: regram: %w", err)
		}
		if progress != nil {
			st, err := db.RegramProgress(ctx)
			if err == nil {
				progress(st)
			}
		}
		if done {
			return nil
		}
	}
}

func (db *DB) regramStep(ctx context.Context) (done bool, err error) {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var next int64
	err = tx.QueryRowContext(ctx, `SELECT next_id FROM index_upgrades WHERE name = ? AND NOT done`, upgradeGrams).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil // done, or an archive that never needed it
	}
	if err != nil {
		return false, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT v.id, v.title, v.tags, v.channel_title, v.description, coalesce(v.title_grams, ''), s.doc_len
		FROM videos v JOIN video_stats s ON s.video = v.id WHERE v.id >= ? ORDER BY v.id LIMIT ?`, next, regramStep)
	if err != nil {
		return false, err
	}
	type change struct {
		id     int64
		grams  sql.NullString
		terms  terms
		docLen int
		delta  int64
	}
	var changes []change
	last, n := next-1, 0
	for rows.Next() {
		var id, docLen int64
		var title, tags, channel, desc, stored string
		if err := rows.Scan(&id, &title, &tags, &channel, &desc, &stored, &docLen); err != nil {
			rows.Close()
			return false, err
		}
		last, n = id, n+1
		g := gramsOf(title, tags, channel, desc)
		indexed := g.indexed()
		if indexed == stored {
			continue
		}
		c := change{id: id, grams: sql.NullString{String: indexed, Valid: indexed != ""}}
		c.terms, c.docLen = buildTerms(title, tags, channel, desc, g)
		c.delta = int64(c.docLen) - docLen
		changes = append(changes, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	if len(changes) > 0 {
		ids := make([]int64, len(changes))
		var tokens int64
		for i, c := range changes {
			ids[i] = c.id
			tokens += c.delta
		}
		// The index forgets the rows as they were indexed, then takes them
		// as they are now.
		if _, err := tx.ExecContext(ctx, sqlFTSDelete, jsonIDs(ids)); err != nil {
			return false, err
		}
		for _, c := range changes {
			if _, err := tx.ExecContext(ctx, `UPDATE videos SET title_grams = ? WHERE id = ?`, c.grams, c.id); err != nil {
				return false, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE video_stats SET terms = ?, doc_len = ? WHERE video = ?`,
				[]byte(c.terms), c.docLen, c.id); err != nil {
				return false, err
			}
		}
		if _, err := tx.ExecContext(ctx, sqlFTSInsert, jsonIDs(ids)); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE archive_totals SET tokens = tokens + ? WHERE id = 1`, tokens); err != nil {
			return false, err
		}
		db.ftsWrites.Add(2)
	}
	finished := n < regramStep
	if _, err := tx.ExecContext(ctx, `UPDATE index_upgrades SET next_id = ?, done = ? WHERE name = ?`,
		last+1, finished, upgradeGrams); err != nil {
		return false, err
	}
	return finished, tx.Commit()
}
