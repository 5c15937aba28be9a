package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ytrend/ytrend/regions"

	"github.com/ytrend/ytrend/internal/secret"
)

// StartRun records a run of region as running, owned by this process (its
// Instance id, whose heartbeat starts with the first run), and returns its id.
func (db *DB) StartRun(ctx context.Context, region regions.Code, trigger Trigger, at time.Time) (int64, error) {
	switch {
	case !regions.Valid(region):
		return 0, fmt.Errorf("store: start run: %q is not a region code (parse it with regions.Parse)", region)
	case trigger != TriggerSchedule && trigger != TriggerCLI:
		return 0, fmt.Errorf("store: start run: unknown trigger %q (want %q or %q)", trigger, TriggerSchedule, TriggerCLI)
	case at.IsZero():
		return 0, errors.New("store: start run: zero start time")
	}
	if err := db.register(ctx); err != nil {
		return 0, err
	}
	var id int64
	err := db.writer.QueryRowContext(ctx,
		`INSERT INTO runs (region, triggered_by, owner, started_at) VALUES (?, ?, ?, ?) RETURNING id`,
		string(region), string(trigger), db.self.id, at.UnixMicro()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: start run: %w", err)
	}
	return id, nil
}

// FinishRun records how run id ended. end.Units replaces the run's unit
// count; end.Error is stored with anything that looks like an API key
// redacted.
func (db *DB) FinishRun(ctx context.Context, id int64, end RunEnd) error {
	switch end.Status {
	case StatusOK, StatusStoppedQuota, StatusFailed, StatusInterrupted, StatusFenced:
	default:
		return fmt.Errorf("store: finish run %d: %q is not a final status", id, end.Status)
	}
	if end.At.IsZero() {
		return fmt.Errorf("store: finish run %d: zero finish time", id)
	}
	var retry any
	if !end.RetryAt.IsZero() {
		retry = end.RetryAt.UnixMicro()
	}
	res, err := db.writer.ExecContext(ctx, `UPDATE runs SET status = ?, finished_at = ?, units = ?, refused_by = ?,
		retry_at = ?, error = ? WHERE id = ?`,
		string(end.Status), end.At.UnixMicro(), end.Units, end.RefusedBy, retry, secret.Scrub(end.Error), id)
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: finish run %d: %w", id, ErrNotFound)
	}
	return nil
}

const maxRunsLimit = 10000

// Runs lists runs newest first. A zero Limit means 20.
func (db *DB) Runs(ctx context.Context, f RunFilter) ([]Run, error) {
	limit := f.Limit
	switch {
	case limit <= 0:
		limit = 20
	case limit > maxRunsLimit:
		limit = maxRunsLimit
	}
	q := `SELECT id, region, triggered_by, owner, started_at, finished_at, status, pages, videos, new_videos,
		updated_videos, units, refused_by, retry_at, error FROM runs WHERE 1`
	var args []any
	if f.Region != "" && !regions.Valid(f.Region) {
		return nil, fmt.Errorf("store: runs: %q is not a region code (parse it with regions.Parse)", f.Region)
	}
	if f.Region != "" {
		q += ` AND region = ?`
		args = append(args, string(f.Region))
	}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	if f.Before > 0 {
		q += ` AND id < ?`
		args = append(args, f.Before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	defer rows.Close()
	out := []Run{}
	for rows.Next() {
		var r Run
		var started int64
		var finished, retry sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Region, &r.Trigger, &r.Owner, &started, &finished, &r.Status, &r.Pages,
			&r.Videos, &r.NewVideos, &r.UpdatedVideos, &r.Units, &r.RefusedBy, &retry, &r.Error); err != nil {
			return nil, fmt.Errorf("store: runs: %w", err)
		}
		r.StartedAt = micros(started)
		if finished.Valid {
			r.FinishedAt = micros(finished.Int64)
		}
		if retry.Valid {
			r.RetryAt = micros(retry.Int64)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	return out, nil
}

func micros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// staleRunAge is when a run still marked running is taken as dead whatever
// its host: no fetch of one region takes a day.
const staleRunAge = 24 * time.Hour

// MarkInterrupted marks as interrupted the runs left "running" by processes
// that died, on any host sharing the archive: runs whose owner's heartbeat
// is older than four heartbeat intervals, whose owner left no row in
// instances, or whose owner's pid no longer exists on this host. A live pid
// proves nothing (in a container ytrend is pid 1; pids are reused). Runs of
// binaries older than the heartbeat (owner host:pid) fall back to a day's
// age. A run of a live process (a concurrent ytrend fetch) is never touched.
// It returns how many it marked.
//
// Heartbeats are written with each owner's clock and compared with now:
// hosts sharing an archive must agree on the time to well within a minute.
func (db *DB) MarkInterrupted(ctx context.Context, now time.Time) (int, error) {
	// One write transaction: a process that registers and starts a run
	// between reading the heartbeats and reading the runs would otherwise
	// look like an owner without a heartbeat.
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	defer tx.Rollback()
	beats := map[string]ownerRow{}
	brows, err := tx.QueryContext(ctx, `SELECT id, heartbeat_at, pidns FROM instances`)
	if err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	for brows.Next() {
		var id string
		var row ownerRow
		if err := brows.Scan(&id, &row.heartbeat, &row.pidns); err != nil {
			brows.Close()
			return 0, fmt.Errorf("store: mark interrupted: %w", err)
		}
		beats[id] = row
	}
	brows.Close()
	if err := brows.Err(); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, owner, started_at FROM runs WHERE status = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	type dead struct {
		id  int64
		why string
	}
	var marks []dead
	for rows.Next() {
		var id, started int64
		var own string
		if err := rows.Scan(&id, &own, &started); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: mark interrupted: %w", err)
		}
		if why, ok := db.abandoned(own, started, beats, now); ok {
			marks = append(marks, dead{id, why})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	for _, m := range marks {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', finished_at = ?, error = ?
			WHERE id = ?`, now.UnixMicro(), m.why, m.id); err != nil {
			return 0, fmt.Errorf("store: mark interrupted: %w", err)
		}
	}
	// Heartbeats of processes that stopped beating and own no running run
	// are history: without this the table would keep every crash.
	if _, err := tx.ExecContext(ctx, `DELETE FROM instances WHERE heartbeat_at < ? AND id != ?
		AND NOT EXISTS (SELECT 1 FROM runs WHERE status = 'running' AND owner = instances.id)`,
		now.Add(-staleHeartbeat).UnixMicro(), db.self.id); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	return len(marks), nil
}
