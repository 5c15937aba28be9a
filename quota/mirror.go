package quota

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// mirror is a process's copy of the credential's whole shared log
// (quota_mirror, migrations/0010_quota_mirror.sql): every process's grants,
// not only its own. It is filled on each epoch check with the entries
// granted since the last copy, and replaced with a whole copy whenever it
// and the log disagree on how many entries the window holds (a release, or
// a fail-open grant replayed behind the copy's cursor). When the ledger loses its books it is replayed with the record, so
// the grants of a process that never runs again are restored too, unless
// they were made after the last copy.
type mirror struct {
	db *sql.DB
	// from is, per limit, the grant time of the newest entry copied; the
	// zero time asks for the whole log. Guarded by Limiter.books.mu.
	from []time.Time
}

// mirrorEntry is one entry of one limit's log.
type mirrorEntry struct {
	limit, id string
	cost      int64
	at        time.Time
}

// request returns the copy to ask a sync for: the entries since the last
// copy, or the whole log at first and after forget.
func (m *mirror) request(n int) []time.Time {
	if m.from == nil {
		m.from = make([]time.Time, n)
	}
	return m.from
}

// forget makes the next copy a whole one (after a loss, or a failed write).
func (m *mirror) forget() { m.from = nil }

// store writes a sync's copies. A whole copy (from zero) replaces what the
// mirror held for that limit: entries released since are dropped. It
// returns how many rows it wrote.
func (m *mirror) store(ctx context.Context, cred string, limits []charge, from []time.Time, copies []logCopy) (int, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("quota: mirror: %w", err)
	}
	defer tx.Rollback()
	insert, err := tx.PrepareContext(ctx, `INSERT INTO quota_mirror(credential, limit_name, id, cost, at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET cost = excluded.cost, at = excluded.at`)
	if err != nil {
		return 0, fmt.Errorf("quota: mirror: %w", err)
	}
	defer insert.Close()
	n := 0
	for i, c := range copies {
		if from[i].IsZero() {
			if _, err := tx.ExecContext(ctx, `DELETE FROM quota_mirror WHERE credential = ? AND limit_name = ?`,
				cred, limits[i].name); err != nil {
				return 0, fmt.Errorf("quota: mirror: %w", err)
			}
		}
		for _, e := range c.entries {
			if _, err := insert.ExecContext(ctx, cred, e.limit, e.id, e.cost, e.at.UnixMicro()); err != nil {
				return 0, fmt.Errorf("quota: mirror: %w", err)
			}
			n++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("quota: mirror: %w", err)
	}
	// The cursor moves to the newest entry copied. An empty log keeps a
	// zero cursor: whole copies of it cost nothing.
	for i, c := range copies {
		if k := len(c.entries); k > 0 && c.entries[k-1].at.After(from[i]) {
			from[i] = c.entries[k-1].at
		}
	}
	return n, nil
}

// grants returns the mirror's entries granted after since as grant rows, one
// per reservation id with its cost in every limit.
func (m *mirror) grants(ctx context.Context, cred string, since time.Time) ([]grantRow, error) {
	rows, err := m.db.QueryContext(ctx, `SELECT limit_name, id, cost, at FROM quota_mirror
		WHERE credential = ? AND at > ? ORDER BY at, id`, cred, since.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("quota: read mirror: %w", err)
	}
	defer rows.Close()
	var out []grantRow
	index := map[string]int{}
	for rows.Next() {
		var e mirrorEntry
		var at int64
		if err := rows.Scan(&e.limit, &e.id, &e.cost, &at); err != nil {
			return nil, fmt.Errorf("quota: read mirror: %w", err)
		}
		i, ok := index[e.id]
		if !ok {
			i = len(out)
			index[e.id] = i
			out = append(out, grantRow{id: e.id, costs: map[string]int64{}, at: time.UnixMicro(at)})
		}
		out[i].costs[e.limit] = e.cost
		// A grant is one moment in every limit; keep the latest reading.
		if t := time.UnixMicro(at); t.After(out[i].at) {
			out[i].at = t
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("quota: read mirror: %w", err)
	}
	return out, nil
}

// count returns how many entries of limit the mirror holds granted after
// since.
func (m *mirror) count(ctx context.Context, cred, limit string, since time.Time) (int64, error) {
	var n int64
	err := m.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM quota_mirror
		WHERE credential = ? AND limit_name = ? AND at > ?`, cred, limit, since.UnixMicro()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("quota: read mirror: %w", err)
	}
	return n, nil
}

// prune deletes the entries of each limit that left its window by now.
func (m *mirror) prune(ctx context.Context, cred string, limits []charge, now time.Time) error {
	for _, c := range limits {
		if _, err := m.db.ExecContext(ctx, `DELETE FROM quota_mirror WHERE credential = ? AND limit_name = ? AND at <= ?`,
			cred, c.name, now.Add(-c.window).UnixMicro()); err != nil {
			return fmt.Errorf("quota: prune mirror: %w", err)
		}
	}
	return nil
}
