// Package web is ytrend serve's pages: the current chart with thumbnails and
// movement, search with highlighted snippets, past charts, a video's rank
// and views over time as server-drawn SVG, runs and the budget. Templates
// and the stylesheet are embedded; the pages need no JavaScript.
//
// Key decision: every page is rendered from the read model the JSON API
// also adapts (package view), so a page and /api/v1 never disagree, and the plots are
// drawn on the server as SVG so that they work without scripts and under a
// CSP that allows none.
package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ytrend/ytrend/internal/reply"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Deps is what the pages read.
type Deps struct {
	Archive view.Archive
	Budget  view.Budget // nil: /quota says it cannot tell
	Log     *slog.Logger
	Now     func() time.Time
}

type pages struct {
	Deps
	tmpl map[string]*template.Template
}

var funcs = template.FuncMap{
	"fmtTime": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04 UTC")
		}
		return ""
	},
	"views":     viewsText,
	"join":      joinCodes,
	"rfc3339":   func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"snippet":   func(s string) template.HTML { return template.HTML(view.SnippetHTML(s)) },
	"seconds":   func(s float64) string { return (time.Duration(s * float64(time.Second))).Round(time.Second).String() },
	"high":      func(units int64) int64 { return units * 9 / 10 },
	"titleText": titleText,
}

// titleText is text for a page's <title>, which a browser shows as plain
// text (a tab, the history, a bookmark), where no markup can isolate it:
// the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
// U+2066-U+2069) are dropped, so that an unclosed U+202E in a video's
// title cannot reverse the " · ytrend" after it. They draw nothing, so a
// reader loses nothing they could see; the page itself shows the title as
// it is, isolated (<bdi>, dir="auto"). Wrapping the title in U+2068 ...
// U+2069, plain text's <bdi>, would not do instead: a U+2069 of the
// title's own would close it early unless dropped all the same. The marks
// U+200E, U+200F and U+061C stay: right-to-left text needs them, and they
// act no further than a letter of that direction does.
func titleText(s string) string {
	return strings.Map(func(r rune) rune {
		if '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069' {
			return -1
		}
		return r
	}, s)
}

// Routes returns each page's pattern and handler.
func Routes(d Deps) (map[string]http.Handler, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	p := &pages{Deps: d, tmpl: map[string]*template.Template{}}
	for _, name := range []string{"chart", "search", "video", "runs", "quota", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: %s template: %w", name, err)
		}
		p.tmpl[name] = t
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	return map[string]http.Handler{
		"/{$}":             p.only(p.home, view.HomeParams...),
		"/search":          p.only(p.search, view.SearchParams...),
		"/charts/{region}": p.only(p.chart, "at"),
		"/videos/{id}":     p.only(p.video),
		"/runs":            p.only(p.runs, view.RunsParams...),
		"/quota":           p.only(p.quota),
		"/static/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "public, max-age=3600")
			files.ServeHTTP(w, r)
		}),
		"/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.page(w, r, http.StatusNotFound, "error", pageData{Title: "Not found", Error: "There is no page here."})
		}),
	}, nil
}

// only serves h to requests with no query parameter but params.
func (p *pages) only(h http.HandlerFunc, params ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := view.CheckParams(r.URL.Query(), params...); err != nil {
			p.page(w, r, http.StatusBadRequest, "error", pageData{Title: "Bad request", Error: err.Error()})
			return
		}
		h(w, r)
	})
}

// pageData is what every template reads; each page fills in its part.
type pageData struct {
	Title, Error string
	Query        string
	// chart and home
	Home                      bool
	Region, At                string
	Regions                   []view.Region
	Chart                     store.Chart
	Rows                      template.HTML // Chart's entries, made by chartRowsHTML
	Hits                      []store.Hit
	Searched                  bool
	SearchText                string // the searched words, in the heading
	Next                      string
	Since, Sort               string
	SinceChoices, SortChoices []choice
	Video                     view.Video
	RankPlot, ViewsPlot       template.HTML
	Runs                      []view.Run
	Status                    view.QuotaStatus
	CacheControl              string // a 200's own Cache-Control; "": reply's default
}

type choice struct{ Value, Label string }

// joinCodes lists region codes with spaces.
func joinCodes(codes []regions.Code) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = c.String()
	}
	return strings.Join(s, " ")
}

// page renders a template into a buffer first, so that a failure half way
// is a clean error page rather than half a page.
func (p *pages) page(w http.ResponseWriter, r *http.Request, status int, name string, v pageData) {
	var buf bytes.Buffer
	if err := p.tmpl[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		p.internal(w, r, err)
		return
	}
	lastMod := time.Time{}
	if status == http.StatusOK && name != "quota" {
		lastMod, _ = p.Archive.LastChange(r.Context())
	}
	if status == http.StatusOK && v.CacheControl != "" {
		w.Header().Set("Cache-Control", v.CacheControl)
	}
	reply.Write(w, r, status, "text/html; charset=utf-8", buf.Bytes(), lastMod)
}

// internal logs err with the request id and shows a page that carries only
// the id.
func (p *pages) internal(w http.ResponseWriter, r *http.Request, err error) {
	id := reply.RequestID(r.Context())
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		p.Log.Warn("page timed out", "request_id", id, "path", r.URL.Path, "err", err)
		p.plain(w, r, http.StatusServiceUnavailable, "The archive took too long to answer; try again.")
		return
	}
	p.Log.Error("page failed", "request_id", id, "path", r.URL.Path, "err", err)
	p.plain(w, r, http.StatusInternalServerError, "Something went wrong on our side (request id "+id+").")
}

func (p *pages) plain(w http.ResponseWriter, r *http.Request, status int, msg string) {
	var buf bytes.Buffer
	if err := p.tmpl["error"].ExecuteTemplate(&buf, "layout", pageData{Title: http.StatusText(status), Error: msg}); err != nil {
		http.Error(w, msg, status)
		return
	}
	reply.Write(w, r, status, "text/html; charset=utf-8", buf.Bytes(), time.Time{})
}

// badRequest shows a client's mistake on the page it belongs to.
func (p *pages) badRequest(w http.ResponseWriter, r *http.Request, name string, v pageData, err error) {
	v.Error = err.Error()
	if v.Title == "" {
		v.Title = "Bad request"
	}
	p.page(w, r, http.StatusBadRequest, name, v)
}

func (p *pages) home(w http.ResponseWriter, r *http.Request) {
	rs, err := view.Regions(r.Context(), p.Archive)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	var charted []view.Region
	for _, x := range rs {
		if x.LastFetch != nil {
			charted = append(charted, x)
		}
	}
	v := pageData{Home: true, Regions: charted}
	region := r.URL.Query().Get("region")
	if region == "" {
		region = defaultRegion(charted)
	}
	p.renderChart(w, r, v, region)
}

// defaultRegion is US when the archive has it, else the region fetched last.
func defaultRegion(charted []view.Region) string {
	best := ""
	var at time.Time
	for _, x := range charted {
		if x.Code == "US" {
			return "US"
		}
		if x.LastFetch.After(at) {
			best, at = x.Code, *x.LastFetch
		}
	}
	return best
}

func (p *pages) chart(w http.ResponseWriter, r *http.Request) {
	p.renderChart(w, r, pageData{}, r.PathValue("region"))
}

func (p *pages) renderChart(w http.ResponseWriter, r *http.Request, v pageData, region string) {
	v.At = r.URL.Query().Get("at")
	if region == "" {
		v.Title, v.Error = "Trending charts", "The archive holds no chart yet."
		p.page(w, r, http.StatusOK, "chart", v)
		return
	}
	code, err := view.ParseRegion(region)
	if err != nil {
		v.Title = "Trending charts"
		p.badRequest(w, r, "chart", v, err)
		return
	}
	v.Region = code.String()
	v.Title = code.Name() + " trending chart"
	at, err := view.ParseAt(v.At, p.Now())
	if err != nil {
		p.badRequest(w, r, "chart", v, err)
		return
	}
	if !at.IsZero() {
		v.Title += " as of " + v.At
	}
	v.Chart, err = p.Archive.Chart(r.Context(), code, at, 0)
	switch {
	case errors.Is(err, store.ErrNotFound):
		v.Error = "The archive has no chart of " + code.Name() + " at or before that time."
		p.page(w, r, http.StatusNotFound, "chart", v)
		return
	case err != nil:
		p.internal(w, r, err)
		return
	}
	if v.At == "" {
		v.At = v.Chart.FetchedAt.UTC().Format(time.DateOnly)
	}
	v.Rows = chartRowsHTML(chartRows(v.Chart.Entries))
	v.CacheControl = view.ChartCacheControl(r.URL.Query().Get("at"), v.Chart)
	p.page(w, r, http.StatusOK, "chart", v)
}

var sinceChoices = []choice{{"", "any time"}, {"24h", "the last day"}, {"7d", "the last week"}, {"30d", "the last 30 days"}, {"365d", "the last year"}}
var sortChoices = []choice{{"relevance", "relevance"}, {"recent", "most recent"}, {"views", "most viewed"}}

func (p *pages) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := pageData{Title: "Search", SinceChoices: sinceChoices, SortChoices: sortChoices,
		Query: q.Get("q"), Region: q.Get("region"), Since: q.Get("since"), Sort: q.Get("sort")}
	if v.Sort == "" {
		v.Sort = "relevance"
	}
	rs, err := view.Regions(r.Context(), p.Archive)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	v.Regions = rs
	s, err := view.ParseSearch(q, p.Now(), true)
	if err != nil {
		p.badRequest(w, r, "search", v, err)
		return
	}
	if s.Query.Text == "" {
		p.page(w, r, http.StatusOK, "search", v)
		return
	}
	v.Title = "Search: " + s.Query.Text
	v.SearchText, v.Searched = s.Query.Text, true
	s.Query.MarkOpen, s.Query.MarkClose = view.SnippetOpen, view.SnippetClose
	hits, next, err := view.RunSearch(r.Context(), p.Archive, s)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	v.Hits = hits
	if next != nil {
		nq := url.Values{}
		for k, vs := range q {
			nq[k] = vs
		}
		nq.Set("cursor", *next)
		v.Next = "/search?" + nq.Encode()
	}
	p.page(w, r, http.StatusOK, "search", v)
}

func (p *pages) video(w http.ResponseWriter, r *http.Request) {
	id, err := view.ParseVideoID(r.PathValue("id"))
	if err != nil {
		p.badRequest(w, r, "error", pageData{}, err)
		return
	}
	vid, err := view.LoadVideo(r.Context(), p.Archive, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		p.page(w, r, http.StatusNotFound, "error", pageData{Title: "Not found", Error: "The archive holds no video " + id + "."})
		return
	case err != nil:
		p.internal(w, r, err)
		return
	}
	v := pageData{Title: vid.Title, Video: vid}
	v.RankPlot = rankPlot(vid.Regions)
	v.ViewsPlot = viewsPlot(vid.Regions)
	p.page(w, r, http.StatusOK, "video", v)
}

func (p *pages) runs(w http.ResponseWriter, r *http.Request) {
	v := pageData{Title: "Fetch runs"}
	f, err := view.ParseRuns(r)
	if err != nil {
		p.badRequest(w, r, "runs", v, err)
		return
	}
	runs, next, err := view.LoadRuns(r.Context(), p.Archive, f)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	v.Runs = view.PublicRuns(runs)
	if next != nil {
		nq := r.URL.Query()
		nq.Set("cursor", *next)
		v.Next = "/runs?" + nq.Encode()
	}
	p.page(w, r, http.StatusOK, "runs", v)
}

func (p *pages) quota(w http.ResponseWriter, r *http.Request) {
	v := pageData{Title: "Quota budget"}
	if p.Budget == nil {
		v.Error = "This server does not read the quota budget."
		p.page(w, r, http.StatusOK, "quota", v)
		return
	}
	st, err := p.Budget.Status(r.Context())
	if err != nil {
		p.internal(w, r, err)
		return
	}
	v.Status = view.PublicStatus(st)
	p.page(w, r, http.StatusOK, "quota", v)
}
