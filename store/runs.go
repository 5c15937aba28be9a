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
	if err := db.Register(ctx); err != nil {
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
