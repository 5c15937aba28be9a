package ingest

import (
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Job is one region fetch: the region's entry as the configuration gives it
// (config.Region is ytrend's one description of what a fetch asks for), and
// how this run of it was started.
type Job struct {
	config.Region
	Trigger Trigger
	// Stop, when closed, asks the fetch to finish the page in flight and end
	// the run as interrupted (graceful shutdown). Cancelling the context
	// instead abandons the page in flight.
	Stop <-chan struct{}
	// Progress, if set, is called after every stored page.
	Progress func(Progress)
	// Term, when set, is the leader's term this run acts for (ytrend run
	// with replicas): every reservation carries its fence and fails open
	// only while the term still leads by this process's clock. Once the term
	// ends, or the budget refuses the fence, the run stores the page in hand,
	// sends nothing more, and ends as fenced.
	Term Term
}

// Term is the leader's term a scheduled run acts for (a *leader.Term).
type Term interface {
	Fence() quota.Fence
	Leading() bool         // leads right now, by this process's own clock
	Done() <-chan struct{} // closed when the term ends
	Err() error            // why it ended
}

// A run's trigger, page kinds and end states are the archive's own words
// (the runs table stores them as they are); ingest names them so that a
// caller reading a Report or a Progress needs nothing from store.
type (
	Trigger  = store.Trigger
	Status   = store.RunStatus
	PageKind = store.PageKind
)

const (
	TriggerSchedule = store.TriggerSchedule
	TriggerCLI      = store.TriggerCLI

	PageChart  = store.PageChart
	PageSearch = store.PageSearch

	StatusOK           = store.StatusOK
	StatusStoppedQuota = store.StatusStoppedQuota
	StatusFailed       = store.StatusFailed
	StatusInterrupted  = store.StatusInterrupted
	StatusFenced       = store.StatusFenced
)

// Progress describes one stored page.
type Progress struct {
	Region    regions.Code
	RunID     int64
	Kind      PageKind
	Page      int
	Videos    int   // on this page
	Units     int64 // reserved by the run so far
	Remaining int64 // budget left after the last reservation; -1 when unknown
	FailOpen  bool  // the last reservation was granted while the budget was unreachable: Remaining is unknown
	New       int
	Updated   int
}

// Report is a finished run.
type Report struct {
	RunID     int64
	Region    regions.Code
	Trigger   Trigger
	Status    Status
	Pages     int
	Videos    int
	New       int
	Updated   int
	Unchanged int
	Units     int64
	RefusedBy string    // limit that refused, or "upstream"
	RetryAt   time.Time // when quota frees up, for stopped_quota
	Err       error     // why the run failed or stopped; redacted
	Started   time.Time
	Finished  time.Time
	// Categories is how many category names the run stored: 0 when the
	// archive had the region's names from the current quota day, or when
	// asking failed (CategoriesErr says why; the chart is fetched anyway).
	Categories    int
	CategoriesErr error
}

// Duration is how long the run took.
func (r Report) Duration() time.Duration { return r.Finished.Sub(r.Started) }
