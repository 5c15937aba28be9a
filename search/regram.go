package search

import (
	"context"
	"database/sql"
	"fmt"
)

// The index's own rows: what a video gives video_fts, and the upgrades
// that re-derive it for rows stored by older binaries. The store writes a
// page's rows with these statements too, in the page's transaction.
const (
	// IndexDeleteSQL makes video_fts forget the videos whose ids are the
	// JSON array ?, with the values they were indexed with.
	IndexDeleteSQL = `INSERT INTO video_fts (video_fts, rowid, title, tags, channel_title, description, title_grams, facets)
		SELECT 'delete', fkey, title, tags, channel_title, description, title_grams, facets FROM videos
		WHERE id IN (SELECT value FROM json_each(?)) ORDER BY fkey`
	// IndexInsertSQL indexes the videos whose ids are the JSON array ?.
	IndexInsertSQL = `INSERT INTO video_fts (rowid, title, tags, channel_title, description, title_grams, facets)
		SELECT fkey, title, tags, channel_title, description, title_grams, facets FROM videos
		WHERE id IN (SELECT value FROM json_each(?)) ORDER BY fkey`
)

// regramRows is how many videos one Regram transaction reads: a fraction of
// a second, so a concurrent fetch waits that long for the write lock at most.
const regramRows = 500

// Index upgrades (table index_upgrades): each re-derives the gram column and
// term counts of the rows stored before it, and what it adds to the index.
// Re-deriving a row with today's code does every upgrade at once, so Regram
// carries them all from the lowest point any of them has reached.
const (
	upgradeGrams = "grams_every_column" // 0007_regram
	upgradeGlued = "glued_words"        // 0009_glued_words
)

var upgradeAbout = map[string]string{
	upgradeGrams: "CJK/Thai words in every column",
	upgradeGlued: "words written against an emoji",
}

// RegramStatus says how far the re-derivation of the index's gram column
// (migrations 0007 and 0009) has come.
type RegramStatus struct {
	Done     bool
	Upgrades []string // what the pending upgrades make findable, for people
	NextID   int64    // videos.id it resumes from
	Pending  int64    // videos at or above NextID
}

// RegramProgress reads where Regram stands.
func RegramProgress(ctx context.Context, reader *sql.DB) (RegramStatus, error) {
	rows, err := reader.QueryContext(ctx, `SELECT name, next_id FROM index_upgrades WHERE NOT done ORDER BY name`)
	if err != nil {
		return RegramStatus{}, fmt.Errorf("store: regram progress: %w", err)
	}
	defer rows.Close()
	st := RegramStatus{Done: true}
	for rows.Next() {
		var name string
		var next int64
		if err := rows.Scan(&name, &next); err != nil {
			return RegramStatus{}, fmt.Errorf("store: regram progress: %w", err)
		}
		if st.Done || next < st.NextID {
			st.NextID = next
		}
		st.Done = false
		about := upgradeAbout[name]
		if about == "" {
			about = name
		}
		st.Upgrades = append(st.Upgrades, about)
	}
	if err := rows.Err(); err != nil {
		return RegramStatus{}, fmt.Errorf("store: regram progress: %w", err)
	}
	if st.Done {
		return st, nil
	}
	if err := reader.QueryRowContext(ctx, `SELECT count(*) FROM videos WHERE id >= ?`, st.NextID).Scan(&st.Pending); err != nil {
		return RegramStatus{}, fmt.Errorf("store: regram progress: %w", err)
	}
	return st, nil
}

// Regram re-derives the index's grams and term counts of the videos stored
// before a pending upgrade (grams of every column, not only the title's; the
// words FTS5 glues to an emoji), in short transactions on writer from where
// it last stopped, until every row is done or ctx ends; progress, if set, is
// told after each step. A row whose grams do not change is only read.
// Searches keep working throughout: a row not yet upgraded is found as
// before. It returns how many statements changed the full-text index.
func Regram(ctx context.Context, writer, reader *sql.DB, progress func(RegramStatus)) (indexWrites int64, err error) {
	// Progress is counted down from one count of the pending rows, not
	// recounted after each step: counting reads every row left, and doing
	// so after each of a million-row archive's 2,000 steps took longer than
	// the upgrade itself.
	var st RegramStatus
	if progress != nil {
		if st, err = RegramProgress(ctx, reader); err != nil {
			return 0, fmt.Errorf("store: regram: %w", err)
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return indexWrites, err
		}
		done, read, next, wrote, err := regramStep(ctx, writer)
		indexWrites += wrote
		if err != nil {
			return indexWrites, fmt.Errorf("store: regram: %w", err)
		}
		if progress != nil {
			if done {
				st = RegramStatus{Done: true}
			} else {
				st.NextID, st.Pending = next, max(0, st.Pending-int64(read))
			}
			progress(st)
		}
		if done {
			return indexWrites, nil
		}
	}
}

// regramStep re-derives the next regramRows rows from the lowest point of the
// pending upgrades. It reports whether every upgrade is done, how many rows
// it read, where the next step starts and how many statements it committed
// to the full-text index.
func regramStep(ctx context.Context, writer *sql.DB) (done bool, read int, next, wrote int64, err error) {
	tx, err := writer.BeginTx(ctx, nil)
	if err != nil {
		return false, 0, 0, 0, err
	}
	defer tx.Rollback()
	// The lowest point any pending upgrade has reached; rows between it and
	// another upgrade's point are re-derived again, which changes nothing
	// there (they are only read).
	var from sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT min(next_id) FROM index_upgrades WHERE NOT done`).Scan(&from)
	if err != nil {
		return false, 0, 0, 0, err
	}
	if !from.Valid {
		return true, 0, 0, 0, nil // done, or an archive that never needed it
	}
	rows, err := tx.QueryContext(ctx, `SELECT v.id, v.title, v.tags, v.channel_title, v.description, coalesce(v.title_grams, ''), s.doc_len
		FROM videos v JOIN video_stats s ON s.video = v.id WHERE v.id >= ? ORDER BY v.id LIMIT ?`, from.Int64, regramRows)
	if err != nil {
		return false, 0, 0, 0, err
	}
	type change struct {
		id     int64
		grams  sql.NullString
		terms  Terms
		docLen int
		delta  int64
	}
	var changes []change
	last, n := from.Int64-1, 0
	for rows.Next() {
		var id, docLen int64
		var title, tags, channel, desc, stored string
		if err := rows.Scan(&id, &title, &tags, &channel, &desc, &stored, &docLen); err != nil {
			rows.Close()
			return false, 0, 0, 0, err
		}
		last, n = id, n+1
		g := GramsOf(title, tags, channel, desc)
		indexed := g.Indexed()
		if indexed == stored {
			continue
		}
		c := change{id: id, grams: sql.NullString{String: indexed, Valid: indexed != ""}}
		c.terms, c.docLen = BuildTerms(title, tags, channel, desc, g)
		c.delta = int64(c.docLen) - docLen
		changes = append(changes, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, 0, 0, 0, err
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
		if _, err := tx.ExecContext(ctx, IndexDeleteSQL, jsonIDs(ids)); err != nil {
			return false, 0, 0, 0, err
		}
		for _, c := range changes {
			if _, err := tx.ExecContext(ctx, `UPDATE videos SET title_grams = ? WHERE id = ?`, c.grams, c.id); err != nil {
				return false, 0, 0, 0, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE video_stats SET terms = ?, doc_len = ? WHERE video = ?`,
				[]byte(c.terms), c.docLen, c.id); err != nil {
				return false, 0, 0, 0, err
			}
		}
		if _, err := tx.ExecContext(ctx, IndexInsertSQL, jsonIDs(ids)); err != nil {
			return false, 0, 0, 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE archive_totals SET tokens = tokens + ? WHERE id = 1`, tokens); err != nil {
			return false, 0, 0, 0, err
		}
		wrote = 2
	}
	finished := n < regramRows
	if _, err := tx.ExecContext(ctx, `UPDATE index_upgrades SET next_id = max(next_id, ?), done = ? WHERE NOT done`,
		last+1, finished); err != nil {
		return false, 0, 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return false, 0, 0, 0, err
	}
	return finished, n, last + 1, wrote, nil
}
