package apiv1_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ytrend/ytrend/apiv1"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// The API over real HTTP and a real archive: status codes, the shapes'
// fields and the error envelope.
func TestRoutes(t *testing.T) {
	db := archivetest.Small(t)
	mux := http.NewServeMux()
	for pattern, h := range apiv1.Routes(apiv1.Deps{Archive: db, Now: func() time.Time { return archivetest.SmallAt.Add(time.Hour) }}) {
		mux.Handle(pattern, h)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path string, want int, into any) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != want {
			t.Fatalf("GET %s: %d %s, want %d", path, res.StatusCode, body, want)
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, body)
		}
	}

	var page struct {
		Results []struct {
			VideoID  string   `json:"video_id"`
			Regions  []string `json:"regions"`
			BestRank int      `json:"best_rank"`
			Snippet  string   `json:"snippet"`
		} `json:"results"`
		NextCursor *string `json:"next_cursor"`
	}
	get("/api/v1/search?q=cricket", http.StatusOK, &page)
	if len(page.Results) != 1 || page.Results[0].VideoID != "cricket1" || page.Results[0].BestRank != 1 ||
		len(page.Results[0].Regions) != 1 || page.Results[0].Regions[0] != "US" || page.NextCursor != nil {
		t.Errorf("search: %+v", page)
	}
	if got, want := page.Results[0].Snippet, "<mark>Cricket</mark> final highlights"; got != want {
		t.Errorf("snippet %q, want %q", got, want)
	}

	var chart struct {
		Region  string `json:"region"`
		Entries []struct {
			Rank    int    `json:"rank"`
			VideoID string `json:"video_id"`
		} `json:"entries"`
	}
	get("/api/v1/charts/US", http.StatusOK, &chart)
	if chart.Region != "US" || len(chart.Entries) != 2 || chart.Entries[0].VideoID != "cricket1" || chart.Entries[1].Rank != 2 {
		t.Errorf("chart: %+v", chart)
	}

	var video struct {
		VideoID string `json:"video_id"`
		Views   int64  `json:"views"`
		URL     string `json:"url"`
	}
	get("/api/v1/videos/cooking2", http.StatusOK, &video)
	if video.VideoID != "cooking2" || video.Views != 500 || video.URL != "https://www.youtube.com/watch?v=cooking2" {
		t.Errorf("video: %+v", video)
	}

	var fail struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/api/v1/videos/nosuchvideo", http.StatusNotFound, "not_found"},
		{"/api/v1/search?q=x&sort=sideways", http.StatusBadRequest, "bad_request"},
		{"/api/v1/charts/ZZ", http.StatusBadRequest, "bad_request"},
		{"/api/v1/quota", http.StatusServiceUnavailable, "unavailable"}, // no budget
		{"/api/v1/nothing", http.StatusNotFound, "not_found"},
	} {
		fail.Error.Code = ""
		get(tc.path, tc.code, &fail)
		if fail.Error.Code != tc.want {
			t.Errorf("%s: code %q, want %q", tc.path, fail.Error.Code, tc.want)
		}
	}
}
