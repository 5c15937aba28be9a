package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// rawWorld is an archive whose every video is known: its channel, the
// regions it trended in and when it was last seen in each.
type rawWorld struct {
	db       *store.DB
	channel  map[string]string                     // video id -> channel title
	chanID   map[string]string                     // video id -> channel id
	lastSeen map[string]map[regions.Code]time.Time // video id -> region -> last sighting
}

var (
	rawOnce    sync.Once
	rawWorldDB *rawWorld
)

// newRawWorld: 3 channels x 3 regions x 4 days; every title and description
// shares the words "alpha", "beta" and "gamma" so raw queries match widely.
func newRawWorld(tb testing.TB) *rawWorld {
	tb.Helper()
	rawOnce.Do(func() {
		dir, err := osMkdirTemp()
		if err != nil {
			tb.Fatal(err)
		}
		db, err := store.Open(context.Background(), dir+"/raw.db")
		if err != nil {
			tb.Fatal(err)
		}
		w := &rawWorld{db: db, channel: map[string]string{}, chanID: map[string]string{}, lastSeen: map[string]map[regions.Code]time.Time{}}
		chans := []string{"Alpha Music", "Beta News", "Gamma Sport"}
		words := []string{"alpha", "beta", "gamma"}
		for day := 0; day < 4; day++ {
			for ri, region := range []regions.Code{"US", "DE", "JP"} {
				at := t0.Add(time.Duration(day) * 24 * time.Hour)
				var vs []store.Video
				for ci, ch := range chans {
					id := fmt.Sprintf("v%d%d%d", ri, ci, day%2)
					vs = append(vs, store.Video{ID: id, ChannelID: fmt.Sprintf("UC%d", ci), ChannelTitle: ch,
						Title: words[(ci+day)%3] + " " + words[(ri+1)%3] + " clip", Description: strings.Join(words, " ")})
					w.channel[id], w.chanID[id] = ch, fmt.Sprintf("UC%d", ci)
					if w.lastSeen[id] == nil {
						w.lastSeen[id] = map[regions.Code]time.Time{}
					}
					w.lastSeen[id][region] = at
				}
				run, err := db.StartRun(context.Background(), region, store.TriggerCLI, at)
				if err != nil {
					tb.Fatal(err)
				}
				if _, err := db.SavePage(context.Background(), store.Page{RunID: run, Region: region, FetchedAt: at,
					Kind: store.PageChart, FirstRank: 1, Videos: vs}); err != nil {
					tb.Fatal(err)
				}
			}
		}
		rawWorldDB = w
	})
	return rawWorldDB
}

// check asserts that every hit passes every filter of q.
func (w *rawWorld) check(t *testing.T, q store.Query, hits []store.Hit) {
	t.Helper()
	for _, h := range hits {
		if q.Channel != "" && q.Channel != w.chanID[h.VideoID] &&
			!strings.Contains(strings.ToLower(w.channel[h.VideoID]), strings.ToLower(q.Channel)) {
			t.Errorf("raw %q --channel %q: %s of channel %q", q.Text, q.Channel, h.VideoID, w.channel[h.VideoID])
		}
		var newest time.Time
		for r, at := range w.lastSeen[h.VideoID] {
			if len(q.Regions) == 0 || slices.Contains(q.Regions, r) {
				if at.After(newest) {
					newest = at
				}
			}
		}
		if newest.IsZero() {
			t.Errorf("raw %q --region %v: %s never trended there (regions %v)", q.Text, q.Regions, h.VideoID, w.lastSeen[h.VideoID])
		} else if !q.Since.IsZero() && newest.Before(q.Since) {
			t.Errorf("raw %q --since %s: %s last seen %s", q.Text, q.Since, h.VideoID, newest)
		}
	}
}

// rawEscapes are raw texts that try to close the filter's parentheses.
var rawEscapes = []string{
	`alpha) OR (beta`,
	`alpha) OR (gamma) OR (beta`,
	`alpha)) OR ((beta`,
	`alpha OR beta`,
	`(alpha) OR beta`,
	`alpha) OR facets : (beta`,
	`NOT gamma) OR (alpha`,
	`gamma`,
}

func rawQueries(text string) []store.Query {
	since := t0.Add(3 * 24 * time.Hour)
	return []store.Query{
		{Text: text, Raw: true, Channel: "alpha music"},
		{Text: text, Raw: true, Regions: []regions.Code{"DE"}},
		{Text: text, Raw: true, Since: since},
		{Text: text, Raw: true, Channel: "beta", Regions: []regions.Code{"JP", "US"}, Since: since},
		{Text: text, Raw: true, Channel: "UC2", Sort: store.SortViews},
		{Text: text, Raw: true, Regions: []regions.Code{"US"}, Sort: store.SortRecent, Exhaustive: true},
	}
}

// A raw query is FTS5 syntax, but the filters hold whatever it says.
func TestRawQueryCannotEscapeFilters(t *testing.T) {
	w := newRawWorld(t)
	found := 0
	for _, text := range rawEscapes {
		for _, q := range rawQueries(text) {
			q.Limit = 100
			hits, err := w.db.Search(context.Background(), q)
			if errors.Is(err, store.ErrBadQuery) {
				// The text alone is no valid FTS5 query: it must say so
				// with or without filters.
				if _, alone := w.db.Search(context.Background(), store.Query{Text: text, Raw: true}); !errors.Is(alone, store.ErrBadQuery) {
					t.Errorf("%q: %v with filters, %v alone", text, err, alone)
				}
				continue
			}
			if err != nil {
				t.Errorf("%q: %v", text, err)
				continue
			}
			w.check(t, q, hits)
			found += len(hits)
		}
	}
	if found < 50 {
		t.Errorf("%d hits in all: the queries must match widely for the filters to be tested", found)
	}
}

func FuzzRawQueryFilters(f *testing.F) {
	for _, s := range rawEscapes {
		f.Add(s)
	}
	w := newRawWorld(f)
	f.Fuzz(func(t *testing.T, text string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, q := range rawQueries(text) {
			q.Limit = 100
			hits, err := w.db.Search(ctx, q)
			if errors.Is(err, store.ErrBadQuery) {
				continue
			}
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			w.check(t, q, hits)
		}
	})
}
