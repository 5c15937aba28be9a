package replication_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// handedOver streams term 4 of an archive of 200 videos (100 replicated
// before the standby follows, 100 after) with grants g-old and g-both, and
// stops a standby's follower on it: the copy a standby hands to its
// takeover. The leader's archive and stream go on.
func handedOver(t *testing.T, url string) (replication.Handover, *store.DB, *replication.Stream) {
	t.Helper()
	ctx := context.Background()
	old, oldPath := archivetest.Open(t)
	s := start(t, oldPath, []string{url}, 4)
	t.Cleanup(func() { s.Stop(ctx) })
	saveCharts(t, old, 0, 2)
	grant(t, old, "g-old")
	grant(t, old, "g-both")
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "standby.db.standby")
	f := follow(t, path, []string{url})
	saveCharts(t, old, 1000, 2) // replicated while it follows
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	pos, err := f.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return replication.Handover{Path: path, Position: pos}, old, s
}

// newLeader is a standby's own archive: one page of its own and grants
// g-standby and g-both.
func newLeader(t *testing.T) *store.DB {
	t.Helper()
	db, _ := archivetest.Open(t)
	saveCharts(t, db, 9000, 1)
	grant(t, db, "g-standby")
	grant(t, db, "g-both")
	return db
}

func count(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM videos`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTakeoverAdoptsTheStandbysCopy: a standby's copy stopped with the
// whole previous term applied is adopted as it is, without a restore: the
// new leader's archive holds every replicated page and the union of the
// budget's grants, stays in WAL mode (the copy is in the rollback journal)
// and passes SQLite's and FTS5's checks; the copy is never followed again.
func TestTakeoverAdoptsTheStandbysCopy(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	c, _, _ := handedOver(t, url)
	db := newLeader(t)
	a, ok, err := replication.Takeover(ctx, []string{url}, 5, db, replication.TakeoverOptions{Copy: &c})
	if err != nil || !ok {
		t.Fatalf("takeover: adopted %v, %v", ok, err)
	}
	if !a.FromCopy || a.Why != "" || a.TXID != c.Position.TXID || a.Generation != "term-0000000000000000004" {
		t.Errorf("takeover %+v; want the copy at %s adopted", a, c.Position.TXID)
	}
	if got, want := archivetest.Grants(t, db), []string{"g-both", "g-old", "g-standby"}; !slices.Equal(got, want) {
		t.Errorf("quota_grants after takeover %v, want %v", got, want)
	}
	if n := count(t, db); n != 200 {
		t.Errorf("%d videos after takeover, want the term's 200", n)
	}
	var mode string
	if err := db.Writer().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode after adopting the copy: %q %v, want wal", mode, err)
	}
	archivetest.Integrity(t, db)
	saveCharts(t, db, 20000, 1) // the new leader fetches on
	if n := count(t, db); n != 250 {
		t.Errorf("%d videos after one more page, want 250", n)
	}
	archivetest.Integrity(t, db)
	if _, err := replication.Follow(ctx, c.Path, []string{url}, replication.FollowOptions{}); !errors.Is(err, replication.ErrNotCopy) {
		t.Errorf("following the adopted copy again: %v, want ErrNotCopy", err)
	}
}

// TestTakeoverRestoresWhenTheCopyIsNotTheWholeTerm: a copy behind the
// term's replica, or of a term older than the newest one, is not adopted:
// the takeover restores, says why, and loses nothing.
func TestTakeoverRestoresWhenTheCopyIsNotTheWholeTerm(t *testing.T) {
	ctx := context.Background()
	t.Run("behind", func(t *testing.T) {
		url := fileURL(t)
		c, old, s := handedOver(t, url)
		saveCharts(t, old, 2000, 1) // replicated after the follower stopped
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		db := newLeader(t)
		a, ok, err := replication.Takeover(ctx, []string{url}, 5, db, replication.TakeoverOptions{Copy: &c})
		if err != nil || !ok {
			t.Fatalf("takeover: adopted %v, %v", ok, err)
		}
		if a.FromCopy || !strings.Contains(a.Why, "the standby's copy of term-0000000000000000004 is at "+c.Position.TXID) {
			t.Errorf("takeover %+v; want a restore, the copy being behind", a)
		}
		if n := count(t, db); n != 250 {
			t.Errorf("%d videos after takeover, want the term's 250", n)
		}
		if got, want := archivetest.Grants(t, db), []string{"g-both", "g-old", "g-standby"}; !slices.Equal(got, want) {
			t.Errorf("quota_grants after takeover %v, want %v", got, want)
		}
		archivetest.Integrity(t, db)
	})
	t.Run("newer term", func(t *testing.T) {
		url := fileURL(t)
		c, _, s := handedOver(t, url)
		s.Stop(ctx)
		other, otherPath := archivetest.Open(t) // another standby led term 5
		s5 := start(t, otherPath, []string{url}, 5)
		saveCharts(t, other, 5000, 1)
		if err := s5.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		db := newLeader(t)
		a, ok, err := replication.Takeover(ctx, []string{url}, 6, db, replication.TakeoverOptions{Copy: &c})
		if err != nil || !ok {
			t.Fatalf("takeover: adopted %v, %v", ok, err)
		}
		if a.FromCopy || a.Generation != "term-0000000000000000005" ||
			!strings.Contains(a.Why, "holds term-0000000000000000004, the newest term before this one is term-0000000000000000005") {
			t.Errorf("takeover %+v; want term 5 restored, the copy holding term 4", a)
		}
		if n := count(t, db); n != 50 {
			t.Errorf("%d videos after takeover, want term 5's 50", n)
		}
		archivetest.Integrity(t, db)
	})
}
