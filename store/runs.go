package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ytrend/ytrend/internal/secret"
)

// owner identifies this process in runs.owner: host:pid.
var owner = func() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}()

// StartRun records a run of region as running, owned by this process
// (hostname:pid), and returns its id.
func (db *DB) StartRun(ctx context.Context, region string, trigger Trigger, at time.Time) (int64, error) {
	region = normRegion(region)
	switch {
	case region == "":
		return 0, errors.New("store: start run: empty region")
	case trigger != TriggerSchedule && trigger != TriggerCLI:
		return 0, fmt.Errorf("store: start run: unknown trigger %q (want %q or %q)", trigger, TriggerSchedule, TriggerCLI)
	case at.IsZero():
		return 0, errors.New("store: start run: zero start time")
	}
	var id int64
	err := db.writer.QueryRowContext(ctx,
		`INSERT INTO runs (region, triggered_by, owner, started_at) VALUES (?, ?, ?, ?) RETURNING id`,
		region, string(trigger), owner, at.UnixMicro()).Scan(&id)
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
	if r := normRegion(f.Region); r != "" {
		q += ` AND region = ?`
		args = append(args, r)
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
// that died: runs owned by this host whose pid no longer exists, and runs of
// any host started more than a day before now. A run of a live process (a
// concurrent ytrend fetch) is never touched. It returns how many it marked.
func (db *DB) MarkInterrupted(ctx context.Context, now time.Time) (int, error) {
	rows, err := db.writer.QueryContext(ctx, `SELECT id, owner, started_at FROM runs WHERE status = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	host := owner[:strings.LastIndexByte(owner, ':')]
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
		if own == owner {
			continue // this process: alive by definition
		}
		i := strings.LastIndexByte(own, ':')
		if i >= 0 && own[:i] == host {
			if pid, err := strconv.Atoi(own[i+1:]); err == nil && pid > 0 {
				if pidAlive(pid) {
					continue // a live process here: never touched, however old
				}
				marks = append(marks, dead{id, "interrupted: process " + own + " is gone"})
				continue
			}
		}
		// Another host's process cannot be asked: a day is its limit.
		if now.Sub(micros(started)) > staleRunAge {
			marks = append(marks, dead{id, fmt.Sprintf("interrupted: still running %s after it started (owner %s)", staleRunAge, own)})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: mark interrupted: %w", err)
	}
	n := 0
	for _, m := range marks {
		// status = 'running' again: the owner may have finished it meanwhile.
		res, err := db.writer.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', finished_at = ?, error = ?
			WHERE id = ? AND status = 'running'`, now.UnixMicro(), m.why, m.id)
		if err != nil {
			return n, fmt.Errorf("store: mark interrupted: %w", err)
		}
		if k, _ := res.RowsAffected(); k > 0 {
			n++
		}
	}
	return n, nil
}
