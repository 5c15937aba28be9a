package quota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The embedded ledger's leader lease (migrations/0003_quota_books.sql).

func (l *SQLite) lease(ctx context.Context, cred string, op leaseOp, holder string, ttl time.Duration, token int64) (leaseState, error) {
	var st leaseState
	err := l.tx(ctx, func(ctx context.Context, tx ledgerTx, now int64) error {
		st = leaseState{at: time.UnixMicro(now)}
		var cur struct {
			holder       string
			token, until int64
		}
		err := tx.QueryRowContext(ctx, `SELECT holder, token, expires_at FROM quota_lease WHERE credential = ?`, cred).
			Scan(&cur.holder, &cur.token, &cur.until)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		live := err == nil && cur.holder != "" && cur.until > now
		expires := now + micros(ttl)
		switch op {
		case leaseAcquire:
			switch {
			case live && cur.holder != holder:
				st.token, st.ttl = cur.token, time.Duration(cur.until-now)*time.Microsecond
				return nil
			case live:
				st.held, st.token, st.ttl = true, cur.token, ttl
			default:
				// Tokens start from the clock, like lease.lua's.
				st.held, st.token, st.ttl = true, max(cur.token, now/1000)+1, ttl
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO quota_lease(credential, holder, token, expires_at) VALUES (?, ?, ?, ?)
				ON CONFLICT DO UPDATE SET holder = excluded.holder, token = excluded.token, expires_at = excluded.expires_at`,
				cred, holder, st.token, expires)
			return err
		case leaseRenew:
			if live && cur.holder == holder && cur.token == token {
				st.held, st.token, st.ttl = true, token, ttl
				_, err = tx.ExecContext(ctx, `UPDATE quota_lease SET expires_at = ? WHERE credential = ?`, expires, cred)
			}
			return err
		case leaseRelease:
			if cur.holder == holder && cur.token == token {
				_, err = tx.ExecContext(ctx, `UPDATE quota_lease SET holder = '', expires_at = 0 WHERE credential = ?`, cred)
			}
			return err
		}
		return fmt.Errorf("unknown lease op %q", op)
	})
	return st, err
}

// leaseValue is the live lease as "<token> <holder>", "" when free.
func leaseValue(ctx context.Context, tx ledgerTx, cred string, now int64) (string, error) {
	var holder string
	var token int64
	err := tx.QueryRowContext(ctx, `SELECT holder, token FROM quota_lease
		WHERE credential = ? AND holder != '' AND expires_at > ?`, cred, now).Scan(&holder, &token)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return (&Fence{Token: token, Holder: holder}).value(), nil
}
