package store

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
)

func (w writeTx) existing(rows []videoRow, region regions.Code) (map[string]existingVideo, error) {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.v.ID
	}
	rs, err := w.query(w.st.existing, jsonIDs(ids), string(region))
	if err != nil {
		return nil, fmt.Errorf("store: save page: look up videos: %w", err)
	}
	defer rs.Close()
	out := make(map[string]existingVideo, len(rows))
	for rs.Next() {
		var i int
		var e existingVideo
		if err := rs.Scan(&i, &e.id, &e.textHash, &e.metaHash, &e.docLen, &e.lastSeen, &e.bestRank, &e.inRegion); err != nil {
			return nil, fmt.Errorf("store: save page: look up videos: %w", err)
		}
		if i < 0 || i >= len(rows) {
			return nil, fmt.Errorf("store: save page: look up videos: index %d of %d", i, len(rows))
		}
		out[rows[i].v.ID] = e
	}
	return out, rs.Err()
}

// insertVideos inserts the rows not yet in videos (the others are left
// alone: the statement covers the whole page so that its text depends only on
// the page size) and returns the new rows' ids.
func (w writeTx) insertVideos(rows []videoRow, at int64, channels map[string]int64, region regions.Code) (map[string]int64, error) {
	regionFacets := ""
	if region != "" {
		regionFacets = " " + search.RegionFacet(region)
	}
	args := make([]any, 0, len(rows)*insertVideoCols)
	for _, r := range rows {
		v := r.v
		args = append(args, v.ID, v.Title, r.tags, v.ChannelTitle, v.Description, r.grams, v.ChannelID, v.CategoryID,
			v.PublishedAt.Unix(), int64(v.Duration/time.Second), v.DefaultLanguage, v.ThumbnailURL, at,
			search.ChannelFacet(channels[channelKey(v)])+regionFacets+search.TierFacets(0, r.rank))
	}
	rs, err := w.query(w.st.insertVideos, args...)
	if err != nil {
		return nil, fmt.Errorf("store: save page: insert videos: %w", err)
	}
	defer rs.Close()
	out := make(map[string]int64, len(rows))
	for rs.Next() {
		var vid string
		var id int64
		if err := rs.Scan(&vid, &id); err != nil {
			return nil, fmt.Errorf("store: save page: insert videos: %w", err)
		}
		out[vid] = id
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: save page: insert videos: %w", err)
	}
	return out, nil
}

func (w writeTx) updateVideo(id int64, r videoRow, channels map[string]int64) error {
	r.derive() // title_grams is a column of videos
	v := r.v
	err := w.exec(w.st.updateVideo, v.Title, r.tags, v.ChannelTitle, v.Description, r.grams, v.ChannelID, v.CategoryID,
		v.PublishedAt.Unix(), int64(v.Duration/time.Second), v.DefaultLanguage, v.ThumbnailURL,
		search.ChannelFacet(channels[channelKey(v)]), id)
	if err != nil {
		return fmt.Errorf("store: save page: update video %s: %w", v.ID, err)
	}
	return nil
}

func (w writeTx) upsertStats(rows []videoRow, ids []int64, channels map[string]int64, at int64) error {
	args := make([]any, 0, len(rows)*statsCols)
	for i, r := range rows {
		var rank any
		if r.rank > 0 {
			rank = r.rank
		}
		docLen, blob := int64(-1), []byte{} // unchanged text: keep what is stored
		if r.derived {
			docLen, blob = int64(r.docLen), r.terms
		}
		args = append(args, at, ids[i], channels[channelKey(r.v)], rank, nullable(r.v.Views), nullable(r.v.Likes),
			nullable(r.v.Comments), docLen, blob, r.textHash, r.metaHash)
	}
	if err := w.exec(w.st.stats, args...); err != nil {
		return fmt.Errorf("store: save page: video stats: %w", err)
	}
	return nil
}

func nullable(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func (w writeTx) insertSnapshots(p Page, rows []videoRow, ids []int64, at int64) error {
	args := make([]any, 0, len(rows)*9)
	for i, r := range rows {
		args = append(args, p.RunID, string(p.Region), at, r.rank, ids[i], nullable(r.v.Views), nullable(r.v.Likes),
			nullable(r.v.Dislikes), nullable(r.v.Comments))
	}
	if err := w.exec(w.st.snapshots, args...); err != nil {
		return fmt.Errorf("store: save page: snapshots: %w", err)
	}
	return nil
}

func (w writeTx) upsertRegions(region regions.Code, rows []videoRow, ids []int64, at int64) error {
	args := make([]any, 0, len(rows)*6)
	for i, r := range rows {
		args = append(args, string(region), at, at, ids[i], r.rank, r.rank)
	}
	if err := w.exec(w.st.regions, args...); err != nil {
		return fmt.Errorf("store: save page: video regions: %w", err)
	}
	return nil
}

// runProgress adds the page to its run, which must still be running. minID
// is the smallest id among the page's stored videos (MaxInt64 if none).
func (w writeTx) runProgress(p Page, videos int, res PageResult, minID int64) error {
	r, err := w.tx.StmtContext(w.ctx, w.st.runProgress).ExecContext(w.ctx, videos, res.New, res.Updated, p.Units, p.RunID,
		p.FetchedAt.UnixMicro(), minID, w.owner)
	if err != nil {
		return fmt.Errorf("store: save page: run progress: %w", err)
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return nil
	}
	var status string
	err = w.tx.QueryRowContext(w.ctx, `SELECT status FROM runs WHERE id = ?`, p.RunID).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("store: save page: run %d: %w", p.RunID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("store: save page: run %d: %w", p.RunID, err)
	}
	return fmt.Errorf("store: save page: run %d: %w (it is %s)", p.RunID, ErrRunFinished, status)
}

// ftsDelete removes rows from the index, with the values they were indexed
// with (read from videos, so call it before changing or deleting the rows).
func (w writeTx) ftsDelete(ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := w.exec(w.st.ftsDelete, jsonIDs(ids)); err != nil {
		return fmt.Errorf("store: remove from index: %w", err)
	}
	w.ftsWrites.Add(1)
	return nil
}

// ftsInsert indexes rows as they are now in videos.
func (w writeTx) ftsInsert(ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := w.exec(w.st.ftsInsert, jsonIDs(ids)); err != nil {
		return fmt.Errorf("store: index: %w", err)
	}
	w.ftsWrites.Add(1)
	return nil
}

func int64Args(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}
