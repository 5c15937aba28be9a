package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/internal/reply"
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

// The API's early refusals vary like its answers: a 405 or a 414 that a
// shared cache keeps must not be replayed to another origin either.
func TestVaryOnAPIRefusals(t *testing.T) {
	e := hostileArchive(t, func(c *server.Config, _ *server.Deps) { c.CORSOrigins = []string{"https://a.example"} })
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{http.MethodPost, "/api/v1/regions", http.StatusMethodNotAllowed},
		{http.MethodGet, "/api/v1/search?q=" + strings.Repeat("a", server.MaxURLBytes), http.StatusRequestURITooLong},
	} {
		req, _ := http.NewRequest(tc.method, e.srv.URL+tc.path, nil)
		req.Header.Set("Origin", "https://a.example")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.code {
			t.Errorf("%s %.40s: %d, want %d", tc.method, tc.path, res.StatusCode, tc.code)
		}
		if got := res.Header.Values("Vary"); len(got) != 1 || got[0] != "Origin, Accept-Encoding" {
			t.Errorf("%s %.40s: Vary %q, want one \"Origin, Accept-Encoding\"", tc.method, tc.path, got)
		}
	}
}

// OPTIONS says what is allowed, and renders nothing; on a path that is no
// resource it is 404 like any other method.
func TestOptionsAnswersAllow(t *testing.T) {
	e := hostileArchive(t)
	for _, path := range []string{"/", "/search?q=cats", "/charts/US", "/api/v1/search?q=cats"} {
		res, _ := options(t, e.srv.URL+path)
		if res.StatusCode != http.StatusNoContent || res.Header.Get("Allow") != "GET, HEAD, OPTIONS" || res.ContentLength > 0 {
			t.Errorf("OPTIONS %s: %d, Allow %q, %d bytes", path, res.StatusCode, res.Header.Get("Allow"), res.ContentLength)
		}
	}
	for _, path := range []string{"/no-such-page", "/api/v1/no-such-thing", "/charts"} {
		req, _ := http.NewRequest(http.MethodOptions, e.srv.URL+path, nil)
		req.Header.Set("Origin", "https://a.example")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Allow") != "" {
			t.Errorf("OPTIONS %s: %d, Allow %q, want 404 without Allow", path, res.StatusCode, res.Header.Get("Allow"))
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

// An import of history older than anything in the archive changes what the
// pages show without moving the newest page's time: Last-Modified (the
// newest page's time, before) must move anyway, or If-Modified-Since gets a
// 304 for an answer that changed. The import is another process's write
// (a second handle), seen by the server's in-memory version within
// versionEvery.
func TestLastModifiedMovesWhenOlderHistoryLands(t *testing.T) {
	e := hostileArchive(t)
	first := e.get(t, "/api/v1/charts/US?at=2018-01-02T00:00:00Z")
	if first.code != http.StatusNotFound {
		t.Fatalf("a chart of 2018 before the import: %d", first.code)
	}
	before := e.get(t, "/api/v1/regions")
	lm := before.header.Get("Last-Modified")
	if lm == "" {
		t.Fatal("no Last-Modified")
	}
	w, err := store.Open(context.Background(), e.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	old := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := w.ImportChart(context.Background(), store.ImportedChart{Region: "US", Pages: []store.Page{{FetchedAt: old, FirstRank: 1,
		Videos: []store.Video{{ID: "old00000001", Title: "from 2018", ChannelID: "UC1", ChannelTitle: "c"}}}}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.get(t, "/api/v1/regions", "If-Modified-Since: "+lm)
		if r.code == http.StatusOK {
			if got := r.header.Get("Last-Modified"); got == lm {
				t.Fatalf("a changed answer with the same Last-Modified %s", lm)
			}
			if r.header.Get("ETag") == before.header.Get("ETag") {
				t.Errorf("the regions' answer changed (one more chart), its ETag did not")
			}
			break
		}
		if r.code != http.StatusNotModified || time.Now().After(deadline) {
			t.Fatalf("after importing 2018: %d with If-Modified-Since %s; want 200 once the import is seen", r.code, lm)
		}
		runtime.Gosched()
	}
	if r := e.get(t, "/api/v1/charts/US?at=2018-01-02T00:00:00Z"); r.code != http.StatusOK {
		t.Errorf("the chart of 2018 after the import: %d", r.code)
	}
}

// Eight addresses of one /64 are one client: before, each got its own
// limit (all eight answered under a 5 per 10 s limit), and a zone suffix
// made yet another. An address a trusted proxy forwards that cannot be
// read is refused, not counted against the proxy.
func TestIPv6NeighboursShareOneLimit(t *testing.T) {
	e := newEnv(t, withLimit(5, 10*time.Second), func(c *server.Config, _ *server.Deps) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	var codes []int
	for i := 1; i <= 8; i++ {
		xff := fmt.Sprintf("2001:db8:1:2::%x", i)
		if i == 8 {
			xff += "%eth1"
		}
		codes = append(codes, e.get(t, "/api/v1/regions", "X-Forwarded-For: "+xff).code)
	}
	want := []int{200, 200, 200, 200, 200, 429, 429, 429}
	if !slices.Equal(codes, want) {
		t.Errorf("eight addresses of 2001:db8:1:2::/64: %v, want %v", codes, want)
	}
	// Another /64 has its own limit.
	if r := e.get(t, "/api/v1/regions", "X-Forwarded-For: 2001:db8:1:3::1"); r.code != 200 {
		t.Errorf("the next /64: %d", r.code)
	}
	for _, xff := range []string{"garbage", "198.51.100.7, not-an-ip", "198.51.100.7,"} {
		r := e.get(t, "/api/v1/regions", "X-Forwarded-For: "+xff)
		if r.code != http.StatusBadRequest || !strings.Contains(string(r.body), "X-Forwarded-For") {
			t.Errorf("X-Forwarded-For %q: %d %s", xff, r.code, r.body)
		}
	}
}

// What one request may ask is bounded, and a parameter the endpoint does
// not take is refused: ignored, it defeated the response cache (each
// ?junk=N a miss) at no cost to the client.
func TestRequestBounds(t *testing.T) {
	e := newEnv(t)
	deep := base64.RawURLEncoding.EncodeToString([]byte("o:190"))
	for _, tc := range []struct {
		path, msg string
	}{
		{"/api/v1/search?q=a&junk=1", `parameter "junk": unknown; allowed q, region, since, channel, sort, limit, cursor`},
		{"/api/v1/regions?junk=1", `parameter "junk": this takes no parameters`},
		{"/api/v1/videos/AAAAAAAAAAA?x=", `parameter "x": this takes no parameters`},
		{"/api/v1/charts/US?junk=1", `parameter "junk": unknown; allowed at, limit`},
		{"/api/v1/search?q=a&region=US,GB,DE,FR,JP,KR,IN,BR,MX,CA,RU", "region: more than 10 regions"},
		{"/api/v1/search?q=a&sort=views&cursor=" + deep, "cursor: past the last page (a search pages through its first 200 results)"},
	} {
		r := e.get(t, tc.path)
		if got := decode[reply.ErrorBody](t, r).Error.Message; r.code != http.StatusBadRequest || got != tc.msg {
			t.Errorf("%s: %d %q, want 400 %q", tc.path, r.code, got, tc.msg)
		}
	}
	for _, path := range []string{"/search?q=a&junk=1", "/?junk=1", "/charts/US?limit=5", "/runs?junk=1"} {
		if r := e.get(t, path); r.code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", path, r.code)
		}
	}
}

// /runs and /api/v1/runs say why a run failed in words from a fixed list,
// never the error's text: each raw text below is what `ytrend fetch`
// really stored (a proxy's URL with a user name and password; a proxy
// answering 502 with its error page, which names its host and admin; a TLS
// interception proxy whose certificate names internal hosts). Before,
// the part after the last ": " was shown, which held the last two.
func TestRunErrorsCarryTheReasonOnly(t *testing.T) {
	runs := []struct{ raw, reason string }{
		{`fetch US page 1: Get "https://alice:s3cret@proxy.corp.internal:3128/youtube/v3/videos?chart=mostPopular": dial tcp 10.1.2.3:3128: connect: connection refused`,
			"connection refused"},
		{`chart page 1: videos.list failed after 4 attempts (HTTP 502): googleapi: got HTTP response code 502 with body: <html><body>ERROR The requested URL could not be retrieved. Generated Tue by squid01.corp.internal (squid/4.10) admin alice.smith@corp.example</body></html>`,
			"upstream HTTP 502"},
		{`chart page 1: videos.list failed after 4 attempts (connection failed): Get "https://localhost:18443/youtube/v3/videos?key=REDACTED": tls: failed to verify certificate: x509: certificate is valid for proxy.corp.internal, vault.alice-laptop.lan, not localhost`,
			"TLS certificate error"},
	}
	path := filepath.Join(t.TempDir(), "runs.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		run, err := db.StartRun(ctx, "US", store.TriggerCLI, time.Now().Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusFailed, At: time.Now(), Error: r.raw}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ro, err := store.Open(ctx, path, store.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	s, err := server.New(server.Config{}, server.Deps{Archive: ro, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	e := &env{srv: srv}
	p := decode[view.RunsPage](t, e.get(t, "/api/v1/runs"))
	var got []string
	for _, r := range p.Runs {
		got = append(got, r.Error)
	}
	slices.Sort(got)
	want := []string{"TLS certificate error", "connection refused", "upstream HTTP 502"}
	if !slices.Equal(got, want) {
		t.Errorf("API runs' errors %q, want %q", got, want)
	}
	page := string(e.get(t, "/runs").body)
	for _, leak := range []string{"alice", "s3cret", "corp.internal", "corp.example", "squid", "alice-laptop.lan", "10.1.2.3", "localhost", "https://"} {
		if strings.Contains(page, leak) || strings.Contains(jsonOf(t, p), leak) {
			t.Errorf("/runs shows %q", leak)
		}
	}
	for _, r := range runs {
		if !strings.Contains(page, r.reason) {
			t.Errorf("the runs page does not say %q", r.reason)
		}
	}
}
