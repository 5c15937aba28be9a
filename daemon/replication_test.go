package daemon

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/logbuf"
	waitpkg "github.com/ytrend/ytrend/testkit/wait"
)

// TestUnreachableReplicaNeverStopsFetching: a daemon with two replicas, a
// file one and an S3 one nobody answers (its URL carrying a password),
// leads, fetches on schedule and streams to the file replica; the S3
// replica's failures are retried, logged and counted under its redacted
// URL; /readyz says how each replica is doing; the password appears in no
// log line, metric or readiness line. Stopping ships the last run.
func TestUnreachableReplicaNeverStopsFetching(t *testing.T) {
	// The S3 client reads its credentials from the environment; a CA bundle
	// (set on some hosts) breaks it before any request.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDDAEMONTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "daemon-test-secret")
	t.Setenv("AWS_CA_BUNDLE", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := sim.New(sim.Config{Keys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	file := "file://" + filepath.Join(dir, "replica")
	const password = "Sup3rS3cretPassw0rd"
	down := "s3://ytrend:" + password + "@bucket/archive?endpoint=http://127.0.0.1:1&region=us-east-1&forcePathStyle=true"
	cfg := config.Default()
	cfg.YouTube.Endpoint = hs.URL
	cfg.YouTube.Retries = 0
	cfg.Store.Path = filepath.Join(dir, "ytrend.db")
	cfg.Regions = []config.Region{{Code: "US", Pages: 1, Cron: "@every 1s"}}
	cfg.Archive.Replicas = []string{file, down}
	cfg.Archive.SyncInterval = config.Duration(100 * time.Millisecond)
	cfg.Scheduler.LeaderTTL = config.Duration(2 * time.Second)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), cfg.Store.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var logs logbuf.Buffer
	env := func(k string) (string, bool) { return testKey, k == cfg.APIKeyEnv }
	d, err := New(context.Background(), cfg, Deps{Archive: db, Env: env, Log: slog.New(slog.NewTextHandler(&logs, nil))}, Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(d.metrics.Handler(d.readiness))
	t.Cleanup(h.Close)

	wait(t, "three runs stored and the S3 replica's errors counted", func() bool {
		runs, err := db.Runs(context.Background(), store.RunFilter{Limit: 10})
		return err == nil && len(runs) >= 3 && strings.Contains(body(t, h.URL+"/metrics"),
			`ytrend_archive_replica_errors_total{replica="s3://ytrend:`)
	})
	metrics, ready := body(t, h.URL+"/metrics"), body(t, h.URL+"/readyz")
	for _, want := range []string{`ytrend_archive_replica_lag_seconds{replica="` + file + `"}`,
		`ytrend_archive_replica_last_sync_timestamp_seconds{replica="` + file + `"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if !strings.Contains(ready, "replication: "+file+" term-") || !strings.Contains(ready, "replication: s3://ytrend:") {
		t.Errorf("/readyz does not say how each replica does:\n%s", ready)
	}
	if !strings.Contains(logs.String(), "cannot start streaming to this replica; fetching goes on, retrying") {
		t.Errorf("the unreachable replica is not logged:\n%s", logs.String())
	}

	d.Stop(context.Background())
	d.Close()
	for what, s := range map[string]string{"log": logs.String(), "/metrics": metrics, "/readyz": ready} {
		if strings.Contains(s, password) {
			t.Errorf("the replica's password is in the %s", what)
		}
	}
	// Every run stored is in the file replica.
	runs, err := db.Runs(context.Background(), store.RunFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "restored.db")
	if _, err := replication.Restore(context.Background(), []string{file}, out, replication.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := store.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Runs(context.Background(), store.RunFilter{Limit: 1000})
	if err != nil || len(got) != len(runs) {
		t.Errorf("the file replica holds %d runs (%v); the archive %d", len(got), err, len(runs))
	}
}

func body(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// wait polls cond; the deadline only guards against a hang.
func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitpkg.For(t, what, 2*time.Minute, cond)
}
