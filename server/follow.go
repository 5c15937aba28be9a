package server

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
)

// Follower is the copy ytrend serve --follow reads: *replication.Follower.
type Follower interface {
	Read() (replication.Copy, error)
	Changes() int64
	Status() replication.FollowStatus
}

// OpenFollow builds ytrend serve --follow: like Open, but the archive is
// the copy f keeps of a leader's replicas. Every read of the archive (a
// chart, a search...) pins the copy (Follower.Read), so it sees one
// committed state and never a half-applied change, and the
// copy's changes move the archive's version (Commits), so cached answers and
// Last-Modified follow them. /quota answers from Redis when the budget lives
// there; the embedded ledger lives in the leader's archive, and the copy is
// not written, so without redis.url /quota answers 503. /readyz says which
// term and position the copy holds and its lag; the metrics add
// ytrend_archive_follow_lag_seconds, _position and _term. access is the
// access log (nil: none).
func OpenFollow(ctx context.Context, cfg Config, f Follower, bc budget.Config, log *slog.Logger, access *AccessLog) (*Server, func(), error) {
	ar := &followedArchive{f: f}
	closers := []func(){func() { ar.close() }}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if err := ar.Ping(ctx); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("serve --follow: %w", err)
	}
	var status statuser
	var rdb redis.UniversalClient
	m := metrics.New(nil)
	deps := Deps{Archive: ar, Metrics: m.HTTP(), Log: log, AccessLog: access}
	if bc.Redis != "" {
		bud, err := budget.Open(ctx, bc, budget.Options{StatusOnly: true, Log: log})
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, bud.Close)
		rdb = bud.Redis
		m.WatchBudget(bud.Limiter)
		status = bud.Limiter
		deps.Budget = &cachedStatus{budget: bud.Limiter, ttl: time.Second}
	}
	lim, err := NewLimiter(cfg, rdb, log)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	deps.Limiter = lim
	m.Registry().MustRegister(followCollector{f})
	s, err := New(cfg, deps)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	s.mountMetrics(m.Handler(func(ctx context.Context) ([]string, error) {
		detail := followDetail(f.Status())
		if err := ar.Ping(ctx); err != nil {
			return detail, err
		}
		if status != nil {
			if err := status.Ping(ctx); err != nil {
				return detail, fmt.Errorf("quota backend: %w", err)
			}
		}
		return detail, nil
	}))
	return s, closeAll, nil
}

type statuser interface{ Ping(context.Context) error }

// followDetail is /readyz's word on the copy.
func followDetail(st replication.FollowStatus) []string {
	d := []string{fmt.Sprintf("following replica %s generation %s at %s (newest seen %s), lag %.1fs",
		st.Replica, st.Generation, st.TXID, st.Newest, st.LagSeconds)}
	if st.Switching != "" {
		d = append(d, "preparing a copy of "+st.Switching)
	}
	if st.LastError != "" {
		d = append(d, fmt.Sprintf("warning: last replica error (%s): %s", st.LastErrorAt.UTC().Format(time.RFC3339), st.LastError))
	}
	return d
}

// followCollector reads the follower's status at scrape time.
type followCollector struct{ f Follower }

var (
	followLagDesc = prometheus.NewDesc("ytrend_archive_follow_lag_seconds",
		"How far the followed copy is behind its replica (0: the last poll found nothing new).", []string{"replica"}, nil)
	followPositionDesc = prometheus.NewDesc("ytrend_archive_follow_position",
		"The newest transaction (TXID) applied to the followed copy.", []string{"replica"}, nil)
	followTermDesc = prometheus.NewDesc("ytrend_archive_follow_term",
		"The leadership term (fence token) the followed copy follows.", []string{"replica"}, nil)
)

func (followCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- followLagDesc
	ch <- followPositionDesc
	ch <- followTermDesc
}

func (c followCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.f.Status()
	txid, _ := strconv.ParseUint(st.TXID, 16, 64)
	ch <- prometheus.MustNewConstMetric(followLagDesc, prometheus.GaugeValue, st.LagSeconds, st.Replica)
	ch <- prometheus.MustNewConstMetric(followPositionDesc, prometheus.GaugeValue, float64(txid), st.Replica)
	ch <- prometheus.MustNewConstMetric(followTermDesc, prometheus.GaugeValue, float64(st.Term), st.Replica)
}

// followedArchive reads the follower's copy: one read-only archive open at
// a time, reopened when the follower replaced the file (a new term).
type followedArchive struct {
	f Follower

	mu    sync.Mutex
	db    *store.DB
	epoch uint64
}

// read runs fn on the copy, pinned for fn's length.
func (a *followedArchive) read(ctx context.Context, fn func(*store.DB) error) error {
	c, err := a.f.Read()
	if err != nil {
		return err
	}
	defer c.Release()
	a.mu.Lock()
	if a.db == nil || a.epoch != c.Epoch {
		// Nobody reads the old file now: the follower replaced it with
		// every reader's pin released.
		if a.db != nil {
			a.db.Close()
			a.db = nil
		}
		db, err := store.Open(ctx, c.Path, store.ReadOnly())
		if err != nil {
			a.mu.Unlock()
			return err
		}
		a.db, a.epoch = db, c.Epoch
	}
	db := a.db
	a.mu.Unlock()
	return fn(db)
}

func readFollowed[T any](ctx context.Context, a *followedArchive, fn func(*store.DB) (T, error)) (T, error) {
	var out T
	err := a.read(ctx, func(db *store.DB) error {
		var err error
		out, err = fn(db)
		return err
	})
	return out, err
}

func (a *followedArchive) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.db != nil {
		a.db.Close()
		a.db = nil
	}
}

func (a *followedArchive) Search(ctx context.Context, q store.Query) ([]store.Hit, error) {
	return readFollowed(ctx, a, func(db *store.DB) ([]store.Hit, error) { return db.Search(ctx, q) })
}

func (a *followedArchive) Chart(ctx context.Context, region regions.Code, at time.Time, limit int) (store.Chart, error) {
	return readFollowed(ctx, a, func(db *store.DB) (store.Chart, error) { return db.Chart(ctx, region, at, limit) })
}

func (a *followedArchive) History(ctx context.Context, videoID string) (store.History, error) {
	return readFollowed(ctx, a, func(db *store.DB) (store.History, error) { return db.History(ctx, videoID) })
}

func (a *followedArchive) Video(ctx context.Context, id string) (v store.Video, st store.VideoStats, err error) {
	err = a.read(ctx, func(db *store.DB) error {
		v, st, err = db.Video(ctx, id)
		return err
	})
	return v, st, err
}

func (a *followedArchive) Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	return readFollowed(ctx, a, func(db *store.DB) ([]store.Run, error) { return db.Runs(ctx, f) })
}

func (a *followedArchive) RegionFetches(ctx context.Context) ([]store.RegionFetch, error) {
	return readFollowed(ctx, a, func(db *store.DB) ([]store.RegionFetch, error) { return db.RegionFetches(ctx) })
}

func (a *followedArchive) LastChange(ctx context.Context) (time.Time, error) {
	return readFollowed(ctx, a, func(db *store.DB) (time.Time, error) { return db.LastChange(ctx) })
}

func (a *followedArchive) Version(ctx context.Context) (store.Version, error) {
	return readFollowed(ctx, a, func(db *store.DB) (store.Version, error) { return db.Version(ctx) })
}

// Commits moves with every change applied to the copy, so the server reads
// the Version again at once.
func (a *followedArchive) Commits() int64 { return a.f.Changes() }

func (a *followedArchive) Ping(ctx context.Context) error {
	return a.read(ctx, func(db *store.DB) error { return db.Ping(ctx) })
}
