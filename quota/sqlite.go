package quota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ytrend/ytrend/internal/sqliteerr"
)

// SQLite keeps the ledger in the archive's SQLite file (the embedded
// ledger): the backend when no Redis is configured. Every operation is one BEGIN IMMEDIATE transaction
// that reads the host clock once, after it holds the write lock, so every
// process on the host sees one serial order of reservations.
type SQLite struct {
	db     *sql.DB
	clock  func() time.Time
	stmts  *stmtCache
	pruned *pruneTimes
}

// SQLiteOption changes a SQLite backend.
type SQLiteOption func(*SQLite)

// WithClock replaces the host clock (time.Now); tests use it to compute
// Retry-After across a DST change without sleeping.
func WithClock(now func() time.Time) SQLiteOption { return func(l *SQLite) { l.clock = now } }

// NewSQLite returns the embedded ledger over db: the archive's writer pool,
// store.DB.Writer(). The embedded ledger lives in the archive: its tables are
// the archive's migrations (0002_quota.sql, 0003_quota_books.sql,
// 0012_quota_window.sql), and its
// transactions must begin IMMEDIATE on the archive's one writer connection,
// shared with page writes, which store.Open's writer pool does. Keep them
// short.
func NewSQLite(db *sql.DB, opts ...SQLiteOption) *SQLite {
	l := &SQLite{db: db, clock: time.Now, stmts: &stmtCache{stmts: map[string]*sql.Stmt{}},
		pruned: &pruneTimes{at: map[string]int64{}}}
	for _, opt := range opts {
		opt(l)
	}
	return l
}

func (l *SQLite) kind() string { return "ledger" }

// tx runs fn in one IMMEDIATE transaction with the clock read inside it,
// then prepares the statements it ran for the next time.
//
// ctx bounds the wait for the archive's write lock (BEGIN), and database/sql
// rolls the transaction back should ctx end while fn runs. fn's statements
// run without ctx's cancellation: holding the lock, they wait on no other
// process, and modernc.org/sqlite watches a cancellable context with a
// goroutine and a progress handler for every statement, a tenth of a
// reservation's CPU (issue 21's profile).
func (l *SQLite) tx(ctx context.Context, fn func(ctx context.Context, tx ledgerTx, now int64) error) error {
	err := l.run(ctx, fn)
	l.stmts.prepare(ctx, l.db)
	return err
}

func (l *SQLite) run(ctx context.Context, fn func(ctx context.Context, tx ledgerTx, now int64) error) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return ledgerError(fmt.Errorf("ledger: begin: %w", err))
	}
	defer tx.Rollback()
	if err := fn(context.WithoutCancel(ctx), ledgerTx{tx, l.stmts, l.pruned}, l.clock().UnixMicro()); err != nil {
		return ledgerError(fmt.Errorf("ledger: %w", rolledBack(ctx, err)))
	}
	if err := tx.Commit(); err != nil {
		return ledgerError(fmt.Errorf("ledger: commit: %w", rolledBack(ctx, err)))
	}
	return nil
}

// rolledBack is ctx's error when err is database/sql's ErrTxDone because ctx
// ended while the transaction ran (fn's statements do not watch ctx, so the
// first one after the rollback says only that): the backend did not answer
// in time, which the call's Policy decides, as it does a deadline in BEGIN.
func rolledBack(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("%w (the transaction was rolled back)", cerr)
	}
	return err
}

func (l *SQLite) reserve(ctx context.Context, cred string, rv reservation) (decision, error) {
	var d decision
	err := l.tx(ctx, func(ctx context.Context, tx ledgerTx, now int64) error {
		d = decision{at: time.UnixMicro(now), refusedBy: -1, used: make([]int64, len(rv.charges))}
		if rv.fence != nil {
			if cur, err := leaseValue(ctx, tx, cred, now); err != nil {
				return err
			} else if cur != rv.fence.value() {
				return fmt.Errorf("%w: the lease is now %q", ErrFenced, cur)
			}
		}
		if err := checkDefs(ctx, tx, cred, rv.charges, now); err != nil {
			return err
		}
		ep, replay, err := epochCheck(ctx, tx, cred, rv.call, rv.epoch, rv.grace, now)
		if err != nil {
			return err
		}
		d.epoch, d.graceUntil = ep.id, fromMicros(ep.graceUntil)
		if replay {
			d.replay = true
			return nil
		}
		for i, c := range rv.charges {
			used, err := usedIn(ctx, tx, cred, c, now)
			if err != nil {
				return err
			}
			d.used[i] = used
		}

		// One look at the id's entries answers both: the same cost is a
		// retry of a grant whose reply was lost (nothing charged now);
		// another cost would be a second charge, and is an error.
		for _, c := range rv.charges {
			if c.cost == 0 {
				continue
			}
			var cost sql.NullInt64 // the entry of this cost, else any other: two key seeks, no sort
			err := tx.QueryRowContext(ctx, `SELECT COALESCE(
				(SELECT cost FROM quota_log WHERE credential = ?1 AND limit_name = ?2 AND id = ?3 AND cost = ?4),
				(SELECT cost FROM quota_log WHERE credential = ?1 AND limit_name = ?2 AND id = ?3 LIMIT 1))`,
				cred, c.name, rv.id, c.cost).Scan(&cost)
			switch {
			case err != nil:
				return err
			case !cost.Valid:
				continue
			case cost.Int64 != c.cost:
				return fmt.Errorf("%w: limit %q already holds it with cost %d", ErrIDReused, c.name, cost.Int64)
			}
			d.granted, d.duplicate = true, true
			return nil
		}

		until := ep.marked
		if until > now || ep.graceUntil > now {
			if ep.graceUntil > until {
				d.refusedBy, d.retryAfter = graceRefusal, time.Duration(ep.graceUntil-now)*time.Microsecond
			} else {
				d.refusedBy, d.retryAfter = upstreamRefusal, time.Duration(until-now)*time.Microsecond
			}
			return nil
		}

		wait := time.Duration(-1)
		for i, c := range rv.charges {
			if c.cost == 0 || d.used[i]+c.cost <= c.units {
				continue
			}
			w, err := waitFor(ctx, tx, cred, c, d.used[i], now)
			if err != nil {
				return err
			}
			if w > wait {
				d.refusedBy, wait = i, w
			}
		}
		if d.refusedBy >= 0 {
			d.retryAfter = wait
			return nil
		}

		added := 0
		for i, c := range rv.charges {
			if c.cost == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO quota_log(credential, limit_name, id, cost, at)
				VALUES (?, ?, ?, ?, ?)`, cred, c.name, rv.id, c.cost, now); err != nil {
				return err
			}
			d.used[i] += c.cost
			added++
		}
		d.granted = true
		return addEntries(ctx, tx, cred, added)
	})
	return d, err
}

// retention is how long the ledger keeps an entry after it has left its
// window. Counting reads only what moved in or out of the window, so keeping
// entries costs no time; it means a host clock that jumps forward, by up to
// this much past the window, and back again, loses nothing: the entries
// count again once the clock is right.
const retention = 7 * 24 * time.Hour

// usedIn returns the units in c's window at now, and deletes entries that
// left it more than retention ago.
//
// quota_window (migrations/0012_quota_window.sql) keeps, per limit, the sum
// of the entries granted after a cutoff, equal to the log through triggers
// on every write. usedIn moves the cutoff to this window's start, now -
// window, adding or taking away only the entries between the old cutoff and
// the new: exact, and one or two entries a call at a steady rate instead of
// the whole window. The cutoff is the previous call's clock, so a clock that
// jumped forward or back is seen here, and costs exactly the entries the
// jump crossed: none is ever dropped from the sum for good, so the window
// is as safe against clock jumps as summing every entry.
func usedIn(ctx context.Context, tx ledgerTx, cred string, c charge, now int64) (int64, error) {
	if err := prune(ctx, tx, cred, c, now); err != nil {
		return 0, err
	}
	cutoff := now - micros(c.window) // an entry counts while at > cutoff
	var used int64
	err := tx.QueryRowContext(ctx, `UPDATE quota_window SET
		used = used
			- COALESCE((SELECT SUM(cost) FROM quota_log WHERE credential = ?1 AND limit_name = ?2
				AND at > quota_window.cutoff AND at <= ?3), 0)
			+ COALESCE((SELECT SUM(cost) FROM quota_log WHERE credential = ?1 AND limit_name = ?2
				AND at > ?3 AND at <= quota_window.cutoff), 0),
		cutoff = ?3
		WHERE credential = ?1 AND limit_name = ?2 RETURNING used`, cred, c.name, cutoff).Scan(&used)
	if errors.Is(err, sql.ErrNoRows) { // the limit's first call: sum it once
		err = tx.QueryRowContext(ctx, `INSERT INTO quota_window(credential, limit_name, cutoff, used)
			SELECT ?1, ?2, ?3, COALESCE(SUM(cost), 0) FROM quota_log WHERE credential = ?1 AND limit_name = ?2 AND at > ?3
			RETURNING used`, cred, c.name, cutoff).Scan(&used)
	}
	return used, err
}

// prune deletes c's entries that left its window more than retention ago,
// at most once a minute per limit and process: what it deletes no longer
// counts anywhere, so when it runs is only a matter of space, and a
// statement less per call is an eighth of a reservation.
func prune(ctx context.Context, tx ledgerTx, cred string, c charge, now int64) error {
	key := cred + "\x00" + c.name
	tx.pruned.Lock()
	last, seen := tx.pruned.at[key]
	tx.pruned.Unlock()
	if seen && now >= last && now-last < micros(time.Minute) {
		return nil
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM quota_log WHERE credential = ? AND limit_name = ? AND at <= ?`,
		cred, c.name, now-micros(c.window+retention))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n > 0 {
		if err := addEntries(ctx, tx, cred, -int(n)); err != nil {
			return err
		}
	}
	tx.pruned.Lock()
	tx.pruned.at[key] = now
	tx.pruned.Unlock()
	return nil
}

// addEntries keeps quota_epoch.entries equal to cred's quota_log rows.
func addEntries(ctx context.Context, tx ledgerTx, cred string, n int) error {
	if n == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE quota_epoch SET entries = MAX(0, entries + ?) WHERE credential = ?`, n, cred)
	return err
}

// waitFor walks c's entries in the window oldest first until enough units
// have left for c.cost to fit, and returns how long until the entry that
// frees them leaves.
func waitFor(ctx context.Context, tx ledgerTx, cred string, c charge, used, now int64) (time.Duration, error) {
	rows, err := tx.QueryContext(ctx, `SELECT cost, at FROM quota_log
		WHERE credential = ? AND limit_name = ? AND at > ? ORDER BY at`, cred, c.name, now-micros(c.window))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	need, freed := used+c.cost-c.units, int64(0)
	for rows.Next() {
		var cost, at int64
		if err := rows.Scan(&cost, &at); err != nil {
			return 0, err
		}
		if freed += cost; freed >= need {
			return time.Duration(at+micros(c.window)-now) * time.Microsecond, rows.Close()
		}
	}
	return c.window, rows.Err() // unreachable: the sum was read in this transaction
}

// marksSQL is the end of the later of credential ?1's mark and call ?2's,
// as an expression: two key seeks (an IN list of the two builds a temporary
// table).
const marksSQL = `MAX(
	COALESCE((SELECT until FROM quota_marks WHERE credential = ?1 AND call = ''), 0),
	COALESCE((SELECT until FROM quota_marks WHERE credential = ?1 AND call = ?2), 0))`

// checkDefs stores each limit's definition, or refuses one whose window
// differs from the stored one while that limit still holds entries in
// either window (once it holds none, the new definition replaces it).
// Another capacity is a configuration change, stored at once.
func checkDefs(ctx context.Context, tx ledgerTx, cred string, limits []charge, now int64) error {
	for _, c := range limits {
		var units, window int64
		err := tx.QueryRowContext(ctx, `SELECT units, window_us FROM quota_limits WHERE credential = ? AND limit_name = ?`,
			cred, c.name).Scan(&units, &window)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case units == c.units && window == micros(c.window):
			continue
		case window == micros(c.window):
			// capacity changed: store it below
		default:
			var live int
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM quota_log
				WHERE credential = ? AND limit_name = ? AND at > ?)`, cred, c.name, now-max(window, micros(c.window))).Scan(&live); err != nil {
				return err
			}
			if live == 1 {
				return &ConflictError{Limit: c.name, Stored: Limit{Units: units, Window: time.Duration(window) * time.Microsecond},
					Mine: Limit{Units: c.units, Window: c.window}}
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO quota_limits(credential, limit_name, units, window_us) VALUES (?, ?, ?, ?)
			ON CONFLICT DO UPDATE SET units = excluded.units, window_us = excluded.window_us`,
			cred, c.name, c.units, micros(c.window)); err != nil {
			return err
		}
	}
	return nil
}

func (l *SQLite) release(ctx context.Context, cred, id string, limits []charge) (bool, error) {
	var found bool
	err := l.tx(ctx, func(ctx context.Context, tx ledgerTx, now int64) error {
		if err := checkDefs(ctx, tx, cred, limits, now); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM quota_log WHERE credential = ? AND id = ?`, cred, id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		found = n > 0
		return addEntries(ctx, tx, cred, -int(n))
	})
	return found, err
}

func (l *SQLite) mark(ctx context.Context, cred string, calls []string, until time.Time, reason string) error {
	if len(calls) == 0 {
		calls = []string{""} // the whole credential
	}
	return l.tx(ctx, func(ctx context.Context, tx ledgerTx, now int64) error {
		u := until.UnixMicro()
		if u <= now {
			return markInPast(until, time.UnixMicro(now))
		}
		for _, call := range calls {
			if _, err := tx.ExecContext(ctx, `INSERT INTO quota_marks(credential, call, until, reason, marked_at)
				VALUES (?, ?, ?, ?, ?)
				ON CONFLICT(credential, call) DO UPDATE
				SET until = excluded.until, reason = excluded.reason, marked_at = excluded.marked_at
				WHERE excluded.until > quota_marks.until`, cred, call, u, reason, now); err != nil {
				return err
			}
		}
		return nil
	})
}

func (l *SQLite) status(ctx context.Context, cred string, calls []string, limits []charge) (snapshot, error) {
	var s snapshot
	err := l.tx(ctx, func(ctx context.Context, tx ledgerTx, now int64) error {
		s = snapshot{at: time.UnixMicro(now)}
		if err := checkDefs(ctx, tx, cred, limits, now); err != nil {
			return err
		}
		for _, c := range limits {
			used, err := usedIn(ctx, tx, cred, c, now)
			if err != nil {
				return err
			}
			ls := limitSnapshot{used: used}
			var oldest sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), MIN(at) FROM quota_log
				WHERE credential = ? AND limit_name = ? AND at > ?`, cred, c.name, now-micros(c.window)).Scan(&ls.count, &oldest); err != nil {
				return err
			}
			if oldest.Valid {
				ls.oldest = time.UnixMicro(oldest.Int64)
			}
			s.limits = append(s.limits, ls)
		}

		var e ledgerEpoch
		err := tx.QueryRowContext(ctx, `SELECT id, created, grace_until, rebuilt, restored FROM quota_epoch
			WHERE credential = ?`, cred).Scan(&e.id, &e.created, &e.graceUntil, &e.rebuilt, &e.restored)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		s.ledger = LedgerInfo{Epoch: e.id, Created: fromMicros(e.created), Rebuilt: fromMicros(e.rebuilt),
			Restored: e.restored, GraceUntil: fromMicros(e.graceUntil)}
		if s.lease, err = leaseValue(ctx, tx, cred, now); err != nil {
			return err
		}

		rows, err := tx.QueryContext(ctx, `SELECT call, until, reason FROM quota_marks
			WHERE credential = ? AND until > ?`, cred, now)
		if err != nil {
			return err
		}
		defer rows.Close()
		marks := map[string]Exhaustion{}
		for rows.Next() {
			var e Exhaustion
			var until int64
			if err := rows.Scan(&e.Call, &until, &e.Reason); err != nil {
				return err
			}
			e.Until = time.UnixMicro(until)
			marks[e.Call] = e
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if e, ok := marks[""]; ok {
			s.mark = &e
		}
		for _, call := range calls {
			if e, ok := marks[call]; ok {
				s.callMarks = append(s.callMarks, e)
			}
		}
		return nil
	})
	return s, err
}

func (l *SQLite) now(ctx context.Context) (time.Time, error) {
	var one int
	if err := l.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return time.Time{}, ledgerError(fmt.Errorf("ledger: %w", err))
	}
	return l.clock(), nil
}

// ledgerError marks the errors that mean "the file could not be used right
// now" (locked past the timeout, interrupted, I/O) as unavailable, so the
// call's Policy decides; a missing table is ErrLedgerDamaged; anything else
// is a hard error.
func ledgerError(err error) error {
	if err == nil || errors.Is(err, ErrFenced) || errors.Is(err, ErrLimitConflict) || errors.Is(err, ErrIDReused) {
		return err
	}
	if msg := err.Error(); strings.Contains(msg, "no such table: quota_") {
		return fmt.Errorf("%w: %w (refusing to take a missing table for an empty day; "+
			"the archive's quota tables were dropped: restore the archive, or move it aside to start new books)", ErrLedgerDamaged, err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrConnDone) {
		return unavailableError{err}
	}
	if sqliteerr.Transient(err) {
		return unavailableError{err}
	}
	return err
}
