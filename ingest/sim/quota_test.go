package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
)

// Past the day's quota every request is refused with Google's exact
// quotaExceeded answer, and not charged; a new quota day resets it.
func TestQuotaExceededThenReset(t *testing.T) {
	s, hs, clock := newTestServer(t, Config{Quota: 250, Day: 10 * time.Second})
	svc := client(t, hs, testKey)
	chart := func() error {
		_, err := svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("FR").MaxResults(50).Do()
		return err
	}
	search := func() error {
		_, err := svc.Search.List([]string{"snippet"}).Q("a").Do()
		return err
	}
	for i, call := range []func() error{search, search, chart} { // 100 + 100 + 1
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	// 201 spent: a search (100) no longer fits, a chart page (1) still does.
	gerr := googleErr(t, search(), http.StatusForbidden, "quotaExceeded")
	const msg = `The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.`
	if gerr.Message != msg {
		t.Errorf("message %q", gerr.Message)
	}
	const body = `{"error":{"code":403,"message":"The request cannot be completed because you have exceeded your \u003ca href=\"/youtube/v3/getting-started#quota\"\u003equota\u003c/a\u003e.","errors":[{"message":"The request cannot be completed because you have exceeded your \u003ca href=\"/youtube/v3/getting-started#quota\"\u003equota\u003c/a\u003e.","domain":"youtube.quota","reason":"quotaExceeded"}]}}`
	if strings.TrimSpace(gerr.Body) != body {
		t.Errorf("body\n got  %s\n want %s", strings.TrimSpace(gerr.Body), body)
	}
	for range 49 {
		if err := chart(); err != nil {
			t.Fatal(err)
		}
	}
	googleErr(t, chart(), http.StatusForbidden, "quotaExceeded")
	u := s.Usage(testKey)
	if u.Charged != 250 || u.ChargedToday != 250 || u.Remaining != 0 || u.QuotaExceeded != 2 || u.Requests != 54 {
		t.Errorf("usage %+v; want 250 charged, 2 refused of 54", u)
	}
	if !u.ResetAt.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("reset at %v, want %v", u.ResetAt, t0.Add(10*time.Second))
	}

	clock.Advance(9 * time.Second)
	googleErr(t, chart(), http.StatusForbidden, "quotaExceeded")
	clock.Advance(time.Second)
	if err := chart(); err != nil {
		t.Fatalf("after the day ended: %v", err)
	}
	u = s.Usage(testKey)
	if u.Charged != 251 || u.ChargedToday != 1 || u.QuotaExceeded != 3 || !u.DayStart.Equal(t0.Add(10*time.Second)) {
		t.Errorf("next day: %+v", u)
	}
}

// Each key has its own quota.
func TestQuotaIsPerKey(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{Keys: []string{"key-a", "key-b"}, Quota: 2})
	a, b := client(t, hs, "key-a"), client(t, hs, "key-b")
	for range 2 {
		if _, err := a.I18nRegions.List([]string{"snippet"}).Do(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := a.I18nRegions.List([]string{"snippet"}).Do()
	googleErr(t, err, 403, "quotaExceeded")
	if _, err := b.I18nRegions.List([]string{"snippet"}).Do(); err != nil {
		t.Fatalf("key-b refused: %v", err)
	}
	if ua, ub := s.Usage("key-a"), s.Usage("key-b"); ua.Charged != 2 || ub.Charged != 1 || s.TotalCharged() != 3 {
		t.Errorf("key-a %+v key-b %+v total %d", ua, ub, s.TotalCharged())
	}
}

// Real quota days end at midnight in Los Angeles, 23 or 25 hours long when
// daylight saving starts or ends.
func TestPacificQuotaDay(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	c, err := newDayClock(0, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at         time.Time
		start, end time.Time
	}{
		// Winter (PST, UTC-8): midnight is 08:00 UTC.
		{time.Date(2026, 1, 15, 7, 59, 59, 0, time.UTC), time.Date(2026, 1, 14, 8, 0, 0, 0, time.UTC), time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC)},
		{time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC), time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC), time.Date(2026, 1, 16, 8, 0, 0, 0, time.UTC)},
		// Summer (PDT, UTC-7): midnight is 07:00 UTC.
		{time.Date(2026, 7, 4, 12, 0, 0, 0, time.UTC), time.Date(2026, 7, 4, 7, 0, 0, 0, time.UTC), time.Date(2026, 7, 5, 7, 0, 0, 0, time.UTC)},
		// 8 March 2026: clocks spring forward, the day has 23 hours.
		{time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 7, 0, 0, 0, time.UTC)},
		// 1 November 2026: clocks fall back, the day has 25 hours.
		{time.Date(2026, 11, 1, 20, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)},
		// New Year's Eve, Pacific, is already 2027 in UTC.
		{time.Date(2027, 1, 1, 3, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 8, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 8, 0, 0, 0, time.UTC)},
	} {
		start, end := c.bounds(tc.at)
		if !start.Equal(tc.start) || !end.Equal(tc.end) {
			t.Errorf("%v: day %v .. %v, want %v .. %v", tc.at, start.UTC(), end.UTC(), tc.start, tc.end)
		}
		if h, m, s := end.In(la).Clock(); h != 0 || m != 0 || s != 0 {
			t.Errorf("%v: resets at %v, not midnight Pacific", tc.at, end.In(la))
		}
	}

	// And the server follows it: a key spent at 23:59 Pacific is fresh at
	// 00:00.
	s, hs, clock := newTestServer(t, Config{Quota: 1})
	clock.Set(time.Date(2026, 11, 22, 7, 59, 0, 0, time.UTC)) // 23:59 PST
	svc := client(t, hs, testKey)
	if _, err := svc.I18nRegions.List([]string{"id"}).Do(); err != nil {
		t.Fatal(err)
	}
	_, err = svc.I18nRegions.List([]string{"id"}).Do()
	googleErr(t, err, 403, "quotaExceeded")
	clock.Advance(time.Minute)
	if _, err := svc.I18nRegions.List([]string{"id"}).Do(); err != nil {
		t.Fatalf("at midnight Pacific: %v", err)
	}
	if u := s.Usage(testKey); u.Charged != 2 || !u.ResetAt.Equal(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("usage %+v", u)
	}
}

// With Google's 2026 pricing search.list has its own bucket of calls: it
// costs the unit pool nothing, and once spent answers 429 naming the
// per-day limit, while videos.list goes on.
func TestSearchBucket2026(t *testing.T) {
	s, hs, clock := newTestServer(t, Config{Quota: 10, SearchCallsPerDay: 2, Day: time.Minute})
	svc := client(t, hs, testKey)
	search := func() error {
		_, err := svc.Search.List([]string{"snippet"}).Q("trailer").Type("video").Do()
		return err
	}
	for range 2 {
		if err := search(); err != nil {
			t.Fatal(err)
		}
	}
	gerr := googleErr(t, search(), http.StatusTooManyRequests, "rateLimitExceeded")
	if limit := quotaLimit(gerr); limit != SearchQuotaLimit {
		t.Errorf("quota_limit %q, want %q; details %v", limit, SearchQuotaLimit, gerr.Details)
	}
	if !strings.Contains(gerr.Body, `"status":"RESOURCE_EXHAUSTED"`) || !strings.Contains(gerr.Message, "Search list requests per day") {
		t.Errorf("body %s", gerr.Body)
	}
	if _, err := svc.Videos.List([]string{"id"}).Chart("mostPopular").Do(); err != nil {
		t.Fatalf("videos.list after the search bucket ran out: %v", err)
	}
	u := s.Usage(testKey)
	if u.SearchCalls != 2 || u.SearchExceeded != 1 || u.Charged != 1 || u.Calls["search.list"] != 3 {
		t.Errorf("usage %+v; want 2 search calls, 1 refused, 1 unit", u)
	}
	clock.Advance(time.Minute)
	if err := search(); err != nil {
		t.Fatalf("next day: %v", err)
	}
	if u := s.Usage(testKey); u.SearchCallsToday != 1 || u.SearchCalls != 3 {
		t.Errorf("next day usage %+v", u)
	}
}

// quotaLimit returns the quota_limit named by an ErrorInfo detail.
func quotaLimit(gerr *googleapi.Error) string {
	for _, d := range gerr.Details {
		if m, ok := d.(map[string]any); ok {
			if md, ok := m["metadata"].(map[string]any); ok {
				if l, ok := md["quota_limit"].(string); ok {
					return l
				}
			}
		}
	}
	return ""
}
