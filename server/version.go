package server

import (
	"context"
	"sync"
	"time"

	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// versionEvery is how often the archive's version is read again when no
// write of this process says it changed: a write of another process (ytrend
// run beside ytrend serve, an import) is seen within it.
const versionEvery = 100 * time.Millisecond

// versioned is an archive that can say cheaply whether it changed; *store.DB
// is one.
type versioned interface {
	Version(ctx context.Context) (store.Version, error)
	Commits() int64
}

// archiveVersion keeps the archive's version in memory, so that a cached
// answer and every Last-Modified cost no SQLite connection: the version is
// read again (on the store's own probe connection, by one request while the
// others go on with the one they have) when this process committed a write
// or versionEvery has passed.
//
// Last-Modified is when this server saw the archive change, its start
// included: an import of older history changes what the pages show without
// moving the newest page's time, so that time cannot be it.
type archiveVersion struct {
	ar  versioned
	now func() time.Time

	mu      sync.Mutex
	gen     int64 // counts the changes seen; the response cache's key
	v       store.Version
	lastMod time.Time
	commits int64
	checked time.Time
	reading bool
	err     error
}

func newArchiveVersion(ar versioned, now func() time.Time) *archiveVersion {
	return &archiveVersion{ar: ar, now: now}
}

// get returns the generation and Last-Modified of the archive as last read.
func (a *archiveVersion) get(ctx context.Context) (gen int64, lastMod time.Time, err error) {
	a.mu.Lock()
	commits := a.ar.Commits()
	stale := a.checked.IsZero() || commits != a.commits || a.now().Sub(a.checked) >= versionEvery
	if !stale || (a.reading && !a.checked.IsZero()) {
		defer a.mu.Unlock()
		return a.gen, a.lastMod, a.err
	}
	a.reading = true
	a.mu.Unlock()

	v, err := a.ar.Version(ctx)

	a.mu.Lock()
	defer a.mu.Unlock()
	a.reading = false
	a.err = err
	if err != nil {
		return a.gen, a.lastMod, err
	}
	now := a.now().UTC().Truncate(time.Second)
	if a.checked.IsZero() || v != a.v {
		a.gen++
		// Strictly later at HTTP's one-second resolution, so that an
		// If-Modified-Since of the previous answer is not met.
		a.lastMod = maxTime(now, a.lastMod.Add(time.Second))
		a.v = v
	}
	a.checked, a.commits = a.now(), commits
	return a.gen, a.lastMod, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// versionedArchive answers LastChange from memory.
type versionedArchive struct {
	view.Archive
	version *archiveVersion
}

func (a versionedArchive) LastChange(ctx context.Context) (time.Time, error) {
	_, t, err := a.version.get(ctx)
	return t, err
}

// lastChangeVersion makes any archive versioned by its newest page's time
// (an archive other than the store: tests' stand-ins).
type lastChangeVersion struct{ view.Archive }

func (a lastChangeVersion) Version(ctx context.Context) (store.Version, error) {
	t, err := a.LastChange(ctx)
	return store.Version{LastPage: t.UnixMicro()}, err
}

func (lastChangeVersion) Commits() int64 { return 0 }
