package store

import "strings"

// The statements of a page transaction. Lists of ids travel as one JSON
// array (json_each), so these texts do not depend on the page.
const (
	// Only the video_id index and the narrow video_stats row: never the
	// videos row with its description.
	// in_region: whether the video already trended in the page's region (?2;
	// '' for search pages).
	sqlExisting = `SELECT j.key, v.id, s.text_hash, s.meta_hash, s.doc_len, s.last_seen, coalesce(s.best_rank, 0),
		EXISTS (SELECT 1 FROM video_regions r WHERE r.video = v.id AND r.region = ?2)
		FROM json_each(?1) j JOIN videos v ON v.video_id = j.value JOIN video_stats s ON s.video = v.id`
	sqlChannelIDs = `SELECT channel_id, id, title FROM channels WHERE channel_id IN (SELECT value FROM json_each(?))`
	sqlUpsertChan = `INSERT INTO channels (channel_id, title, title_fold) VALUES (?, ?, ?)
		ON CONFLICT (channel_id) DO UPDATE SET title = excluded.title, title_fold = excluded.title_fold RETURNING id`
	// The channel facet is the first one: replace it, keep the regions'.
	sqlUpdateVideo = `UPDATE videos SET title = ?, tags = ?, channel_title = ?, description = ?, title_grams = ?,
		channel_id = ?, category_id = ?, published_at_s = ?, duration_s = ?, default_language = ?, thumbnail_url = ?,
		facets = ? || substr(facets, instr(facets || ' ', ' ')) WHERE id = ?`
	// Facets a video gains (a region, rank tiers), each after a space.
	sqlAddFacets = `UPDATE videos SET facets = facets || ? WHERE id IN (SELECT value FROM json_each(?))`
	// The 'delete' command must carry the values that were indexed: it runs
	// before the row changes.
	//
	// Both feed the index in ascending rowid (fkey) order: FTS5 flushes its
	// pending terms to a new segment whenever a write's rowid is lower than
	// the previous one, so descending order would write a segment per video.
	sqlTotals = `UPDATE archive_totals SET videos = videos + ?, tokens = tokens + ?, snapshots = snapshots + ? WHERE id = 1`
	// Progress only for a run still running: a finished (or interrupted) run
	// takes no more pages. min_video is a lower bound of the page's video ids:
	// its smallest stored id, or, for new videos, the next id to be assigned.
	//
	// A run another process took for abandoned (MarkInterrupted: "interrupted:
	// ..."), whose owner (?8) turns out alive (it was paused, or its clock
	// is off), is running again: its page is kept, not refused.
	sqlRunProgress = `UPDATE runs SET pages = pages + 1, videos = videos + ?1, new_videos = new_videos + ?2,
		updated_videos = updated_videos + ?3, units = max(units, ?4),
		last_page_at = max(coalesce(last_page_at, ?6), ?6),
		min_video = min(coalesce(min_video, ?7), ?7, (SELECT coalesce(max(id), 0) + 1 FROM videos)),
		status = 'running', finished_at = NULL, error = iif(status = 'running', error, '')
		WHERE id = ?5 AND (status = 'running' OR status = 'interrupted' AND owner = ?8 AND error LIKE 'interrupted:%')`

	insertVideoCols = 14
	statsCols       = 11
)

// sqlInsertVideos inserts the page's videos that are new; RETURNING yields
// only those (the others conflict and are left alone).
func sqlInsertVideos(n int) string {
	return `INSERT INTO videos (video_id, title, tags, channel_title, description, title_grams, channel_id, category_id,
		published_at_s, duration_s, default_language, thumbnail_url, first_seen, facets)
		VALUES ` + values(n, insertVideoCols) + ` ON CONFLICT (video_id) DO NOTHING RETURNING video_id, id`
}

// sqlStats upserts statistics. Statistics, channel and hashes come from the
// newest sighting; an older page only lowers best_rank. doc_len and terms
// change only when the text did: a re-seen video passes -1 and an empty blob.
func sqlStats(n int) string {
	return `INSERT INTO video_stats (last_seen, video, channel, best_rank, views, likes, comments, doc_len, terms,
		text_hash, meta_hash)
		VALUES ` + values(n, statsCols) + `
		ON CONFLICT (video) DO UPDATE SET
			best_rank = CASE WHEN best_rank IS NULL THEN excluded.best_rank
				WHEN excluded.best_rank IS NULL THEN best_rank ELSE min(best_rank, excluded.best_rank) END,
			channel   = iif(excluded.last_seen >= last_seen, excluded.channel, channel),
			views     = iif(excluded.last_seen >= last_seen, excluded.views, views),
			likes     = iif(excluded.last_seen >= last_seen, excluded.likes, likes),
			comments  = iif(excluded.last_seen >= last_seen, excluded.comments, comments),
			doc_len   = iif(excluded.doc_len >= 0, excluded.doc_len, doc_len),
			terms     = iif(length(excluded.terms) > 0, excluded.terms, terms),
			text_hash = iif(excluded.last_seen >= last_seen, excluded.text_hash, text_hash),
			meta_hash = iif(excluded.last_seen >= last_seen, excluded.meta_hash, meta_hash),
			last_seen = max(last_seen, excluded.last_seen)`
}

// The multi-row statements use plain ? parameters: modernc looks up every
// parameter's name when binding, and for numbered (?NNN) ones that lookup is
// linear, which makes a 500-parameter statement quadratic.

// Snapshots record the sighting's counts (counted = 1: a NULL count is one
// the owner hid; see 0004_history.sql).
func sqlSnapshots(n int) string {
	return `INSERT INTO trending_snapshots (run_id, region, fetched_at, rank, video, views, likes, dislikes, comments, counted)
		VALUES ` + strings.ReplaceAll(values(n, 9), "?)", "?,1)")
}

func sqlRegions(n int) string {
	return `INSERT INTO video_regions (region, first_seen, last_seen, snapshots, video, best_rank, last_rank)
		VALUES ` + strings.ReplaceAll(values(n, 6), "(?,?,?,", "(?,?,?,1,") + `
		ON CONFLICT (video, region) DO UPDATE SET
			best_rank  = min(best_rank, excluded.best_rank),
			last_rank  = iif(excluded.last_seen >= last_seen, excluded.last_rank, last_rank),
			first_seen = min(first_seen, excluded.first_seen),
			last_seen  = max(last_seen, excluded.last_seen),
			snapshots  = snapshots + 1`
}

// values returns "(?,?,?),(?,?,?)" for n rows of k columns.
func values(n, k int) string {
	row := "(" + placeholders(k) + ")"
	return strings.Repeat(row+",", n-1) + row
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}
