package replication

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// Observer receives what the metrics show per archive replica (metrics.Metrics).
type Observer interface {
	ReplicaLag(replica string, lag time.Duration)
	ReplicaSynced(replica string, at time.Time)
	ReplicaError(replica string)
}

// Options are Litestream's intervals and where the stream reports.
type Options struct {
	SyncInterval     time.Duration // WAL shipped this often
	SnapshotInterval time.Duration // a full snapshot this often
	Retention        time.Duration // snapshots and ended terms kept this long; must be positive
	Logger           *slog.Logger
	Observer         Observer // nil: none
	// Leading says, by this process's own clock, whether the term still
	// lasts (leader.Term.Leading). Once it is false no write or delete
	// reaches a replica, even before the stream is stopped: a deposed
	// leader that wakes from a pause ships nothing, like its fenced
	// budget calls. nil: always (a test, a one-off stream).
	Leading func() bool
}

// ErrTermEnded: the stream's term ended; a replica write was refused.
var ErrTermEnded = errors.New("replica: the term ended; nothing more is written to it")

// Stream is one term's replication of the archive to every replica: it
// writes only below <replica>/term-<token>. Stop it when the term ends.
type Stream struct {
	path     string
	token    int64
	started  time.Time // the term's start, as its marker in the term index says
	opts     Options
	store    *litestream.Store
	replicas []*streamed
	stop     chan struct{}
	done     chan struct{}
}

// streamed is one replica of a Stream.
type streamed struct {
	url  string // the configured URL (the term's is below it)
	name string
	db   *litestream.DB
	root litestream.ReplicaClient // the replica's root, where the term index is (audit)
	term litestream.ReplicaClient // the term's files, Litestream's to write; nil until made

	mu           sync.Mutex
	errors       int64
	lastErr      string
	lastErrAt    time.Time
	lastSync     time.Time
	behindSince  time.Time
	local, wrote ltx.TXID
	snapshotted  bool // a snapshot of the term was written: its absence is a loss
}

// metaDir is where Litestream keeps its local state for one replica of a
// term (named by a digest of its URL: streams of one replica each, in one
// process, never share it). It is emptied at the term's start (a term begins with a full
// snapshot), and each term has its own: a deposed leader's Litestream,
// still running on the same archive file for a moment, never shares it
// with the next term's.
func metaDir(path string, token int64, raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"-replicas", termDir(token), hex.EncodeToString(sum[:6]))
}

// dropOldMeta removes the local state of other terms streamed from this
// archive file (best effort: a deposed process may still hold its own).
func dropOldMeta(path string, token int64) {
	dir := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"-replicas")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && e.Name() != termDir(token) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// statusPath is the file a stream keeps its status in, for `ytrend archive
// status` in another process.
func statusPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"-replicas", "status.json")
}

// levels are Litestream's default compaction levels.
var levels = litestream.CompactionLevels{
	{Level: 0},
	{Level: 1, Interval: 30 * time.Second},
	{Level: 2, Interval: 5 * time.Minute},
	{Level: 3, Interval: time.Hour},
}

// shutdownSync bounds the last sync of a stopping stream: an unreachable
// replica must not hold up a shutdown or a stepping-down leader.
const shutdownSync = 5 * time.Second

// Start begins the term's replication of the archive at path to every
// replica URL: it records the term in each replica's term index, prunes
// terms that ended more than the retention ago, and starts Litestream. A
// replica that cannot be reached is an error here; the caller retries
// (a running stream retries by itself).
func Start(ctx context.Context, path string, urls []string, token int64, opts Options) (*Stream, error) {
	if opts.Retention <= 0 {
		// No default: a zero value that quietly pruned every ended term
		// would delete the one that just ended, which a takeover resumes
		// and a restore reads.
		return nil, fmt.Errorf("replica: Options.Retention %s: must be positive (ended terms and snapshots are kept this long; "+
			"0 would prune the term that just ended)", opts.Retention)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Stream{path: path, token: token, opts: opts, started: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	dropOldMeta(path, token)
	started := false
	defer func() {
		if !started {
			s.closeClients()
		}
	}()
	var dbs []*litestream.DB
	for _, raw := range urls {
		root, err := open(ctx, raw)
		if err != nil {
			return nil, err
		}
		r := &streamed{url: raw, name: Name(raw), root: root}
		s.replicas = append(s.replicas, r)
		if err := claimTerm(ctx, root, path, token, s.started); err != nil {
			return nil, fmt.Errorf("replica %s: %w", Name(raw), err)
		}
		s.prune(ctx, raw, root)
		turl, err := TermURL(raw, token)
		if err != nil {
			return nil, err
		}
		client, err := newClient(turl)
		if err != nil {
			return nil, fmt.Errorf("replica %s: %w", Name(raw), err)
		}
		r.term = client
		meta := metaDir(path, token, raw)
		if err := os.RemoveAll(meta); err != nil {
			return nil, err
		}
		db := litestream.NewDB(path)
		db.SetMetaPath(meta)
		db.MonitorInterval = opts.SyncInterval
		rep := litestream.NewReplicaWithClient(db, &observed{ReplicaClient: client, r: r, obs: opts.Observer, leading: opts.Leading})
		rep.SyncInterval = opts.SyncInterval
		db.Replica = rep
		r.db = db
		dbs = append(dbs, db)
	}
	s.store = litestream.NewStore(dbs, levels)
	s.store.SnapshotInterval = opts.SnapshotInterval
	s.store.SnapshotRetention = opts.Retention
	s.store.Logger = opts.Logger.With("litestream", "store")
	for i, db := range dbs {
		db.ShutdownSyncTimeout = shutdownSync
		db.SetLogger(opts.Logger.With("replica", s.replicas[i].name, "generation", termDir(token)))
	}
	if err := s.store.Open(ctx); err != nil {
		s.store.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("replica: start %s: %w", termDir(token), err)
	}
	// The term begins with the whole archive: Litestream reads the file
	// lazily, at its first sync, and a term stopped before that would hold
	// nothing. A replica that fails here is retried by Litestream.
	if err := s.Sync(ctx); err != nil {
		opts.Logger.Warn("replica: the term's first sync failed; Litestream retries it", "generation", termDir(token), "err", err)
	}
	go s.watch()
	started = true
	return s, nil
}

// closeClients closes each replica's clients, once Litestream is done with
// them (a stopped store, or one never opened).
func (s *Stream) closeClients() {
	for _, r := range s.replicas {
		closeClient(r.root)
		if r.term != nil {
			closeClient(r.term)
		}
	}
}

// claimTerm records the term in the replica's term index, unless another
// archive already did: two terms never share a path, even if fence tokens
// went back (a budget backend restored from an old copy).
func claimTerm(ctx context.Context, root litestream.ReplicaClient, path string, token int64, started time.Time) error {
	ts, err := terms(ctx, root)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.Token == token && ownTerm(path) != token {
			return fmt.Errorf("%w: %s", ErrTermTaken, termDir(token))
		}
	}
	if err := markTerm(ctx, root, token, started); err != nil {
		return fmt.Errorf("record %s: %w", termDir(token), err)
	}
	// From here a retry of this term's start is this archive's own.
	return writeFile(termPath(path), []byte(fmt.Sprintln(token)))
}

// Stop ends the stream after a last sync (at most a few seconds). The
// term's files stay; nothing is written to them afterwards.
func (s *Stream) Stop(ctx context.Context) error {
	first := false
	select {
	case <-s.stop:
	default:
		close(s.stop)
		first = true
	}
	<-s.done
	err := s.store.Close(ctx)
	if first {
		s.closeClients()
	}
	s.writeStatus()
	return err
}

// Token is the fence token of the stream's term.
func (s *Stream) Token() int64 { return s.token }

// Sync ships everything committed so far to every replica and waits for it
// (tests, and a clean stop).
func (s *Stream) Sync(ctx context.Context) error {
	var errs []error
	for _, r := range s.replicas {
		if err := r.db.SyncAndWait(ctx); err != nil {
			errs = append(errs, fmt.Errorf("replica %s: %w", r.name, err))
		}
	}
	s.poll()
	for _, r := range s.replicas {
		if err := s.audit(ctx, r); err != nil {
			errs = append(errs, fmt.Errorf("replica %s: %w", r.name, err))
		}
	}
	return errors.Join(errs...)
}

// auditInterval is how often a running stream checks that each replica
// still holds its term (audit).
const auditInterval = time.Minute

// audit checks that the replica still holds the term: its marker in the
// term index and a snapshot. Both can vanish under a running stream (an
// operator's cleanup, a bucket's lifecycle rule, a backup disk remounted
// empty), and Litestream would go on shipping changes that nothing can be
// restored from, reported in sync. A lost term is counted and shown as
// the replica's last error, then rebuilt: the marker written again with
// the term's start, and a snapshot of the archive as it is now, from which
// a restore (or the next takeover) has everything synced.
func (s *Stream) audit(ctx context.Context, r *streamed) error {
	if s.opts.Leading != nil && !s.opts.Leading() {
		return nil // a deposed leader writes nothing, rebuilds nothing
	}
	ts, err := terms(ctx, r.root)
	if err != nil {
		return err
	}
	marked := slices.ContainsFunc(ts, func(t Term) bool { return t.Token == s.token })
	r.mu.Lock()
	snapshotted := r.snapshotted
	r.mu.Unlock()
	// Before the term's first snapshot (Litestream takes it within seconds
	// of the start) there is none to miss.
	snapshot := !snapshotted
	if marked && snapshotted {
		itr, err := r.db.Replica.Client.LTXFiles(ctx, litestream.SnapshotLevel, 0, false)
		if err != nil {
			return err
		}
		snapshot = itr.Next()
		err = itr.Err()
		itr.Close()
		if err != nil {
			return err
		}
	}
	if marked && snapshot {
		return nil
	}
	lost := fmt.Errorf("the replica lost %s (index marker: %v, snapshot: %v); rebuilding it with a new snapshot", termDir(s.token), marked, snapshot)
	(&observed{r: r, obs: s.opts.Observer}).failed(lost)
	s.opts.Logger.Error("replica: the term's files are gone from the replica; rebuilding", "replica", r.name,
		"generation", termDir(s.token), "marker", marked, "snapshot", snapshot)
	if !marked {
		if err := markTerm(ctx, r.root, s.token, s.started); err != nil {
			return fmt.Errorf("%w: record the term again: %v", lost, err)
		}
	}
	if _, err := r.db.Snapshot(ctx); err != nil {
		return fmt.Errorf("%w: snapshot: %v", lost, err)
	}
	s.opts.Logger.Info("replica: rebuilt the term with a new snapshot", "replica", r.name, "generation", termDir(s.token))
	return nil
}

// watch measures every replica's lag each sync interval and keeps the
// status file current.
func (s *Stream) watch() {
	defer close(s.done)
	t := time.NewTicker(s.opts.SyncInterval)
	defer t.Stop()
	audit := time.NewTicker(auditInterval)
	defer audit.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.poll()
		case <-audit.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			for _, r := range s.replicas {
				if err := s.audit(ctx, r); err != nil {
					s.opts.Logger.Warn("replica: cannot check that the replica holds the term", "replica", r.name,
						"generation", termDir(s.token), "err", err)
				}
			}
			cancel()
		}
	}
}

// poll compares each replica's position with the archive's. The lag is the
// time since the replica was first seen behind: it can be short by up to a
// sync interval (WAL not yet read by Litestream counts from its next sync).
func (s *Stream) poll() {
	now := time.Now()
	for _, r := range s.replicas {
		local, err := r.db.Pos()
		if err != nil {
			continue
		}
		remote := r.db.Replica.Pos()
		r.mu.Lock()
		r.local, r.wrote = local.TXID, remote.TXID
		if remote.TXID >= local.TXID {
			r.behindSince = time.Time{}
		} else if r.behindSince.IsZero() {
			r.behindSince = now
		}
		lag := r.lagAt(now)
		r.mu.Unlock()
		if s.opts.Observer != nil {
			s.opts.Observer.ReplicaLag(r.name, lag)
		}
	}
	s.writeStatus()
}

func (r *streamed) lagAt(now time.Time) time.Duration {
	if r.behindSince.IsZero() {
		return 0
	}
	return now.Sub(r.behindSince)
}

// Status is what the stream knows of each replica right now.
func (s *Stream) Status() []Status {
	now := time.Now()
	out := make([]Status, 0, len(s.replicas))
	for _, r := range s.replicas {
		r.mu.Lock()
		out = append(out, Status{Replica: r.name, Generation: termDir(s.token), Position: r.wrote.String(),
			LocalPosition: r.local.String(), LagSeconds: r.lagAt(now).Seconds(), LastSync: r.lastSync,
			Errors: r.errors, LastError: r.lastErr, LastErrorAt: r.lastErrAt, Streaming: true, UpdatedAt: now})
		r.mu.Unlock()
	}
	return out
}

// statusMu orders the status file's updates by the streams of one process
// (one stream per replica, each updating its own entries).
var statusMu sync.Mutex

func (s *Stream) writeStatus() {
	statusMu.Lock()
	defer statusMu.Unlock()
	mine := s.Status()
	var all []Status
	if data, err := os.ReadFile(statusPath(s.path)); err == nil {
		json.Unmarshal(data, &all)
	}
	all = slices.DeleteFunc(all, func(st Status) bool {
		return slices.ContainsFunc(mine, func(m Status) bool { return m.Replica == st.Replica })
	})
	data, err := json.Marshal(append(all, mine...))
	if err != nil {
		return
	}
	writeFile(statusPath(s.path), data)
}

// writeFile replaces the file at p with data, atomically.
func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// A temporary file of its own: the streams of several replicas write
	// the same files at once.
	f, err := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".*.tmp")
	if err != nil {
		return err
	}
	if err = f.Chmod(0o644); err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// prune deletes the terms that ended (a newer one started) more than the
// retention before this term started, and their index markers. Measured
// from this term's start, not from now: the term before this one ended
// then, so it is kept whatever the time claiming this term took. Best
// effort: a failure is logged and the next term tries again.
func (s *Stream) prune(ctx context.Context, raw string, root litestream.ReplicaClient) {
	ts, err := terms(ctx, root)
	if err != nil {
		s.opts.Logger.Warn("replica: cannot list terms to prune", "replica", Name(raw), "err", err)
		return
	}
	for i := 1; i < len(ts); i++ {
		ended := ts[i-1].Started // the next term's start
		if s.started.Sub(ended) < s.opts.Retention || ts[i].Token == s.token {
			continue
		}
		turl, _ := TermURL(raw, ts[i].Token)
		c, err := open(ctx, turl)
		if err == nil {
			err = c.DeleteAll(ctx)
			closeClient(c)
		}
		if err == nil {
			txid := ltx.TXID(ts[i].Token)
			err = root.DeleteLTXFiles(ctx, []*ltx.FileInfo{{Level: indexLevel, MinTXID: txid, MaxTXID: txid}})
		}
		if err != nil {
			s.opts.Logger.Warn("replica: cannot prune an ended term", "replica", Name(raw), "generation", ts[i].Generation(), "err", err)
			continue
		}
		s.opts.Logger.Info("replica: pruned an ended term", "replica", Name(raw), "generation", ts[i].Generation())
	}
}

// observed counts a replica client's failures and successful writes: the
// errors are Litestream's to retry, ytrend's to count and show.
type observed struct {
	litestream.ReplicaClient
	r       *streamed
	obs     Observer
	leading func() bool
}

// ended refuses a write once the term ended by this process's clock.
func (c *observed) ended() error {
	if c.leading == nil || c.leading() {
		return nil
	}
	return ErrTermEnded
}

func (c *observed) failed(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, os.ErrNotExist) {
		return err
	}
	c.r.mu.Lock()
	c.r.errors++
	c.r.lastErr, c.r.lastErrAt = err.Error(), time.Now()
	c.r.mu.Unlock()
	if c.obs != nil {
		c.obs.ReplicaError(c.r.name)
	}
	return err
}

// listTimeout bounds one listing of a replica's files, from the call to
// the iterator's Close. nats.go's object store List waits on its watcher
// with the caller's context alone, and under load a request it makes for
// the watcher can time out unseen: TestFollowNATS then hung in Start's
// first sync, twice in 44 runs. An error is retried (the next sync, the
// next start); a hang is not.
var listTimeout = time.Minute

func (c *observed) LTXFiles(ctx context.Context, level int, seek ltx.TXID, useMetadata bool) (ltx.FileIterator, error) {
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	itr, err := c.ReplicaClient.LTXFiles(lctx, level, seek, useMetadata)
	if err != nil || itr == nil {
		cancel()
		return itr, c.failed(err)
	}
	return &closeCancels{FileIterator: itr, cancel: cancel}, nil
}

// closeCancels ends a listing's context when its iterator is closed: a
// client may read lazily (a page of an S3 listing at a time) until then.
type closeCancels struct {
	ltx.FileIterator
	cancel context.CancelFunc
}

func (i *closeCancels) Close() error {
	err := i.FileIterator.Close()
	i.cancel()
	return err
}

func (c *observed) OpenLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, offset, size int64) (io.ReadCloser, error) {
	rc, err := c.ReplicaClient.OpenLTXFile(ctx, level, minTXID, maxTXID, offset, size)
	return rc, c.failed(err)
}

func (c *observed) WriteLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, r io.Reader) (*ltx.FileInfo, error) {
	if err := c.ended(); err != nil {
		return nil, err
	}
	fi, err := c.ReplicaClient.WriteLTXFile(ctx, level, minTXID, maxTXID, r)
	if err != nil {
		return fi, c.failed(err)
	}
	if level == litestream.SnapshotLevel {
		c.r.mu.Lock()
		c.r.snapshotted = true
		c.r.mu.Unlock()
	}
	if level == 0 {
		now := time.Now()
		c.r.mu.Lock()
		c.r.lastSync = now
		c.r.mu.Unlock()
		if c.obs != nil {
			c.obs.ReplicaSynced(c.r.name, now)
		}
	}
	return fi, nil
}

func (c *observed) DeleteLTXFiles(ctx context.Context, a []*ltx.FileInfo) error {
	if err := c.ended(); err != nil {
		return err
	}
	return c.failed(c.ReplicaClient.DeleteLTXFiles(ctx, a))
}

func (c *observed) DeleteAll(ctx context.Context) error {
	if err := c.ended(); err != nil {
		return err
	}
	return c.failed(c.ReplicaClient.DeleteAll(ctx))
}
