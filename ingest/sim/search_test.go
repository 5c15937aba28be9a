package sim

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// A search-then-statistics fetch: search.list finds videos without
// statistics for 100 units; videos.list?id= adds them for one.
func TestSearchThenVideosByID(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	svc := client(t, hs, testKey)
	res, err := svc.Search.List([]string{"snippet"}).Q("official").Type("video").RegionCode("US").
		Order("viewCount").PublishedAfter(t0.Add(-72 * time.Hour).Format(time.RFC3339)).MaxResults(50).Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "youtube#searchListResponse" || res.RegionCode != "US" || len(res.Items) == 0 {
		t.Fatalf("kind %q region %q, %d items", res.Kind, res.RegionCode, len(res.Items))
	}
	if res.PageInfo.ResultsPerPage != 50 || res.PageInfo.TotalResults < int64(len(res.Items)) {
		t.Errorf("pageInfo %+v", res.PageInfo)
	}
	var ids []string
	for _, it := range res.Items {
		if it.Kind != "youtube#searchResult" || it.Id == nil || it.Id.Kind != "youtube#video" || it.Id.VideoId == "" {
			t.Fatalf("item %+v", it)
		}
		if it.Snippet == nil || it.Snippet.Title == "" || it.Snippet.ChannelId == "" || it.Snippet.Thumbnails.High == nil {
			t.Errorf("snippet %+v", it.Snippet)
		}
		ids = append(ids, it.Id.VideoId)
	}
	if u := s.Usage(testKey); u.Charged != 100 || u.Calls["search.list"] != 1 {
		t.Errorf("after search: %+v, want 100 units", u)
	}

	vs, err := svc.Videos.List([]string{"snippet", "statistics"}).Id(ids...).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.Items) != len(ids) {
		t.Fatalf("videos.list?id= returned %d of %d", len(vs.Items), len(ids))
	}
	var prev uint64 = 1 << 63
	for i, v := range vs.Items {
		if v.Id != ids[i] {
			t.Errorf("item %d is %s, want %s", i, v.Id, ids[i])
		}
		if v.Statistics.ViewCount > prev {
			t.Errorf("order=viewCount: %s has %d views after one with %d", v.Id, v.Statistics.ViewCount, prev)
		}
		prev = v.Statistics.ViewCount
		text := strings.ToLower(v.Snippet.Title + v.Snippet.Description + strings.Join(v.Snippet.Tags, " ") + v.Snippet.ChannelTitle)
		if !strings.Contains(text, "official") {
			t.Errorf("%s %q does not match q=official", v.Id, v.Snippet.Title)
		}
		if published, _ := time.Parse(time.RFC3339, v.Snippet.PublishedAt); !published.After(t0.Add(-72 * time.Hour)) {
			t.Errorf("%s published %s, before publishedAfter", v.Id, v.Snippet.PublishedAt)
		}
	}
	if u := s.Usage(testKey); u.Charged != 101 || u.Requests != 2 {
		t.Errorf("after search and videos: %+v, want 101 units", u)
	}
}

// Search pages, like chart pages, come from one snapshot.
func TestSearchPaging(t *testing.T) {
	_, hs, clock := newTestServer(t, Config{})
	svc := client(t, hs, testKey)
	call := func(token string) ([]string, string, int) {
		c := svc.Search.List([]string{"id"}).Type("video").MaxResults(50)
		if token != "" {
			c = c.PageToken(token)
		}
		res, err := c.Do()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range res.Items {
			if it.Snippet != nil {
				t.Error("part=id returned a snippet")
			}
			ids = append(ids, it.Id.VideoId)
		}
		return ids, res.NextPageToken, int(res.PageInfo.TotalResults)
	}
	all, token, total := call("")
	if total <= maxSearch {
		t.Fatalf("only %d results in the whole index", total)
	}
	clock.Advance(2 * time.Hour)
	for pages := 1; token != "" && pages < 20; pages++ {
		var ids []string
		ids, token, _ = call(token)
		all = append(all, ids...)
	}
	seen := map[string]bool{}
	for _, id := range all {
		if seen[id] {
			t.Fatalf("%s on two pages", id)
		}
		seen[id] = true
	}
	if len(all) != maxSearch {
		t.Errorf("paged through %d results, want the %d search.list stops at", len(all), maxSearch)
	}
}

// search.list HTML-escapes titles as the real API does; videos.list does
// not.
func TestSearchEscapesHTML(t *testing.T) {
	_, hs, _ := newTestServer(t, Config{})
	svc := client(t, hs, testKey)
	res, err := svc.Search.List([]string{"snippet"}).Q(`"so you don't have to"`).Type("video").MaxResults(5).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) == 0 {
		t.Fatal(`no result for "so you don't have to"`)
	}
	it := res.Items[0]
	if !strings.Contains(it.Snippet.Title, "Don&#39;t") {
		t.Errorf("search title %q is not HTML-escaped", it.Snippet.Title)
	}
	v, err := svc.Videos.List([]string{"snippet"}).Id(it.Id.VideoId).Do()
	if err != nil || len(v.Items) != 1 {
		t.Fatal(err)
	}
	if !strings.Contains(v.Items[0].Snippet.Title, "Don't") {
		t.Errorf("videos.list title %q", v.Items[0].Snippet.Title)
	}
}

func TestSearchQuerySyntax(t *testing.T) {
	s, _, _ := newTestServer(t, Config{})
	at := t0
	epoch := s.world.epoch(at)
	count := func(q string) int {
		return len(s.search(searchQuery{terms: parseQuery(q), order: "relevance", videos: true, duration: "any", definition: "any"}, at, epoch))
	}
	all, gaming, music := count(""), count("gaming"), count("music")
	either, neither := count("gaming|music"), count("-gaming -music")
	if gaming == 0 || music == 0 || either > gaming+music || either < max(gaming, music) {
		t.Errorf("gaming %d, music %d, gaming|music %d", gaming, music, either)
	}
	if neither+either != all {
		t.Errorf("-gaming -music %d + gaming|music %d != all %d", neither, either, all)
	}
	if n := count(`"official music video"`); n == 0 || n > count("official") {
		t.Errorf(`phrase matched %d`, n)
	}
	if n := count("tráiler"); n != count("trailer") {
		t.Errorf("accents: tráiler %d, trailer %d", n, count("trailer"))
	}
	if n := count("ハイライト"); n == 0 {
		t.Error("no Japanese match")
	}
	if n := count("हाइलाइट्स"); n == 0 {
		t.Error("no Hindi match")
	}
	for _, o := range searchOrders {
		res := s.search(searchQuery{order: o, videos: true, duration: "any", definition: "any"}, at, epoch)
		if len(res) != all {
			t.Errorf("order %s: %d results", o, len(res))
		}
		if o == "date" && !slices.IsSortedFunc(res, func(a, b *video) int { return b.published.Compare(a.published) }) {
			t.Error("order=date is not newest first")
		}
	}
}

func TestSearchValidation(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	for _, tc := range []struct {
		q              url.Values
		code           int
		reason, locate string
	}{
		{url.Values{"part": {"snippet"}, "order": {"loudest"}}, 400, "invalidParameter", "order"},
		{url.Values{"part": {"snippet"}, "maxResults": {"51"}}, 400, "invalidParameter", "maxResults"},
		{url.Values{"part": {"snippet"}, "publishedAfter": {"yesterday"}}, 400, "invalidParameter", "publishedAfter"},
		{url.Values{"part": {"snippet"}, "regionCode": {"UK"}}, 400, "invalidRegionCode", "regionCode"},
		{url.Values{"part": {"snippet"}, "videoCategoryId": {"10"}}, 400, "invalidSearchFilter", "type"},
		{url.Values{"part": {"snippet"}, "type": {"video"}, "pageToken": {"CAUQAA"}}, 400, "invalidPageToken", "pageToken"},
		{url.Values{"part": {"statistics"}}, 400, "unknownPart", "part"},
		{url.Values{"q": {"x"}}, 400, "required", "part"},
	} {
		tc.q.Set("key", testKey)
		code, body, _ := get(t, hs, "/youtube/v3/search", tc.q)
		e := errorJSON(t, body)
		if code != tc.code || e.Errors[0].Reason != tc.reason || e.Errors[0].Location != tc.locate {
			t.Errorf("%v: HTTP %d %+v, want %d %s at %s", tc.q, code, e.Errors, tc.code, tc.reason, tc.locate)
		}
	}
	// Invalid searches cost what valid ones do.
	if u := s.Usage(testKey); u.Charged != 800 {
		t.Errorf("8 invalid searches charged %d units, want 800", u.Charged)
	}
	code, body, _ := get(t, hs, "/youtube/v3/search", url.Values{"part": {"snippet"}, "type": {"channel"}, "key": {testKey}})
	if code != http.StatusOK || !strings.Contains(string(body), `"items": []`) {
		t.Errorf("type=channel: HTTP %d %s", code, body)
	}
}
