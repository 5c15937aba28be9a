package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// hostileArchive is an archive an older import filled with what YouTube
// would never send: thumbnails that are not YouTube's and a title made to
// run in whoever sets it as HTML. It is served read-only, as serve does.
func hostileArchive(t *testing.T, opts ...envOpt) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hostile.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	vs := []store.Video{
		{ID: "relative001", Title: "relative cats", ThumbnailURL: "/api/v1/search?q=a&sort=views", ChannelID: "UC1", ChannelTitle: "c"},
		{ID: "javascript1", Title: "javascript cats", ThumbnailURL: "javascript:alert(1)", ChannelID: "UC1", ChannelTitle: "c"},
		{ID: "dataurl0001", Title: "data cats", ThumbnailURL: "data:image/png;base64,AAAA", ChannelID: "UC1", ChannelTitle: "c"},
		{ID: "xss00000001", Title: `<img src=x onerror=alert(1)> cats`, Description: `<b>cats</b> & "dogs"`,
			ThumbnailURL: "https://i.ytimg.com/vi/xss00000001/default.jpg", ChannelID: "UC1", ChannelTitle: "c"},
	}
	if _, err := db.ImportChart(ctx, store.ImportedChart{Region: "US", Pages: []store.Page{{FetchedAt: at, FirstRank: 1, Videos: vs}}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := store.Open(ctx, path, store.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	e := &env{db: ro}
	cfg := server.Config{}
	deps := server.Deps{Archive: ro, Log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(&cfg, &deps)
	}
	s, err := server.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	e.handler = s.Handler()
	e.srv = httptest.NewServer(e.handler)
	t.Cleanup(e.srv.Close)
	return e
}

// The API's thumbnail_url is YouTube's or null, whatever the archive
// holds; the pages show no other image, and their CSP would load none.
func TestThumbnailsOnlyFromYouTube(t *testing.T) {
	e := hostileArchive(t)
	c := decode[view.Chart](t, e.get(t, "/api/v1/charts/US"))
	if len(c.Entries) != 4 {
		t.Fatalf("%d entries", len(c.Entries))
	}
	for _, en := range c.Entries {
		want := en.VideoID == "xss00000001"
		if (en.ThumbnailURL != nil) != want || (want && *en.ThumbnailURL != "https://i.ytimg.com/vi/xss00000001/default.jpg") {
			t.Errorf("%s: thumbnail_url %v", en.VideoID, en.ThumbnailURL)
		}
	}
	for _, id := range []string{"relative001", "javascript1", "dataurl0001"} {
		r := e.get(t, "/api/v1/videos/"+id)
		if strings.Contains(string(r.body), `"thumbnail_url":null`) != true {
			t.Errorf("/videos/%s: %s", id, r.body)
		}
	}
	page := e.get(t, "/charts/US")
	for _, bad := range []string{`src="/api`, `src="javascript`, `src="data:`, "#ZgotmplZ"} {
		if strings.Contains(string(page.body), bad) {
			t.Errorf("the chart page holds %s", bad)
		}
	}
	if n := strings.Count(string(page.body), "<img"); n != 1 {
		t.Errorf("%d images on the chart page, want 1", n)
	}
	csp := page.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "img-src https://i.ytimg.com https://*.ytimg.com;") || strings.Contains(csp, "img-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
}

// API snippets are HTML text: escaped, with <mark> added after escaping,
// as the pages show them.
func TestSnippetsAreEscapedHTML(t *testing.T) {
	e := hostileArchive(t)
	p := decode[view.SearchPage](t, e.get(t, "/api/v1/search?q=cats"))
	var snip string
	for _, h := range p.Results {
		if h.VideoID == "xss00000001" {
			snip = h.Snippet
		}
	}
	want := `&lt;b&gt;<mark>cats</mark>&lt;/b&gt; &amp; &#34;dogs&#34;`
	if snip != want {
		t.Errorf("API snippet %q, want %q", snip, want)
	}
	page := string(e.get(t, "/search?q=cats").body)
	if !strings.Contains(page, want) || strings.Contains(page, "<img src=x") {
		t.Errorf("the search page does not show the snippet %q escaped", want)
	}
}

// A CORS answer varies by Origin and by Accept-Encoding, fresh or from the
// cache: one Vary used to replace the other.
func TestVaryOnCORSAnswers(t *testing.T) {
	e := hostileArchive(t, func(c *server.Config, _ *server.Deps) { c.CORSOrigins = []string{"https://a.example"} })
	for i := range 3 {
		r := e.get(t, "/api/v1/search?q=cats", "Origin: https://a.example", "Accept-Encoding: gzip")
		if got := r.header.Values("Vary"); len(got) != 1 || got[0] != "Origin, Accept-Encoding" {
			t.Errorf("request %d: Vary %q, want one \"Origin, Accept-Encoding\"", i, got)
		}
		if r.header.Get("Access-Control-Allow-Origin") != "https://a.example" {
			t.Errorf("request %d: %v", i, r.header)
		}
	}
}

// OPTIONS says what is allowed, and renders nothing.
func TestOptionsAnswersAllow(t *testing.T) {
	e := hostileArchive(t)
	for _, path := range []string{"/", "/search?q=cats", "/charts/US", "/api/v1/search?q=cats"} {
		req, _ := http.NewRequest(http.MethodOptions, e.srv.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent || res.Header.Get("Allow") != "GET, HEAD, OPTIONS" || res.ContentLength > 0 {
			t.Errorf("OPTIONS %s: %d, Allow %q, %d bytes", path, res.StatusCode, res.Header.Get("Allow"), res.ContentLength)
		}
	}
}

// Accept-Encoding's q-values are read as numbers.
func TestAcceptEncodingQValues(t *testing.T) {
	e := newEnv(t)
	for ae, gz := range map[string]bool{
		"gzip": true, "gzip;q=0.5": true, "gzip; q=0.001": true, "deflate, gzip;q=1.0": true, "*;q=0.1": true,
		"gzip;q=0": false, "gzip;q=0.000": false, "identity": false, "*;q=0": false, "gzip;q=0, *": false,
	} {
		r := e.get(t, "/api/v1/regions", "Accept-Encoding: "+ae)
		if got := r.header.Get("Content-Encoding") == "gzip"; got != gz {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", ae, got, gz)
		}
	}
}
