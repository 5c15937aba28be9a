package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Video returns a stored video (by YouTube id) and where and when it
// trended. ErrNotFound if the archive does not hold it.
const (
	sqlVideo = `SELECT v.id, v.video_id, v.title, v.description, v.channel_id, v.channel_title, v.tags,
		v.category_id, v.published_at_s, v.duration_s, v.default_language, v.thumbnail_url, v.first_seen,
		s.last_seen, s.views, s.likes, s.comments
		FROM videos v JOIN video_stats s ON s.video = v.id WHERE v.video_id = ?`
	sqlVideoRegions = `SELECT region, best_rank, last_rank, last_seen, snapshots FROM video_regions
		WHERE video = ? ORDER BY region`
)

func (db *DB) Video(ctx context.Context, id string) (Video, VideoStats, error) {
	var v Video
	var st VideoStats
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return v, st, fmt.Errorf("store: video %s: %w", id, err)
	}
	defer tx.Rollback()
	var rowID, published, duration, firstSeen, lastSeen int64
	var tags string
	var views, likes, comments sql.NullInt64
	q, err := db.readStmt(ctx, tx, sqlVideo)
	if err != nil {
		return v, st, fmt.Errorf("store: video %s: %w", id, err)
	}
	err = q.QueryRowContext(ctx, id).Scan(&rowID, &v.ID, &v.Title, &v.Description, &v.ChannelID, &v.ChannelTitle, &tags, &v.CategoryID, &published,
		&duration, &v.DefaultLanguage, &v.ThumbnailURL, &firstSeen, &lastSeen, &views, &likes, &comments)
	if errors.Is(err, sql.ErrNoRows) {
		return v, st, fmt.Errorf("store: video %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return v, st, fmt.Errorf("store: video %s: %w", id, err)
	}
	if tags != "" {
		v.Tags = strings.Split(tags, "\n")
	}
	v.PublishedAt = time.Unix(published, 0).UTC()
	v.Duration = time.Duration(duration) * time.Second
	v.Views, v.Likes, v.Comments = ptr(views), ptr(likes), ptr(comments)
	st.FirstSeen, st.LastSeen = micros(firstSeen), micros(lastSeen)
	st.Regions = []RegionStat{}

	q, err = db.readStmt(ctx, tx, sqlVideoRegions)
	if err != nil {
		return v, st, fmt.Errorf("store: video %s: %w", id, err)
	}
	rows, err := q.QueryContext(ctx, rowID)
	if err != nil {
		return v, st, fmt.Errorf("store: video %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r RegionStat
		var last int64
		if err := rows.Scan(&r.Region, &r.BestRank, &r.LastRank, &last, &r.Snapshots); err != nil {
			return v, st, fmt.Errorf("store: video %s: %w", id, err)
		}
		r.LastSeen = micros(last)
		st.Regions = append(st.Regions, r)
	}
	if err := rows.Err(); err != nil {
		return v, st, fmt.Errorf("store: video %s: %w", id, err)
	}
	return v, st, nil
}

func ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

// Counts summarises the archive: videos, snapshots and runs stored, and the
// size of the database file with its write-ahead log.
func (db *DB) Counts(ctx context.Context) (Counts, error) {
	var c Counts
	err := db.reader.QueryRowContext(ctx, `SELECT videos, snapshots, (SELECT count(*) FROM runs) FROM archive_totals`).
		Scan(&c.Videos, &c.Snapshots, &c.Runs)
	if err != nil {
		return c, fmt.Errorf("store: counts: %w", err)
	}
	for _, p := range []string{db.path, db.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			c.Bytes += fi.Size()
		}
	}
	return c, nil
}
