package replication_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/s3test"
	"github.com/ytrend/ytrend/testkit/wait"
)

// TestS3ReplicaDownAndBack streams to a real S3-compatible server (and a
// file replica beside it), takes the server down while pages are stored,
// and brings it back: storing never stops, the errors are counted, the
// replica catches up (lag back to 0) and a restore from S3 holds every page.
func TestS3ReplicaDownAndBack(t *testing.T) {
	srv := s3test.Start(t, "ytrend")
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	// Litestream gives the AWS SDK its own HTTP client, which the SDK cannot
	// add a CA bundle to: AWS_CA_BUNDLE (set on some hosts) breaks every
	// s3:// replica with "unable to add custom RootCAs".
	t.Setenv("AWS_CA_BUNDLE", "")
	ctx := context.Background()
	s3 := srv.URL("ytrend", "archive")
	file := fileURL(t)

	db, path := archivetest.Open(t)
	s := start(t, path, []string{s3, file}, 11)
	saveCharts(t, db, 0, 2)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	saveCharts(t, db, 500, 2) // fetching goes on
	waitUntil(t, "an error counted for the S3 replica", func() bool {
		st := s.Status()
		return st[0].Errors > 0 && st[0].LastError != "" && st[1].Errors == 0
	})
	srv.Restart(t)
	// Everything committed reaches the replica once it answers again. The
	// status alone is no proof: it compares the replica with the position
	// the stream has read from the archive so far, which may not yet
	// include the last page stored (a CI run restored 150 videos of 200).
	waitUntil(t, "a sync to every replica", func() bool { return s.Sync(ctx) == nil })
	waitUntil(t, "the S3 replica to catch up", func() bool {
		st := s.Status()
		return st[0].Position == st[0].LocalPosition && st[0].LagSeconds == 0
	})

	out := filepath.Join(t.TempDir(), "restored.db")
	r, err := replication.Restore(ctx, []string{s3}, out, replication.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := videos(t, out); got != 200 {
		t.Errorf("restored from %s %s: %d videos, want 200", r.Replica, r.Generation, got)
	}
	sts := replication.ReadStatus(ctx, path, []string{s3, file})
	for _, st := range sts {
		if st.Generation != "term-0000000000000000011" || st.Position == "" {
			t.Errorf("status %+v", st)
		}
	}
}

// waitUntil polls cond; the deadline is only a guard against a hang.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	wait.For(tb, what, 2*time.Minute, cond)
}
