package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ytrend/ytrend/leader"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/replication"
)

// archiveReplication is the daemon's share of the archive's replicas (package
// replication): while this replica leads, its term streams the archive below
// term-<fence token>; when a term begins it first adopts what the previous
// terms replicated, and the schedule fires only after that; when the term
// ends, its stream stops. It is wired into the daemon at four points:
// openDaemon, run, fire and readiness.
type archiveReplication struct {
	a    *app
	urls []string
	opts replication.Options
	log  *slog.Logger

	mu     sync.Mutex
	stream *replication.Stream
	ready  int64         // the term whose takeover is done: fire may write for it
	change chan struct{} // closed when ready changes
}

// electorTerms is what replication needs of the elector.
type electorTerms interface {
	Term() (*leader.Term, bool)
}

func newReplication(a *app, m *metrics.Metrics) *archiveReplication {
	c := a.cfg.Archive
	r := &archiveReplication{a: a, urls: c.Replicas, log: a.log.With("archive", a.cfg.Store.Path), change: make(chan struct{}),
		opts: replication.Options{SyncInterval: c.SyncInterval.D(), SnapshotInterval: c.SnapshotInterval.D(),
			Retention: c.Retention.D(), Logger: a.log}}
	if m != nil {
		r.opts.Observer = m
	}
	return r
}

func (r *archiveReplication) names() []string {
	out := make([]string, len(r.urls))
	for i, u := range r.urls {
		out[i] = replication.Name(u)
	}
	return out
}

// logStart is run's start-log line about the replicas.
func (r *archiveReplication) logStart(once bool) {
	switch {
	case len(r.urls) == 0:
		r.log.Warn("the archive is not backed up: no archive.replicas configured")
	case once:
		r.log.Info("run --once does not replicate the archive; the leader of ytrend run does", "replicas", r.names())
	default:
		r.log.Info("the leader replicates the archive", "replicas", r.names(), "sync_interval", r.opts.SyncInterval.String())
	}
}

// run streams each of this replica's terms until ctx ends.
func (r *archiveReplication) run(ctx context.Context, e electorTerms) {
	if len(r.urls) == 0 {
		return
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if t, ok := e.Term(); ok {
			r.lead(ctx, t)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// lead takes over, then streams the term until it ends.
func (r *archiveReplication) lead(ctx context.Context, t *leader.Term) {
	token := t.Fence().Token
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-t.Done():
			if errors.Is(t.Err(), leader.ErrResigned) {
				// A shutdown: the pages in flight are still stored; they
				// are streamed until the daemon stops (ctx).
				return
			}
			cancel()
		case <-ctx.Done():
		}
	}()
	r.takeover(ctx, token)
	r.setReady(token)
	defer r.setReady(0)

	var s *replication.Stream
	for backoff := time.Second; s == nil; backoff = min(2*backoff, 30*time.Second) {
		var err error
		if s, err = replication.Start(ctx, r.a.cfg.Store.Path, r.urls, token, r.opts); err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		for _, n := range r.names() {
			if r.opts.Observer != nil {
				r.opts.Observer.ReplicaError(n)
			}
		}
		r.log.Error("cannot start replicating this term; fetching goes on, retrying", "generation", fmt.Sprintf("term-%019d", token), "retry_in", backoff.String(), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
	r.mu.Lock()
	r.stream = s
	r.mu.Unlock()
	r.log.Info("replicating the archive for this term", "token", token, "replicas", r.names())
	<-ctx.Done()
	stopCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer stop()
	err := s.Stop(stopCtx)
	r.mu.Lock()
	r.stream = nil
	r.mu.Unlock()
	r.log.Info("stopped replicating: the term ended", "token", token, "why", t.Err(), "last_sync_err", err)
}

// takeover adopts what the terms before this one replicated. A replica that
// cannot be read does not stop the term: it is logged, and the term fetches
// on from the archive it has.
func (r *archiveReplication) takeover(ctx context.Context, token int64) {
	start := time.Now()
	rest, ok, err := replication.Takeover(ctx, r.urls, token, r.a.db, replication.RestoreOptions{Logger: r.log})
	switch {
	case err != nil && ctx.Err() == nil:
		for _, n := range r.names() {
			if r.opts.Observer != nil {
				r.opts.Observer.ReplicaError(n)
			}
		}
		r.log.Error("takeover: cannot adopt what the previous terms replicated; fetching on from this archive", "token", token, "err", err)
	case ok:
		r.log.Info("takeover: adopted the previous term's replicated archive before fetching", "token", token,
			"replica", rest.Replica, "generation", rest.Generation, "txid", rest.TXID, "took", time.Since(start).Round(time.Millisecond).String())
	}
}

func (r *archiveReplication) setReady(token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready = token
	close(r.change)
	r.change = make(chan struct{})
}

// await waits until the term's takeover is done; false if the term or ctx
// ended first. Without replicas there is nothing to wait for.
func (r *archiveReplication) await(ctx context.Context, t *leader.Term) bool {
	if len(r.urls) == 0 || t == nil {
		return true
	}
	for {
		r.mu.Lock()
		ready, change := r.ready, r.change
		r.mu.Unlock()
		if ready == t.Fence().Token {
			return true
		}
		select {
		case <-change:
		case <-t.Done():
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// detail is /readyz's lines about the replicas.
func (r *archiveReplication) detail() []string {
	if len(r.urls) == 0 {
		return []string{"warning: the archive is not backed up: no archive.replicas configured"}
	}
	r.mu.Lock()
	s := r.stream
	r.mu.Unlock()
	if s == nil {
		return []string{"replication: not streaming (standing by, or a term starting) to " + strings.Join(r.names(), ", ")}
	}
	var out []string
	for _, st := range s.Status() {
		line := fmt.Sprintf("replication: %s %s: position %s of %s, lag %.1fs, last sync %s, errors %d",
			st.Replica, st.Generation, st.Position, st.LocalPosition, st.LagSeconds, formatTime(st.LastSync), st.Errors)
		if st.LastError != "" {
			line += ", last error: " + st.LastError
		}
		out = append(out, line)
	}
	return out
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
