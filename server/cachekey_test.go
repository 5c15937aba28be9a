package server_test

import (
	"context"
	"encoding/base64"
	"sync/atomic"
	"testing"

	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
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

// Each search has one cache key, however it is spelt (issue 22, point 1;
// found by the red team): a forged cursor with leading zeros or a plus sign
// (o:0100, o:+100) or limit=077 is refused, and regions in another order or
// repeated in lower case are the same set. Before, each was a new cache key
// and a new search. Measured on a copy of 1m.db
// (q=official, sort=views, 5 regions, limit=77, cursor o:100): 0.66 s the
// first time, 0.6 ms repeated (cached), then 0.42-0.51 s for each of
// cursor o:0100, o:+100, limit=077, regions reordered, region=us added,
// q=Official, q="official": every one ran the search again.
func TestEquivalentSpellingsShareTheCache(t *testing.T) {
	db := smallArchive(t)
	ar := &countingSearch{DB: db}
	_, e := serveArchive(t, db, ar, server.Config{}, nil)
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

// The simplest cache bypass needed no unknown parameter at all (issue 22,
// point 1; found by the red team): the cache keyed the raw query, so an
// empty pair (a trailing "&", "&&"), an empty known parameter (cursor=,
// since=, region=) or a known one repeated made a new key. Now the key is
// the canonical query and a repeated parameter is refused. Measured on a
// copy of 1m.db (q=official sort=views,
// 3 regions, limit=66): 175 ms, 0.6 ms repeated, then 173-193 ms for each
// of "&", "&&", "&cursor=", "&since=", "&region=", "&sort=views",
// "&q=official" appended: all 200, every one a new search.
func TestEmptyOrRepeatedParametersCannotDefeatTheCache(t *testing.T) {
	db := smallArchive(t)
	ar := &countingSearch{DB: db}
	_, e := serveArchive(t, db, ar, server.Config{}, nil)
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
