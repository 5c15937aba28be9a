package replication_test

// Red-team tests of the archive's replication (issue 20).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/s3test"
)

// TestRestoreBesideAStaleWALTouchesNothing restores into a path whose
// archive was deleted but whose write-ahead log was not (`rm ytrend.db`
// after a crash leaves ytrend.db-wal and -shm beside it, holding another
// archive's last transactions). SQLite replays a WAL it finds beside a
// database whoever wrote it, so a restore there would hand back a mix of
// the replica and the stale log, and delete the log: the output must not
// exist, -wal included. The restore must refuse (ErrExists), leaving the
// log as it was.
func TestRestoreBesideAStaleWALTouchesNothing(t *testing.T) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	url := fileURL(t)
	s := start(t, path, []string{url}, 5)
	saveCharts(t, db, 0, 3)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	// Another archive, its last transactions still in its WAL (a crash).
	other, otherPath := archivetest.Open(t)
	saveCharts(t, other, 5000, 8)
	wal, err := os.ReadFile(otherPath + "-wal")
	if err != nil || len(wal) == 0 {
		t.Fatalf("the other archive's WAL: %d bytes, %v", len(wal), err)
	}
	shm, _ := os.ReadFile(otherPath + "-shm")
	out := filepath.Join(t.TempDir(), "ytrend.db")
	if err := os.WriteFile(out+"-wal", wal, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out+"-shm", shm, 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{})
	if err == nil {
		n := videos(t, out)
		t.Errorf("restored beside a stale WAL: the output holds %d videos (the replica has 150, the stale log's archive 400)", n)
	} else if !errors.Is(err, replication.ErrExists) {
		t.Errorf("restore beside a stale WAL: %v, want ErrExists", err)
	}
	if got, _ := os.ReadFile(out + "-wal"); !bytes.Equal(got, wal) {
		t.Errorf("the stale WAL beside the output was changed or removed (%d bytes left of %d)", len(got), len(wal))
	}
}

// TestAReplicaWhoseFilesVanishIsRebuiltAndReported deletes a file
// replica's directory in the middle of a term (an operator's cleanup, a
// bucket lifecycle rule, a remounted backup disk) and keeps writing. The
// stream goes on shipping L0 files into a term that no longer holds a
// snapshot or an index marker: nothing in the replica can be restored, and
// a takeover finds no previous term. The stream must rebuild the replica
// and say so: the status names the loss, and a restore then holds
// everything synced. Silently reporting "in sync" while the backup is gone
// loses the history at the next failover.
func TestAReplicaWhoseFilesVanishIsRebuiltAndReported(t *testing.T) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	dir := filepath.Join(t.TempDir(), "replica")
	url := "file://" + dir
	s := start(t, path, []string{url}, 9)
	saveCharts(t, db, 0, 3)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	saveCharts(t, db, 1000, 2)
	syncErr := s.Sync(ctx)
	st := s.Status()
	out := filepath.Join(t.TempDir(), "restored.db")
	_, restoreErr := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{})
	if len(st) != 1 || !strings.Contains(st[0].LastError, "lost") || st[0].Errors == 0 {
		t.Errorf("the replica lost every file and the stream's status does not say so (sync: %v; status %+v)", syncErr, st)
	}
	if restoreErr != nil {
		t.Fatalf("restore after the rebuild: %v", restoreErr)
	}
	if n := videos(t, out); n != 250 {
		t.Errorf("the rebuilt replica restores %d videos, want every one synced (250)", n)
	}
}

// TestReplicaNameMasksSSECustomerKeys: Litestream's s3:// URL takes a
// server-side encryption key in its query (sseCustomerKey, or
// sse-customer-key): whoever holds it reads the replica. The name shown
// in logs, errors, `archive status`, /readyz and the metrics' replica
// label must mask it, as it masks a password.
func TestReplicaNameMasksSSECustomerKeys(t *testing.T) {
	const key = "c2VjcmV0LXNzZS1jdXN0b21lci1rZXktMzItYnl0ZXM"
	for _, raw := range []string{
		"s3://bucket/ytrend?endpoint=http://127.0.0.1:9000&sseCustomerAlgorithm=AES256&sseCustomerKey=" + key,
		"s3://bucket/ytrend?sse-customer-algorithm=AES256&sse-customer-key=" + key,
	} {
		if got := replication.Name(raw); strings.Contains(got, key) {
			t.Errorf("Name shows the SSE-C key: %s", got)
		}
	}
}

// TestEveryAcceptedSchemeHasAClient: every replica scheme the
// configuration accepts has a Litestream client linked in (one without
// passed `schedule check`, then every stream, status and restore failed
// with "unsupported replica URL scheme"), and Litestream's schemes that
// are not linked are refused by the check itself.
func TestEveryAcceptedSchemeHasAClient(t *testing.T) {
	for _, scheme := range config.ReplicaSchemes {
		raw := scheme + "://127.0.0.1:9/ytrend"
		if scheme == "file" {
			raw = "file://" + t.TempDir()
		}
		if err := config.ValidateReplicaURL(raw); err != nil {
			t.Errorf("%s: refused by the configuration: %v", raw, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := replication.Terms(ctx, raw)
		cancel()
		if err != nil && strings.Contains(err.Error(), "unsupported replica URL scheme") {
			t.Errorf("%s: accepted by the configuration, no client: %v", raw, err)
		}
	}
	for _, raw := range []string{
		"gs://bucket/ytrend",
		"abs://account@container/ytrend?endpoint=http://127.0.0.1:9",
		"webdav://127.0.0.1:9/ytrend",
		"webdavs://127.0.0.1:9/ytrend",
		"oss://bucket/ytrend?endpoint=http://127.0.0.1:9",
	} {
		if err := config.ValidateReplicaURL(raw); err == nil || !strings.Contains(err.Error(), "not built into ytrend") {
			t.Errorf("%s: the configuration accepts a scheme without a client (%v)", raw, err)
		}
	}
}

// TestS3CredentialsInTheURLsUserInfo: README says a replica's credentials
// come from the usual variables "or a URL's user info". Litestream's s3
// client ignores the user info, so an s3://KEY:SECRET@bucket/... replica
// with no AWS_* variables cannot be read (the SDK goes on to EC2's
// metadata service), and `ytrend run` refuses to start (restore-on-start).
func TestS3CredentialsInTheURLsUserInfo(t *testing.T) {
	srv := s3test.Start(t, "ytrend")
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_CA_BUNDLE"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	raw := strings.Replace(srv.URL("ytrend", "archive"), "s3://", "s3://"+s3test.AccessKey+":"+s3test.SecretKey+"@", 1)
	db, path := archivetest.Open(t)
	s, err := replication.Start(ctx, path, []string{raw}, 3, opts())
	if err == nil {
		t.Cleanup(func() { s.Stop(ctx) })
		saveCharts(t, db, 0, 1)
		err = s.Sync(ctx)
	}
	if err != nil {
		t.Errorf("stream to an s3 replica with credentials in its user info: %v", err)
	}
	if _, err := replication.Terms(ctx, raw); err != nil {
		t.Errorf("list an s3 replica with credentials in its user info: %v", err)
	}
}

// TestConcurrentRestoresIntoOnePathNeverReportABrokenCopy runs two
// restores into the same output at once (two `archive restore` by hand;
// two `ytrend run` sharing one archive on the embedded ledger, both
// restoring on start). Each removes "the copy a crashed restore left"
// (<out>.restoring) before it starts its own, so one deletes the other's
// copy in the middle of writing it, and the first to finish renames
// whatever file is at that path now: `archive restore` then reported
// success and left a 0-byte archive. Any restore that reports success
// must leave the whole replicated state at the output.
func TestConcurrentRestoresIntoOnePathNeverReportABrokenCopy(t *testing.T) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	url := fileURL(t)
	s := start(t, path, []string{url}, 4)
	// The restores overlap when the second reaches the lock while the
	// first holds it, which takes no size: a restore of a few charts
	// lasts long enough for that (hundreds of ms under -race). A round
	// where they did not overlap proves nothing, so the test counts the
	// rounds in which one was refused by the lock and wants three.
	const charts = 4
	saveCharts(t, db, 0, charts)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	overlapped := 0
	for round := 0; round < 12 && overlapped < 3; round++ {
		out := filepath.Join(t.TempDir(), "ytrend.db")
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{})
				errs <- err
			}()
		}
		ok := 0
		for range 2 {
			if err := <-errs; err == nil {
				ok++
			} else {
				if strings.Contains(err.Error(), "another restore into") {
					overlapped++
				}
				t.Logf("round %d: %v", round, err)
			}
		}
		if ok == 0 {
			continue // both refused: nothing claimed, nothing lost
		}
		fi, err := os.Stat(out)
		if err != nil {
			t.Fatalf("round %d: a restore reported success and left no output: %v", round, err)
		}
		if fi.Size() == 0 {
			t.Fatalf("round %d: a restore reported success and left a 0-byte output", round)
		}
		if n := videos(t, out); n != charts*50 {
			t.Fatalf("round %d: a restore reported success; the output holds %d videos of %d", round, n, charts*50)
		}
	}
	if overlapped < 3 {
		t.Fatalf("the two restores overlapped in %d rounds, want 3: the test proved nothing", overlapped)
	}
}
