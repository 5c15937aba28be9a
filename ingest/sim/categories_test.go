package sim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"google.golang.org/api/youtube/v3"
)

func TestVideoCategories(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	resp, err := client(t, hs, testKey).VideoCategories.List([]string{"snippet"}).RegionCode("DE").Do()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Kind != "youtube#videoCategoryListResponse" || len(resp.Items) != 32 || resp.Etag == "" {
		t.Fatalf("kind %q, %d items, etag %q", resp.Kind, len(resp.Items), resp.Etag)
	}
	var assignable, comedy []string
	for _, it := range resp.Items {
		if it.Kind != "youtube#videoCategory" || it.Etag == "" || it.Snippet == nil || it.Snippet.ChannelId != "UCBR8-60-B28hp2BmDPdntcQ" {
			t.Errorf("item %+v", it)
			continue
		}
		if it.Snippet.Assignable {
			assignable = append(assignable, it.Id)
		}
		if it.Snippet.Title == "Comedy" {
			comedy = append(comedy, it.Id)
		}
	}
	if want := []string{"1", "2", "10", "15", "17", "19", "20", "22", "23", "24", "25", "26", "27", "28", "29"}; !slices.Equal(assignable, want) {
		t.Errorf("assignable %v, want %v", assignable, want)
	}
	if !slices.Equal(comedy, []string{"23", "34"}) {
		t.Errorf("Comedy is %v", comedy)
	}
	// Every category the simulated videos carry has a name.
	for id := range chartCategories {
		if id != "0" && !slices.ContainsFunc(resp.Items, func(it *youtube.VideoCategory) bool { return it.Id == id }) {
			t.Errorf("category %s of the charts has no name", id)
		}
	}

	// Field for field as the recorded answers: snippet's title, assignable,
	// channelId; no pageInfo.
	_, body, _ := get(t, hs, "/youtube/v3/videoCategories", url.Values{"part": {"snippet"}, "id": {"10,99"}, "key": {testKey}, "prettyPrint": {"false"}})
	var raw struct {
		Kind     string           `json:"kind"`
		PageInfo *json.RawMessage `json:"pageInfo"`
		Items    []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.PageInfo != nil || len(raw.Items) != 1 || raw.Items[0]["id"] != "10" {
		t.Fatalf("id=10,99: %s", body)
	}
	if sn := raw.Items[0]["snippet"].(map[string]any); sn["title"] != "Music" || sn["assignable"] != true || len(sn) != 3 {
		t.Errorf("snippet %v", sn)
	}

	for _, c := range []struct {
		q      url.Values
		reason string
	}{
		{url.Values{"part": {"snippet"}, "regionCode": {"XX"}}, "invalidRegionCode"},
		{url.Values{"part": {"snippet"}}, "missingRequiredParameter"},
		{url.Values{"part": {"snippet"}, "regionCode": {"US"}, "id": {"10"}}, "incompatibleParameters"},
		{url.Values{"part": {"contentDetails"}, "regionCode": {"US"}}, "unknownPart"},
		{url.Values{"regionCode": {"US"}}, "required"},
	} {
		c.q.Set("key", testKey)
		code, body, _ := get(t, hs, "/youtube/v3/videoCategories", c.q)
		if e := errorJSON(t, body); code != http.StatusBadRequest || e.Errors[0].Reason != c.reason {
			t.Errorf("%v: HTTP %d %s, want reason %s", c.q, code, body, c.reason)
		}
	}
	// 1 unit each, invalid requests too.
	if u := s.Usage(testKey); u.Charged != 7 || u.Calls["videoCategories.list"] != 7 {
		t.Errorf("usage %+v", u)
	}
}
