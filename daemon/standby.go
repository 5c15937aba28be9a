package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/ytrend/ytrend/leader"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/server"
)

// standby is the daemon's part that keeps, while this process does not
// lead, a read-only copy of the leader's archive: it follows the newest
// term of the archive's replicas (replication.Follow) into a copy beside
// the archive, <archive>.standby. Never into the live archive itself: the
// daemon holds that open for writing, and a takeover adopts the previous
// term into it. With --serve a standby answers from the copy (the same
// pages and API as the leader, behind by the follow lag), and from its live
// archive while it leads; the handler is swapped per request
// (server.StandIn), the listener stays.
//
// When this process becomes the leader it stops following: Follower.Stop
// applies every transaction the followed term's replica holds at that
// moment, and the copy is handed to the term's takeover (the replicator's,
// handover.go), which waits for it: when the copy provably holds the whole
// previous term (replication.Takeover says when) the takeover adopts it
// into the live archive instead of restoring the term from the replica
// again. A standby that was not following says so at once, and the
// takeover restores. The copy stays served meanwhile (the takeover only
// adds the kept budget rows to it) until the live archive holds the
// previous term and what it has since: only then does --serve switch to
// the live archive, so an answer never goes back in time. When the term
// ends, the standby follows again, afresh, once the takeover is done with
// the file (the copy missed the term's writes and holds the kept rows; its
// markers were removed by Stop, so Follow would refuse it: it is deleted
// first).
//
// A Follow in progress when the term begins (the copy's first restore) is
// not cut short: the takeover waits for it, then for Stop; finishing the
// restore under way and adopting its copy costs less than a second
// restore.
//
// A replica that cannot be read never stops anything: Follow is retried
// with backoff (logged, counted in ytrend_archive_replica_errors_total),
// and a running follower retries by itself. Until the first copy is ready
// --serve answers from this host's own archive, and /readyz says so.
type standby struct {
	path string // the copy: <archive>.standby
	urls []string
	opt  replication.FollowOptions
	obs  replication.Observer // nil without metrics
	log  *slog.Logger
	live *server.Server // the live archive's server; nil without --serve
	reps *replicator    // its takeover is awaited before --serve switches
	hand *handover      // the copy, handed to the takeover of each term

	stop context.CancelFunc
	done chan struct{}
	wake chan struct{}

	mu          sync.Mutex
	f           *replication.Follower // nil while not following
	served      *server.Server        // the copy's server, standing in for live
	closeServed func()
	state       string // /readyz's word while not following
}

// standbyPath is where a standby keeps its copy of the leader's archive.
func standbyPath(archive string) string { return archive + ".standby" }

func newStandby(archive string, urls []string, opt replication.FollowOptions, obs replication.Observer,
	reps *replicator, log *slog.Logger) *standby {
	path := standbyPath(archive)
	opt.Logger = log.With("copy", path)
	return &standby{path: path, urls: urls, opt: opt, obs: obs, reps: reps, hand: reps.hand,
		log: opt.Logger, wake: make(chan struct{}, 1), state: "standby: not following yet"}
}

// poke tells the standby the elector's state changed.
func (s *standby) poke() {
	if s == nil {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// start follows while e does not lead, until close; live is the live
// archive's server (nil without --serve).
func (s *standby) start(e *leader.Elector, live *server.Server) {
	s.live = live
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second) // OnChange is the prompt; this the safety net
		defer tick.Stop()
		// The first attempt waits for the election's first round, so that
		// a process about to lead does not restore a copy for nothing.
		retry, backoff, attempt := time.Now().Add(time.Second), time.Second, 0
		var led int64
		for {
			if t, ok := e.Term(); ok {
				if tok := t.Fence().Token; tok != led {
					led = tok
					s.lead(ctx, t)
					retry, backoff, attempt = time.Time{}, time.Second, 0
				}
			} else if s.following() == nil && !time.Now().Before(retry) {
				led = 0
				err := s.follow(ctx)
				switch {
				case ctx.Err() != nil:
					return
				case err == nil:
					backoff, attempt = time.Second, 0
				default:
					attempt++
					s.failed(err, attempt, backoff)
					retry, backoff = time.Now().Add(backoff), min(2*backoff, 10*time.Second)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			case <-tick.C:
			}
		}
	}()
}

// follow discards the previous copy's server and starts following; with
// --serve, the new copy's server stands in for the live archive's.
func (s *standby) follow(ctx context.Context) error {
	if !s.hand.reclaim(ctx) { // a takeover may still be adopting the copy
		return ctx.Err()
	}
	s.mu.Lock()
	closeServed := s.closeServed
	s.served, s.closeServed = nil, nil
	s.mu.Unlock()
	if closeServed != nil {
		s.live.StandIn(nil) // the copy is about to go: this host's own archive meanwhile
		closeServed()       // its requests ended long ago: it stopped serving at the takeover
	}
	f, err := replication.Follow(ctx, s.path, s.urls, s.opt)
	if errors.Is(err, replication.ErrNotCopy) {
		// A copy handed over by Stop when this process led: it missed the
		// term's writes. The path is the standby's own; follow afresh.
		if err = removeCopy(s.path); err != nil {
			return err
		}
		f, err = replication.Follow(ctx, s.path, s.urls, s.opt)
	}
	if err != nil {
		return err
	}
	var served *server.Server
	if s.live != nil {
		if served, closeServed, err = s.live.Following(f); err != nil {
			f.Close()
			return err
		}
		s.live.StandIn(served)
	}
	s.mu.Lock()
	s.f, s.served, s.closeServed = f, served, closeServed
	s.mu.Unlock()
	st := f.Status()
	s.log.Info("standby: following the leader's replica", "replica", st.Replica, "generation", st.Generation,
		"txid", st.TXID, "serving_copy", s.live != nil)
	return nil
}

// lead stops following for the term t: everything replicated so far is
// applied to the copy, which --serve answers from until t's takeover has
// adopted the previous term into the live archive.
func (s *standby) lead(ctx context.Context, t *leader.Term) {
	token := t.Fence().Token
	s.mu.Lock()
	f := s.f
	s.f, s.state = nil, "standby: not following: this replica leads"
	s.mu.Unlock()
	if f == nil {
		s.hand.give(token, nil, "the standby was not following")
	} else {
		start := time.Now()
		sctx, cancel := context.WithTimeout(ctx, s.stopTimeout())
		pos, err := f.Stop(sctx)
		cancel()
		log := s.log.With("replica", pos.Replica, "generation", pos.Generation, "txid", pos.TXID,
			"took", time.Since(start).Round(time.Millisecond).String())
		if err != nil {
			log.Warn("standby: leading; stopped following before the copy applied everything replicated", "err", err)
			s.hand.give(token, nil, "the standby stopped following before its copy applied everything replicated: "+err.Error())
		} else {
			log.Info("standby: leading; stopped following with everything replicated applied")
			s.hand.give(token, &replication.Handover{Path: s.path, Position: pos}, "")
		}
	}
	if s.live == nil {
		return
	}
	if !s.reps.await(ctx, t) {
		return // the term ended first: the standby follows again
	}
	s.live.StandIn(nil)
	s.log.Info("standby: --serve answers from the live archive")
}

// stopTimeout bounds how long a new leader waits for its copy to apply what
// the replica holds: a few polls.
func (s *standby) stopTimeout() time.Duration {
	iv := s.opt.Interval
	if iv <= 0 {
		iv = time.Second
	}
	return max(10*iv, 10*time.Second)
}

func (s *standby) failed(err error, attempt int, retry time.Duration) {
	state := fmt.Sprintf("standby: not following: %v; retrying", err)
	s.mu.Lock()
	s.state = state
	s.mu.Unlock()
	if errors.Is(err, replication.ErrEmpty) {
		// No term holds a snapshot yet: the first leader's is coming.
		s.log.Info("standby: nothing to follow yet", "attempt", attempt, "retry_in", retry.String(), "err", err)
		return
	}
	if s.obs != nil {
		for _, u := range s.urls {
			s.obs.ReplicaError(replication.Name(u))
		}
	}
	s.log.Warn("standby: cannot follow the leader's replica; retrying", "attempt", attempt, "retry_in", retry.String(), "err", err)
}

// following is the follower, nil while not following.
func (s *standby) following() *replication.Follower {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f
}

// current is following for the metrics.
func (s *standby) current() server.Follower {
	if f := s.following(); f != nil {
		return f
	}
	return nil
}

// detail is /readyz's lines about the copy.
func (s *standby) detail() []string {
	if s == nil {
		return nil
	}
	if f := s.following(); f != nil {
		out := []string{"standby: copy " + s.path}
		for _, l := range server.FollowDetail(f.Status()) {
			out = append(out, "standby: "+l)
		}
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return []string{s.state}
}

// close stops following and keeps the copy and its position: the next
// start resumes from it.
func (s *standby) close() {
	if s == nil || s.stop == nil {
		return
	}
	s.stop()
	<-s.done
	s.mu.Lock()
	f, closeServed := s.f, s.closeServed
	s.f, s.closeServed = nil, nil
	s.mu.Unlock()
	if f != nil {
		f.Close()
	}
	if closeServed != nil {
		closeServed()
	}
}

// removeCopy deletes a standby's copy and what SQLite and the follower keep
// beside it.
func removeCopy(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal", path + "-txid",
		path + "-follow", path + ".next", path + ".next-txid", path + ".next.tmp"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// newStandby builds the daemon's standby; start starts it.
func (d *Daemon) newStandby() *standby {
	var obs replication.Observer
	if d.metrics != nil {
		obs = d.metrics
	}
	d.replicas.hand = newHandover() // before the replicator starts: its takeovers wait for the copy
	s := newStandby(d.cfg.Store.Path, d.cfg.Archive.Replicas,
		replication.FollowOptions{Interval: d.cfg.Archive.FollowInterval.D()}, obs, d.replicas, d.log)
	if d.metrics != nil {
		d.metrics.Registry().MustRegister(server.FollowCollector(s.current))
	}
	return s
}
