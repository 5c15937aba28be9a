package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/web"
)

// The pages over real HTTP and a real archive.
func TestPages(t *testing.T) {
	db := archivetest.Small(t)
	pages, err := web.Routes(web.Deps{Archive: db, Now: func() time.Time { return archivetest.SmallAt.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for pattern, h := range pages {
		mux.Handle(pattern, h)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tc := range []struct {
		path string
		code int
		want []string
	}{
		{"/", http.StatusOK, []string{"Cricket final highlights", "Five minute pasta"}},
		{"/charts/US", http.StatusOK, []string{"Cricket final highlights", "Five minute pasta"}},
		{"/search?q=pasta", http.StatusOK, []string{"<mark>pasta</mark>"}},
		{"/videos/cricket1", http.StatusOK, []string{"Cricket final highlights", "Sport Daily"}},
		{"/videos/nosuchvideo", http.StatusNotFound, nil},
		{"/runs", http.StatusOK, []string{"US"}},
		{"/nothing", http.StatusNotFound, []string{"There is no page here."}},
	} {
		res, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.code {
			t.Errorf("GET %s: %d, want %d", tc.path, res.StatusCode, tc.code)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q", tc.path, ct)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("GET %s: no %q in the page", tc.path, w)
			}
		}
	}
}
