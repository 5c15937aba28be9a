package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// Snapshot is one chart position fetched: where, when and at which rank a
// video was, the counts seen then, and the video's metadata. The metadata is
// the video's latest (the archive keeps one version of it), the counts are
// the sighting's own.
type Snapshot struct {
	Region    regions.Code
	Rank      int
	FetchedAt time.Time
	RunID     int64
	// Counts at the sighting; nil is hidden, or not recorded (likes,
	// dislikes and comments of charts stored before migration 0004).
	Views, Likes, Dislikes, Comments *int64
	// CommentsDisabled and RatingsDisabled say whether the comment and like
	// counts were hidden at the sighting (for sightings stored before
	// migration 0004, whether they are hidden now).
	CommentsDisabled, RatingsDisabled bool
	Video                             Video // Views, Likes, Comments, Dislikes left nil: see above
	// Category is the region's cached name for Video.CategoryID; "" if none.
	Category string
}

// SnapshotFilter selects snapshots; zero fields select everything.
type SnapshotFilter struct {
	Regions []regions.Code
	Since   time.Time // fetched at or after
	Until   time.Time // fetched at or before
	// Categories keeps the positions of videos in these category ids (see
	// CategoryIDs).
	Categories []string
}

// The runs in the order they were fetched (runs_last_page holds each run's
// id after its time, so no sort is needed), each run's positions by rank
// (the snapshots' primary key): no temporary B-tree, whatever the size.
const sqlSnapshotsExport = `SELECT r.region, t.rank, t.fetched_at, r.id, t.views, t.likes, t.dislikes, t.comments, t.counted,
		s.likes IS NULL, s.comments IS NULL,
		v.video_id, v.title, v.published_at_s, v.channel_id, v.channel_title, v.category_id, v.tags,
		v.thumbnail_url, v.description, v.duration_s, v.default_language, coalesce(c.title, '')
	FROM runs r INDEXED BY runs_last_page
	JOIN trending_snapshots t ON t.run_id = r.id
	JOIN videos v ON v.id = t.video
	JOIN video_stats s ON s.video = v.id
	LEFT JOIN categories c ON c.region = r.region AND c.category_id = v.category_id
	WHERE r.last_page_at >= ?1 AND r.started_at <= ?2 AND t.fetched_at BETWEEN ?1 AND ?2`

// Snapshots calls fn with every chart position fetched that f selects, in
// the order they were fetched (by run, then rank), from one consistent read
// of the archive. It streams: memory does not grow with the number of rows.
// fn must not keep s; an error from fn stops the walk and is returned.
func (db *DB) Snapshots(ctx context.Context, f SnapshotFilter, fn func(s *Snapshot) error) error {
	since, until := int64(-1<<63), int64(1<<63-1)
	if !f.Since.IsZero() {
		since = f.Since.UnixMicro()
	}
	if !f.Until.IsZero() {
		until = f.Until.UnixMicro()
	}
	q := sqlSnapshotsExport
	args := []any{since, until}
	if len(f.Regions) > 0 {
		codes := make([]string, len(f.Regions))
		for i, r := range f.Regions {
			if !regions.Valid(r) {
				return fmt.Errorf("store: snapshots: %q is not a region code", r)
			}
			codes[i] = string(r)
		}
		args = append(args, jsonIDs(codes))
		q += fmt.Sprintf(` AND r.region IN (SELECT value FROM json_each(?%d))`, len(args))
	}
	if len(f.Categories) > 0 {
		args = append(args, jsonIDs(f.Categories))
		q += fmt.Sprintf(` AND v.category_id IN (SELECT value FROM json_each(?%d))`, len(args))
	}
	q += ` ORDER BY r.last_page_at, r.id, t.rank`

	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("store: snapshots: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: snapshots: %w", err)
	}
	defer rows.Close()
	var s Snapshot
	for rows.Next() {
		var region, tags string
		var fetched, published, duration int64
		var views, likes, dislikes, comments sql.NullInt64
		var counted, likesHidden, commentsHidden bool
		s = Snapshot{}
		v := &s.Video
		if err := rows.Scan(&region, &s.Rank, &fetched, &s.RunID, &views, &likes, &dislikes, &comments, &counted,
			&likesHidden, &commentsHidden, &v.ID, &v.Title, &published, &v.ChannelID, &v.ChannelTitle, &v.CategoryID,
			&tags, &v.ThumbnailURL, &v.Description, &duration, &v.DefaultLanguage, &s.Category); err != nil {
			return fmt.Errorf("store: snapshots: %w", err)
		}
		s.Region, s.FetchedAt = regions.Code(region), micros(fetched)
		s.Views, s.Likes, s.Dislikes, s.Comments = ptr(views), ptr(likes), ptr(dislikes), ptr(comments)
		if counted {
			s.RatingsDisabled, s.CommentsDisabled = !likes.Valid, !comments.Valid
		} else {
			s.RatingsDisabled, s.CommentsDisabled = likesHidden, commentsHidden
		}
		if tags != "" {
			v.Tags = strings.Split(tags, "\n")
		}
		v.PublishedAt = time.Unix(published, 0).UTC()
		v.Duration = time.Duration(duration) * time.Second
		if err := fn(&s); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: snapshots: %w", err)
	}
	return nil
}
