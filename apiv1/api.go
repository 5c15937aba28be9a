// Package apiv1 is ytrend's JSON API under /api/v1: search, charts, videos,
// regions, runs and the budget's status, in the same snake_case shapes as
// the CLI's --json (shapes.go), with cursor pagination, conditional
// responses, gzip, and errors as {"error": {"code", "message"}}.
//
// Key decision: handlers read the archive through a small interface and
// never pass an internal error's text to the client; store and FTS errors
// are logged with the request id (internal/reply), and the client gets the id.
package apiv1

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ytrend/ytrend/internal/reply"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Archive is what the API reads; *store.DB implements it.
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

// Deps is what the API needs. Budget may be nil (/quota then answers 503).
type Deps struct {
	Archive Archive
	Budget  Budget
	Log     *slog.Logger
	Now     func() time.Time // default time.Now
}

//go:embed openapi.json
var openAPI []byte

// OpenAPI is the API's OpenAPI 3 document.
func OpenAPI() []byte { return openAPI }

type api struct{ Deps }

// Prefix is where the API is mounted.
const Prefix = "/api/v1"

// Routes returns each route pattern (for metrics labels) and its handler.
func Routes(d Deps) map[string]http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	a := &api{d}
	return map[string]http.Handler{
		Prefix + "/search":          get(a.search),
		Prefix + "/charts/{region}": get(a.chart),
		Prefix + "/videos/{id}":     get(a.video),
		Prefix + "/regions":         get(a.regions),
		Prefix + "/runs":            get(a.runs),
		Prefix + "/quota":           get(a.quota),
		Prefix + "/openapi.json": get(func(w http.ResponseWriter, r *http.Request) {
			reply.Write(w, r, http.StatusOK, "application/json", openAPI, time.Time{})
		}),
		Prefix + "/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reply.Error(w, r, http.StatusNotFound, "not_found", "no such endpoint; see "+Prefix+"/openapi.json")
		}),
	}
}

// get admits GET and HEAD only.
func get(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			reply.Error(w, r, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed; use GET")
			return
		}
		h(w, r)
	})
}

// fail answers err: a client's mistake as 400 with its message, a missing
// row as 404 with msg404, a request that ran out of time as 503, anything
// else as a 500 that carries only the request id.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error, msg404 string) {
	var br *BadRequest
	switch {
	case errors.As(err, &br):
		reply.Error(w, r, http.StatusBadRequest, "bad_request", br.msg)
	case errors.Is(err, store.ErrNotFound):
		reply.Error(w, r, http.StatusNotFound, "not_found", msg404)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		a.Log.Warn("request timed out", "request_id", reply.RequestID(r.Context()), "path", r.URL.Path, "err", err)
		reply.Error(w, r, http.StatusServiceUnavailable, "timeout", "the archive took too long to answer; try again")
	default:
		reply.Internal(w, r, a.Log, err)
	}
}

func (a *api) lastChange(r *http.Request) time.Time {
	t, err := a.Archive.LastChange(r.Context())
	if err != nil {
		return time.Time{}
	}
	return t
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
	if len(all) > end && end < store.MaxLimit {
		c := encodeCursor("o", int64(end))
		next = &c
	}
	return all[s.Offset:end], next, nil
}

func (a *api) search(w http.ResponseWriter, r *http.Request) {
	s, err := ParseSearch(r.URL.Query(), a.Now(), false)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	s.Query.MarkOpen, s.Query.MarkClose = "<mark>", "</mark>"
	hits, next, err := RunSearch(r.Context(), a.Archive, s)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	reply.JSON(w, r, http.StatusOK, SearchPage{Results: Hits(hits), NextCursor: next}, a.lastChange(r))
}

func (a *api) chart(w http.ResponseWriter, r *http.Request) {
	code, err := ParseRegion(r.PathValue("region"))
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	at, err := ParseAt(r.URL.Query().Get("at"), a.Now())
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	limit := 0
	if l := r.URL.Query().Get("limit"); l != "" {
		if limit, err = parseChartLimit(l); err != nil {
			a.fail(w, r, err, "")
			return
		}
	}
	c, err := a.Archive.Chart(r.Context(), code, at, limit)
	if err != nil {
		when := "yet"
		if !at.IsZero() {
			when = "at or before " + at.UTC().Format(time.RFC3339)
		}
		a.fail(w, r, err, fmt.Sprintf("the archive has no chart of %s %s", code, when))
		return
	}
	reply.JSON(w, r, http.StatusOK, c, a.lastChange(r))
}

func parseChartLimit(s string) (int, error) {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n < 1 || n > 200 || fmt.Sprint(n) != s {
		return 0, bad("limit %q: allowed 1-200", clip(s))
	}
	return n, nil
}

// Video is /videos/{id}: the video's latest metadata and its whole history
// on the charts (the regions are `ytrend history --json`'s).
type Video struct {
	VideoID         string                `json:"video_id"`
	Title           string                `json:"title"`
	Description     string                `json:"description"`
	ChannelID       string                `json:"channel_id"`
	ChannelTitle    string                `json:"channel_title"`
	Tags            []string              `json:"tags"`
	CategoryID      string                `json:"category_id"`
	Category        string                `json:"category"` // CategoryID's name (ytrend history's); "" if not cached
	PublishedAt     *time.Time            `json:"published_at"`
	DurationSeconds int64                 `json:"duration_seconds"`
	ThumbnailURL    string                `json:"thumbnail_url"`
	Views           *int64                `json:"views"`
	Likes           *int64                `json:"likes"`
	Comments        *int64                `json:"comments"`
	URL             string                `json:"url"`
	FirstSeen       time.Time             `json:"first_seen"`
	LastSeen        time.Time             `json:"last_seen"`
	Regions         []store.RegionHistory `json:"regions"`
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
		DurationSeconds: int64(v.Duration / time.Second), ThumbnailURL: v.ThumbnailURL,
		Views: v.Views, Likes: v.Likes, Comments: v.Comments, URL: WatchURL(v.ID),
		FirstSeen: st.FirstSeen, LastSeen: st.LastSeen, Regions: h.Regions}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if v.PublishedAt.Unix() > 0 {
		t := v.PublishedAt
		out.PublishedAt = &t
	}
	return out, nil
}

func (a *api) video(w http.ResponseWriter, r *http.Request) {
	id, err := ParseVideoID(r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	v, err := LoadVideo(r.Context(), a.Archive, id)
	if err != nil {
		a.fail(w, r, err, fmt.Sprintf("the archive holds no video %s", id))
		return
	}
	reply.JSON(w, r, http.StatusOK, v, a.lastChange(r))
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

func (a *api) regions(w http.ResponseWriter, r *http.Request) {
	rs, err := Regions(r.Context(), a.Archive)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	reply.JSON(w, r, http.StatusOK, map[string]any{"regions": rs}, a.lastChange(r))
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

func (a *api) runs(w http.ResponseWriter, r *http.Request) {
	f, err := ParseRuns(r)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	runs, next, err := LoadRuns(r.Context(), a.Archive, f)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	reply.JSON(w, r, http.StatusOK, RunsPage{Runs: Runs(runs), NextCursor: next}, a.lastChange(r))
}

// PublicStatus is the budget's state as the API shows it: the leader's
// host and the Redis warnings are an operator's business, not a visitor's.
func PublicStatus(st quota.Status) QuotaStatus {
	out := Status(st)
	out.Leader = nil
	return out
}

func (a *api) quota(w http.ResponseWriter, r *http.Request) {
	if a.Budget == nil {
		reply.Error(w, r, http.StatusServiceUnavailable, "unavailable", "this server does not read the quota budget")
		return
	}
	st, err := a.Budget.Status(r.Context())
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	reply.JSON(w, r, http.StatusOK, PublicStatus(st), time.Time{})
}
