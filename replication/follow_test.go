package replication_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// natsURL is a replica URL on a fresh object store bucket of the NATS
// JetStream server at NATS_URL (default 127.0.0.1:4222), deleted at
// cleanup. Without the server the test skips, and fails under CI.
func natsURL(tb testing.TB) string {
	tb.Helper()
	addr := os.Getenv("NATS_URL")
	if addr == "" {
		addr = "nats://127.0.0.1:4222"
	}
	nc, err := nats.Connect(addr, nats.Timeout(2*time.Second))
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("NATS JetStream at %s: %v (CI=true: a test never passes by skipping)", addr, err)
		}
		tb.Skipf("no NATS JetStream at %s: %v", addr, err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	bucket := "ytrend-test-" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: bucket}); err != nil {
		tb.Fatalf("NATS at %s: create object store %s: %v", addr, bucket, err)
	}
	tb.Cleanup(func() { js.DeleteObjectStore(context.Background(), bucket) })
	return strings.TrimSuffix(addr, "/") + "/" + bucket
}

func follow(tb testing.TB, path string, urls []string) *replication.Follower {
	tb.Helper()
	f, err := replication.Follow(context.Background(), path, urls, replication.FollowOptions{Interval: 50 * time.Millisecond})
	if err != nil {
		tb.Fatalf("follow %v into %s: %v", urls, path, err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// eventually waits for cond, polling; it fails tb with cond's last word
// if that takes longer than any machine should need.
func eventually(tb testing.TB, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if dump := os.Getenv("YTREND_TEST_STACKS"); dump != "" {
				if fh, err := os.Create(dump); err == nil {
					pprof.Lookup("goroutine").WriteTo(fh, 2)
					fh.Close()
				}
			}
			tb.Fatalf("%s: still %s", what, detail)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// copyReader reads a followed copy as ytrend serve does: one archive open
// across reads, reopened only when the follower replaced the file, every
// read pinned with Read.
type copyReader struct {
	f     *replication.Follower
	mu    sync.Mutex
	db    *store.DB
	epoch uint64
}

func newReader(tb testing.TB, f *replication.Follower) *copyReader {
	r := &copyReader{f: f}
	tb.Cleanup(func() {
		if r.db != nil {
			r.db.Close()
		}
	})
	return r
}

func (r *copyReader) read(fn func(*store.DB) error) error {
	c, err := r.f.Read()
	if err != nil {
		return err
	}
	defer c.Release()
	r.mu.Lock()
	if r.db == nil || r.epoch != c.Epoch {
		if r.db != nil {
			r.db.Close()
		}
		r.db, err = store.Open(context.Background(), c.Path, store.ReadOnly())
		r.epoch = c.Epoch
	}
	db := r.db
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return fn(db)
}

func (r *copyReader) videos() (int, error) {
	var n int
	err := r.read(func(db *store.DB) error {
		return db.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM videos`).Scan(&n)
	})
	return n, err
}

func (r *copyReader) integrity(tb testing.TB) {
	tb.Helper()
	err := r.read(func(db *store.DB) error {
		var res string
		if err := db.Reader().QueryRowContext(context.Background(), `PRAGMA integrity_check`).Scan(&res); err != nil {
			return err
		}
		if res != "ok" {
			return fmt.Errorf("integrity_check: %s", res)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// caughtUp waits until the follower serves want videos at the stream's
// position.
func caughtUp(tb testing.TB, f *replication.Follower, r *copyReader, s *replication.Stream, want int) {
	tb.Helper()
	eventually(tb, "the follower catches up", func() (bool, string) {
		n, err := r.videos()
		st := f.Status()
		ok := err == nil && n == want && st.TXID == s.Status()[0].Position && st.LagSeconds == 0
		return ok, fmt.Sprintf("%d videos (%v), status %+v, want %d at %s", n, err, st, want, s.Status()[0].Position)
	})
}

func TestFollowFile(t *testing.T) { testFollow(t, fileURL(t)) }
func TestFollowNATS(t *testing.T) { testFollow(t, natsURL(t)) }

// testFollow streams a leader's archive to url and follows it into a copy
// that a reader keeps open throughout: the copy holds the leader's pages as
// they are replicated, and passes SQLite's check.
func testFollow(t *testing.T, url string) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	s := start(t, path, []string{url}, 7)
	saveCharts(t, db, 0, 3)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	f := follow(t, filepath.Join(t.TempDir(), "copy.db"), []string{url})
	r := newReader(t, f)
	if n, err := r.videos(); err != nil || n != 150 {
		t.Fatalf("the copy Follow returns holds %d videos (%v), want 150", n, err)
	}
	if st := f.Status(); st.Term != 7 || st.Generation != "term-0000000000000000007" || st.Replica != replication.Name(url) {
		t.Errorf("status %+v, want term 7 of %s", st, replication.Name(url))
	}
	for round := 1; round <= 3; round++ {
		saveCharts(t, db, round*1000, 2)
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		caughtUp(t, f, r, s, 150+round*100)
	}
	r.integrity(t)
	if st := f.Status(); st.LastError != "" || st.At.IsZero() || st.CheckedAt.IsZero() {
		t.Errorf("status after catching up: %+v", st)
	}
}

// TestFollowReadersNeverSeeATornCopy: readers in the follower's process
// read the copy while the leader keeps writing and Litestream applies its
// changes in place. Every page is one transaction of 50 new videos, so a
// reader that saw anything but a committed state would count a number that
// is not a multiple of 50, go backwards, or hit a malformed page.
func TestFollowReadersNeverSeeATornCopy(t *testing.T) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	url := fileURL(t)
	s := start(t, path, []string{url}, 1)
	saveCharts(t, db, 0, 1)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	f := follow(t, filepath.Join(t.TempDir(), "copy.db"), []string{url})
	r := newReader(t, f)

	// 24 pages over 4 readers is enough states to catch a torn copy (and
	// to see several changes applied); 60 took 106 s under -race on two
	// cores, readers and quick_checks starving the writer.
	const pages = 24
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	reads := make([]int, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last, checks := 0, 0
			for {
				select {
				case <-done:
					return
				default:
				}
				var n int
				var check string
				err := r.read(func(db *store.DB) error {
					if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM videos`).Scan(&n); err != nil {
						return err
					}
					// Reader 0 also checks the whole file, on a few of
					// the states it sees: the check holds the copy for
					// long (seconds under -race), and every apply waits
					// for it. On a connection of its own: FTS5's check
					// reuses the index structure a long-lived connection
					// read before, and fails on a leader's own archive
					// too when a commit lands between two checks.
					if i != 0 || n == last || checks >= 5 {
						check = "ok"
						return nil
					}
					checks++
					fresh, err := store.Open(ctx, db.Path(), store.ReadOnly())
					if err != nil {
						return err
					}
					defer fresh.Close()
					return fresh.Reader().QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check)
				})
				switch {
				case err != nil:
					errs <- fmt.Errorf("reader %d: %w", i, err)
					return
				case n%50 != 0 || n < last:
					errs <- fmt.Errorf("reader %d: %d videos after %d", i, n, last)
					return
				case i == 0 && check != "ok":
					errs <- fmt.Errorf("reader 0: quick_check %q", check)
					return
				}
				last = n
				reads[i]++
			}
		}()
	}
	for p := 1; p <= pages; p++ {
		saveCharts(t, db, p*100, 1) // the stream ships them every 100ms
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, f, r, s, (pages+1)*50)
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, n := range reads {
		if n == 0 {
			t.Errorf("reader %d never read", i)
		}
	}
	if f.Changes() < 2 {
		t.Errorf("%d changes applied while the leader wrote %d pages", f.Changes(), pages)
	}
}

// TestFollowSwitchesToTheNewestTerm: a term that holds nothing yet leaves
// the copy as it is; a newer term with a snapshot replaces it, and readers
// read the new term's archive.
func TestFollowSwitchesToTheNewestTerm(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	old, oldPath := archivetest.Open(t)
	first := start(t, oldPath, []string{url}, 7)
	saveCharts(t, old, 0, 3)
	if err := first.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	f := follow(t, filepath.Join(t.TempDir(), "copy.db"), []string{url})
	r := newReader(t, f)
	if n, err := r.videos(); err != nil || n != 150 {
		t.Fatalf("copy of term 7: %d videos (%v)", n, err)
	}
	first.Stop(ctx)

	// A leader that died between recording its term and its first sync.
	if err := replication.MarkTerm(ctx, url, 8); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the empty term is tried", func() (bool, string) {
		st := f.Status()
		return strings.Contains(st.LastError, "term-0000000000000000008") && strings.Contains(st.LastError, "no snapshot") &&
			st.LagSeconds > 0, fmt.Sprintf("%+v", st)
	})
	if n, err := r.videos(); err != nil || n != 150 || f.Status().Term != 7 {
		t.Fatalf("with an empty newer term: %d videos (%v), term %d; want term 7's 150", n, err, f.Status().Term)
	}

	next, nextPath := archivetest.Open(t)
	saveCharts(t, next, 5000, 1)
	second := start(t, nextPath, []string{url}, 9)
	eventually(t, "the follower switches to term 9", func() (bool, string) {
		n, err := r.videos()
		st := f.Status()
		return err == nil && n == 50 && st.Term == 9, fmt.Sprintf("%d videos (%v), term %d", n, err, st.Term)
	})
	saveCharts(t, next, 6000, 2)
	if err := second.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, f, r, second, 150)
	r.integrity(t)
}

// TestFollowStopHandsTheCopyOver: a standby that becomes the leader stops
// following with everything replicated applied, and opens the file as its
// archive.
func TestFollowStopHandsTheCopyOver(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	db, path := archivetest.Open(t)
	s := start(t, path, []string{url}, 3)
	saveCharts(t, db, 0, 2)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "standby.db")
	f, err := replication.Follow(ctx, copyPath, []string{url}, replication.FollowOptions{Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	saveCharts(t, db, 1000, 3) // replicated, maybe not applied yet
	// The leader's term ends before the standby stops following, as in a
	// takeover. What the replica holds is read from the replica once the
	// stream is stopped: Litestream may ship a transaction of its own after
	// any Sync, its last one as the stream closes.
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	want := replication.ReadStatus(ctx, path, []string{url})[0].Position
	pos, err := f.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pos.TXID != want || pos.Term != 3 {
		t.Errorf("stopped at %+v, want term 3 at %s", pos, want)
	}
	own, err := store.Open(ctx, copyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	archivetest.Integrity(t, own)
	saveCharts(t, own, 9000, 1) // it writes as the leader now
	if got := videos(t, copyPath); got != 300 {
		t.Errorf("the standby's archive holds %d videos, want 250 replicated + 50 of its own", got)
	}
	if _, err := replication.Follow(ctx, copyPath, []string{url}, replication.FollowOptions{}); !errors.Is(err, replication.ErrNotCopy) {
		t.Errorf("following over the handed-over archive: %v, want ErrNotCopy", err)
	}
}

// TestFollowResumesInPlace: a follower closed and started again on its own
// copy goes on from its position instead of restoring afresh.
func TestFollowResumesInPlace(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	db, path := archivetest.Open(t)
	s := start(t, path, []string{url}, 5)
	saveCharts(t, db, 0, 2)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	f, err := replication.Follow(ctx, copyPath, []string{url}, replication.FollowOptions{Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	saveCharts(t, db, 1000, 2)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	f = follow(t, copyPath, []string{url})
	caughtUp(t, f, newReader(t, f), s, 200)
	after, err := os.Stat(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("the copy was restored afresh, not resumed")
	}
}

func TestFollowRefuses(t *testing.T) {
	ctx := context.Background()
	missing := "file://" + filepath.Join(t.TempDir(), "never-written")
	t.Run("missing replica", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "copy.db")
		_, err := replication.Follow(ctx, out, []string{missing}, replication.FollowOptions{})
		if err == nil || !strings.Contains(err.Error(), "never-written") || !strings.Contains(err.Error(), "empty, or missing") {
			t.Errorf("following a missing replica: %v; want an error naming it", err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("left a copy: %v", err)
		}
	})
	t.Run("replica with an empty term", func(t *testing.T) {
		url := fileURL(t)
		if err := replication.MarkTerm(ctx, url, 4); err != nil {
			t.Fatal(err)
		}
		_, err := replication.Follow(ctx, filepath.Join(t.TempDir(), "copy.db"), []string{url}, replication.FollowOptions{})
		if !errors.Is(err, replication.ErrEmpty) || !strings.Contains(err.Error(), "term-0000000000000000004") {
			t.Errorf("following a replica whose only term is empty: %v", err)
		}
	})
	t.Run("live archive", func(t *testing.T) {
		db, path := archivetest.Open(t)
		saveCharts(t, db, 0, 1)
		url := fileURL(t)
		s := start(t, path, []string{url}, 1)
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := replication.Follow(ctx, path, []string{url}, replication.FollowOptions{})
		if !errors.Is(err, replication.ErrNotCopy) || !strings.Contains(err.Error(), path) {
			t.Errorf("following into a live archive: %v, want ErrNotCopy naming it", err)
		}
		if got := videos(t, path); got != 50 {
			t.Errorf("the archive holds %d videos after the refusal, want 50", got)
		}
	})
	t.Run("second follower", func(t *testing.T) {
		db, path := archivetest.Open(t)
		saveCharts(t, db, 0, 1)
		url := fileURL(t)
		s := start(t, path, []string{url}, 1)
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "copy.db")
		follow(t, out, []string{url})
		if _, err := replication.Follow(ctx, out, []string{url}, replication.FollowOptions{}); err == nil || !strings.Contains(err.Error(), "another process") {
			t.Errorf("a second follower of one copy: %v", err)
		}
	})
}

// TestFollowSkipsADamagedChange: a change whose LTX file fails its
// checksum in the replica is not applied: the copy stays readable at the
// state before it, and the error names the replica and the term.
func TestFollowSkipsADamagedChange(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	db, path := archivetest.Open(t)
	s := start(t, path, []string{url}, 6)
	saveCharts(t, db, 0, 2)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	f, err := replication.Follow(ctx, copyPath, []string{url}, replication.FollowOptions{Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()

	dir := filepath.Join(strings.TrimPrefix(url, "file://"), "term-0000000000000000006", "ltx", "0")
	before := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		before[e.Name()] = true
	}
	saveCharts(t, db, 1000, 1)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(dir)
	damaged := 0
	for _, e := range entries {
		if before[e.Name()] {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := 200; i < len(data)-16; i += 101 {
			data[i] ^= 0xff
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		damaged++
	}
	if damaged == 0 {
		t.Fatal("no new LTX file to damage")
	}

	f = follow(t, copyPath, []string{url})
	eventually(t, "the damaged change is reported", func() (bool, string) {
		st := f.Status()
		return strings.Contains(st.LastError, "damaged") && strings.Contains(st.LastError, replication.Name(url)) &&
			strings.Contains(st.LastError, "term-0000000000000000006") && st.LagSeconds > 0, fmt.Sprintf("%+v", st)
	})
	r := newReader(t, f)
	if n, err := r.videos(); err != nil || n != 100 {
		t.Errorf("the copy holds %d videos (%v), want the 100 before the damaged change", n, err)
	}
	r.integrity(t)
}
