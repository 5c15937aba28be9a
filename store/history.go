package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// History is a video's life on the charts: per region, every fetch that saw
// it. Its wire form is view.History.
type History struct {
	VideoID      string
	Title        string
	ChannelID    string
	ChannelTitle string
	CategoryID   string
	// Category names CategoryID as the first of Regions with a cached name
	// does (any region's name if none has one); "" if not cached.
	Category string
	Regions  []RegionHistory // ordered by region code; empty if it never charted
}

// RegionHistory is a video's time on one region's chart.
type RegionHistory struct {
	Region    regions.Code
	FirstSeen time.Time
	LastSeen  time.Time
	BestRank  int
	// Days counts the UTC calendar days with at least one sighting.
	Days   int
	Points []HistoryPoint // oldest first
}

// HistoryPoint is one sighting: the rank and the views at one fetch.
type HistoryPoint struct {
	At    time.Time
	Rank  int
	Views *int64 // nil: hidden
}

const (
	sqlHistoryVideo  = `SELECT id, video_id, title, channel_id, channel_title, category_id FROM videos WHERE video_id = ?`
	sqlHistoryPoints = `SELECT region, fetched_at, rank, views FROM trending_snapshots WHERE video = ?
		ORDER BY region, fetched_at, rank`
)

// History returns where and when the video (by YouTube id) was on a chart.
// ErrNotFound if the archive does not hold it.
func (db *DB) History(ctx context.Context, videoID string) (History, error) {
	h := History{Regions: []RegionHistory{}}
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return h, fmt.Errorf("store: history of %s: %w", videoID, err)
	}
	defer tx.Rollback()
	var id int64
	q, err := db.readStmt(ctx, tx, sqlHistoryVideo)
	if err != nil {
		return h, fmt.Errorf("store: history of %s: %w", videoID, err)
	}
	err = q.QueryRowContext(ctx, videoID).Scan(&id, &h.VideoID, &h.Title, &h.ChannelID, &h.ChannelTitle, &h.CategoryID)
	if errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("store: history of %s: %w", videoID, ErrNotFound)
	}
	if err != nil {
		return h, fmt.Errorf("store: history of %s: %w", videoID, err)
	}
	q, err = db.readStmt(ctx, tx, sqlHistoryPoints)
	if err != nil {
		return h, fmt.Errorf("store: history of %s: %w", videoID, err)
	}
	rows, err := q.QueryContext(ctx, id)
	if err != nil {
		return h, fmt.Errorf("store: history of %s: %w", videoID, err)
	}
	defer rows.Close()
	var cur *RegionHistory
	var lastDay string
	for rows.Next() {
		var region string
		var at int64
		var p HistoryPoint
		var views sql.NullInt64
		if err := rows.Scan(&region, &at, &p.Rank, &views); err != nil {
			return h, fmt.Errorf("store: history of %s: %w", videoID, err)
		}
		p.At, p.Views = micros(at), ptr(views)
		if cur == nil || string(cur.Region) != region {
			h.Regions = append(h.Regions, RegionHistory{Region: regions.Code(region), FirstSeen: p.At, BestRank: p.Rank})
			cur, lastDay = &h.Regions[len(h.Regions)-1], ""
		}
		cur.Points = append(cur.Points, p)
		cur.LastSeen = p.At
		cur.BestRank = min(cur.BestRank, p.Rank)
		if day := p.At.Format(time.DateOnly); day != lastDay {
			cur.Days++
			lastDay = day
		}
	}
	if err := rows.Err(); err != nil {
		return h, fmt.Errorf("store: history of %s: %w", videoID, err)
	}
	rows.Close()
	q, err = db.readStmt(ctx, tx, sqlCategoryNames)
	if err != nil {
		return h, fmt.Errorf("store: history of %s: %w", videoID, err)
	}
	names, err := namesOfCategory(ctx, q, h.CategoryID)
	if err != nil {
		return h, fmt.Errorf("store: history of %s: %w", videoID, err)
	}
	rs := make([]regions.Code, len(h.Regions))
	for i, r := range h.Regions {
		rs[i] = r.Region
	}
	h.Category = names.name(h.CategoryID, rs...)
	return h, nil
}
