package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	budgetpkg "github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/ratelimit"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/wait"
)

// TestFollowedArchiveVersionMoves: serve --follow's cached answers and
// validators move when the followed copy applies the leader's changes, so
// a client's If-None-Match is met only while the copy has not changed.
func TestFollowedArchiveVersionMoves(t *testing.T) {
	ctx := context.Background()
	leader, path := archivetest.Open(t)
	g := archivetest.Generator()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	archivetest.SaveChart(t, leader, "US", at, 1, g.Video(1), g.Video(2))
	url := "file://" + filepath.Join(t.TempDir(), "replica")
	s, err := replication.Start(ctx, path, []string{url}, 2, replication.Options{SyncInterval: 50 * time.Millisecond, SnapshotInterval: time.Hour, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	f, err := replication.Follow(ctx, filepath.Join(t.TempDir(), "copy.db"), []string{url}, replication.FollowOptions{Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv, closeDeps, err := server.OpenFollow(ctx, server.Config{RateLimit: ratelimit.Limit{Requests: 1e6, Window: time.Minute}}, f,
		budgetpkg.Config{}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDeps()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	get := func(p, etag string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", hs.URL+p, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	resp, body := get("/api/v1/charts/US", "")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || etag == "" || !strings.Contains(body, g.Video(2).ID) {
		t.Fatalf("chart: %d %q %.300s", resp.StatusCode, etag, body)
	}
	if resp, _ := get("/api/v1/charts/US", etag); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("unchanged copy: %d, want 304", resp.StatusCode)
	}

	archivetest.SaveChart(t, leader, "US", at.Add(time.Hour), 1, g.Video(3), g.Video(1))
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the new chart in the follower's answers", 90*time.Second, func() (bool, string) {
		resp, body := get("/api/v1/charts/US", etag)
		ok := resp.StatusCode == 200 && strings.Contains(body, g.Video(3).ID) && resp.Header.Get("ETag") != etag
		return ok, fmt.Sprintf("%d %q %.300s", resp.StatusCode, resp.Header.Get("ETag"), body)
	})

	if resp, body := get("/readyz", ""); resp.StatusCode != 200 || !strings.Contains(body, "following replica "+replication.Name(url)+" generation term-0000000000000000002") {
		t.Errorf("readyz: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get("/api/v1/quota", ""); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("quota without Redis: %d, want 503", resp.StatusCode)
	}
	_, metrics := get("/metrics", "")
	for _, want := range []string{
		`ytrend_archive_follow_term{replica="` + replication.Name(url) + `"} 2`,
		`ytrend_archive_follow_lag_seconds{replica="` + replication.Name(url) + `"}`,
		`ytrend_archive_follow_position{replica="` + replication.Name(url) + `"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
