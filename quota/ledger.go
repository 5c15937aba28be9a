package quota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Ledger keeps the log in the archive's SQLite file: the backend when no
// Redis is configured. Every operation is one BEGIN IMMEDIATE transaction
// that reads the host clock once, after it holds the write lock, so every
// process on the host sees one serial order of reservations.
type Ledger struct {
	db    *sql.DB
	clock func() time.Time
}

// LedgerOption changes a Ledger.
type LedgerOption func(*Ledger)

// WithClock replaces the host clock (time.Now); tests use it to compute
// Retry-After across a DST change without sleeping.
func WithClock(now func() time.Time) LedgerOption { return func(l *Ledger) { l.clock = now } }

// NewLedger returns a ledger over db, which must hold the tables of
// migrations/0002_quota.sql and begin transactions IMMEDIATE (store.Open's
// writer pool, store.DB.Writer(), does both). Keep transactions on that pool
// short: it has one connection, shared with the archive's page writes.
func NewLedger(db *sql.DB, opts ...LedgerOption) *Ledger {
	l := &Ledger{db: db, clock: time.Now}
	for _, opt := range opts {
		opt(l)
	}
	return l
}

func (l *Ledger) kind() string { return "ledger" }

// tx runs fn in one IMMEDIATE transaction with the clock read inside it.
func (l *Ledger) tx(ctx context.Context, fn func(tx *sql.Tx, now int64) error) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return ledgerError(fmt.Errorf("ledger: begin: %w", err))
	}
	defer tx.Rollback()
	if err := fn(tx, l.clock().UnixMicro()); err != nil {
		return ledgerError(fmt.Errorf("ledger: %w", err))
	}
	if err := tx.Commit(); err != nil {
		return ledgerError(fmt.Errorf("ledger: commit: %w", err))
	}
	return nil
}

func (l *Ledger) reserve(ctx context.Context, cred, call, id string, charges []charge) (decision, error) {
	var d decision
	err := l.tx(ctx, func(tx *sql.Tx, now int64) error {
		d = decision{at: time.UnixMicro(now), refusedBy: -1, used: make([]int64, len(charges))}
		for i, c := range charges {
			used, err := prune(ctx, tx, cred, c, now)
			if err != nil {
				return err
			}
			d.used[i] = used
		}

		for _, c := range charges {
			if c.cost == 0 {
				continue
			}
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM quota_log
				WHERE credential = ? AND limit_name = ? AND id = ? AND cost = ?`, cred, c.name, id, c.cost).Scan(&one)
			if err == nil {
				d.granted, d.duplicate = true, true
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}

		until, err := markUntil(ctx, tx, cred, call)
		if err != nil {
			return err
		}
		if until > now {
			d.refusedBy, d.retryAfter = upstreamRefusal, time.Duration(until-now)*time.Microsecond
			return nil
		}

		wait := time.Duration(-1)
		for i, c := range charges {
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

		for i, c := range charges {
			if c.cost == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO quota_log(credential, limit_name, id, cost, at)
				VALUES (?, ?, ?, ?, ?)`, cred, c.name, id, c.cost, now); err != nil {
				return err
			}
			if err := addTotal(ctx, tx, cred, c.name, c.cost); err != nil {
				return err
			}
			d.used[i] += c.cost
		}
		d.granted = true
		return nil
	})
	return d, err
}

// prune deletes the entries that have left c's window (at <= now - window),
// keeps the total equal to the sum of the rest, and returns that sum.
func prune(ctx context.Context, tx *sql.Tx, cred string, c charge, now int64) (int64, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM quota_log
		WHERE credential = ? AND limit_name = ? AND at <= ? RETURNING cost`, cred, c.name, now-micros(c.window))
	if err != nil {
		return 0, err
	}
	var freed int64
	for rows.Next() {
		var cost int64
		if err := rows.Scan(&cost); err != nil {
			rows.Close()
			return 0, err
		}
		freed += cost
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}

	var used int64
	err = tx.QueryRowContext(ctx, `SELECT used FROM quota_totals WHERE credential = ? AND limit_name = ?`,
		cred, c.name).Scan(&used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// First use of this limit (or a total deleted by hand): count the log.
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(cost), 0) FROM quota_log
			WHERE credential = ? AND limit_name = ?`, cred, c.name).Scan(&used); err != nil {
			return 0, err
		}
		return used, addTotal(ctx, tx, cred, c.name, used)
	case err != nil:
		return 0, err
	case freed > 0:
		used -= freed
		_, err = tx.ExecContext(ctx, `UPDATE quota_totals SET used = ? WHERE credential = ? AND limit_name = ?`,
			used, cred, c.name)
	}
	return used, err
}

func addTotal(ctx context.Context, tx *sql.Tx, cred, name string, n int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO quota_totals(credential, limit_name, used) VALUES (?, ?, ?)
		ON CONFLICT(credential, limit_name) DO UPDATE SET used = used + excluded.used`, cred, name, n)
	return err
}

// waitFor walks c's entries oldest first until enough units have left for
// c.cost to fit, and returns how long until the entry that frees them leaves.
func waitFor(ctx context.Context, tx *sql.Tx, cred string, c charge, used, now int64) (time.Duration, error) {
	rows, err := tx.QueryContext(ctx, `SELECT cost, at FROM quota_log
		WHERE credential = ? AND limit_name = ? ORDER BY at`, cred, c.name)
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
	return c.window, rows.Err() // unreachable while the total is exact
}

// markUntil is the end of the later of the credential's mark and call's.
func markUntil(ctx context.Context, tx *sql.Tx, cred, call string) (int64, error) {
	var until int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(until), 0) FROM quota_marks
		WHERE credential = ? AND call IN ('', ?)`, cred, call).Scan(&until)
	return until, err
}

func (l *Ledger) release(ctx context.Context, cred, id string, limits []charge) (bool, error) {
	var found bool
	err := l.tx(ctx, func(tx *sql.Tx, now int64) error {
		for _, c := range limits {
			if _, err := prune(ctx, tx, cred, c, now); err != nil {
				return err
			}
			var cost int64
			err := tx.QueryRowContext(ctx, `DELETE FROM quota_log
				WHERE credential = ? AND limit_name = ? AND id = ? RETURNING cost`, cred, c.name, id).Scan(&cost)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			found = true
			// prune made sure the total row exists.
			if _, err := tx.ExecContext(ctx, `UPDATE quota_totals SET used = used - ?
				WHERE credential = ? AND limit_name = ?`, cost, cred, c.name); err != nil {
				return err
			}
		}
		return nil
	})
	return found, err
}

func (l *Ledger) mark(ctx context.Context, cred string, calls []string, until time.Time, reason string) error {
	if len(calls) == 0 {
		calls = []string{""} // the whole credential
	}
	return l.tx(ctx, func(tx *sql.Tx, now int64) error {
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

func (l *Ledger) status(ctx context.Context, cred string, calls []string, limits []charge) (snapshot, error) {
	var s snapshot
	err := l.tx(ctx, func(tx *sql.Tx, now int64) error {
		s = snapshot{at: time.UnixMicro(now)}
		for _, c := range limits {
			used, err := prune(ctx, tx, cred, c, now)
			if err != nil {
				return err
			}
			ls := limitSnapshot{used: used}
			var oldest sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), MIN(at) FROM quota_log
				WHERE credential = ? AND limit_name = ?`, cred, c.name).Scan(&ls.count, &oldest); err != nil {
				return err
			}
			if oldest.Valid {
				ls.oldest = time.UnixMicro(oldest.Int64)
			}
			s.limits = append(s.limits, ls)
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

func (l *Ledger) replay(ctx context.Context, cred string, limits []charge, entries []journalEntry) (int, error) {
	var added int
	err := l.tx(ctx, func(tx *sql.Tx, now int64) error {
		added = 0
		for _, c := range limits {
			if _, err := prune(ctx, tx, cred, c, now); err != nil {
				return err
			}
		}
		for _, e := range entries {
			at := min(e.at.UnixMicro(), now)
			any := false
			for i, c := range limits {
				cost := e.costs[i]
				if cost <= 0 || at <= now-micros(c.window) {
					continue
				}
				r, err := tx.ExecContext(ctx, `INSERT INTO quota_log(credential, limit_name, id, cost, at)
					VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, cred, c.name, e.id, cost, at)
				if err != nil {
					return err
				}
				if n, err := r.RowsAffected(); err != nil || n == 0 {
					continue
				}
				if err := addTotal(ctx, tx, cred, c.name, cost); err != nil {
					return err
				}
				any = true
			}
			if any {
				added++
			}
		}
		return nil
	})
	return added, err
}

func (l *Ledger) now(ctx context.Context) (time.Time, error) {
	var one int
	if err := l.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return time.Time{}, ledgerError(fmt.Errorf("ledger: %w", err))
	}
	return l.clock(), nil
}

// ledgerError marks the errors that mean "the file could not be used right
// now" (locked past the timeout, interrupted, I/O) as unavailable, so the
// call's Policy decides; anything else (a missing table) is a hard error.
func ledgerError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrConnDone) {
		return unavailableError{err}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT,
			sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
			return unavailableError{err}
		}
	}
	return err
}
