package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/internal/reply"
)

// FuzzSearchParams: any query string to /api/v1/search and /search gets a
// 200 or a 400 (a JSON error on the API), never a 500 or an internal
// error's text.
func FuzzSearchParams(f *testing.F) {
	for _, q := range hostileQueries {
		f.Add(wire(q))
	}
	f.Add("q=a&region=US,GB&since=7d&sort=recent&limit=5")
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, raw string) {
		for _, path := range []string{"/api/v1/search", "/search"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.URL.RawQuery = raw
			req.RemoteAddr = "192.0.2.1:1234"
			w := httptest.NewRecorder()
			e.handler.ServeHTTP(w, req)
			r := resp{code: w.Code, header: w.Header(), body: w.Body.Bytes()}
			switch {
			case r.code == http.StatusRequestURITooLong && len(raw)+len(path) > 4096:
				continue
			case r.code != http.StatusOK && r.code != http.StatusBadRequest:
				t.Fatalf("%s?%q: %d\n%s", path, raw, r.code, r.body)
			}
			if r.header.Get("Content-Encoding") == "" {
				checkNoLeak(t, path+"?"+raw, r)
			}
			if path == "/api/v1/search" && r.code == 400 {
				if er := decode[reply.ErrorBody](t, r); er.Error.Code != "bad_request" || strings.TrimSpace(er.Error.Message) == "" {
					t.Fatalf("%q: %s", raw, r.body)
				}
			}
		}
	})
}
