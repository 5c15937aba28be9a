package quota

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultRebuildGrace is Config.RebuildGrace when zero: twice the default
// interval at which `ytrend run` checks the epoch.
const DefaultRebuildGrace = 10 * time.Second

// LedgerInfo is the ledger's identity. Each backend creates an epoch with
// its books; finding it missing or changed while this process has spent
// under another means the books were lost (Redis restarted without
// persistence, flushed, evicted them, or failed over to a replica that had
// not got them).
type LedgerInfo struct {
	Epoch   string        `json:"epoch"`            // "" until the first reservation creates it
	Created time.Time     `json:"created"`          // when this epoch began
	Age     time.Duration `json:"age"`              // Status.At - Created
	Rebuilt time.Time     `json:"rebuilt,omitzero"` // when a process found the books lost; zero if never
	// Restored counts the grants processes replayed from their records
	// into this epoch after the loss.
	Restored   int64     `json:"restored"`
	GraceUntil time.Time `json:"grace_until,omitzero"` // nothing is admitted before this after a rebuild
}

// Rebuilt is reported (WithRebuildObserver) when this process finds the
// ledger's books lost and restores its share of them.
type Rebuilt struct {
	From, To string    // epochs
	At       time.Time // backend clock
	Sent     int       // in-window grants this process replayed
	Added    int       // of which the ledger did not already hold
}

// Fence is a leader lease as reservations carry it (WithFence).
type Fence struct {
	Token  int64  `json:"token"`
	Holder string `json:"holder"`
}

// value is the lease's stored form, "" for a nil fence.
func (f *Fence) value() string {
	if f == nil {
		return ""
	}
	return strconv.FormatInt(f.Token, 10) + " " + f.Holder
}

// parseLease reads "<token> <holder>"; nil for a free lease.
func parseLease(v string) *Fence {
	tok, holder, ok := strings.Cut(v, " ")
	n, err := strconv.ParseInt(tok, 10, 64)
	if !ok || err != nil {
		return nil
	}
	return &Fence{Token: n, Holder: holder}
}

// books is a Limiter's view of its own grants and of the ledger's identity.
type books struct {
	mu       sync.Mutex // serializes syncs
	epoch    atomic.Pointer[string]
	started  atomic.Bool  // the first contact's audit has run
	pending  atomic.Bool  // the record may hold fail-open grants the backend has not seen
	startMu  sync.Mutex   // one prepare at a time
	lastSync atomic.Int64 // unix micros of the last successful sync
	seen     atomic.Int64 // the backend's clock at its latest answer, unix micros
}

// now is the earlier of the host clock and the backend's at its latest
// answer: the record is pruned by it, and must never be pruned early.
func (b *books) now() time.Time {
	now := time.Now()
	if s := b.seen.Load(); s > 0 && s < now.UnixMicro() {
		return time.UnixMicro(s)
	}
	return now
}

func (b *books) saw(t time.Time) {
	if !t.IsZero() {
		b.seen.Store(t.UnixMicro())
	}
}

func (b *books) get() string {
	if p := b.epoch.Load(); p != nil {
		return *p
	}
	return ""
}

func (b *books) set(e string) {
	if e != "" {
		b.epoch.Store(&e)
	}
}

// prepare runs before a decision. On a process's first contact it loads the
// epoch its record last spent under and audits the record against the
// ledger (re-adding whatever is missing); later it replays the fail-open
// grants the backend has not seen yet, so that a decision never ignores
// them. It returns the backend's error when the backend could not be
// reached: the caller then applies the call's policy without asking again.
// Other failures (the record cannot be read) are logged, and the decision
// goes ahead.
func (l *Limiter) prepare(ctx context.Context) error {
	if l.record == nil {
		return nil
	}
	full := !l.books.started.Load()
	if !full && !l.books.pending.Load() {
		return nil
	}
	l.books.startMu.Lock()
	defer l.books.startMu.Unlock()
	if full = !l.books.started.Load(); full {
		epoch, err := l.record.lastEpoch(ctx, l.cfg.Credential, l.books.now().Add(-l.longest-recordSlack))
		if err != nil {
			l.log.Warn("quota: cannot read the grant record", "err", err)
			return nil
		}
		if l.books.get() == "" {
			l.books.set(epoch)
		}
	} else if !l.books.pending.Load() {
		return nil // another call just synced
	}
	if _, err := l.Sync(ctx, full); err != nil {
		if isUnavailable(err) {
			return err
		}
		l.log.Warn("quota: sync of the grant record failed; retrying at the next call", "err", err, "audit", full)
		return nil
	}
	l.books.started.Store(true)
	return nil
}

// decide asks the backend. An epoch other than the one this process last
// saw means the books were lost: the record is replayed first, and the
// reservation decided afterwards.
func (l *Limiter) decide(ctx context.Context, rv reservation) (decision, error) {
	for attempt := 0; ; attempt++ {
		rv.epoch = l.books.get()
		bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
		d, err := l.backend.reserve(bctx, l.cfg.Credential, rv)
		cancel()
		if err != nil || !d.replay {
			l.books.set(d.epoch)
			l.books.saw(d.at)
			return d, err
		}
		if attempt > 0 {
			return decision{}, fmt.Errorf("quota: the ledger's epoch changed again during a restore (now %s)", d.epoch)
		}
		if _, err := l.restore(ctx); err != nil {
			return decision{}, err
		}
	}
}

// remember adds a grant to the record. The grant stands either way: the
// ledger counts it; only a later restore would miss it.
func (l *Limiter) remember(ctx context.Context, res Result, charges []charge, epoch string, pending bool) {
	if l.record == nil || res.Duplicate {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := l.record.add(rctx, l.cfg.Credential, l.grantRow(res, charges, epoch, pending)); err != nil {
		l.log.Error("quota: granted, but the grant could not be added to this process's record: "+
			"it cannot be restored if the ledger loses its books", "call", res.Call, "id", res.ID, "err", err)
	}
}

func (l *Limiter) grantRow(res Result, charges []charge, epoch string, pending bool) grantRow {
	g := grantRow{id: res.ID, call: res.Call, costs: map[string]int64{}, at: res.At, epoch: epoch, pending: pending}
	for _, c := range charges {
		if c.cost > 0 {
			g.costs[c.name] = c.cost
		}
	}
	return g
}

// recordSlack keeps grants in the record a little past the longest window,
// since the host clock that prunes it may lag the backend's.
const recordSlack = time.Minute

// syncBatch is how many grants one sync call carries.
const syncBatch = 256

// SyncReport says what one Sync did.
type SyncReport struct {
	Epoch    string
	Sent     int  // grants sent to the backend
	Added    int  // of which the backend did not already hold
	Restored bool // the books had been lost; this sync restored this process's share
}

// Sync checks the ledger's epoch and brings this process's grants to it.
// With full, every grant of the record still inside its window is sent (an
// audit: whatever a failover dropped is re-added); without, only the
// fail-open grants the backend has not seen. Either way, an epoch that is
// not the one this process last saw makes it send its whole record: the
// books were lost, and this is its share of them. Sync is idempotent: no
// grant is ever counted twice. `ytrend run` calls it on a short interval
// (without full) and every redis.audit_interval (with); Reserve and Status
// call it on first contact (full) and while fail-open grants wait.
func (l *Limiter) Sync(ctx context.Context, full bool) (SyncReport, error) {
	if l.record == nil {
		return l.syncOnce(ctx, nil, false)
	}
	l.books.mu.Lock()
	defer l.books.mu.Unlock()
	since := l.books.now().Add(-l.longest - recordSlack)
	before := l.books.get()
	var rep SyncReport
	// Cleared first: a fail-open grant recorded while this runs sets it again.
	l.books.pending.Store(false)
	pending, err := l.record.grants(ctx, l.cfg.Credential, since, true)
	if err == nil {
		rep, err = l.send(ctx, pending, false)
	}
	if err == nil {
		err = l.record.synced(ctx, l.cfg.Credential, ids(pending))
	}
	if err != nil {
		l.books.pending.Store(true)
		return rep, err
	}
	if full || rep.Restored {
		all, err := l.record.grants(ctx, l.cfg.Credential, since, false)
		if err != nil {
			return rep, err
		}
		more, err := l.send(ctx, notPending(all, pending), rep.Restored)
		if err != nil {
			return rep, err
		}
		rep.Sent, rep.Added = rep.Sent+more.Sent, rep.Added+more.Added
		rep.Restored = rep.Restored || more.Restored
		switch {
		case rep.Restored:
			// reported below
		case more.Added > 0:
			l.log.Warn("quota: audit re-added grants the ledger had lost (a failover or an eviction dropped them)",
				"added", more.Added, "sent", more.Sent, "epoch", rep.Epoch)
		}
	}
	if rep.Restored {
		ev := Rebuilt{From: before, To: rep.Epoch, At: time.Now(), Sent: rep.Sent, Added: rep.Added}
		l.log.Warn("quota: the ledger had lost its books; restored this process's grants",
			"from_epoch", before, "to_epoch", rep.Epoch, "grants", rep.Sent, "added", rep.Added)
		l.onRebuild(ev)
	}
	l.books.lastSync.Store(time.Now().UnixMicro())
	if err := l.record.prune(ctx, l.cfg.Credential, l.books.now().Add(-l.longest-recordSlack)); err != nil {
		l.log.Warn("quota: grant record not pruned", "err", err)
	}
	return rep, nil
}

// restore is the sync a reservation runs when it meets another epoch.
func (l *Limiter) restore(ctx context.Context) (SyncReport, error) {
	return l.Sync(ctx, false)
}

// send carries grants to the backend in batches; it always makes at least
// one call, so the epoch is checked even with nothing to send.
func (l *Limiter) send(ctx context.Context, gs []grantRow, restoring bool) (SyncReport, error) {
	var rep SyncReport
	for first := true; first || len(gs) > 0; first = false {
		batch := gs[:min(len(gs), syncBatch)]
		gs = gs[len(batch):]
		entries := make([]journalEntry, len(batch))
		for i, g := range batch {
			e := journalEntry{id: g.id, at: g.at, costs: make([]int64, len(l.limits))}
			for j, c := range l.limits {
				e.costs[j] = g.costs[c.name] // a limit no longer configured is skipped
			}
			entries[i] = e
		}
		r, err := l.syncOnce(ctx, entries, restoring)
		if err != nil {
			return rep, err
		}
		rep.Epoch, rep.Sent, rep.Added = r.Epoch, rep.Sent+len(batch), rep.Added+r.Added
		rep.Restored = rep.Restored || r.Restored
		restoring = restoring || r.Restored
	}
	return rep, nil
}

func (l *Limiter) syncOnce(ctx context.Context, entries []journalEntry, restoring bool) (SyncReport, error) {
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	r, err := l.backend.sync(bctx, l.cfg.Credential, syncRequest{epoch: l.books.get(), grace: l.cfg.RebuildGrace,
		limits: l.limits, entries: entries, restoring: restoring})
	if err != nil {
		if errors.Is(err, ErrLimitConflict) || errors.Is(err, ErrLedgerDamaged) {
			return SyncReport{}, err
		}
		return SyncReport{}, fmt.Errorf("%w: sync: %w", ErrBackend, err)
	}
	l.books.set(r.epoch)
	l.books.saw(r.at)
	return SyncReport{Epoch: r.epoch, Added: r.added, Restored: r.restored}, nil
}

func ids(gs []grantRow) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.id
	}
	return out
}

// notPending returns the rows of all that are not in sent.
func notPending(all, sent []grantRow) []grantRow {
	if len(sent) == 0 {
		return all
	}
	skip := make(map[string]bool, len(sent))
	for _, g := range sent {
		skip[g.id] = true
	}
	out := all[:0:0]
	for _, g := range all {
		if !skip[g.id] {
			out = append(out, g)
		}
	}
	return out
}

// Watch keeps this process's books in step with the ledger until ctx ends:
// every epochEvery it checks the ledger's epoch (Sync without full: a loss
// is found, and this process's share restored, even while it has nothing to
// reserve), and every auditEvery it audits its whole record (Sync with
// full: grants a failover dropped are re-added). Failures are logged and
// tried again at the next tick.
func (l *Limiter) Watch(ctx context.Context, epochEvery, auditEvery time.Duration) {
	if l.record == nil || epochEvery <= 0 {
		return
	}
	epoch := time.NewTicker(epochEvery)
	defer epoch.Stop()
	var audit <-chan time.Time
	if auditEvery > 0 {
		t := time.NewTicker(auditEvery)
		defer t.Stop()
		audit = t.C
	}
	for {
		full := false
		select {
		case <-ctx.Done():
			return
		case <-epoch.C:
		case <-audit:
			full = true
		}
		if _, err := l.Sync(ctx, full); err != nil && ctx.Err() == nil {
			l.log.Warn("quota: books not checked; trying again at the next tick", "err", err, "audit", full)
		}
	}
}
