package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/ytrend/ytrend/search"
)

// RepairResult says what Repair changed.
type RepairResult struct {
	// Runs dated where no chart can be (more than a day ahead, or before
	// 2005), removed with their Snapshots.
	Runs, Snapshots int
	// VideosDeleted were seen only in those runs; VideosRedated keep their
	// other sightings, and their newest is now the newest left.
	VideosDeleted, VideosRedated int
	// VideosCut had a title, description or tags over YouTube's limits.
	VideosCut int
	// Thumbnails not on ytimg.com, emptied.
	Thumbnails int
}

// Done reports whether the repair changed nothing.
func (r RepairResult) Done() bool { return r == RepairResult{} }

// RepairPending reports whether a repair registered by a migration
// (0011_hostile_rows) has yet to run.
func (db *DB) RepairPending(ctx context.Context) (bool, error) {
	var n int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM data_repairs WHERE NOT done`).Scan(&n); err != nil {
		return false, fmt.Errorf("store: repair: %w", err)
	}
	return n > 0, nil
}

// Repair brings an archive filled by older imports to what imports store
// today (see LatestSighting and the Max* limits), once: `ytrend migrate`
// runs it after the migration that registers it. In one transaction it
//
//   - removes the runs dated more than a day after now or before 2005, with
//     their snapshots; a video seen only there is deleted, any other gets
//     its newest sighting, best rank and regions back from the sightings
//     left, so that the next real fetch replaces the text a future row
//     left (the merge keeps the newest sighting's text);
//   - cuts titles, descriptions and tags to YouTube's limits, re-indexing
//     the rows cut;
//   - empties thumbnails that are not https URLs on ytimg.com.
//
// It reads every video once: a one-time cost, a few seconds a million rows.
func (db *DB) Repair(ctx context.Context, now time.Time) (RepairResult, error) {
	var res RepairResult
	st, err := db.pageStatements(ctx, 0)
	if err != nil {
		return res, fmt.Errorf("store: repair: prepare: %w", err)
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("store: repair: begin: %w", err)
	}
	defer tx.Rollback()
	w := writeTx{tx: tx, ctx: ctx, st: st, ftsWrites: &db.ftsWrites, chans: &db.channels}
	if err := repairDates(w, now, &res); err != nil {
		return res, fmt.Errorf("store: repair: dates: %w", err)
	}
	if err := repairFields(w, &res); err != nil {
		return res, fmt.Errorf("store: repair: fields: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE data_repairs SET done = 1 WHERE name = 'hostile_rows'`); err != nil {
		return res, fmt.Errorf("store: repair: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("store: repair: commit: %w", err)
	}
	db.commits.Add(1)
	return res, nil
}

func repairDates(w writeTx, now time.Time, res *RepairResult) error {
	ctx, tx := w.ctx, w.tx
	latest, earliest := LatestSighting(now).UnixMicro(), EarliestSighting.UnixMicro()
	_, err := tx.ExecContext(ctx, `CREATE TEMP TABLE repair_runs AS
		SELECT id FROM runs WHERE last_page_at > ?1 OR last_page_at < ?2 OR started_at > ?1`, latest, earliest)
	if err != nil {
		return err
	}
	defer tx.ExecContext(ctx, `DROP TABLE temp.repair_runs`)
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE repair_videos AS
		SELECT DISTINCT video AS id FROM trending_snapshots WHERE run_id IN (SELECT id FROM temp.repair_runs)
		UNION SELECT video FROM video_stats WHERE last_seen > ?1 OR last_seen < ?2`, latest, earliest); err != nil {
		return err
	}
	defer tx.ExecContext(ctx, `DROP TABLE temp.repair_videos`)
	r, err := tx.ExecContext(ctx, `DELETE FROM trending_snapshots WHERE run_id IN (SELECT id FROM temp.repair_runs)`)
	if err != nil {
		return err
	}
	snaps, _ := r.RowsAffected()
	if r, err = tx.ExecContext(ctx, `DELETE FROM runs WHERE id IN (SELECT id FROM temp.repair_runs)`); err != nil {
		return err
	}
	runs, _ := r.RowsAffected()
	res.Runs, res.Snapshots = int(runs), int(snaps)

	// Videos no sighting is left of.
	var orphans []int64
	var tokens int64
	rows, err := tx.QueryContext(ctx, `SELECT v.id, s.doc_len FROM temp.repair_videos v JOIN video_stats s ON s.video = v.id
		WHERE NOT EXISTS (SELECT 1 FROM trending_snapshots t WHERE t.video = v.id)`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return err
		}
		orphans, tokens = append(orphans, id), tokens+n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := w.ftsDelete(orphans); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM videos WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(orphans)); err != nil {
		return err
	}
	res.VideosDeleted = len(orphans)

	// The others: their newest sighting, best rank and regions as the
	// sightings left say.
	if r, err = tx.ExecContext(ctx, `UPDATE video_stats SET
			last_seen = (SELECT max(fetched_at) FROM trending_snapshots t WHERE t.video = video_stats.video),
			best_rank = (SELECT min(rank) FROM trending_snapshots t WHERE t.video = video_stats.video)
		WHERE video IN (SELECT id FROM temp.repair_videos)`); err != nil {
		return err
	}
	redated, _ := r.RowsAffected()
	res.VideosRedated = int(redated)
	if _, err := tx.ExecContext(ctx, `UPDATE videos SET
			first_seen = (SELECT min(fetched_at) FROM trending_snapshots t WHERE t.video = videos.id)
		WHERE id IN (SELECT id FROM temp.repair_videos) AND (first_seen < ?1 OR first_seen > ?2)`, earliest, latest); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM video_regions WHERE video IN (SELECT id FROM temp.repair_videos)`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO video_regions (video, region, best_rank, last_rank, first_seen, last_seen, snapshots)
		SELECT video, region, min(rank),
			(SELECT l.rank FROM trending_snapshots l WHERE l.video = t.video AND l.region = t.region ORDER BY l.fetched_at DESC LIMIT 1),
			min(fetched_at), max(fetched_at), count(*)
		FROM trending_snapshots t WHERE video IN (SELECT id FROM temp.repair_videos) GROUP BY video, region`); err != nil {
		return err
	}
	// The bounds of their blocks (0008_video_blocks), which only ever grow
	// by themselves, are recomputed.
	if _, err := tx.ExecContext(ctx, `DELETE FROM video_blocks WHERE block IN (SELECT id >> 10 FROM temp.repair_videos)`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO video_blocks (block, max_seen, min_rank, max_views)
		SELECT video >> 10, max(last_seen), min(best_rank), max(coalesce(views, -1)) FROM video_stats
		WHERE video >> 10 IN (SELECT id >> 10 FROM temp.repair_videos) GROUP BY video >> 10`); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE archive_totals SET videos = videos - ?, tokens = tokens - ?, snapshots = snapshots - ? WHERE id = 1`,
		len(orphans), tokens, snaps)
	return err
}

func repairFields(w writeTx, res *RepairResult) error {
	ctx, tx := w.ctx, w.tx
	rows, err := tx.QueryContext(ctx, `SELECT id, thumbnail_url FROM videos WHERE thumbnail_url <> ''`)
	if err != nil {
		return err
	}
	var bad []int64
	for rows.Next() {
		var id int64
		var u string
		if err := rows.Scan(&id, &u); err != nil {
			rows.Close()
			return err
		}
		if !ValidThumbnail(u) {
			bad = append(bad, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE videos SET thumbnail_url = '' WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(bad)); err != nil {
		return err
	}
	res.Thumbnails = len(bad)

	type cut struct {
		id                         int64
		title, tags, channel, desc string
		oldLen                     int64
	}
	var cuts []cut
	rows, err = tx.QueryContext(ctx, `SELECT v.id, v.title, v.tags, v.channel_title, v.description, s.doc_len
		FROM videos v JOIN video_stats s ON s.video = v.id
		WHERE length(v.title) > ?1 OR length(CAST(v.description AS BLOB)) > ?2 OR length(v.tags) > ?3`,
		MaxTitleChars, MaxDescriptionBytes, MaxTagsChars)
	if err != nil {
		return err
	}
	for rows.Next() {
		var c cut
		if err := rows.Scan(&c.id, &c.title, &c.tags, &c.channel, &c.desc, &c.oldLen); err != nil {
			rows.Close()
			return err
		}
		c.title, _ = CutTitle(c.title)
		c.desc, _ = CutDescription(c.desc)
		if c.tags != "" {
			tags, _ := CutTags(strings.Split(c.tags, "\n"))
			c.tags = strings.Join(tags, "\n")
		}
		cuts = append(cuts, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(cuts) == 0 {
		return nil
	}
	ids := make([]int64, len(cuts))
	for i, c := range cuts {
		ids[i] = c.id
	}
	// The index forgets the rows as they were indexed, then takes them as
	// they are now; their term counts and lengths are derived again. The
	// hashes are cleared, so the next sighting rewrites them.
	if err := w.ftsDelete(ids); err != nil {
		return err
	}
	var tokens int64
	for _, c := range cuts {
		g := search.GramsOf(c.title, c.tags, c.channel, c.desc)
		grams := sql.NullString{String: g.Indexed(), Valid: g.Indexed() != ""}
		terms, docLen := search.BuildTerms(c.title, c.tags, c.channel, c.desc, g)
		tokens += int64(docLen) - c.oldLen
		if _, err := tx.ExecContext(ctx, `UPDATE videos SET title = ?, tags = ?, description = ?, title_grams = ? WHERE id = ?`,
			c.title, c.tags, c.desc, grams, c.id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE video_stats SET terms = ?, doc_len = ?, text_hash = 0, meta_hash = 0 WHERE video = ?`,
			[]byte(terms), docLen, c.id); err != nil {
			return err
		}
	}
	if err := w.ftsInsert(ids); err != nil {
		return err
	}
	res.VideosCut = len(cuts)
	_, err = tx.ExecContext(ctx, `UPDATE archive_totals SET tokens = tokens + ? WHERE id = 1`, tokens)
	return err
}
