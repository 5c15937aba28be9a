package replication

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
	"golang.org/x/sys/unix"
)

// How a followed copy is kept, and what its readers may see.
//
// Litestream's follow mode (RestoreOptions.Follow, replica.go: follow,
// applyLTXFile) restores a snapshot into the output file, then polls the
// replica's level 0 every follow interval and applies each new LTX file in
// place: it writes the file's pages straight into the database file with
// pwrite (no WAL, no journal), truncates it to the file's commit size and
// fsyncs. Around each file it takes SQLite's own locks (fcntl write locks on
// the PENDING byte and the SHARED range), so that a reader in ANOTHER
// process waits; it rewrites page 1's header to the rollback journal (bytes
// 18-19), and randomises the file change counter (bytes 24-27) when page 1
// is part of the file, so that other connections drop their page caches.
//
// That is not enough for ytrend serve, which reads the copy in the same
// process:
//   - fcntl locks belong to a process, not to a file descriptor: SQLite's
//     connections in the process that follows are never held off by them,
//     and would read a half-applied transaction (torn pages, a b-tree whose
//     parent is new and whose child is old).
//   - a transaction that does not touch page 1 (an update in place) leaves
//     the change counter alone, so a reader keeps stale pages in its cache
//     (and its memory map) beside new ones.
//   - a snapshot keeps the leader's WAL header bytes until page 1 changes;
//     a reader opening it would use WAL mode and never look at the change
//     counter at all.
//
// So a Follower puts a gate in front of the copy (Read): every applied LTX
// file is read whole from the replica into memory (one transaction's pages;
// more when a gap is filled from a compacted level) and its checksums
// verified first,
// then written by Litestream while the gate is closed to readers, then the
// change counter is bumped before the gate opens again. A reader therefore
// sees the copy only between LTX files, each of which is a committed state
// of the leader's archive, and its first read after an apply finds a new
// change counter and drops its cache and memory map. The first restore of a
// term is switched to the rollback journal before any reader opens it. An
// apply that stops half-way (a local write error) marks the copy torn:
// readers get ErrTorn until a fresh copy replaces it. The gate is a
// sync.RWMutex, so an apply waits for the reads in progress and new reads
// wait for the apply: a long read (a slow search) delays the copy by its
// length, never more.
//
// A copy of a newer term (a takeover happened) is restored beside the
// served one (<path>.next) while readers go on with the old copy, then
// renamed over it with the gate closed; Copy.Epoch tells readers to reopen.
// Other processes must not read the copy while it is followed: the
// in-process gate does not reach them, and SQLite in this process may
// release Litestream's fcntl locks when it closes a connection. Serve it
// over HTTP instead.

var (
	// ErrNotCopy: the follower's path holds a file it did not make (an
	// archive that ytrend run or fetch writes); a follower never writes over
	// one.
	ErrNotCopy = errors.New("follow: the path holds an archive that is not a followed copy")
	// ErrTorn: an LTX file was applied only in part; the copy is not read
	// until a fresh restore replaces it.
	ErrTorn = errors.New("follow: the copy is being rebuilt after an apply that did not complete")
	// ErrStopped: the follower was stopped or closed.
	ErrStopped = errors.New("follow: stopped")
)

// FollowOptions say how often the replica is polled and where the follower
// logs.
type FollowOptions struct {
	Interval time.Duration // archive.follow_interval; 0: Litestream's default (1s)
	Logger   *slog.Logger
}

// Position is the state a followed copy holds.
type Position struct {
	Replica    string    `json:"replica"`    // the URL followed, secrets masked
	Generation string    `json:"generation"` // term-<fence token>
	Term       int64     `json:"term"`       // the fence token
	TXID       string    `json:"txid"`       // the newest transaction applied
	At         time.Time `json:"at"`         // when the replica received it
}

// FollowStatus is a follower's state as /readyz and the metrics show it.
type FollowStatus struct {
	Position
	Newest      string    `json:"newest"`              // the newest transaction the term's replica was seen to hold
	LagSeconds  float64   `json:"lag_seconds"`         // see Follower.Status
	CheckedAt   time.Time `json:"checked_at"`          // the last poll of the replica that succeeded
	Switching   string    `json:"switching,omitempty"` // a newer term whose copy is being prepared
	Errors      int64     `json:"errors"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at"`
}

// Copy is the followed copy pinned for one read (Follower.Read).
type Copy struct {
	Path  string
	Epoch uint64 // changes when the file at Path is replaced: reopen it
	gate  *sync.RWMutex
}

// Release lets the follower change the copy again.
func (c Copy) Release() { c.gate.RUnlock() }

// Follower keeps the file at path a read-only copy of the newest term of
// the archive's replicas, with Litestream's follow mode. See Follow.
type Follower struct {
	path  string
	urls  []string
	roots []litestream.ReplicaClient // each URL's root: the term index
	opt   FollowOptions
	log   *slog.Logger
	lock  *os.File // flock: one follower per copy

	gate    sync.RWMutex // readers share it; an apply or a switch holds it alone
	epoch   atomic.Uint64
	changes atomic.Int64
	torn    atomic.Bool

	mu          sync.Mutex
	sess        *session
	switching   string
	newer       time.Time // when a term newer than the copy's began; zero: none seen
	errors      int64
	lastErr     string
	lastErrAt   time.Time
	progress    chan struct{} // closed and replaced at each apply
	stopped     bool
	watchCancel context.CancelFunc
	watchDone   chan struct{}
}

// marker is what <path>-follow holds: which replica and term the copy at
// path follows. Litestream's own <path>-txid holds the position.
type marker struct {
	Replica string `json:"replica"`
	Term    int64  `json:"term"`
}

func markerPath(path string) string { return path + "-follow" }
func lockPath(path string) string   { return path + "-follow.lock" }
func nextPath(path string) string   { return path + ".next" }

// Follow makes the file at path a copy of the newest term found in the
// replicas at urls and keeps it current until Stop or Close; it returns
// once the copy can be read. The file must not exist, or be a copy a
// follower made (it then resumes from its last position when it still
// follows the newest term). A replica that is missing, empty or holds no
// snapshot yet is an error naming it.
//
// Every interval the follower also reads each replica's term index; when a
// newer term holds a snapshot, it restores that term beside the copy and
// switches to it, readers serving the old copy until then.
func Follow(ctx context.Context, path string, urls []string, opt FollowOptions) (*Follower, error) {
	if len(urls) == 0 {
		return nil, errors.New("follow: no replica URL")
	}
	if opt.Interval <= 0 {
		opt.Interval = litestream.DefaultFollowInterval
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	f := &Follower{path: path, urls: urls, opt: opt, log: opt.Logger, progress: make(chan struct{})}
	var err error
	if f.lock, err = lockFile(path); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			f.shutdown()
		}
	}()
	resume, err := f.existing(ctx)
	if err != nil {
		return nil, err
	}
	for _, raw := range urls {
		c, err := open(ctx, raw)
		if err != nil {
			return nil, err
		}
		f.roots = append(f.roots, c)
	}
	if resume != nil {
		f.start(*resume, time.Time{})
	}
	if err := f.check(ctx); err != nil {
		return nil, err
	}
	if f.current() == nil {
		return nil, errors.New("follow: no copy")
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.watchCancel, f.watchDone = cancel, make(chan struct{})
	go f.watch(wctx)
	ok = true
	return f, nil
}

// existing reads what is at path: nothing, or a copy this follower can
// resume (returned), or a copy to be replaced (nil). A copy is resumed
// only when it is a sound database (checkCopy): one damaged while no
// follower held it (a disk fault, a torn write, a hand) would otherwise be
// served, and handed to a takeover, damaged.
func (f *Follower) existing(ctx context.Context) (*source, error) {
	fi, err := os.Stat(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(markerPath(f.path))
	if errors.Is(err, os.ErrNotExist) {
		if fi.Size() == 0 {
			return nil, os.Remove(f.path)
		}
		return nil, fmt.Errorf("%w: %s (%d bytes); ytrend serve --follow keeps a copy of its own: give it another --db", ErrNotCopy, f.path, fi.Size())
	} else if err != nil {
		return nil, err
	}
	var m marker
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("follow: %s: %w", markerPath(f.path), err)
	}
	if txid, err := litestream.ReadTXIDFile(f.path); err != nil || txid == 0 {
		return nil, nil // a switch was cut short: restore afresh
	}
	for _, raw := range f.urls {
		if Name(raw) != m.Replica {
			continue
		}
		if err := checkCopy(ctx, f.path); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			f.log.Warn("follow: the copy is not a sound database; restoring it afresh", "copy", f.path, "err", err)
			return nil, nil
		}
		return &source{url: raw, token: m.Term}, nil
	}
	return nil, nil
}

// source is one term of one replica.
type source struct {
	url     string
	token   int64
	started time.Time
}

// candidates lists the terms of every replica, newest first. A replica
// that cannot be listed is recorded as the last error and skipped; errs
// says why each one gave nothing.
func (f *Follower) candidates(ctx context.Context) (out []source, errs []error) {
	for i, raw := range f.urls {
		ts, err := terms(ctx, f.roots[i])
		if err != nil {
			err = fmt.Errorf("replica %s: list terms: %w", Name(raw), err)
			f.failed(err)
			errs = append(errs, err)
			continue
		}
		if len(ts) == 0 {
			errs = append(errs, fmt.Errorf("%w: replica %s holds no term (it is empty, or missing)", ErrEmpty, Name(raw)))
		}
		for _, t := range ts {
			out = append(out, source{url: raw, token: t.Token, started: t.Started})
		}
	}
	// Newest first; for one term, the URLs in their configured order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].token > out[j-1].token; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, errs
}

// check switches to a newer term when one holds a snapshot, and replaces a
// copy whose session ended or that is torn.
func (f *Follower) check(ctx context.Context) error {
	cur := f.current()
	torn := f.torn.Load()
	need := cur == nil || torn || cur.ended()
	cands, errs := f.candidates(ctx)
	if cur != nil && len(cands) > 0 && cands[0].token > cur.token {
		f.mu.Lock()
		if f.newer.IsZero() {
			f.newer = cands[0].started
		}
		f.mu.Unlock()
	}
	for _, c := range cands {
		// Newer terms first; the followed term again when its session
		// ended; an older term only in place of a torn copy.
		if cur != nil && ((c.token == cur.token && !need) || (c.token < cur.token && !torn)) {
			break
		}
		err := f.replace(ctx, c)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		f.failed(err)
		if ctx.Err() != nil {
			break
		}
	}
	if cur == nil {
		if len(errs) == 0 {
			errs = append(errs, ErrEmpty)
		}
		return fmt.Errorf("follow: no replica holds a copy to follow: %w", errors.Join(errs...))
	}
	return nil
}

// replace restores the term c beside the copy, then installs it in place of
// the copy and follows it.
func (f *Follower) replace(ctx context.Context, c source) error {
	where := fmt.Sprintf("replica %s generation %s", Name(c.url), termDir(c.token))
	f.setSwitching(termDir(c.token))
	defer f.setSwitching("")
	next := nextPath(f.path)
	txid, at, err := f.prepare(ctx, c, next, where)
	if err != nil {
		return err
	}
	if old := f.current(); old != nil {
		old.stop()
	}
	// A crash at any point leaves no <path>-txid beside a copy of another
	// term: the next start restores afresh.
	f.gate.Lock()
	err = f.install(next, c, txid)
	if err == nil {
		f.torn.Store(false)
		f.epoch.Add(1)
		f.changes.Add(1)
	}
	f.gate.Unlock()
	if err != nil {
		return fmt.Errorf("follow %s: install the copy: %w", where, err)
	}
	f.mu.Lock()
	f.newer = time.Time{} // a term newer still is noticed at the next check
	f.mu.Unlock()
	f.log.Info("follow: copy ready", "replica", Name(c.url), "generation", termDir(c.token), "txid", txid.String())
	f.start(c, at)
	return nil
}

// prepare restores the newest state of term c into next, in the rollback
// journal, with Litestream's <next>-txid beside it; at is when the replica
// received that state.
func (f *Follower) prepare(ctx context.Context, c source, next, where string) (txid ltx.TXID, at time.Time, err error) {
	for _, p := range []string{next, next + ".tmp", litestream.TXIDPath(next), next + "-wal", next + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, at, err
		}
	}
	turl, err := TermURL(c.url, c.token)
	if err != nil {
		return 0, at, err
	}
	client, err := open(ctx, turl)
	if err != nil {
		return 0, at, fmt.Errorf("%s: %w", where, err)
	}
	defer closeClient(client)
	infos, err := litestream.CalcRestorePlan(ctx, client, 0, time.Time{}, f.log)
	if errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) || (err == nil && len(infos) == 0) {
		return 0, at, fmt.Errorf("%w: %s holds no snapshot yet", ErrEmpty, where)
	} else if err != nil {
		return 0, at, fmt.Errorf("%s: %w", where, err)
	}
	txid, at = infos[len(infos)-1].MaxTXID, infos[len(infos)-1].CreatedAt
	if err := restoreCopy(ctx, client, next, infos, f.log); err != nil {
		removeCopy(next)
		return 0, at, fmt.Errorf("%s: restore: %w", where, err)
	}
	if err := rollbackJournal(next); err != nil {
		return 0, at, fmt.Errorf("%s: %w", where, err)
	}
	if err := litestream.WriteTXIDFile(next, txid); err != nil {
		return 0, at, err
	}
	return txid, at, nil
}

// install moves the prepared copy over the served one; the gate is closed.
func (f *Follower) install(next string, c source, txid ltx.TXID) error {
	if err := os.Remove(litestream.TXIDPath(f.path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	data, _ := json.Marshal(marker{Replica: Name(c.url), Term: c.token})
	if err := writeFile(markerPath(f.path), data); err != nil {
		return err
	}
	if err := os.Rename(next, f.path); err != nil {
		return err
	}
	return os.Rename(litestream.TXIDPath(next), litestream.TXIDPath(f.path))
}

// rollbackJournal switches a restored file's header from WAL to the
// rollback journal, as Litestream's follow does when page 1 changes: a
// reader in WAL mode would never notice the pages written under it.
func rollbackJournal(path string) error {
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if _, err := fh.WriteAt([]byte{1, 1}, 18); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// litestreamDB exists only to carry the follower's logger into
// Litestream's replica (with no DB, it logs to slog's default logger); it
// is never opened.
func (f *Follower) litestreamDB(c source) *litestream.DB {
	db := litestream.NewDB(f.path)
	db.Logger = slog.New(quietHandler{f.log.Handler()}).With("replica", Name(c.url), "generation", termDir(c.token))
	return db
}

// quietHandler lowers Litestream's lines to Debug: one per apply, and its
// errors again at every poll. The follower reports each error itself, once
// (failed): the replica's through its client, a local one as a torn copy or
// an ended session.
type quietHandler struct{ slog.Handler }

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h quietHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(a)}
}
func (h quietHandler) WithGroup(n string) slog.Handler { return quietHandler{h.Handler.WithGroup(n)} }

// session is one Litestream follow of one term into the copy.
type session struct {
	f      *Follower
	url    string
	name   string
	token  int64
	client litestream.ReplicaClient // the term's, unwrapped
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Litestream's follow's return, once done

	// guarded by f.mu
	applied, newest ltx.TXID
	appliedAt       time.Time
	pendingSince    time.Time // the oldest change seen on the replica and not applied; zero: none
	checked         time.Time
}

// start follows term c into the copy, from the position in <path>-txid,
// which the replica received at at (zero: unknown).
func (f *Follower) start(c source, at time.Time) {
	txid, _ := litestream.ReadTXIDFile(f.path)
	s := &session{f: f, url: c.url, name: Name(c.url), token: c.token, done: make(chan struct{}),
		applied: txid, newest: txid, appliedAt: at, checked: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	turl, err := TermURL(c.url, c.token)
	if err == nil {
		s.client, err = newClient(turl)
	}
	f.mu.Lock()
	f.sess = s
	f.mu.Unlock()
	if err != nil {
		s.err = fmt.Errorf("replica %s: %w", s.name, err)
		f.failed(s.err)
		close(s.done)
		return
	}
	rep := litestream.NewReplicaWithClient(f.litestreamDB(c), &followClient{ReplicaClient: s.client, s: s})
	ro := litestream.NewRestoreOptions()
	ro.OutputPath, ro.Follow, ro.FollowInterval = f.path, true, f.opt.Interval
	go func() {
		defer close(s.done)
		err := rep.Restore(ctx, ro)
		if err != nil && ctx.Err() == nil {
			s.err = fmt.Errorf("replica %s generation %s: follow: %w", s.name, termDir(s.token), err)
			f.failed(s.err)
		}
	}()
}

func (s *session) stop() {
	s.cancel()
	<-s.done
	closeClient(s.client)
}

func (s *session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (f *Follower) current() *session {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sess
}

func (f *Follower) setSwitching(g string) {
	f.mu.Lock()
	f.switching = g
	f.mu.Unlock()
}

func (f *Follower) failed(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	f.mu.Lock()
	f.errors++
	again := f.lastErr == err.Error()
	f.lastErr, f.lastErrAt = err.Error(), time.Now()
	f.mu.Unlock()
	if !again { // a newer term without a snapshot yet is tried every interval
		f.log.Warn("follow: replica error", "err", err)
	}
}

// watch checks the term index every interval.
func (f *Follower) watch(ctx context.Context) {
	defer close(f.watchDone)
	t := time.NewTicker(f.opt.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := f.check(ctx); err != nil {
				f.failed(err)
			}
		}
	}
}

// Read pins the current copy for one read: it is neither changed nor
// replaced until Release. Hold it for a whole read (all the queries of one
// answer, so they see one state), and do not call Read again before
// releasing: an apply waiting for the gate holds off new readers.
func (f *Follower) Read() (Copy, error) {
	f.gate.RLock()
	if f.torn.Load() {
		f.gate.RUnlock()
		return Copy{}, ErrTorn
	}
	return Copy{Path: f.path, Epoch: f.epoch.Load(), gate: &f.gate}, nil
}

// Changes counts the changes applied to the copy (LTX files and switches of
// term): a reader that cached what it read reads again when it moves.
func (f *Follower) Changes() int64 { return f.changes.Load() }

// Status says where the copy is and how far behind. The lag is 0 when the
// last poll of the replica (within two follow intervals) found nothing it
// had not applied; otherwise it is the time since the oldest change not yet
// applied reached the replica (by the replica's timestamps: keep the clocks
// in sync), or since the last poll that succeeded when the replica cannot be
// read, or since a newer term began while the copy still follows an older
// one (the takeover's copy is being restored, or has no snapshot yet).
func (f *Follower) Status() FollowStatus {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	st := FollowStatus{Switching: f.switching, Errors: f.errors, LastError: f.lastErr, LastErrorAt: f.lastErrAt}
	s := f.sess
	if s == nil {
		return st
	}
	st.Position = s.position()
	st.Newest, st.CheckedAt = s.newest.String(), s.checked
	switch {
	case !s.pendingSince.IsZero():
		st.LagSeconds = max(0, now.Sub(s.pendingSince).Seconds())
	case now.Sub(s.checked) > 2*f.opt.Interval:
		st.LagSeconds = now.Sub(s.checked).Seconds()
	}
	if !f.newer.IsZero() {
		st.LagSeconds = max(st.LagSeconds, now.Sub(f.newer).Seconds())
	}
	return st
}

// position needs f.mu.
func (s *session) position() Position {
	return Position{Replica: s.name, Generation: termDir(s.token), Term: s.token, TXID: s.applied.String(), At: s.appliedAt}
}

// Stop is the standby's way out of following (a standby that becomes the
// leader): it applies everything the followed term's replica holds at the
// call (waiting for Litestream's next polls, at most until ctx ends), stops
// following, and hands the file over as a plain archive: the follower's
// marker and Litestream's <path>-txid are removed, so that a later Follow
// on the path refuses it (ErrNotCopy) rather than resuming over writes it
// did not follow. The caller may then open the file for writing (store.Open
// switches it back to WAL). The position says which term and transaction
// the file holds; a newer term not switched to yet is not applied. On
// error (ctx ended first, the replica cannot be read) the follower is still
// stopped, the file is a consistent copy at the returned position, and the
// markers are kept.
func (f *Follower) Stop(ctx context.Context) (Position, error) {
	f.stopWatch() // no switch of term from here on
	s := f.current()
	err := f.catchUp(ctx, s)
	f.shutdown()
	f.mu.Lock()
	pos := s.position()
	f.mu.Unlock()
	if err != nil {
		return pos, err
	}
	for _, p := range []string{litestream.TXIDPath(f.path), markerPath(f.path)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return pos, err
		}
	}
	return pos, nil
}

// catchUp waits until s applied the newest transaction its replica holds
// now.
func (f *Follower) catchUp(ctx context.Context, s *session) error {
	where := fmt.Sprintf("replica %s generation %s", s.name, termDir(s.token))
	if s.client == nil {
		return errors.Join(ErrStopped, s.err)
	}
	p, err := termPosition(ctx, s.client)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	for {
		f.mu.Lock()
		applied, progress := s.applied, f.progress
		f.mu.Unlock()
		if applied >= p.TXID {
			return nil
		}
		if f.torn.Load() {
			return ErrTorn
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: applied %s of %s: %w", where, applied, p.TXID, ctx.Err())
		case <-s.done:
			if s.err != nil {
				return s.err
			}
			return fmt.Errorf("%s: %w", where, ErrStopped)
		case <-progress:
		}
	}
}

// Close stops following at once and keeps the copy and its markers: a
// later Follow on the same path resumes from its position.
func (f *Follower) Close() error {
	f.shutdown()
	return nil
}

// stopWatch stops the term watcher and waits for a switch in progress.
func (f *Follower) stopWatch() {
	f.mu.Lock()
	cancel, done := f.watchCancel, f.watchDone
	f.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (f *Follower) shutdown() {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return
	}
	f.stopped = true
	f.mu.Unlock()
	f.stopWatch()
	if s := f.current(); s != nil {
		s.stop()
	}
	for _, c := range f.roots {
		closeClient(c)
	}
	if f.lock != nil {
		f.lock.Close()
	}
}

// lockFile takes the lock of the copy at path: two followers writing one
// copy would tear it.
func lockFile(path string) (*os.File, error) {
	fh, err := tryLock(lockPath(path))
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, fmt.Errorf("follow: %s is followed by another process (lock %s): %w", path, lockPath(path), err)
	}
	return fh, err
}

// tryLock takes an exclusive flock on the file p, created (with its
// directory) if need be; closing the file gives it up. Held by another, it
// fails at once with unix.EWOULDBLOCK. flock, not fcntl: SQLite's fcntl
// locks are another file's and another kind.
func tryLock(p string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	fh, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(fh.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}

// followClient is the session's replica client as Litestream's follow
// sees it: it records what the level-0 listings show (for the lag), and it
// turns each LTX file Litestream opens to apply into one gated step:
// fetched and verified whole, then the gate closed until Litestream closes
// the file, done writing.
type followClient struct {
	litestream.ReplicaClient
	s *session
}

func (c *followClient) LTXFiles(ctx context.Context, level int, seek ltx.TXID, useMetadata bool) (ltx.FileIterator, error) {
	started := time.Now()
	itr, err := c.ReplicaClient.LTXFiles(ctx, level, seek, useMetadata)
	if err != nil {
		c.s.f.failed(fmt.Errorf("replica %s generation %s: list level %d: %w", c.s.name, termDir(c.s.token), level, err))
		return nil, err
	}
	if level != 0 {
		return itr, nil
	}
	return &listing{FileIterator: itr, s: c.s, started: started}, nil
}

func (c *followClient) OpenLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, offset, size int64) (io.ReadCloser, error) {
	where := fmt.Sprintf("replica %s generation %s: LTX %s-%s", c.s.name, termDir(c.s.token), minTXID, maxTXID)
	rc, err := c.ReplicaClient.OpenLTXFile(ctx, level, minTXID, maxTXID, offset, size)
	if err != nil {
		c.s.f.failed(fmt.Errorf("%s: %w", where, err))
		return nil, err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		c.s.f.failed(fmt.Errorf("%s: %w", where, err))
		return nil, err
	}
	dec := ltx.NewDecoder(bytes.NewReader(data))
	if err := dec.Verify(); err != nil {
		err = fmt.Errorf("%s: damaged: %w", where, err)
		c.s.f.failed(err)
		return nil, err
	}
	c.s.f.gate.Lock()
	return &applying{Reader: bytes.NewReader(data), s: c.s, max: maxTXID, at: time.UnixMilli(dec.Header().Timestamp)}, nil
}

// applying is an LTX file being written into the copy: the gate is closed
// until Close.
type applying struct {
	*bytes.Reader
	s    *session
	max  ltx.TXID
	at   time.Time
	once sync.Once
}

func (a *applying) Close() error {
	a.once.Do(func() {
		f := a.s.f
		defer f.gate.Unlock()
		// Litestream closes the file after writing and syncing its pages,
		// or on an error: a file read to its end was applied whole.
		if a.Len() > 0 {
			f.torn.Store(true)
			f.failed(fmt.Errorf("replica %s generation %s: LTX up to %s applied in part; restoring the copy afresh", a.s.name, termDir(a.s.token), a.max))
			return
		}
		if err := bumpChangeCounter(f.path); err != nil {
			f.torn.Store(true)
			f.failed(err)
			return
		}
		f.changes.Add(1)
		f.mu.Lock()
		if a.max > a.s.applied {
			a.s.applied, a.s.appliedAt = a.max, a.at
		}
		if a.s.applied >= a.s.newest {
			a.s.pendingSince = time.Time{}
		}
		close(f.progress)
		f.progress = make(chan struct{})
		f.mu.Unlock()
	})
	return nil
}

// bumpChangeCounter changes the file change counter (header bytes 24-27),
// which a reader in the rollback journal compares at the start of each
// read to decide whether its cache is still good.
func bumpChangeCounter(path string) error {
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer fh.Close()
	var b [4]byte
	if _, err := fh.ReadAt(b[:], 24); err != nil {
		return err
	}
	binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(b[:])+1)
	_, err = fh.WriteAt(b[:], 24)
	return err
}

// listing is a level-0 listing by Litestream's follow: each poll lists the
// files after the applied position, so any file in it is a change the copy
// does not hold yet.
type listing struct {
	ltx.FileIterator
	s       *session
	started time.Time
}

func (l *listing) Next() bool {
	if !l.FileIterator.Next() {
		return false
	}
	fi := l.Item()
	f := l.s.f
	f.mu.Lock()
	if fi.MaxTXID > l.s.applied {
		if fi.MaxTXID > l.s.newest {
			l.s.newest = fi.MaxTXID
		}
		if l.s.pendingSince.IsZero() {
			at := fi.CreatedAt
			if at.IsZero() || at.After(l.started) {
				at = l.started
			}
			l.s.pendingSince = at
		}
	}
	f.mu.Unlock()
	return true
}

func (l *listing) Close() error {
	err := l.FileIterator.Close()
	if ierr := l.FileIterator.Err(); ierr != nil || err != nil {
		l.s.f.failed(fmt.Errorf("replica %s generation %s: list level 0: %w", l.s.name, termDir(l.s.token), errors.Join(ierr, err)))
		return err
	}
	f := l.s.f
	f.mu.Lock()
	l.s.checked = l.started
	f.mu.Unlock()
	return nil
}
