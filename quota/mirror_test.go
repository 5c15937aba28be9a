package quota_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// mirrored returns the reservation ids the mirror holds for cred.
func mirrored(tb testing.TB, db *sql.DB, cred string) map[string]int64 {
	tb.Helper()
	rows, err := db.Query(`SELECT id, cost FROM quota_mirror WHERE credential = ?`, cred)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var cost int64
		if err := rows.Scan(&id, &cost); err != nil {
			tb.Fatal(err)
		}
		out[id] = cost
	}
	return out
}

// TestMirrorFollowsTheLog: each epoch check copies the entries granted
// since the last copy, by any process; when the mirror and the log do not
// hold as many entries (after a release), the next copy is a whole one.
func TestMirrorFollowsTheLog(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := oneLimit(redistest.Prefix(t), 100, time.Hour, mixedCosts)
	archive := openStore(t)
	daemon := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(archive.Writer()), quota.WithMirror())
	cli := newLimiter(t, cfg, quota.NewRedis(redistest.Client(t)), quota.WithRecord(openStore(t).Writer()))
	ctx := context.Background()
	check := func(full bool, want map[string]int64) {
		t.Helper()
		if _, err := daemon.Sync(ctx, full); err != nil {
			t.Fatal(err)
		}
		got := mirrored(t, archive.Writer(), cfg.Credential)
		if len(got) != len(want) {
			t.Fatalf("mirror = %v, want %v", got, want)
		}
		for id, c := range want {
			if got[id] != c {
				t.Fatalf("mirror = %v, want %v", got, want)
			}
		}
	}
	mustGrant(t, daemon, "seven", quota.WithID("d1"))
	mustGrant(t, cli, "one", quota.WithID("c1"))
	check(false, map[string]int64{"d1": 7, "c1": 1})
	mustGrant(t, cli, "seven", quota.WithID("c2"))
	check(false, map[string]int64{"d1": 7, "c1": 1, "c2": 7})
	if err := cli.Release(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	check(false, map[string]int64{"d1": 7, "c1": 1, "c2": 7}) // a copy adds only; the counts now differ
	check(false, map[string]int64{"d1": 7, "c2": 7})          // so the next copy is a whole one
}

// TestMirrorRestoresWhoNeverReturns: the CLI that spent most of the day
// never runs again after the loss; the daemon's mirror restores its grants
// with the daemon's own, and the day stays full.
func TestMirrorRestoresWhoNeverReturns(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	cfg := lossCfg(redistest.Prefix(t))
	begin(t, cfg, quota.NewRedis(rdb))
	daemon := newLimiter(t, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(t).Writer()), quota.WithMirror())
	cli := newLimiter(t, cfg, quota.NewRedis(redistest.Client(t)), quota.WithRecord(openStore(t).Writer()))
	spend(t, cli, "seven", 12) // 84
	spend(t, daemon, "one", 2) // 86
	if _, err := daemon.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	spend(t, cli, "seven", 2) // 100: after the last copy, so unknown after the loss
	wipe(t, cfg.Credential)

	rep, err := daemon.Sync(context.Background(), false)
	if err != nil || !rep.Restored || rep.Added != 14 {
		t.Fatalf("daemon's epoch check after the loss = %+v, %v; want 14 grants restored (2 its own, 12 mirrored)", rep, err)
	}
	if u := used(t, daemon)["only"]; u != 86 {
		t.Errorf("used after the restore = %d, want the 86 known at the last copy", u)
	}
}
