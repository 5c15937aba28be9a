package quota

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// The embedded ledger's books: its epoch, and the sync of a process's
// record into it.

// ledgerEpoch is a quota_epoch row.
type ledgerEpoch struct {
	id                  string
	created, graceUntil int64
	rebuilt, restored   int64
	entries             int64
	// marked is the end of the later of the credential's and the call's
	// upstream marks, read in the epoch's statement: one fewer a call.
	marked int64
}

// epochCheck is window.lua's epoch_check on the embedded ledger, plus one
// check Redis cannot need: an epoch that says the log holds entries when it
// holds none means the log was emptied behind the ledger's back. That is a
// loss too, never an empty day. It reads call's marks too (see
// ledgerEpoch.marked).
func epochCheck(ctx context.Context, tx ledgerTx, cred, call, expected string, grace time.Duration, now int64) (ledgerEpoch, bool, error) {
	var e ledgerEpoch
	var any int // whether the log holds an entry: read in the same statement, one fewer per call
	err := tx.QueryRowContext(ctx, `SELECT id, created, grace_until, rebuilt, restored, entries,
		EXISTS (SELECT 1 FROM quota_log WHERE credential = ?1), `+marksSQL+` FROM quota_epoch
		WHERE credential = ?1`, cred, call).Scan(&e.id, &e.created, &e.graceUntil, &e.rebuilt, &e.restored, &e.entries, &any, &e.marked)
	lost := false
	switch {
	case errors.Is(err, sql.ErrNoRows):
		lost = expected != ""
		if !lost {
			// The record of this archive's processes lives beside the
			// ledger: rows spent under an epoch prove there was one.
			var spent int
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM quota_grants
				WHERE credential = ? AND epoch != '')`, cred).Scan(&spent); err != nil {
				return e, false, err
			}
			lost = spent == 1
		}
	case err != nil:
		return e, false, err
	case e.entries > 0 && any == 0:
		lost = true
		err = sql.ErrNoRows // start a new epoch below
	}
	if errors.Is(err, sql.ErrNoRows) {
		e = ledgerEpoch{id: newEpoch(), created: now}
		if err := tx.QueryRowContext(ctx, `SELECT `+marksSQL, cred, call).Scan(&e.marked); err != nil {
			return e, false, err
		}
		if lost {
			e.rebuilt, e.graceUntil = now, now+micros(grace)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO quota_epoch(credential, id, created, grace_until, rebuilt, restored, entries)
			VALUES (?1, ?2, ?3, ?4, ?5, 0, (SELECT COUNT(*) FROM quota_log WHERE credential = ?1))
			ON CONFLICT DO UPDATE SET id = excluded.id, created = excluded.created,
			grace_until = excluded.grace_until, rebuilt = excluded.rebuilt, restored = 0, entries = excluded.entries`,
			cred, e.id, e.created, e.graceUntil, e.rebuilt)
		return e, lost, err
	}
	if expected == "" || expected == e.id {
		return e, false, nil
	}
	if e.rebuilt == 0 {
		e.rebuilt, e.graceUntil = now, now+micros(grace)
		if _, err := tx.ExecContext(ctx, `UPDATE quota_epoch SET rebuilt = ?, grace_until = ? WHERE credential = ?`,
			e.rebuilt, e.graceUntil, cred); err != nil {
			return e, false, err
		}
	}
	return e, true, nil
}

func (l *SQLite) sync(ctx context.Context, cred string, sr syncRequest) (syncResult, error) {
	var r syncResult
	err := l.tx(ctx, func(ctx context.Context, tx ledgerTx, now int64) error {
		r = syncResult{at: time.UnixMicro(now)}
		if err := checkDefs(ctx, tx, cred, sr.limits, now); err != nil {
			return err
		}
		ep, restored, err := epochCheck(ctx, tx, cred, "", sr.epoch, sr.grace, now)
		if err != nil {
			return err
		}
		r.epoch, r.graceUntil, r.restored = ep.id, fromMicros(ep.graceUntil), restored
		rows := 0
		for _, e := range sr.entries {
			at := min(e.at.UnixMicro(), now)
			any := false
			for i, c := range sr.limits {
				cost := e.costs[i]
				if cost <= 0 || at <= now-micros(c.window) {
					continue
				}
				res, err := tx.ExecContext(ctx, `INSERT INTO quota_log(credential, limit_name, id, cost, at)
					VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, cred, c.name, e.id, cost, at)
				if err != nil {
					return err
				}
				if n, err := res.RowsAffected(); err != nil {
					return err
				} else if n > 0 {
					rows++
					any = true
				}
			}
			if any {
				r.added++
			}
		}
		if err := addEntries(ctx, tx, cred, rows); err != nil {
			return err
		}
		if (restored || sr.restoring) && r.added > 0 {
			_, err = tx.ExecContext(ctx, `UPDATE quota_epoch SET restored = restored + ? WHERE credential = ?`, r.added, cred)
		}
		return err
	})
	return r, err
}
