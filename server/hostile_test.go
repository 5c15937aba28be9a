package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/internal/reply"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// leaks are what an internal error would carry to a client.
var leaks = []string{"sql", "sqlite", "fts5", "syntax error", "goroutine", "panic", "runtime.", ".go:", "store:"}

func checkNoLeak(t testing.TB, what string, r resp) {
	t.Helper()
	body := strings.ToLower(string(r.body))
	for _, l := range leaks {
		if strings.Contains(body, l) {
			t.Fatalf("%s: %d; the body contains %q:\n%s", what, r.code, l, r.body)
		}
	}
}

var hostileQueries = []string{
	`q="`, `q=""`, `q=a"b`, `q=NEAR(a b)`, `q=a OR`, `q=*`, `q=a*`, `q=^a`, `q=title:a`, `q=a AND NOT b`,
	`q=(((`, `q=)`, `q=%00`, `q=%FF%FE`, `q=%C0%AF`, `q=` + strings.Repeat("a", 201), `q=` + strings.Repeat("%E3%81%82", 300),
	`q='; DROP TABLE videos; --`, `q=a&region=XX`, `q=a&region=` + strings.Repeat("US,", 30), `q=a&since=-7d`,
	`q=a&since=99999999d`, `q=a&since=0001-01-01`, `q=a&since=9999-12-31T23:59:59Z`, `q=a&sort=random`,
	`q=a&limit=-1`, `q=a&limit=0`, `q=a&limit=101`, `q=a&limit=1e3`, `q=a&limit=99999999999999999999`,
	`q=a&cursor=xyz`, `q=a&cursor=` + url.QueryEscape("o:-5"), `q=a&cursor=bzoxMDAwMDA`, `q=a&channel=` + strings.Repeat("c", 101),
	`q=a&channel=%25`, `q=a&channel=_`, `q=<script>alert(1)</script>`, `q=%0d%0aSet-Cookie:%20x=1`, `q=a&q=b`,
	`q=%E2%80%AE`, `q=%EE%80%80a%EE%80%81`, ``, `q=`, `region=US`,
}

// wire escapes what cannot stand in a request line (a server would refuse
// it before any handler sees it), and nothing else.
func wire(q string) string {
	return strings.NewReplacer(" ", "%20", "<", "%3C", ">", "%3E", `"`, "%22", "'", "%27", "^", "%5E").Replace(q)
}

// TestHostileSearch: whatever the query string, the API answers 200 or 400
// with a JSON body, never a 500 or an internal error's text.
func TestHostileSearch(t *testing.T) {
	e := newEnv(t)
	for _, q := range hostileQueries {
		for _, path := range []string{"/api/v1/search?", "/search?"} {
			r := e.get(t, path+wire(q))
			if r.code != http.StatusOK && r.code != http.StatusBadRequest {
				t.Fatalf("%s%s: %d\n%s", path, q, r.code, r.body)
			}
			checkNoLeak(t, path+q, r)
			if strings.HasPrefix(path, "/api") {
				if r.code == 400 && decode[reply.ErrorBody](t, r).Error.Code != "bad_request" {
					t.Fatalf("%s: %s", q, r.body)
				}
			} else if strings.Contains(string(r.body), "<script>") {
				t.Fatalf("%s: unescaped script in the page", q)
			}
		}
	}
	// Exact answers for a few.
	for _, tc := range []struct{ q, msg string }{
		{"q=", "q: required; give the words to search for"},
		{"q=a&sort=random", `sort "random": allowed relevance, recent, views`},
		{"q=a&limit=101", `limit "101": allowed 1-100`},
		{"q=a&region=UK", `region: "UK" is not a region code; did you mean "GB"?`},
		{"q=" + strings.Repeat("a", 201), "q: 201 characters; at most 200"},
		{"q=a&cursor=xyz", "cursor: not a cursor this endpoint gave out"},
	} {
		r := e.get(t, "/api/v1/search?"+wire(tc.q))
		if got := decode[reply.ErrorBody](t, r).Error.Message; r.code != 400 || got != tc.msg {
			t.Errorf("%s: %d %q; want 400 %q", tc.q, r.code, got, tc.msg)
		}
	}
}

func TestHostileRoutes(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/v1/nope", 404},
		{"GET", "/api/v1/charts/", 404},
		{"GET", "/api/v1/videos/", 404},
		{"POST", "/api/v1/search?q=a", 405},
		{"DELETE", "/", 405},
		{"GET", "/api/v1/search?q=" + strings.Repeat("a", server.MaxURLBytes), 414},
		{"GET", "/nope", 404},
		{"GET", "/videos/AAAAAAAAAAA", 404},
		{"GET", "/videos/..%2f..%2fetc%2fpasswd", 400},
		{"GET", "/charts/ZZ", 400},
		{"GET", "/charts/KR", 404},
		{"GET", "/charts/US?at=garbage", 400},
		{"GET", "/runs?limit=0", 400},
		{"GET", "/runs?cursor=zzz", 400},
		{"GET", "/api/v1/runs?status=weird", 400},
		{"GET", "/static/../../go.mod", 404},
		{"GET", "/static/style.css", 200},
	} {
		req, _ := http.NewRequest(tc.method, e.srv.URL+tc.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, res.StatusCode, tc.code)
		}
	}
	// A body is refused.
	res, err := http.Post(e.srv.URL+"/api/v1/search?q=a", "text/plain", strings.NewReader(strings.Repeat("x", 5000)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 && res.StatusCode != 413 {
		t.Errorf("POST with a body: %d", res.StatusCode)
	}
}

// failing is an archive whose every read fails the way SQLite would.
type failing struct{ view.Archive }

var errSQL = errors.New(`store: search: SQL logic error: fts5: syntax error near "\"" (1)`)

func (failing) Search(context.Context, store.Query) ([]store.Hit, error) { return nil, errSQL }
func (failing) Chart(context.Context, regions.Code, time.Time, int) (store.Chart, error) {
	return store.Chart{}, errSQL
}
func (failing) RegionFetches(context.Context) ([]store.RegionFetch, error) { return nil, errSQL }
func (failing) LastChange(context.Context) (time.Time, error)              { return time.Time{}, errSQL }

// TestInternalErrorsStayInside: a store failure reaches the client as a 500
// with a request id, and the log as the error with the same id.
func TestInternalErrorsStayInside(t *testing.T) {
	e := newEnv(t, func(_ *server.Config, d *server.Deps) { d.Archive = failing{d.Archive} })
	for _, path := range []string{"/api/v1/search?q=a", "/api/v1/charts/US", "/", "/search?q=a", "/api/v1/regions"} {
		r := e.get(t, path)
		if r.code != http.StatusInternalServerError {
			t.Fatalf("%s: %d, want 500", path, r.code)
		}
		checkNoLeak(t, path, r)
		id := r.header.Get("X-Request-Id")
		if id == "" || !strings.Contains(string(r.body), id) {
			t.Fatalf("%s: the body does not quote the request id %q: %s", path, id, r.body)
		}
		logged := false
		for _, line := range strings.Split(e.log.String(), "\n") {
			if strings.Contains(line, id) && strings.Contains(line, "fts5: syntax error") {
				logged = true
			}
		}
		if !logged {
			t.Fatalf("%s: no log line with request id %s and the error:\n%s", path, id, e.log.String())
		}
	}
}

// panicking panics in a handler: the client gets a 500, not a stack.
type panicking struct{ view.Archive }

func (panicking) Search(context.Context, store.Query) ([]store.Hit, error) {
	panic("boom at store/search.go:42")
}

func TestPanicIsA500(t *testing.T) {
	e := newEnv(t, func(_ *server.Config, d *server.Deps) { d.Archive = panicking{d.Archive} })
	r := e.get(t, "/api/v1/search?q=a")
	if r.code != 500 || decode[reply.ErrorBody](t, r).Error.Code != "internal" {
		t.Fatalf("%d %s", r.code, r.body)
	}
	checkNoLeak(t, "panic", r)
	if !strings.Contains(e.log.String(), "boom at store/search.go:42") {
		t.Fatal("the panic is not in the log")
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/", "/api/v1/regions", "/nope", "/static/style.css"} {
		r := e.get(t, path)
		h := r.header
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			strings.Contains(csp, "unsafe") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" || h.Get("X-Request-Id") == "" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
}

func TestCORS(t *testing.T) {
	e := newEnv(t, func(c *server.Config, _ *server.Deps) { c.CORSOrigins = []string{"https://charts.example"} })
	r := e.get(t, "/api/v1/regions", "Origin: https://charts.example")
	if r.header.Get("Access-Control-Allow-Origin") != "https://charts.example" {
		t.Fatalf("allowed origin: %v", r.header)
	}
	if r := e.get(t, "/api/v1/regions", "Origin: https://evil.example"); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("other origin allowed: %v", r.header)
	}
	if r := e.get(t, "/", "Origin: https://charts.example"); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("pages are not for other origins")
	}
}

// hostileTitle carries what acts on a terminal (CSI as the C1 U+009B, DEL,
// a right-to-left override), as an imported title may.
const hostileTitle = "api \u009b31m del\x7f rlo\u202e end"

// The API writes DEL, the C1 controls and the bidirectional overrides as
// \u escapes, as the CLI's --json does (red team: curl to a terminal got
// them raw): the same strings to a JSON reader, inert on the terminal. A
// second request, answered from the response cache, is the same bytes.
func TestAPIEscapesTerminalControls(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hostile.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	v := store.Video{ID: "hostile0001", Title: hostileTitle, ChannelTitle: "chan \u2066isolate\u2069", CategoryID: "22",
		Description: "nel \u0085 csi \u009b2J", PublishedAt: at.Add(-time.Hour)}
	if _, err := db.ImportChart(ctx, store.ImportedChart{Region: "US",
		Pages: []store.Page{{FetchedAt: at, FirstRank: 1, Videos: []store.Video{v}}}}); err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{}, server.Deps{Archive: db, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	e := &env{srv: srv}

	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/api/v1/videos/hostile0001", []string{hostileTitle, v.ChannelTitle, v.Description}},
		{"/api/v1/charts/US", []string{hostileTitle, v.ChannelTitle}},
		{"/api/v1/search?q=api", []string{hostileTitle, v.ChannelTitle}},
	} {
		path := tc.path
		for _, enc := range []string{"identity", "gzip"} {
			r := e.get(t, path, "Accept-Encoding: "+enc)
			if r.code != 200 {
				t.Fatalf("%s: %d %s", path, r.code, r.body)
			}
			checkNoRawControls(t, path, r.body)
			if !bytes.Contains(r.body, []byte(`api \u009b31m del\u007f rlo\u202e end`)) {
				t.Errorf("%s: the title's controls are not \\u escapes: %s", path, r.body)
			}
			strs := jsonStrings(t, r.body)
			for _, w := range tc.want {
				if !slices.Contains(strs, w) {
					t.Errorf("%s: decodes to %q, want %q among them", path, strs, w)
				}
			}
			if again := e.get(t, path, "Accept-Encoding: "+enc); !bytes.Equal(again.body, r.body) {
				t.Errorf("%s: the cached answer differs:\n%s\n%s", path, r.body, again.body)
			}
		}
	}
	// An error that quotes the request's path, with the same escapes.
	res, body := options(t, srv.URL+"/api/v1/x%C2%9B31m%E2%80%AE%7F")
	checkNoRawControls(t, "OPTIONS", body)
	var eb reply.ErrorBody
	if err := json.Unmarshal(body, &eb); err != nil || res.StatusCode != 404 ||
		eb.Error.Message != "there is nothing at /api/v1/x\u009b31m\u202e\x7f" || !bytes.Contains(body, []byte(`x\u009b31m\u202e\u007f`)) {
		t.Errorf("OPTIONS: %d %q (%v): %s", res.StatusCode, eb.Error.Message, err, body)
	}
}

// checkNoRawControls fails if body holds DEL, a C1 control or a
// bidirectional embedding, override or isolate as it is.
func checkNoRawControls(t testing.TB, what string, body []byte) {
	t.Helper()
	for _, r := range string(body) {
		if r >= 0x7f && humanfmt.TerminalControl(r) {
			t.Fatalf("%s: %U is in the body raw: %q", what, r, body)
		}
	}
}

// jsonStrings is every string in the JSON document b, keys apart.
func jsonStrings(t testing.TB, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// The plain-text errors outside the API quote the request's path with its
// terminal controls and line breaks as escapes (red team: `curl -X OPTIONS`
// of /%1b%5b31mX to a terminal turned it red), on one line.
func TestPlainErrorsEscapeTerminalControls(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ path, want string }{
		{"/%1b%5b31mX", `/\x1b[31mX`},
		{"/chart/del%7F", `/chart/del\x7f`},
		{"/c1%C2%9B31m%C2%85", `/c1\u009b31m\u0085`},
		{"/bidi%E2%80%AAa%E2%80%AEb%E2%81%A6c%E2%81%A9", `/bidi\u202aa\u202eb\u2066c\u2069`},
		{"/rtl-mark%E2%80%8F-stays", "/rtl-mark\u200f-stays"},
		// A line break would add a line of the client's choosing to the
		// one-line error (red team 27: Terminal keeps \n).
		{"/x%0a200%20OK:%20fake", `/x\x0a200 OK: fake`},
		{"/ls%E2%80%A8x%E2%80%A9", `/ls\u2028x\u2029`},
	} {
		res, body := options(t, e.srv.URL+tc.path)
		want := "404 Not Found: there is nothing at " + tc.want + "\n"
		if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") || string(body) != want {
			t.Errorf("OPTIONS %s: %d %s %q, want 404 text/plain %q", tc.path, res.StatusCode, res.Header.Get("Content-Type"), body, want)
		}
	}
}
