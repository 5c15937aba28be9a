package server_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// countingSearch counts the archive's searches.
type countingSearch struct {
	*store.DB
	searches atomic.Int64
}

func (c *countingSearch) Search(ctx context.Context, q store.Query) ([]store.Hit, error) {
	c.searches.Add(1)
	return c.DB.Search(ctx, q)
}

// Red team (issue 22, point 1): unknown parameters are refused so that they
// "cannot defeat the cache", but the known ones are keyed as spelt, and each
// has endless spellings of the same search: a forged cursor with leading
// zeros or a plus sign (o:0100, o:+100 decode as o:100), limit=077,
// regions in another order or repeated in lower case, q in another case.
// Each is a new cache key and a new search. Measured on a copy of 1m.db
// (q=official, sort=views, 5 regions, limit=77, cursor o:100): 0.66 s the
// first time, 0.6 ms repeated (cached), then 0.42-0.51 s for each of
// cursor o:0100, o:+100, limit=077, regions reordered, region=us added,
// q=Official, q="official": every one ran the search again.
func TestRedEquivalentSpellingsShareTheCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	if _, err := archivetest.Build(ctx, path, archivetest.Generator(), 300, nil); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ar := &countingSearch{DB: db}
	s, err := server.New(server.Config{}, server.Deps{Archive: ar, Budget: budget(t, db), Metrics: metrics.NewHTTP(prometheus.NewRegistry()),
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	e := &env{srv: srv}
	cur := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

	base := "/api/v1/search?q=music&sort=views&region=US&region=GB&limit=2&cursor=" + cur("o:2")
	if r := e.get(t, base); r.code != 200 {
		t.Fatalf("%s: %d %s", base, r.code, r.body)
	}
	e.get(t, base)
	if n := ar.searches.Load(); n != 1 {
		t.Fatalf("the same URL twice: %d searches, want 1", n)
	}
	for _, u := range []string{
		"/api/v1/search?q=music&sort=views&region=US&region=GB&limit=2&cursor=" + cur("o:02"),
		"/api/v1/search?q=music&sort=views&region=US&region=GB&limit=2&cursor=" + cur("o:+2"),
		"/api/v1/search?q=music&sort=views&region=US&region=GB&limit=02&cursor=" + cur("o:2"),
		"/api/v1/search?q=music&sort=views&region=GB&region=US&limit=2&cursor=" + cur("o:2"),
		"/api/v1/search?q=music&sort=views&region=US&region=GB&region=us&limit=2&cursor=" + cur("o:2"),
	} {
		before := ar.searches.Load()
		r := e.get(t, u)
		if r.code == 200 && ar.searches.Load() != before {
			t.Errorf("%s: the same search spelt another way ran again (200, not from the cache)", u)
		}
	}
}

// Red team (issue 22, point 1): the simplest cache bypass needs no unknown
// parameter at all. The cache keys the raw query, and an empty pair (a
// trailing "&", "&&"), an empty known parameter (cursor=, since=,
// region=) or a known one repeated (sort=views twice, q twice) is accepted
// and makes a new key. Measured on a copy of 1m.db (q=official sort=views,
// 3 regions, limit=66): 175 ms, 0.6 ms repeated, then 173-193 ms for each
// of "&", "&&", "&cursor=", "&since=", "&region=", "&sort=views",
// "&q=official" appended: all 200, every one a new search.
func TestRedEmptyOrRepeatedParametersDefeatTheCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	if _, err := archivetest.Build(ctx, path, archivetest.Generator(), 300, nil); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ar := &countingSearch{DB: db}
	s, err := server.New(server.Config{}, server.Deps{Archive: ar, Budget: budget(t, db), Metrics: metrics.NewHTTP(prometheus.NewRegistry()),
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	e := &env{srv: srv}
	base := "/api/v1/search?q=music&sort=views&region=US"
	e.get(t, base)
	for _, extra := range []string{"&", "&&", "&cursor=", "&since=", "&region=", "&sort=views", "&q=music"} {
		before := ar.searches.Load()
		r := e.get(t, base+extra)
		if r.code == 200 && ar.searches.Load() != before {
			t.Errorf("%q appended: 200 and the search ran again (the cache was defeated without an unknown parameter)", extra)
		}
	}
}
