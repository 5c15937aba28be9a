package quota

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// record is a process's own record of its grants (quota_grants, in the
// archive the process uses). It is what makes the books survive losing the
// ledger: every grant is kept for the longest window, and replayed into the
// ledger, idempotently by reservation ID, when the ledger turns out to have
// lost it. A row with pending set is a fail-open grant the backend has never
// seen.
type record struct{ db *sql.DB }

type grantRow struct {
	id, call string
	costs    map[string]int64 // limit name -> units
	at       time.Time
	epoch    string
	pending  bool
}

// add records a grant, one row per ID. An ID used again (a retry, or a
// reuse after its window) takes the new grant's time: kept at the old one,
// a replay would take the grant for expired and drop it. A pending
// (fail-open) row stays pending until a sync has carried it.
func (r *record) add(ctx context.Context, cred string, g grantRow) error {
	costs, err := json.Marshal(g.costs)
	if err != nil {
		return err
	}
	_, err = r.db.ExecContext(ctx, `INSERT INTO quota_grants(credential, id, call, costs, at, epoch, pending)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET call = excluded.call, costs = excluded.costs,
		at = MAX(at, excluded.at), epoch = excluded.epoch, pending = MAX(pending, excluded.pending)`,
		cred, g.id, g.call, string(costs), g.at.UnixMicro(), g.epoch, boolInt(g.pending))
	if err != nil {
		return fmt.Errorf("quota: record grant %s: %w", g.id, err)
	}
	return nil
}

// grants returns cred's rows granted after since, oldest first; with
// pendingOnly, every pending row, whatever its time (the backend drops what
// is outside its window, on its own clock).
func (r *record) grants(ctx context.Context, cred string, since time.Time, pendingOnly bool) ([]grantRow, error) {
	q := `SELECT id, call, costs, at, epoch, pending FROM quota_grants WHERE credential = ? AND at > ?`
	if pendingOnly {
		q += ` AND pending = 1`
		since = time.Time{}
	}
	rows, err := r.db.QueryContext(ctx, q+` ORDER BY at, id`, cred, since.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("quota: read grant record: %w", err)
	}
	defer rows.Close()
	var out []grantRow
	for rows.Next() {
		var g grantRow
		var costs string
		var at int64
		var pending int
		if err := rows.Scan(&g.id, &g.call, &costs, &at, &g.epoch, &pending); err != nil {
			return nil, fmt.Errorf("quota: read grant record: %w", err)
		}
		if err := json.Unmarshal([]byte(costs), &g.costs); err != nil {
			return nil, fmt.Errorf("quota: grant record row %s: costs %q: %w", g.id, costs, err)
		}
		g.at, g.pending = time.UnixMicro(at), pending == 1
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("quota: read grant record: %w", err)
	}
	return out, nil
}

// synced marks rows as known to the backend (no longer pending).
func (r *record) synced(ctx context.Context, cred string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	q, args := inIDs(`UPDATE quota_grants SET pending = 0 WHERE credential = ? AND id IN `, cred, ids)
	if _, err := r.db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("quota: update grant record: %w", err)
	}
	return nil
}

// remove deletes cred's rows with the given ids (a release), only the
// pending ones when pendingOnly, and returns how many it deleted.
func (r *record) remove(ctx context.Context, cred string, ids []string, pendingOnly bool) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	q, args := inIDs(`DELETE FROM quota_grants WHERE credential = ? AND id IN `, cred, ids)
	if pendingOnly {
		q += ` AND pending = 1`
	}
	res, err := r.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("quota: trim grant record: %w", err)
	}
	return res.RowsAffected()
}

// prune deletes the rows granted at or before before: outside every window,
// they count nowhere any more, pending or not.
func (r *record) prune(ctx context.Context, cred string, before time.Time) error {
	_, err := r.db.ExecContext(ctx, `DELETE FROM quota_grants WHERE credential = ? AND at <= ?`,
		cred, before.UnixMicro())
	if err != nil {
		return fmt.Errorf("quota: prune grant record: %w", err)
	}
	return nil
}

// adopt moves cred's rows to epoch, after they were replayed into it.
func (r *record) adopt(ctx context.Context, cred, epoch string) error {
	_, err := r.db.ExecContext(ctx, `UPDATE quota_grants SET epoch = ? WHERE credential = ? AND epoch != ?`,
		epoch, cred, epoch)
	if err != nil {
		return fmt.Errorf("quota: update grant record: %w", err)
	}
	return nil
}

// lastEpoch is the epoch of cred's newest row granted after since, "" when
// there is none: the ledger identity this process last spent under.
func (r *record) lastEpoch(ctx context.Context, cred string, since time.Time) (string, error) {
	var epoch string
	err := r.db.QueryRowContext(ctx, `SELECT epoch FROM quota_grants
		WHERE credential = ? AND at > ? AND epoch != '' ORDER BY at DESC LIMIT 1`, cred, since.UnixMicro()).Scan(&epoch)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("quota: read grant record: %w", err)
	}
	return epoch, nil
}

// inIDs appends "(?, ?, ...)" for ids to q and returns the arguments
// (cred first).
func inIDs(q, cred string, ids []string) (string, []any) {
	args := make([]any, 0, 1+len(ids))
	args = append(args, cred)
	for _, id := range ids {
		args = append(args, id)
	}
	return q + `(?` + strings.Repeat(", ?", len(ids)-1) + `)`, args
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
