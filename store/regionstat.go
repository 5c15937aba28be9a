package store

import (
	"context"
	"fmt"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// RegionFetch is when a region was last fetched.
type RegionFetch struct {
	Region    regions.Code
	LastFetch time.Time // the newest finished run's last page
	Charts    int64     // finished runs that stored pages
}

// RegionFetches lists every region the archive holds pages of, by code.
// A run that stored only search results counts too: telling them apart
// costs a lookup per run (35 ms at a million videos, on every page that
// lists regions), and such runs are rare.
func (db *DB) RegionFetches(ctx context.Context) ([]RegionFetch, error) {
	// The partial index runs_charts (region, last_page_at) covers the scan.
	rows, err := db.reader.QueryContext(ctx, `SELECT region, max(last_page_at), count(*) FROM runs
		WHERE pages > 0 AND status <> 'running'
		GROUP BY region ORDER BY region`)
	if err != nil {
		return nil, fmt.Errorf("store: region fetches: %w", err)
	}
	defer rows.Close()
	out := []RegionFetch{}
	for rows.Next() {
		var r RegionFetch
		var last int64
		if err := rows.Scan(&r.Region, &last, &r.Charts); err != nil {
			return nil, fmt.Errorf("store: region fetches: %w", err)
		}
		r.LastFetch = micros(last)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: region fetches: %w", err)
	}
	return out, nil
}

// LastChange is when the archive last stored a page (zero if never): what
// an HTTP Last-Modified of anything read from it can say.
func (db *DB) LastChange(ctx context.Context) (time.Time, error) {
	var last *int64
	if err := db.reader.QueryRowContext(ctx, `SELECT max(last_page_at) FROM runs`).Scan(&last); err != nil {
		return time.Time{}, fmt.Errorf("store: last change: %w", err)
	}
	if last == nil {
		return time.Time{}, nil
	}
	return micros(*last), nil
}
