// Package apiv1 is ytrend's JSON API under /api/v1: search, charts, videos,
// regions, runs and the budget's status, in the read model's shapes (package
// view, which the CLI's --json prints too), with cursor pagination, conditional
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
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// Deps is what the API needs. Budget may be nil (/quota then answers 503).
type Deps struct {
	Archive view.Archive
	Budget  view.Budget
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
		Prefix + "/search":          get(a.search, view.SearchParams...),
		Prefix + "/charts/{region}": get(a.chart, view.ChartParams...),
		Prefix + "/videos/{id}":     get(a.video),
		Prefix + "/regions":         get(a.regions),
		Prefix + "/runs":            get(a.runs, view.RunsParams...),
		Prefix + "/quota":           get(a.quota),
		Prefix + "/openapi.json": get(func(w http.ResponseWriter, r *http.Request) {
			reply.Write(w, r, http.StatusOK, "application/json", openAPI, time.Time{})
		}),
		Prefix + "/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reply.Error(w, r, http.StatusNotFound, "not_found", "no such endpoint; see "+Prefix+"/openapi.json")
		}),
	}
}

// get admits GET and HEAD only, with the query parameters params.
func get(h http.HandlerFunc, params ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			reply.Error(w, r, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed; use GET")
			return
		}
		if err := view.CheckParams(r.URL.Query(), params...); err != nil {
			reply.Error(w, r, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		h(w, r)
	})
}

// fail answers err: a client's mistake as 400 with its message, a missing
// row as 404 with msg404, a request that ran out of time as 503, anything
// else as a 500 that carries only the request id.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error, msg404 string) {
	var br *view.BadRequest
	switch {
	case errors.As(err, &br):
		reply.Error(w, r, http.StatusBadRequest, "bad_request", br.Error())
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

func (a *api) search(w http.ResponseWriter, r *http.Request) {
	s, err := view.ParseSearch(r.URL.Query(), a.Now(), false)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	s.Query.MarkOpen, s.Query.MarkClose = view.SnippetOpen, view.SnippetClose
	hits, next, err := view.RunSearch(r.Context(), a.Archive, s)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	results := view.Hits(hits)
	for i := range results {
		results[i].Snippet = view.SnippetHTML(results[i].Snippet)
	}
	reply.JSON(w, r, http.StatusOK, view.SearchPage{Results: results, NextCursor: next}, a.lastChange(r))
}

func (a *api) chart(w http.ResponseWriter, r *http.Request) {
	code, err := view.ParseRegion(r.PathValue("region"))
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	at, err := view.ParseAt(r.URL.Query().Get("at"), a.Now())
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	limit := 0
	if l := r.URL.Query().Get("limit"); l != "" {
		if limit, err = view.ParseChartLimit(l); err != nil {
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
	if cc := view.ChartCacheControl(r.URL.Query().Get("at"), c); cc != "" {
		w.Header().Set("Cache-Control", cc)
	}
	reply.JSON(w, r, http.StatusOK, view.ChartOf(c), a.lastChange(r))
}

func (a *api) video(w http.ResponseWriter, r *http.Request) {
	id, err := view.ParseVideoID(r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	v, err := view.LoadVideo(r.Context(), a.Archive, id)
	if err != nil {
		a.fail(w, r, err, fmt.Sprintf("the archive holds no video %s", id))
		return
	}
	reply.JSON(w, r, http.StatusOK, v, a.lastChange(r))
}

func (a *api) regions(w http.ResponseWriter, r *http.Request) {
	rs, err := view.Regions(r.Context(), a.Archive)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	reply.JSON(w, r, http.StatusOK, map[string]any{"regions": rs}, a.lastChange(r))
}

func (a *api) runs(w http.ResponseWriter, r *http.Request) {
	f, err := view.ParseRuns(r)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	runs, next, err := view.LoadRuns(r.Context(), a.Archive, f)
	if err != nil {
		a.fail(w, r, err, "")
		return
	}
	reply.JSON(w, r, http.StatusOK, view.RunsPage{Runs: view.PublicRuns(runs), NextCursor: next}, a.lastChange(r))
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
	reply.JSON(w, r, http.StatusOK, view.PublicStatus(st), time.Time{})
}
