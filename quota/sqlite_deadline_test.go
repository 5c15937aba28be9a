package quota_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
)

// TestLedgerDeadlineInsideTheTransaction: a process that stalls while it
// holds the archive's write lock (a pause, a stop, a starved CPU) until its
// backend deadline passes gets its transaction rolled back by database/sql.
// That is the backend not answering in time, as a deadline in BEGIN is: the
// call's policy decides (videos.list fails open), it is not a hard backend
// error, and nothing is charged twice once the grant reaches the ledger.
func TestLedgerDeadlineInsideTheTransaction(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "archive.db")
	db := openStoreAt(t, path)
	var stall atomic.Bool
	clock := func() time.Time {
		// The clock is read inside the transaction, after BEGIN: stall
		// there until database/sql has rolled it back.
		if stall.CompareAndSwap(true, false) {
			waitForWriteLock(t, path)
		}
		return time.Now()
	}
	cfg := testConfig()
	cfg.Timeout = time.Second // the stall lasts this long
	l := newLimiter(t, cfg, quota.NewSQLite(db.Writer(), quota.WithClock(clock)), quota.WithRecord(db.Writer()))
	mustGrant(t, l, "videos.list") // first contact: its audit, out of the way

	stall.Store(true)
	res, err := l.Reserve(context.Background(), "videos.list", quota.WithID("stalled"))
	if err != nil || !res.Granted || !res.FailOpen {
		t.Fatalf("reserve stalled past its deadline: granted=%v fail-open=%v err=%v; want a fail-open grant",
			res.Granted, res.FailOpen, err)
	}
	if stall.Load() {
		t.Fatal("the reservation never read the ledger's clock")
	}
	var rows int
	if err := db.Writer().QueryRow(`SELECT COUNT(*) FROM quota_log WHERE id = 'stalled'`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("rolled-back reservation left %d ledger rows (err %v), want 0", rows, err)
	}

	// The next call adds the fail-open grant to the ledger, once.
	mustGrant(t, l, "videos.list")
	if got := used(t, l); got["daily"] != 3 {
		t.Errorf("daily used = %d, want 3 (two grants and the fail-open one, once)", got["daily"])
	}
	if err := db.Writer().QueryRow(`SELECT COUNT(*) FROM quota_log WHERE id = 'stalled'`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("the fail-open grant holds %d ledger rows (err %v), want 1", rows, err)
	}
}

// waitForWriteLock waits until another connection can take path's write
// lock, that is until the transaction holding it has ended.
func waitForWriteLock(tb testing.TB, path string) {
	tb.Helper()
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		tb.Error(err)
		return
	}
	defer other.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := other.Conn(ctx)
	if err != nil {
		tb.Error(err)
		return
	}
	defer conn.Close()
	for {
		if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err == nil {
			if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
				tb.Error(err)
			}
			return
		}
		select {
		case <-ctx.Done():
			tb.Error("the write lock was never released")
			return
		case <-time.After(time.Millisecond):
		}
	}
}
