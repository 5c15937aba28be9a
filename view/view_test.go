package view_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// A search request: what is kept, what is refused and with which words
// (the API and the search page show them as they are).
func TestParseSearch(t *testing.T) {
	for _, tc := range []struct {
		query   string
		empty   bool
		wantErr string
		check   func(view.Search) bool
	}{
		{query: "q=cricket", check: func(s view.Search) bool {
			return s.Query.Text == "cricket" && s.Limit == view.DefaultLimit && s.Offset == 0 &&
				s.Query.Limit == view.DefaultLimit+1 && s.Query.Sort == store.SortRelevance
		}},
		{query: "q=a&region=us,gb&region=in&region=US&sort=views&limit=5", check: func(s view.Search) bool {
			return len(s.Query.Regions) == 3 && slices.Equal(s.Query.Regions, []regions.Code{"GB", "IN", "US"}) && s.Query.Sort == store.SortViews && s.Query.Limit == 6
		}},
		{query: "q=a&since=7d", check: func(s view.Search) bool { return s.Query.Since.Equal(now.Add(-7 * 24 * time.Hour)) }},
		{query: "", empty: true, check: func(s view.Search) bool { return s.Query.Text == "" }},
		{query: "", wantErr: "q: required; give the words to search for"},
		{query: "q=a&sort=sideways", wantErr: `sort "sideways": allowed relevance, recent, views`},
		{query: "q=a&limit=0", wantErr: `limit "0": allowed 1-100`},
		{query: "q=a&cursor=nope", wantErr: "cursor: not a cursor this endpoint gave out"},
	} {
		v, _ := url.ParseQuery(tc.query)
		s, err := view.ParseSearch(v, now, tc.empty)
		if tc.wantErr != "" {
			var br *view.BadRequest
			if !errors.As(err, &br) || err.Error() != tc.wantErr {
				t.Errorf("%q: %v, want the bad request %q", tc.query, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !tc.check(s) {
			t.Errorf("%q: %+v, %v", tc.query, s, err)
		}
	}
}

// A shape keeps a storage slice's nil-ness: null stays null and [] stays [].
func TestShapesKeepNull(t *testing.T) {
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := js(view.ChartEntries(nil)); got != "null" {
		t.Errorf("nil entries: %s", got)
	}
	if got := js(view.ChartEntries([]store.ChartEntry{})); got != "[]" {
		t.Errorf("no entries: %s", got)
	}
	h := view.HistoryOf(store.History{VideoID: "v", Regions: []store.RegionHistory{{Region: "US", Days: 1}}})
	if got, want := js(h.Regions), `[{"region":"US","first_seen":"0001-01-01T00:00:00Z","last_seen":"0001-01-01T00:00:00Z","best_rank":0,"days":1,"points":null}]`; got != want {
		t.Errorf("regions %s, want %s", got, want)
	}
}

// A fetch report dates its retry-after from the now it is given.
func TestFetchReports(t *testing.T) {
	rs := view.FetchReports([]ingest.Report{{
		Region: "US", RunID: 7, Status: ingest.StatusStoppedQuota, Pages: 2, Units: 2, RefusedBy: "daily",
		RetryAt: now.Add(90 * time.Second), Err: errors.New("refused"), Started: now.Add(-time.Second), Finished: now,
	}}, now)
	if len(rs) != 1 {
		t.Fatalf("%d reports", len(rs))
	}
	r := rs[0]
	if r.Region != "US" || r.RunID != 7 || r.Status != "stopped_quota" || r.RetryAt != "2026-03-01T12:01:30Z" ||
		r.RetryAfterSeconds != 90 || r.DurationSeconds != 1 || r.Error != "refused" {
		t.Errorf("%+v", r)
	}
}

// A reservation by hand lists its limits, an empty list rather than null.
func TestReservationOf(t *testing.T) {
	r := view.ReservationOf(quota.Result{ID: "x", Call: "videos.list", Cost: 1, Granted: true})
	if r.Limits == nil || !r.Granted || r.ID != "x" || r.Cost != 1 {
		t.Errorf("%+v", r)
	}
}
