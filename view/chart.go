package view

import (
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Chart is a region's chart as one fetch saw it: GET /api/v1/charts/{region}
// (`ytrend chart --json` prints its entries).
type Chart struct {
	Region    regions.Code `json:"region"`
	RunID     int64        `json:"run_id"`
	FetchedAt time.Time    `json:"fetched_at"` // the fetch's newest page
	// PreviousRunID and PreviousFetchedAt name the fetch the movement is
	// measured against; 0 and null for a region's first chart.
	PreviousRunID     int64        `json:"previous_run_id"`
	PreviousFetchedAt *time.Time   `json:"previous_fetched_at"`
	Entries           []ChartEntry `json:"entries"`
}

// ChartEntry is one position of a Chart: store.ChartEntry's fields, with
// the thumbnail only if it is YouTube's (Thumbnail).
type ChartEntry struct {
	Rank         int            `json:"rank"`
	VideoID      string         `json:"video_id"`
	Title        string         `json:"title"`
	ChannelID    string         `json:"channel_id"` // "" when the source had none (the 2017-18 dataset)
	ChannelTitle string         `json:"channel_title"`
	CategoryID   string         `json:"category_id"`
	Category     string         `json:"category"`      // the region's name for CategoryID; "" if not cached
	ThumbnailURL *string        `json:"thumbnail_url"` // null unless an https URL on ytimg.com
	Views        *int64         `json:"views"`
	Likes        *int64         `json:"likes"`
	Comments     *int64         `json:"comments"`
	FetchedAt    time.Time      `json:"fetched_at"`
	PreviousRank *int           `json:"previous_rank"` // nil if not on the previous chart
	Change       int            `json:"change"`        // PreviousRank - Rank: positive moved up; 0 when new
	Movement     store.Movement `json:"movement"`
}

// FinalChartCacheControl is the Cache-Control of a chart asked for at a
// fixed time (?at= a date or an RFC 3339 time) that no fetch can change any
// more (store.Chart.Final): browsers and shared caches keep it a day
// without asking again. Not longer, and not "forever": an import of older
// history (ytrend import) can still insert a chart into the past, which
// changes the chart at a later time or its movement; the archive's version
// moves, so this server answers anew at once, but a cache that was told a
// year would show the old chart for a year. A day bounds that.
const FinalChartCacheControl = "public, max-age=86400, immutable"

// ChartCacheControl is the Cache-Control of chart c answered for ?at=at:
// FinalChartCacheControl when at is a fixed time and c is final, else ""
// (the answer keeps reply's default, revalidated at every use). A time
// relative to now (7d) names another chart as time passes, and the current
// chart changes with the next fetch.
func ChartCacheControl(at string, c store.Chart) string {
	if c.Final && AbsoluteTime(at) {
		return FinalChartCacheControl
	}
	return ""
}

// AbsoluteTime reports whether a time parameter names a fixed instant (a
// date or an RFC 3339 time), not one relative to now.
func AbsoluteTime(s string) bool {
	if _, err := time.Parse(time.DateOnly, s); err == nil {
		return true
	}
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// ChartOf shapes a chart the store read.
func ChartOf(c store.Chart) Chart {
	out := Chart{Region: c.Region, RunID: c.RunID, FetchedAt: c.FetchedAt,
		PreviousRunID: c.PreviousRunID, PreviousFetchedAt: c.PreviousFetchedAt, Entries: ChartEntries(c.Entries)}
	return out
}

// ChartEntries shapes a chart's entries (nil stays nil, as JSON null).
func ChartEntries(es []store.ChartEntry) []ChartEntry {
	if es == nil {
		return nil
	}
	out := make([]ChartEntry, len(es))
	for i, e := range es {
		out[i] = ChartEntry{Rank: e.Rank, VideoID: e.VideoID, Title: e.Title, ChannelID: e.ChannelID, ChannelTitle: e.ChannelTitle,
			CategoryID: e.CategoryID, Category: e.Category, ThumbnailURL: Thumbnail(e.ThumbnailURL), Views: e.Views, Likes: e.Likes,
			Comments: e.Comments, FetchedAt: e.FetchedAt, PreviousRank: e.PreviousRank, Change: e.Change, Movement: e.Movement}
	}
	return out
}

// History is a video's time on every region's chart: `ytrend history --json`.
type History struct {
	VideoID      string `json:"video_id"`
	Title        string `json:"title"`
	ChannelID    string `json:"channel_id"`
	ChannelTitle string `json:"channel_title"`
	CategoryID   string `json:"category_id"`
	// Category names CategoryID as the first of Regions with a cached name
	// does (any region's name if none has one); "" if not cached.
	Category string          `json:"category"`
	Regions  []RegionHistory `json:"regions"` // ordered by region code; empty if it never charted
}

// RegionHistory is a video's time on one region's chart (also the regions
// of GET /api/v1/videos/{id}).
type RegionHistory struct {
	Region    regions.Code `json:"region"`
	FirstSeen time.Time    `json:"first_seen"`
	LastSeen  time.Time    `json:"last_seen"`
	BestRank  int          `json:"best_rank"`
	// Days counts the UTC calendar days with at least one sighting.
	Days   int            `json:"days"`
	Points []HistoryPoint `json:"points"` // oldest first
}

// HistoryPoint is one sighting: the rank and the views at one fetch; field
// for field store.HistoryPoint.
type HistoryPoint struct {
	At    time.Time `json:"at"`
	Rank  int       `json:"rank"`
	Views *int64    `json:"views"` // nil: hidden
}

// HistoryOf shapes a history the store read.
func HistoryOf(h store.History) History {
	return History{VideoID: h.VideoID, Title: h.Title, ChannelID: h.ChannelID, ChannelTitle: h.ChannelTitle,
		CategoryID: h.CategoryID, Category: h.Category, Regions: RegionHistories(h.Regions)}
}

// RegionHistories shapes a history's regions (nil stays nil, as JSON null).
func RegionHistories(rs []store.RegionHistory) []RegionHistory {
	if rs == nil {
		return nil
	}
	out := make([]RegionHistory, len(rs))
	for i, r := range rs {
		out[i] = RegionHistory{Region: r.Region, FirstSeen: r.FirstSeen, LastSeen: r.LastSeen,
			BestRank: r.BestRank, Days: r.Days}
		if r.Points != nil {
			out[i].Points = make([]HistoryPoint, len(r.Points))
			for j, p := range r.Points {
				out[i].Points[j] = HistoryPoint(p)
			}
		}
	}
	return out
}

// Thumbnail is u if it is a thumbnail YouTube gave (an https URL on
// ytimg.com), else nil: the archive may hold what an older import stored,
// and a relative URL on a page would make each visitor's browser ask this
// server for it.
func Thumbnail(u string) *string {
	if !store.ValidThumbnail(u) {
		return nil
	}
	return &u
}
