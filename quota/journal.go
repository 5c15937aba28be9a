package quota

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// journal records fail-open grants in SQLite (quota_journal) until they have
// been added to the backend. Rows are keyed by (credential, id), so a retried
// fail-open reservation is journaled once.
type journal struct{ db *sql.DB }

type journalRow struct {
	id, call string
	costs    map[string]int64 // limit name -> units
	at       time.Time
}

func (j *journal) add(ctx context.Context, cred string, r journalRow) error {
	costs, err := json.Marshal(r.costs)
	if err != nil {
		return err
	}
	_, err = j.db.ExecContext(ctx, `INSERT INTO quota_journal(credential, id, call, costs, at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, cred, r.id, r.call, string(costs), r.at.UnixMicro())
	if err != nil {
		return fmt.Errorf("quota: journal %s: %w", r.id, err)
	}
	return nil
}

// next returns up to n of cred's oldest rows.
func (j *journal) next(ctx context.Context, cred string, n int) ([]journalRow, error) {
	rows, err := j.db.QueryContext(ctx, `SELECT id, call, costs, at FROM quota_journal
		WHERE credential = ? ORDER BY at, id LIMIT ?`, cred, n)
	if err != nil {
		return nil, fmt.Errorf("quota: read journal: %w", err)
	}
	defer rows.Close()
	var out []journalRow
	for rows.Next() {
		var r journalRow
		var costs string
		var at int64
		if err := rows.Scan(&r.id, &r.call, &costs, &at); err != nil {
			return nil, fmt.Errorf("quota: read journal: %w", err)
		}
		if err := json.Unmarshal([]byte(costs), &r.costs); err != nil {
			return nil, fmt.Errorf("quota: journal row %s: costs %q: %w", r.id, costs, err)
		}
		r.at = time.UnixMicro(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("quota: read journal: %w", err)
	}
	return out, nil
}

// remove deletes cred's rows with the given ids and returns how many it
// deleted.
func (j *journal) remove(ctx context.Context, cred string, ids []string) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 1+len(ids))
	args = append(args, cred)
	for _, id := range ids {
		args = append(args, id)
	}
	q := `DELETE FROM quota_journal WHERE credential = ? AND id IN (?` + strings.Repeat(", ?", len(ids)-1) + `)`
	r, err := j.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("quota: trim journal: %w", err)
	}
	return r.RowsAffected()
}
