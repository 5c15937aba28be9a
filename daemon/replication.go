package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/leader"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
)

// replicator is the daemon's part that keeps the archive's replicas
// (package replication): while this process leads, its term streams the
// archive below <replica>/term-<fence token>. When a term begins it first
// adopts what the previous terms replicated (the takeover), and the
// schedule fires for the term only after that: a page stored before the
// archive is replaced would be lost with it. When the term ends the stream
// stops, and from the moment the term ends by this process's own clock no
// write reaches a replica (replication.Options.Leading).
//
// An unreachable replica never stops fetching: the takeover and the
// stream's start are retried a few times, logged and counted, then the term
// fetches on; a running stream retries by itself.
type replicator struct {
	db   *store.DB
	path string
	urls []string
	opts replication.Options
	log  *slog.Logger

	wake  chan struct{}   // the elector's OnChange: a term may have begun
	flush []chan struct{} // per replica: a run ended, ship it now
	stop  context.CancelFunc
	done  chan struct{}

	hand *handover // the standby's copy for each term; nil without a standby

	mu      sync.Mutex
	streams []*replication.Stream // per replica, nil while it does not stream
	states  []string              // per replica: what /readyz says while it does not stream
	ready   int64                 // the term whose takeover is done: fire may write for it
	change  chan struct{}         // closed when ready changes
}

func newReplicator(cfg *config.Config, db *store.DB, obs replication.Observer, log *slog.Logger) *replicator {
	a := cfg.Archive
	r := &replicator{db: db, path: cfg.Store.Path, urls: a.Replicas, log: log.With("archive", cfg.Store.Path),
		wake: make(chan struct{}, 1), change: make(chan struct{}),
		streams: make([]*replication.Stream, len(a.Replicas)), states: make([]string, len(a.Replicas)),
		opts: replication.Options{SyncInterval: a.SyncInterval.D(), SnapshotInterval: a.SnapshotInterval.D(),
			Retention: a.Retention.D(), Logger: log, Observer: obs}}
	for range r.urls {
		r.flush = append(r.flush, make(chan struct{}, 1))
	}
	r.setState(-1, "standing by")
	return r
}

func (r *replicator) enabled() bool { return len(r.urls) > 0 }

func (r *replicator) names() []string {
	out := make([]string, len(r.urls))
	for i, u := range r.urls {
		out[i] = replication.Name(u)
	}
	return out
}

// logStart is the start log's line about the archive's replicas.
func (r *replicator) logStart(once bool) {
	switch {
	case !r.enabled():
		r.log.Warn("the archive is not backed up: no archive.replicas configured")
	case once:
		r.log.Info("run --once does not stream the archive; the leader of ytrend run does", "replicas", r.names())
	default:
		r.log.Info("the leader streams the archive to its replicas", "replicas", r.names(),
			"sync_interval", r.opts.SyncInterval.String())
	}
}

// poke tells the replicator the elector's state changed.
func (r *replicator) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// start runs each of this process's terms until stop.
func (r *replicator) start(e *leader.Elector) {
	ctx, cancel := context.WithCancel(context.Background())
	r.stop, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		tick := time.NewTicker(time.Second) // OnChange is the prompt; this the safety net
		defer tick.Stop()
		for {
			if t, ok := e.Term(); ok {
				r.lead(ctx, t)
			}
			select {
			case <-ctx.Done():
				return
			case <-r.wake:
			case <-tick.C:
			}
		}
	}()
}

// close stops the stream of the term in course after a last sync. The
// daemon calls it after its runs ended and before the lease is released,
// so that every page stored is in the term's replica before a standby
// takes over and adopts it.
func (r *replicator) close() {
	if r.stop == nil {
		return
	}
	r.stop()
	<-r.done
}

// lead takes over, then streams the term until it ends (or close).
func (r *replicator) lead(ctx context.Context, t *leader.Term) {
	token := t.Fence().Token
	gen := fmt.Sprintf("term-%019d", token)
	log := r.log.With("token", token)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan struct{})
	go func() {
		select {
		case <-t.Done():
			close(ended)
			cancel()
		case <-ctx.Done():
		}
	}()

	r.setState(-1, "taking over: adopting what the previous terms replicated")
	r.takeover(ctx, log, token)
	r.setReady(token)
	defer r.setReady(0)

	// One stream per replica: one that cannot be reached never holds up
	// the others.
	var wg sync.WaitGroup
	for i := range r.urls {
		wg.Go(func() { r.streamTo(ctx, log, t, i) })
	}
	wg.Wait()
	why := "the daemon stopped"
	select {
	case <-ended:
		why = t.Err().Error()
	default:
	}
	r.setState(-1, "standing by")
	log.Info("replication: stopped streaming", "generation", gen, "why", why)
}

// streamTo streams the term to the i-th replica until ctx ends, starting
// it again with backoff while the replica cannot be reached.
func (r *replicator) streamTo(ctx context.Context, log *slog.Logger, t *leader.Term, i int) {
	token, name := t.Fence().Token, replication.Name(r.urls[i])
	gen := fmt.Sprintf("term-%019d", token)
	log = log.With("replica", name, "generation", gen)
	opts := r.opts
	opts.Leading = t.Leading
	var s *replication.Stream
	for attempt, backoff := 1, time.Second; ; attempt, backoff = attempt+1, min(2*backoff, 30*time.Second) {
		var err error
		if s, err = replication.Start(ctx, r.path, r.urls[i:i+1], token, opts); err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		if r.opts.Observer != nil {
			r.opts.Observer.ReplicaError(name)
		}
		r.setState(i, "not streaming "+gen+": "+err.Error()+"; retrying")
		log.Error("replication: cannot start streaming to this replica; fetching goes on, retrying",
			"attempt", attempt, "retry_in", backoff.String(), "err", err)
		if errors.Is(err, replication.ErrTermTaken) {
			<-ctx.Done() // not this archive's to stream: the next term tries
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
	r.mu.Lock()
	r.streams[i] = s
	r.mu.Unlock()
	log.Info("replication: streaming the archive for this term")
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-r.flush[i]:
			// A failure is counted by the stream and retried by Litestream.
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			s.Sync(sctx)
			cancel()
		}
	}
	stopCtx, stop := context.WithTimeout(context.Background(), 15*time.Second)
	defer stop()
	err := s.Stop(stopCtx)
	r.mu.Lock()
	r.streams[i] = nil
	r.mu.Unlock()
	if err != nil {
		log.Warn("replication: the term's last sync to this replica failed", "err", err)
	}
}

// runEnded ships a run's last pages at once rather than at the next sync
// interval: Litestream stamps a transaction with the time it ships it, so a
// point-in-time restore between two runs then finds the first whole. It
// never waits: a sync in course or asked for already covers the run.
func (r *replicator) runEnded() {
	for _, c := range r.flush {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// takeoverAttempts bounds how long a term waits for a replica that cannot
// be read before it fetches on from its own archive.
const takeoverAttempts = 3

// takeover adopts what the terms before this one replicated. With a
// standby, it first waits for the standby's copy of the previous term
// (handover), and adopts that copy when it holds the whole term, which
// spares the restore; otherwise it restores the term from the replica. A
// replica that cannot be read is retried a few times, then the term
// fetches on from the archive it has (logged and counted): fetching never
// stops for a replica.
func (r *replicator) takeover(ctx context.Context, log *slog.Logger, token int64) {
	start := time.Now()
	opt := replication.TakeoverOptions{Restore: replication.RestoreOptions{UpToDamage: true, Logger: log}}
	noCopy := "no standby"
	if r.hand != nil {
		c, why, release, ok := r.hand.take(ctx, token)
		if !ok {
			return // the term ended, or the daemon stops
		}
		defer release()
		opt.Copy, noCopy = c, why
	}
	for attempt, backoff := 1, time.Second; ; attempt, backoff = attempt+1, 2*backoff {
		a, ok, err := replication.Takeover(ctx, r.urls, token, r.db, opt)
		if a.Why != "" {
			noCopy = "the standby's copy is not the whole previous term: " + a.Why
			opt.Copy = nil // a retry restores
		}
		took := time.Since(start).Round(time.Millisecond).String()
		switch {
		case err == nil && ok && a.FromCopy:
			log.Info("takeover: adopted the previous term from the standby's copy, without a restore, before fetching",
				"from", "copy", "replica", a.Replica, "generation", a.Generation, "txid", a.TXID, "took", took)
			return
		case err == nil && ok:
			log.Info("takeover: adopted the previous term's replicated archive before fetching",
				"from", "restore", "why", noCopy, "replica", a.Replica, "generation", a.Generation, "txid", a.TXID, "took", took)
			return
		case err == nil:
			log.Info("takeover: nothing to adopt (no earlier term, or this archive streamed it)")
			return
		case ctx.Err() != nil:
			return
		}
		r.countError()
		if attempt >= takeoverAttempts {
			log.Error("takeover: cannot adopt what the previous terms replicated; fetching on from this archive",
				"attempts", attempt, "err", err)
			return
		}
		log.Warn("takeover: cannot read the previous term; retrying", "attempt", attempt, "retry_in", backoff.String(), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

func (r *replicator) countError() {
	if r.opts.Observer == nil {
		return
	}
	for _, n := range r.names() {
		r.opts.Observer.ReplicaError(n)
	}
}

// setState sets what /readyz says of the i-th replica while it does not
// stream; -1: of every replica.
func (r *replicator) setState(i int, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for j := range r.states {
		if i < 0 || i == j {
			r.states[j] = s
		}
	}
}

func (r *replicator) setReady(token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready = token
	close(r.change)
	r.change = make(chan struct{})
}

// await waits until the term's takeover is done; false if the term or ctx
// ended first. Without replicas there is nothing to wait for.
func (r *replicator) await(ctx context.Context, t *leader.Term) bool {
	if !r.enabled() || t == nil {
		return true
	}
	r.poke()
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

// detail is /readyz's lines about the replicas, one each. Replication
// never makes the process unready: a replica that cannot be reached is
// retried while fetching goes on, and said here.
func (r *replicator) detail() []string {
	if !r.enabled() {
		return []string{"warning: the archive is not backed up: no archive.replicas configured"}
	}
	r.mu.Lock()
	streams, states := slices.Clone(r.streams), slices.Clone(r.states)
	r.mu.Unlock()
	out := make([]string, 0, len(streams))
	for i, s := range streams {
		if s == nil {
			out = append(out, "replication: "+replication.Name(r.urls[i])+": "+states[i])
			continue
		}
		for _, st := range s.Status() {
			line := fmt.Sprintf("replication: %s %s: position %s of %s, lag %.1fs, last sync %s, errors %d",
				st.Replica, st.Generation, st.Position, st.LocalPosition, st.LagSeconds, formatTime(st.LastSync), st.Errors)
			if st.LastError != "" {
				line += ", last error: " + st.LastError
			}
			out = append(out, line)
		}
	}
	return out
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
