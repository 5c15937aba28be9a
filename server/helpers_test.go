package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/ratelimit"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/logbuf"
)

// fixtureVideos is the size of the archive every test reads: 26 charts over
// the synthetic regions, US twice (so its chart has movement).
const fixtureVideos = 4000

var (
	fixtureOnce sync.Once
	fixturePath string
	// fixtureOwned: this process built the fixture, and removes it.
	fixtureOwned bool
	fixtureErr   error
)

// fixtureEnv names the fixture to the fuzz workers that FuzzSearchParams's
// process starts: they inherit its environment, and read the archive it
// built instead of building three (at seconds each) and fuzzing late.
const fixtureEnv = "YTREND_SERVER_TEST_FIXTURE"

// fixture is the path of a shared archive built once per test binary (or,
// in a fuzz worker, by the process that started it); tests only read it.
func fixture(tb testing.TB) string {
	tb.Helper()
	fixtureOnce.Do(func() {
		if p := os.Getenv(fixtureEnv); p != "" {
			fixturePath, fixtureOwned = p, false
			return
		}
		dir, err := os.MkdirTemp("", "ytrend-serve-test-")
		if err != nil {
			fixtureErr = err
			return
		}
		fixturePath, fixtureOwned = filepath.Join(dir, "fixture.db"), true
		_, fixtureErr = archivetest.Build(context.Background(), fixturePath, archivetest.Generator(), fixtureVideos, nil)
		if fixtureErr == nil {
			fixtureErr = os.Setenv(fixtureEnv, fixturePath)
		}
	})
	if fixtureErr != nil {
		tb.Fatal(fixtureErr)
	}
	return fixturePath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureOwned {
		os.RemoveAll(filepath.Dir(fixturePath))
	}
	os.Exit(code)
}

// openRO opens the fixture read-only, as serve does.
func openRO(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), fixture(tb), store.ReadOnly())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// budget is the embedded ledger's status, as server.Open builds it: its
// own read-write handle (the ledger stores its limits' definitions on first
// use).
func budget(tb testing.TB, _ *store.DB) *quota.Limiter {
	tb.Helper()
	db, err := store.Open(context.Background(), fixture(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	l, err := quota.New(config.Default().QuotaConfig(), quota.NewSQLite(db.Writer()))
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

type env struct {
	db      *store.DB
	srv     *httptest.Server
	reg     *prometheus.Registry
	log     *logbuf.Buffer
	handler http.Handler
}

type envOpt func(*server.Config, *server.Deps)

func withLimit(n int, w time.Duration) envOpt {
	return func(c *server.Config, d *server.Deps) {
		c.RateLimit = ratelimit.Limit{Requests: n, Window: w}
		d.Limiter = ratelimit.NewMemory(c.RateLimit)
	}
}

// newEnv serves the fixture on a real listener.
func newEnv(t testing.TB, opts ...envOpt) *env {
	t.Helper()
	db := openRO(t)
	e := &env{db: db, reg: prometheus.NewRegistry(), log: &logbuf.Buffer{}}
	cfg := server.Config{}
	deps := server.Deps{Archive: db, Budget: budget(t, db), Metrics: metrics.NewHTTP(e.reg),
		Log: slog.New(slog.NewJSONHandler(e.log, nil))}
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

type resp struct {
	code   int
	header http.Header
	body   []byte
	close  bool // the server closes the connection (Connection: close, which the client strips)
}

// get fetches path with optional headers as "Name: value".
func (e *env) get(t testing.TB, path string, headers ...string) resp {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	// Go's transport adds Accept-Encoding: gzip and decompresses on its own
	// unless asked not to; tests want to see the wire.
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return resp{res.StatusCode, res.Header, b, res.Close}
}

func decode[T any](t testing.TB, r resp) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, r.body)
	}
	return v
}

// jsonOf is v as the API would write it, for comparing whole documents.
func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// counter reads a counter or histogram count from the registry.
func counter(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

var _ = fmt.Sprint

func mustPrefix(t testing.TB, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// options sends an OPTIONS request to url (an escaped path may follow the
// server's address) and returns the response, its body read and closed.
func options(t testing.TB, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}
