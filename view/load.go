package view

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Archive is what the read model loads from; *store.DB implements it.
type Archive interface {
	Search(ctx context.Context, q store.Query) ([]store.Hit, error)
	Chart(ctx context.Context, region regions.Code, at time.Time, limit int) (store.Chart, error)
	History(ctx context.Context, videoID string) (store.History, error)
	Video(ctx context.Context, id string) (store.Video, store.VideoStats, error)
	Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error)
	RegionFetches(ctx context.Context) ([]store.RegionFetch, error)
	LastChange(ctx context.Context) (time.Time, error)
}

// Budget reads the quota budget's state; *quota.Limiter implements it.
type Budget interface {
	Status(ctx context.Context) (quota.Status, error)
}

// SearchPage is /search's answer.
type SearchPage struct {
	Results    []Hit   `json:"results"`
	NextCursor *string `json:"next_cursor"`
}

// RunSearch runs a parsed search and cuts out its page (shared with the
// search page, which marks snippets its own way).
func RunSearch(ctx context.Context, ar Archive, s Search) (hits []store.Hit, next *string, err error) {
	all, err := ar.Search(ctx, s.Query)
	if err != nil {
		return nil, nil, err
	}
	if s.Offset >= len(all) {
		return []store.Hit{}, nil, nil
	}
	end := min(len(all), s.Offset+s.Limit)
	if len(all) > end && end < MaxDepth {
		c := encodeCursor("o", int64(end))
		next = &c
	}
	return all[s.Offset:end], next, nil
}

// ParseChartLimit reads a chart's limit parameter (1-200).
func ParseChartLimit(s string) (int, error) {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n < 1 || n > 200 || fmt.Sprint(n) != s {
		return 0, bad("limit %q: allowed 1-200", clip(s))
	}
	return n, nil
}

// Video is /videos/{id}: the video's latest metadata and its whole history
// on the charts (the regions are `ytrend history --json`'s).
type Video struct {
	VideoID         string          `json:"video_id"`
	Title           string          `json:"title"`
	Description     string          `json:"description"`
	ChannelID       string          `json:"channel_id"`
	ChannelTitle    string          `json:"channel_title"`
	Tags            []string        `json:"tags"`
	CategoryID      string          `json:"category_id"`
	Category        string          `json:"category"` // CategoryID's name (ytrend history's); "" if not cached
	PublishedAt     *time.Time      `json:"published_at"`
	DurationSeconds int64           `json:"duration_seconds"`
	ThumbnailURL    *string         `json:"thumbnail_url"` // null unless an https URL on ytimg.com
	Views           *int64          `json:"views"`
	Likes           *int64          `json:"likes"`
	Comments        *int64          `json:"comments"`
	URL             string          `json:"url"`
	FirstSeen       time.Time       `json:"first_seen"`
	LastSeen        time.Time       `json:"last_seen"`
	Regions         []RegionHistory `json:"regions"`
}

// LoadVideo reads a video and its history (shared with the video page).
func LoadVideo(ctx context.Context, ar Archive, id string) (Video, error) {
	v, st, err := ar.Video(ctx, id)
	if err != nil {
		return Video{}, err
	}
	h, err := ar.History(ctx, id)
	if err != nil {
		return Video{}, err
	}
	out := Video{VideoID: v.ID, Title: v.Title, Description: v.Description, ChannelID: v.ChannelID,
		ChannelTitle: v.ChannelTitle, Tags: v.Tags, CategoryID: v.CategoryID, Category: h.Category,
		DurationSeconds: int64(v.Duration / time.Second), ThumbnailURL: Thumbnail(v.ThumbnailURL),
		Views: v.Views, Likes: v.Likes, Comments: v.Comments, URL: WatchURL(v.ID),
		FirstSeen: st.FirstSeen, LastSeen: st.LastSeen, Regions: RegionHistories(h.Regions)}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if v.PublishedAt.Unix() > 0 {
		t := v.PublishedAt
		out.PublishedAt = &t
	}
	return out, nil
}

// Region is one of /regions.
type Region struct {
	Code      string     `json:"code"`
	Name      string     `json:"name"`
	LastFetch *time.Time `json:"last_fetch"` // the newest chart's; null if the archive has none
	Charts    int64      `json:"charts"`
}

// Regions lists every region YouTube charts, with what the archive holds.
func Regions(ctx context.Context, ar Archive) ([]Region, error) {
	fetches, err := ar.RegionFetches(ctx)
	if err != nil {
		return nil, err
	}
	byCode := map[regions.Code]store.RegionFetch{}
	for _, f := range fetches {
		byCode[f.Region] = f
	}
	out := []Region{}
	for _, c := range regions.All() {
		r := Region{Code: c.String(), Name: c.Name()}
		if f, ok := byCode[c]; ok {
			t := f.LastFetch
			r.LastFetch, r.Charts = &t, f.Charts
		}
		out = append(out, r)
	}
	return out, nil
}

// RunsPage is /runs's answer.
type RunsPage struct {
	Runs       []Run   `json:"runs"`
	NextCursor *string `json:"next_cursor"`
}

// ParseRuns reads /runs's parameters (region, status, limit, cursor).
func ParseRuns(r *http.Request) (store.RunFilter, error) {
	q := r.URL.Query()
	f := store.RunFilter{}
	if s := q.Get("region"); s != "" {
		code, err := ParseRegion(s)
		if err != nil {
			return f, err
		}
		f.Region = code
	}
	switch s := store.RunStatus(q.Get("status")); s {
	case "":
	case store.StatusRunning, store.StatusOK, store.StatusStoppedQuota, store.StatusFailed, store.StatusInterrupted, store.StatusFenced:
		f.Status = s
	default:
		return f, bad("status %q: allowed running, ok, stopped_quota, failed, interrupted, fenced", clip(string(s)))
	}
	var err error
	if f.Limit, err = parseLimit(q.Get("limit")); err != nil {
		return f, err
	}
	if c := q.Get("cursor"); c != "" {
		if f.Before, err = decodeCursor(c, "b"); err != nil {
			return f, err
		}
	}
	return f, nil
}

// LoadRuns reads one page of runs.
func LoadRuns(ctx context.Context, ar Archive, f store.RunFilter) ([]store.Run, *string, error) {
	limit := f.Limit
	f.Limit++
	runs, err := ar.Runs(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	var next *string
	if len(runs) > limit {
		runs = runs[:limit]
		c := encodeCursor("b", runs[limit-1].ID)
		next = &c
	}
	return runs, next, nil
}

// PublicStatus is the budget's state as the API shows it: the leader's
// host and the Redis warnings are an operator's business, not a visitor's.
func PublicStatus(st quota.Status) QuotaStatus {
	out := Status(st)
	out.Leader = nil
	return out
}
