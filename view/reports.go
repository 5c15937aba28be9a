package view

import (
	"time"

	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/quota"
)

// The reports of the commands that write: a fetch, an import, a
// reservation by hand. They are wire formats too (--json), so they live
// beside the read model's.

// FetchReport is one region's fetch as `ytrend fetch --json` prints it.
type FetchReport struct {
	Region            string  `json:"region"`
	RunID             int64   `json:"run_id"`
	Status            string  `json:"status"`
	Pages             int     `json:"pages"`
	Videos            int     `json:"videos"`
	New               int     `json:"new"`
	Updated           int     `json:"updated"`
	Unchanged         int     `json:"unchanged"`
	Units             int64   `json:"units"`
	RefusedBy         string  `json:"refused_by,omitempty"`
	RetryAt           string  `json:"retry_at,omitempty"`
	RetryAfterSeconds float64 `json:"retry_after_seconds,omitempty"`
	Error             string  `json:"error,omitempty"`
	DurationSeconds   float64 `json:"duration_seconds"`
	// Categories counts the category names stored (0: the archive had
	// today's); CategoriesError says why asking for them failed (the chart
	// was fetched all the same).
	Categories      int    `json:"categories"`
	CategoriesError string `json:"categories_error,omitempty"`
}

// FetchReports shapes the reports of a fetch; now dates the retry-after.
func FetchReports(reports []ingest.Report, now time.Time) []FetchReport {
	out := make([]FetchReport, 0, len(reports))
	for _, r := range reports {
		j := FetchReport{
			Region: r.Region.String(), RunID: r.RunID, Status: string(r.Status), Pages: r.Pages, Videos: r.Videos,
			New: r.New, Updated: r.Updated, Unchanged: r.Unchanged, Units: r.Units, RefusedBy: r.RefusedBy,
			DurationSeconds: r.Duration().Seconds(), Categories: r.Categories,
		}
		if r.CategoriesErr != nil {
			j.CategoriesError = r.CategoriesErr.Error()
		}
		if !r.RetryAt.IsZero() {
			j.RetryAt = r.RetryAt.Format(time.RFC3339)
			j.RetryAfterSeconds = max(0, r.RetryAt.Sub(now).Seconds())
		}
		if r.Err != nil && r.Status != ingest.StatusOK {
			j.Error = r.Err.Error()
		}
		out = append(out, j)
	}
	return out
}

// Reservation is a reservation's result as `ytrend quota reserve --json`
// prints it. Remaining, and each limit's used and remaining, are null for a
// fail-open grant: the backend could not be asked, so nobody knows them.
type Reservation struct {
	Granted           bool               `json:"granted"`
	ID                string             `json:"id"`
	Call              string             `json:"call"`
	Cost              int64              `json:"cost"`
	RetryAfterSeconds float64            `json:"retry_after_seconds"`
	RefusedBy         string             `json:"refused_by"`
	Remaining         *int64             `json:"remaining"`
	Duplicate         bool               `json:"duplicate"`
	FailOpen          bool               `json:"fail_open"`
	Limits            []ReservationLimit `json:"limits"`
}

// ReservationLimit is one limit as a reservation saw it: Limit's fields,
// with used and remaining null when the backend was not asked.
type ReservationLimit struct {
	Name            string  `json:"name"`
	Units           int64   `json:"units"`
	WindowSeconds   float64 `json:"window_seconds"`
	Used            *int64  `json:"used"`
	Remaining       *int64  `json:"remaining"`
	Reservations    int64   `json:"reservations"`
	NextFreeSeconds float64 `json:"next_free_seconds"`
}

// ReservationOf shapes a reservation's result.
func ReservationOf(res quota.Result) Reservation {
	out := Reservation{
		Granted: res.Granted, ID: res.ID, Call: res.Call, Cost: res.Cost,
		RetryAfterSeconds: res.RetryAfter.Seconds(), RefusedBy: res.RefusedBy,
		Duplicate: res.Duplicate, FailOpen: res.FailOpen, Limits: []ReservationLimit{},
	}
	// quota says "unknown" with -1; JSON says it with null.
	known := func(n int64) *int64 {
		if res.FailOpen || n < 0 {
			return nil
		}
		return &n
	}
	out.Remaining = known(res.Remaining())
	for _, u := range res.Limits {
		out.Limits = append(out.Limits, ReservationLimit{Name: u.Name, Units: u.Units, WindowSeconds: u.Window.Seconds(),
			Used: known(u.Used), Remaining: known(u.Remaining)})
	}
	return out
}

// ImportReport is what `ytrend import --json` prints per file.
type ImportReport struct {
	File          string         `json:"file"`
	Format        string         `json:"format"`
	Region        string         `json:"region,omitempty"` // of a public dataset; an export's rows name theirs
	Rows          int            `json:"rows"`             // data records read
	ImportedRows  int            `json:"imported_rows"`    // positions stored
	Charts        int            `json:"charts"`           // days (public) or runs (export) read
	Imported      int            `json:"imported_charts"`
	AlreadyThere  int            `json:"already_imported_charts"` // the archive had them: left as they were
	NewVideos     int            `json:"new_videos"`
	UpdatedVideos int            `json:"updated_videos"` // whose text changed
	Skipped       int            `json:"skipped_rows"`
	SkippedBy     map[string]int `json:"skipped_by_kind"`
	Skips         []ImportSkip   `json:"skips"` // the first 1000
	CutOff        bool           `json:"cut_off"`
	// Fixed counts the fields of imported rows that were cut to YouTube's
	// limits or dropped (a thumbnail not on ytimg.com).
	Fixed         int            `json:"fixed_fields"`
	FixedBy       map[string]int `json:"fixed_by_kind"`
	Fixes         []ImportSkip   `json:"fixes"` // the first 1000
	Seconds       float64        `json:"seconds"`
	RowsPerSecond float64        `json:"rows_per_second"`
	Stopped       bool           `json:"stopped,omitempty"`
	Error         string         `json:"error,omitempty"`
}

// ImportSkip is one row an import skipped, or one field it changed, and
// why.
type ImportSkip struct {
	Line   int    `json:"line"`
	Field  string `json:"field,omitempty"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}
