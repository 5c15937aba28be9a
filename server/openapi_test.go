package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/ytrend/ytrend/apiv1"
)

// TestOpenAPIMatchesResponses validates the served OpenAPI document, then
// real responses of every endpoint against it (kin-openapi: a maintained
// validator rather than a hand-written one).
func TestOpenAPIMatchesResponses(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	served := e.get(t, "/api/v1/openapi.json")
	if served.code != 200 || !bytes.Equal(served.body, apiv1.OpenAPI()) {
		t.Fatalf("openapi.json: %d", served.code)
	}
	doc, err := openapi3.NewLoader().LoadFromData(served.body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: e.srv.URL + "/api/v1"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := e.db.Chart(ctx, "US", time.Time{}, 1)
	word := aWord(t, e.db)
	paths := []struct {
		path string
		code int
	}{
		{"/api/v1/search?q=" + word + "&limit=5", 200},
		{"/api/v1/search?q=" + word + "&region=US&sort=views&since=3650d", 200},
		{"/api/v1/search?q=", 400},
		{"/api/v1/charts/US", 200},
		{"/api/v1/charts/US?at=2025-01-01&limit=3", 200},
		{"/api/v1/charts/KR", 404},
		{"/api/v1/videos/" + c.Entries[0].VideoID, 200},
		{"/api/v1/videos/AAAAAAAAAAA", 404},
		{"/api/v1/regions", 200},
		{"/api/v1/runs?limit=3", 200},
		{"/api/v1/runs?status=ok&region=GB", 200},
		{"/api/v1/quota", 200},
	}
	for _, p := range paths {
		r := e.get(t, p.path)
		if r.code != p.code {
			t.Fatalf("%s: %d, want %d: %s", p.path, r.code, p.code, r.body)
		}
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+p.path, nil)
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s: no route in the document: %v", p.path, err)
		}
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
			Status:                 r.code,
			Header:                 r.header,
			Body:                   io.NopCloser(bytes.NewReader(r.body)),
			Options:                &openapi3filter.Options{IncludeResponseStatus: true},
		}
		if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
			t.Errorf("%s: the response does not match the document: %v", p.path, err)
		}
	}
}

// TestOpenAPILint runs Redocly's linter with its recommended rules: public
// operations say security: [], every nullable has a type, the document has
// a license. It needs `npm i -g @redocly/cli`; without it the test skips
// locally and fails in CI.
func TestOpenAPILint(t *testing.T) {
	bin, err := exec.LookPath("redocly")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redocly is not installed (npm i -g @redocly/cli)")
		}
		t.Skip("redocly is not installed (npm i -g @redocly/cli)")
	}
	path := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(path, apiv1.OpenAPI(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "lint", "--extends=recommended", "--format=stylish", path)
	cmd.Dir = t.TempDir() // no redocly.yaml of the tree's
	out, err := cmd.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte(" error ")) {
		t.Fatalf("redocly lint: %v\n%s", err, out)
	}
}
