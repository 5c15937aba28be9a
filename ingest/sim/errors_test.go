package sim

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
)

// A missing or unknown key gets the 2026 answer, exactly, and is charged to
// nobody.
func TestInvalidKey(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	_, err := client(t, hs, "not-the-key").Videos.List([]string{"id"}).Chart("mostPopular").Do()
	gerr := googleErr(t, err, http.StatusBadRequest, "badRequest")
	if gerr.Message != "API key not valid. Please pass a valid API key." {
		t.Errorf("message %q", gerr.Message)
	}
	if len(gerr.Details) != 2 {
		t.Fatalf("details %v", gerr.Details)
	}
	info, _ := gerr.Details[0].(map[string]any)
	if info["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || info["reason"] != "API_KEY_INVALID" {
		t.Errorf("details[0] %v", info)
	}
	const want = `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","errors":[{"message":"API key not valid. Please pass a valid API key.","domain":"global","reason":"badRequest"}],"status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"youtube.googleapis.com"}},{"@type":"type.googleapis.com/google.rpc.LocalizedMessage","locale":"en-US","message":"API key not valid. Please pass a valid API key."}]}}`
	if got := strings.TrimSpace(gerr.Body); got != want {
		t.Errorf("body\n got  %s\n want %s", got, want)
	}

	code, body, _ := get(t, hs, "/youtube/v3/videos", url.Values{"part": {"id"}, "chart": {"mostPopular"}})
	if e := errorJSON(t, body); code != 400 || e.Errors[0].Reason != "badRequest" || e.Status != "INVALID_ARGUMENT" {
		t.Errorf("no key: HTTP %d %s", code, body)
	}
	// The header Google's newer auth library uses works as well as key=.
	code, _, _ = get(t, hs, "/youtube/v3/videos", url.Values{"part": {"id"}, "chart": {"mostPopular"}}, "X-Goog-Api-Key", testKey)
	if code != 200 {
		t.Errorf("key in X-Goog-Api-Key: HTTP %d", code)
	}
	if s.Unauthenticated() != 2 || s.TotalCharged() != 1 || s.TotalRequests() != 3 {
		t.Errorf("unauthenticated %d, charged %d, requests %d; want 2, 1, 3", s.Unauthenticated(), s.TotalCharged(), s.TotalRequests())
	}
	if u := s.Usage("not-the-key"); u.Requests != 0 || u.Charged != 0 {
		t.Errorf("an unknown key has usage %+v", u)
	}
}

// Invalid requests are answered as Google answers them, and charged.
func TestVideosListErrors(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	base := func(kv ...string) url.Values {
		q := url.Values{"key": {testKey}, "part": {"id"}, "chart": {"mostPopular"}}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				q.Del(kv[i])
			} else {
				q.Set(kv[i], kv[i+1])
			}
		}
		return q
	}
	manyIDs := strings.Repeat("dQw4w9WgXcQ,", 51)
	for _, tc := range []struct {
		name           string
		q              url.Values
		code           int
		domain, reason string
		location       string
	}{
		{"bad region", base("regionCode", "UK"), 400, "youtube.parameter", "invalidRegionCode", "regionCode"},
		{"lower-case region", base("regionCode", "us"), 400, "youtube.parameter", "invalidRegionCode", "regionCode"},
		{"maxResults 51", base("maxResults", "51"), 400, "global", "invalidParameter", "maxResults"},
		{"maxResults 0", base("maxResults", "0"), 400, "global", "invalidParameter", "maxResults"},
		{"maxResults x", base("maxResults", "x"), 400, "global", "invalidParameter", "maxResults"},
		{"garbage token", base("pageToken", "garbage!"), 400, "youtube.parameter", "invalidPageToken", "pageToken"},
		{"no part", base("part", ""), 400, "global", "required", "part"},
		{"unknown part", base("part", "snippet,status"), 400, "youtube.part", "unknownPart", "part"},
		{"no filter", base("chart", ""), 400, "youtube.parameter", "missingRequiredParameter", "parameters."},
		{"two filters", base("id", "dQw4w9WgXcQ"), 400, "youtube.parameter", "incompatibleParameters", "parameters."},
		{"bad chart", base("chart", "leastPopular"), 400, "global", "invalidParameter", "chart"},
		{"no chart for category", base("videoCategoryId", "29"), 400, "youtube.video", "videoChartNotFound", "videoCategoryId"},
		{"51 ids", base("chart", "", "id", manyIDs), 400, "youtube.parameter", "invalidFilters", "id"},
		{"myRating", base("chart", "", "myRating", "like"), 401, "youtube.parameter", "authorizationRequired", "myRating"},
	} {
		code, body, _ := get(t, hs, "/youtube/v3/videos", tc.q)
		e := errorJSON(t, body)
		if code != tc.code || e.Code != tc.code || len(e.Errors) != 1 {
			t.Errorf("%s: HTTP %d %s", tc.name, code, body)
			continue
		}
		if it := e.Errors[0]; it.Domain != tc.domain || it.Reason != tc.reason || it.Location != tc.location || it.LocationType != "parameter" || it.Message != e.Message {
			t.Errorf("%s: %+v, want %s/%s at %s", tc.name, it, tc.domain, tc.reason, tc.location)
		}
	}
	if u := s.Usage(testKey); u.Charged != 14 || u.Requests != 14 {
		t.Errorf("14 invalid requests: %+v, want 14 units", u)
	}

	// Through the Go client, the same errors are *googleapi.Error.
	_, err := client(t, hs, testKey).Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("XX").Do()
	gerr := googleErr(t, err, 400, "invalidRegionCode")
	if !strings.Contains(gerr.Body, `"domain":"youtube.parameter"`) || !strings.Contains(gerr.Body, `"location":"regionCode"`) {
		t.Errorf("body %s", gerr.Body)
	}
	var ae *googleapi.Error
	if !errors.As(err, &ae) {
		t.Error("errors.As *googleapi.Error failed")
	}
}

// A page token belongs to its query: replayed on another region, altered,
// or naming the future, it is invalid.
func TestPageTokenBinding(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	_, body, _ := get(t, hs, "/youtube/v3/videos", chartQuery("US", 50))
	var resp struct{ NextPageToken string }
	if err := json.Unmarshal(body, &resp); err != nil || resp.NextPageToken == "" {
		t.Fatalf("no token: %v", err)
	}
	tok := resp.NextPageToken
	flipped := []byte(tok)
	flipped[len(flipped)/2] ^= 1
	future := s.encodeToken("videos\x00US\x000", pageToken{epoch: s.world.epoch(t0) + 1, offset: 50})
	for name, q := range map[string]url.Values{
		"other region":   chartQuery("GB", 50, "pageToken", tok),
		"other category": chartQuery("US", 50, "pageToken", tok, "videoCategoryId", "10"),
		"altered":        chartQuery("US", 50, "pageToken", string(flipped)),
		"future epoch":   chartQuery("US", 50, "pageToken", future),
		"search token":   chartQuery("US", 50, "pageToken", s.encodeToken("search", pageToken{epoch: s.world.epoch(t0), offset: 50})),
	} {
		code, body, _ := get(t, hs, "/youtube/v3/videos", q)
		if e := errorJSON(t, body); code != 400 || e.Errors[0].Reason != "invalidPageToken" {
			t.Errorf("%s: HTTP %d %s", name, code, body)
		}
	}
	if code, _, _ := get(t, hs, "/youtube/v3/videos", chartQuery("US", 50, "pageToken", tok)); code != 200 {
		t.Errorf("the token itself: HTTP %d", code)
	}
}
