package store

import (
	"time"

	"github.com/ytrend/ytrend/regions"
)

// Video is one video's latest metadata as the API returned it.
type Video struct {
	ID           string
	Title        string
	Description  string
	ChannelID    string
	ChannelTitle string
	Tags         []string
	CategoryID   string
	PublishedAt  time.Time
	Duration     time.Duration

	DefaultLanguage string
	ThumbnailURL    string

	// Statistics. nil means the owner hid the count, which is not the same
	// as 0 and is stored as NULL.
	Views, Likes, Comments *int64
	// Dislikes is nil for everything the API returns (it stopped giving
	// them in December 2021); datasets imported from before then have them.
	// Only chart snapshots keep it.
	Dislikes *int64
}

// PageKind says what a fetched page was.
type PageKind string

const (
	// PageChart is a page of a region's trending chart: each video gets a
	// snapshot recording its rank.
	PageChart PageKind = "chart"
	// PageSearch is a page of search results: videos are upserted, but no
	// trending snapshot is recorded.
	PageSearch PageKind = "search"
)

// Page is one fetched page of up to 50 videos, saved in one transaction.
type Page struct {
	RunID     int64
	Region    regions.Code
	FetchedAt time.Time
	Kind      PageKind
	// FirstRank is the chart rank (1-based) of Videos[0]; Videos[i] has
	// rank FirstRank+i. Ignored for search pages.
	FirstRank int
	Videos    []Video
	// Units is the run's cumulative quota units reserved so far; it replaces
	// the run's units counter (it is progress, not a delta).
	Units int64
}

// PageResult counts what SavePage did with a page's videos.
type PageResult struct {
	New       int // first time in the archive
	Updated   int // seen before, indexed text (title, description, channel title, tags) changed
	Unchanged int // seen before, same indexed text: statistics and sightings changed (a first sighting in a new region, or within a new rank tier, re-indexes its facets)
}

// VideoStats is where and when a video trended.
type VideoStats struct {
	FirstSeen time.Time
	LastSeen  time.Time
	Regions   []RegionStat // ordered by region code
}

// RegionStat is one video's trending history in one region.
type RegionStat struct {
	Region    regions.Code
	BestRank  int
	LastRank  int
	LastSeen  time.Time
	Snapshots int
}

// Counts summarises the archive.
type Counts struct {
	Videos    int64
	Snapshots int64
	Runs      int64
	Bytes     int64 // database file plus its WAL
}

// Trigger says what started a run.
type Trigger string

const (
	TriggerSchedule Trigger = "schedule"
	TriggerCLI      Trigger = "cli"
	// TriggerImport marks a historical chart read from a dataset file
	// (ImportChart); its runs took no quota.
	TriggerImport Trigger = "import"
)

// RunStatus is a run's state.
type RunStatus string

const (
	StatusRunning      RunStatus = "running"
	StatusOK           RunStatus = "ok"
	StatusStoppedQuota RunStatus = "stopped_quota"
	StatusFailed       RunStatus = "failed"
	StatusInterrupted  RunStatus = "interrupted"
	// StatusFenced ends the run of a `ytrend run` replica that lost the
	// leader lease: the budget refused its fence before the next request,
	// so nothing was sent or half-written.
	StatusFenced RunStatus = "fenced"
)

// Run is one fetch of one region's chart.
type Run struct {
	ID         int64
	Region     regions.Code
	Trigger    Trigger
	Owner      string // the instance id (host:pid:random) of the process that ran it
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	Status     RunStatus

	Pages         int
	Videos        int
	NewVideos     int
	UpdatedVideos int
	Units         int64 // quota units reserved by the run

	RefusedBy string    // the quota limit that stopped the run, if any
	RetryAt   time.Time // when that limit admits again; zero if none
	Error     string
}

// RunEnd is how a run finished.
type RunEnd struct {
	Status RunStatus
	At     time.Time
	// Units is the total reserved by the run, including calls that
	// produced no page; it replaces the progress counter.
	Units     int64
	RefusedBy string
	RetryAt   time.Time
	Error     string
}

// RunFilter selects runs; zero fields select everything.
type RunFilter struct {
	Region regions.Code
	Limit  int // default 20
	Status RunStatus
	// Before keeps runs with a smaller id (the next page of a listing).
	Before int64
}
