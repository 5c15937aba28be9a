package quota

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	Epoch   string        // "" until the first reservation creates it
	Created time.Time     // when this epoch began
	Age     time.Duration // Status.At - Created
	Rebuilt time.Time     // when a process found the books lost; zero if never
	// Restored counts the grants processes replayed from their records
	// into this epoch after the loss.
	Restored   int64
	GraceUntil time.Time // nothing is admitted before this after a rebuild
}

// Rebuilt is reported (WithRebuildObserver) when this process finds the
// ledger's books lost and restores its share of them.
type Rebuilt struct {
	From, To string    // epochs
	At       time.Time // backend clock
	Sent     int       // in-window grants this process replayed
	Added    int       // of which the ledger did not already hold
	// Late counts those of Added the ledger took after the grace had ended:
	// processes that reserved in between did not count them, so the window
	// may hold that many grants' units beyond its limit until they age out.
	Late int
}

// Fence is a leader lease as reservations carry it (WithFence).
type Fence struct {
	Token  int64
	Holder string
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
	mu      sync.Mutex  // serializes syncs
	started atomic.Bool // the first contact's audit has run
	pending atomic.Bool // the record may hold fail-open grants the backend has not seen
	startMu sync.Mutex  // one prepare at a time
	// lastSync is the host's unix micros at the last successful sync: only
	// for reports, never for the books.
	lastSync atomic.Int64

	stateMu sync.Mutex
	// room is, per limit (config order), the units left by the backend's
	// latest answer, nil before one; openSpent what this process has
	// granted by policy since, while the backend could not be asked.
	room, openSpent []int64
	epoch           string    // the epoch this process last saw
	seq             int64     // the highest write count it saw in that epoch
	clock           time.Time // the backend's clock at its latest answer
	mono            time.Time // the host's monotonic reading at that answer
}

// now is the backend's clock as this process can tell it: its latest
// answer plus the monotonic time since. The record and the mirror are
// pruned by it and the first contact replays by it, so the host's wall
// clock never decides what the books hold. Zero before any answer.
func (b *books) now() time.Time {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	if b.clock.IsZero() {
		return time.Time{}
	}
	return b.clock.Add(time.Since(b.mono))
}

// answered records the room each limit had at an answer. During a grace
// the log is being restored and says less than what was spent: it leaves
// no room at all. What this process granted by policy is forgotten only by
// an answer that counts it (no fail-open grant waits to be replayed).
func (b *books) answered(charges []charge, used []int64, inGrace bool) {
	if len(used) != len(charges) {
		return
	}
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	room := make([]int64, len(used))
	for i, c := range charges {
		if !inGrace {
			room[i] = c.units - used[i]
		}
	}
	b.room = room
	if b.openSpent == nil || !b.pending.Load() {
		b.openSpent = make([]int64, len(used))
	}
}

// openRoom takes the units of a fail-open grant from the room the latest
// answer left, and reports false, taking nothing, when they do not fit: a
// process that last saw a full limit does not grant past it by policy. Other
// processes may have spent since that answer; this bounds only its own.
func (b *books) openRoom(charges []charge) bool {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	if b.room == nil {
		return true // never answered: nothing known
	}
	for i, c := range charges {
		if c.cost > 0 && b.openSpent[i]+c.cost > b.room[i] {
			return false
		}
	}
	for i, c := range charges {
		b.openSpent[i] += c.cost
	}
	return true
}

// current returns the epoch this process last saw and the highest write
// count it saw in it.
func (b *books) current() (string, int64) {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	return b.epoch, b.seq
}

func (b *books) get() string {
	e, _ := b.current()
	return e
}

// set adopts epoch e (a no-op for ""), keeping the count only if it is the
// same epoch.
func (b *books) set(e string) { b.saw(e, 0, time.Time{}) }

// saw records an answer: the epoch and write count it names, and the
// backend's clock.
func (b *books) saw(e string, seq int64, at time.Time) {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	switch {
	case e == "":
	case e != b.epoch:
		b.epoch, b.seq = e, seq
	case seq > b.seq:
		b.seq = seq
	}
	if !at.IsZero() {
		b.clock, b.mono = at, time.Now()
	}
}

// since is the oldest grant time the books can still count: everything
// granted after it is inside the longest window. Zero (everything) before
// the backend's clock is known.
func (l *Limiter) since() time.Time {
	now := l.books.now()
	if now.IsZero() {
		return time.Time{}
	}
	return now.Add(-l.longest - recordSlack)
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
		epoch, err := l.record.lastEpoch(ctx, l.cfg.Credential, l.since())
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
			return asStep(err)
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
		rv.epoch, rv.seen = l.books.current()
		bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
		d, err := l.backend.reserve(bctx, l.cfg.Credential, rv)
		cancel()
		if d.lost {
			l.log.Warn("quota: the ledger has lost its books (a restart, an eviction, a deleted key or a failover); "+
				"nothing is admitted while every process restores its share", "epoch", d.epoch, "grace_until", d.graceUntil)
		}
		if err != nil || !d.replay {
			l.books.saw(d.epoch, d.seq, d.at)
			return d, err
		}
		if rv.epoch == "" {
			// First contact of a process with no record: nothing to
			// replay, only the epoch to learn.
			l.books.saw(d.epoch, d.seq, d.at)
			if attempt > 0 {
				return decision{}, fmt.Errorf("quota: the ledger's epoch changed again during a restore (now %s)", d.epoch)
			}
			continue
		}
		if attempt > 0 {
			return decision{}, fmt.Errorf("quota: the ledger's epoch changed again during a restore (now %s)", d.epoch)
		}
		if _, err := l.restore(ctx); err != nil {
			return decision{}, err
		}
	}
}

// remember adds a grant to the record before it reaches its caller: a grant
// the record does not hold could not be restored if the ledger lost its
// books. The write waits at most Config.Timeout for the archive (whose
// write lock a page write may hold); when it cannot be made, the grant is
// given back and the reservation fails with ErrBackend. A duplicate is
// written too (the first attempt's reply, and maybe its row, were lost),
// but never given back: its units are the first attempt's.
func (l *Limiter) remember(ctx context.Context, res Result, charges []charge, epoch string) error {
	if l.record == nil {
		return nil
	}
	err := l.recordWithin(ctx, l.grantRow(res, charges, epoch, false))
	if err == nil {
		return nil
	}
	if res.Duplicate {
		// The units belong to the first attempt, which was granted and may
		// have been spent: giving them back would refund a call Google
		// charged. The retry fails; the grant stands.
		l.log.Error("quota: a retried grant could not be recorded in time; it stands, unreported",
			"call", res.Call, "id", res.ID, "timeout", l.cfg.Timeout, "err", err)
		return fmt.Errorf("%w: reserve %s: %s was granted before, and its record could not be written within %s: %w",
			ErrBackend, res.Call, res.ID, l.cfg.Timeout, err)
	}
	// Given back on the backend alone: the record is the part that is stuck.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.Timeout)
	_, rerr := l.backend.release(bctx, l.cfg.Credential, res.ID, l.limits)
	cancel()
	if rerr != nil {
		l.log.Error("quota: granted, but neither recorded nor given back; its units stay spent",
			"call", res.Call, "id", res.ID, "err", err, "release_err", rerr)
		return fmt.Errorf("%w: reserve %s: the grant could not be recorded (%w) nor given back (%w); its units stay spent",
			ErrBackend, res.Call, err, rerr)
	}
	l.log.Error("quota: granted, but the archive could not record it in time; given back",
		"call", res.Call, "id", res.ID, "timeout", l.cfg.Timeout, "err", err)
	return fmt.Errorf("%w: reserve %s: the grant could not be recorded within %s and was given back: %w",
		ErrBackend, res.Call, l.cfg.Timeout, err)
}

// errRecordTimeout: the archive did not take a grant's row in time.
var errRecordTimeout = errors.New("the archive's write lock was not free in time")

// recordWithin writes g to the record within Config.Timeout. SQLite's busy
// handler does not watch a context, so a write stuck behind another
// process's lock is left to finish on its own; if it then lands, its row is
// deleted again (the caller gives the grant back).
func (l *Limiter) recordWithin(ctx context.Context, g grantRow) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.Timeout)
	var abandoned atomic.Bool
	done := make(chan error, 1)
	go func() {
		defer cancel()
		err := l.record.add(rctx, l.cfg.Credential, g)
		if err == nil && abandoned.Load() {
			dctx, dcancel := context.WithTimeout(context.Background(), recordTimeout)
			defer dcancel()
			if _, err := l.record.remove(dctx, l.cfg.Credential, []string{g.id}, false); err != nil {
				l.log.Warn("quota: a grant given back is still in the record; it will count until its window ends",
					"id", g.id, "err", err)
			}
		}
		done <- err
	}()
	t := time.NewTimer(l.cfg.Timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		abandoned.Store(true)
		return errRecordTimeout
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
	Late     int  // of Added, restored after the loss's grace had ended (Rebuilt.Late)
}

// add counts a later step of the same sync into r: the epoch it ended in,
// and its grants.
func (r *SyncReport) add(step SyncReport) {
	r.Epoch, r.Sent, r.Added, r.Late = step.Epoch, r.Sent+step.Sent, r.Added+step.Added, r.Late+step.Late
	r.Restored = r.Restored || step.Restored
}

// Sync checks the ledger's epoch and brings this process's grants to it.
// With full, every grant of the record still inside its window is sent (an
// audit: whatever a failover dropped is re-added); without, only the
// fail-open grants the backend has not seen. Either way, when the books
// turn out lost (this call or another process found the loss), the whole
// record is sent, and with WithMirror the mirror too: the restore. Sync is
// idempotent: no grant is ever counted twice. With WithMirror the same call
// copies the log's new entries into the mirror (the whole log the first
// time, and whenever the mirror and the log disagree on their count).
// `ytrend run` calls it on a short interval (without full) and every
// redis.audit_interval (with); Reserve and Status call it on first contact
// (full) and while fail-open grants wait.
func (l *Limiter) Sync(ctx context.Context, full bool) (SyncReport, error) {
	if l.record == nil {
		rep, _, err := l.syncOnce(ctx, nil, false, false, nil)
		return rep, err
	}
	l.books.mu.Lock()
	defer l.books.mu.Unlock()
	first := !l.books.started.Load()
	before := l.books.get()
	var copyFrom []time.Time
	if l.mirror != nil {
		copyFrom = l.mirror.request(len(l.limits))
	}
	// Cleared first: a fail-open grant recorded while this runs sets it again.
	l.books.pending.Store(false)
	pending, err := l.record.grants(ctx, l.cfg.Credential, time.Time{}, true)
	var rep SyncReport
	var res syncResult
	if err == nil {
		rep, res, err = l.send(ctx, pending, false, false, copyFrom)
	}
	if err == nil {
		err = l.record.synced(ctx, l.cfg.Credential, ids(pending))
	}
	if err != nil {
		l.books.pending.Store(true)
		return rep, err
	}
	since := l.since()
	if full || rep.Restored {
		mine, err := l.record.grants(ctx, l.cfg.Credential, since, false)
		if err != nil {
			return rep, err
		}
		// Pending rows go in the plain phase only: one recorded since it ran
		// is not the ledger's to have held, so no audit of it.
		mine = slices.DeleteFunc(notPending(mine, pending), func(g grantRow) bool { return g.pending })
		// Outside a restore this is an audit: the ledger acknowledged every
		// one of these grants, so one it lacks is a loss, not a detail.
		more, _, err := l.send(ctx, mine, rep.Restored, !rep.Restored, nil)
		if err != nil {
			return rep, err
		}
		rep.add(more)
		if l.mirror != nil && (rep.Restored || first && full) {
			// Every process's grants as last copied: the share of those
			// that may never run again. Not an audit: the mirror keeps
			// entries released since.
			theirs, err := l.mirror.grants(ctx, l.cfg.Credential, since)
			if err != nil {
				return rep, err
			}
			theirs = notPending(theirs, append(mine, pending...))
			more, _, err := l.send(ctx, theirs, rep.Restored, false, nil)
			if err != nil {
				return rep, err
			}
			rep.add(more)
		}
	}
	if rep.Restored {
		// The record now belongs to the new epoch: the next start of this
		// process does not take the same loss for a new one.
		if err := l.record.adopt(ctx, l.cfg.Credential, rep.Epoch); err != nil {
			l.log.Warn("quota: grant record not moved to the new epoch", "err", err)
		}
		if rep.Sent > 0 {
			ev := Rebuilt{From: before, To: rep.Epoch, At: l.books.now(), Sent: rep.Sent, Added: rep.Added, Late: rep.Late}
			l.log.Warn("quota: the ledger had lost its books; restored this process's grants",
				"from_epoch", before, "to_epoch", rep.Epoch, "grants", rep.Sent, "added", rep.Added)
			if rep.Late > 0 {
				l.log.Error("quota: grants restored after the rebuild grace had ended; processes that reserved since "+
					"the loss did not count them, so the window may hold their units beyond its limit until they age out. "+
					"Raise rebuild_grace above the longest time a process can go without reaching the ledger",
					"late", rep.Late, "grace", l.cfg.RebuildGrace, "to_epoch", rep.Epoch)
			}
			l.onRebuild(ev)
		}
	}
	if l.mirror != nil && res.copies != nil {
		l.keepCopy(ctx, copyFrom, res, rep.Restored)
	}
	if full {
		l.books.started.Store(true) // the first contact's audit is done
	}
	l.books.lastSync.Store(time.Now().UnixMicro())
	if !since.IsZero() {
		if err := l.record.prune(ctx, l.cfg.Credential, since); err != nil {
			l.log.Warn("quota: grant record not pruned", "err", err)
		}
	}
	return rep, nil
}

// keepCopy writes what a sync copied of the log into the mirror. While the
// books are being restored (a loss, or its grace) the log is partial: a
// whole copy then adds to the mirror instead of replacing it.
func (l *Limiter) keepCopy(ctx context.Context, from []time.Time, res syncResult, restoring bool) {
	if restoring || res.graceUntil.After(res.at) {
		from = slices.Clone(from)
		for i := range from {
			if from[i].IsZero() {
				from[i] = time.UnixMicro(1) // merge, not replace
			}
		}
		l.mirror.forget()
	}
	if _, err := l.mirror.store(ctx, l.cfg.Credential, l.limits, from, res.copies); err != nil {
		l.log.Warn("quota: mirror not updated; copying the whole log next time", "err", err)
		l.mirror.forget()
		return
	}
	if err := l.mirror.prune(ctx, l.cfg.Credential, l.limits, res.at); err != nil {
		l.log.Warn("quota: mirror not pruned", "err", err)
	}
	// The log can gain entries older than the copy's cursor (a fail-open
	// grant replayed late) and lose some (a release): when the two do not
	// hold as many entries, the next copy is a whole one.
	for i, c := range l.limits {
		n, err := l.mirror.count(ctx, l.cfg.Credential, c.name, res.at.Add(-c.window))
		if err != nil || n != res.copies[i].count {
			l.mirror.forget()
			return
		}
	}
}

// restore is the sync a reservation runs when it meets another epoch. Its
// error is a step of the reservation's (asStep).
func (l *Limiter) restore(ctx context.Context) (SyncReport, error) {
	rep, err := l.Sync(ctx, false)
	return rep, asStep(err)
}

// send carries grants to the backend in batches; it always makes at least
// one call, so the epoch is checked even with nothing to send. The first
// call asks for the mirror's copy (copyFrom, nil for none); its result is
// returned.
func (l *Limiter) send(ctx context.Context, gs []grantRow, restoring, audit bool, copyFrom []time.Time) (SyncReport, syncResult, error) {
	var rep SyncReport
	var firstRes syncResult
	for first := true; first || len(gs) > 0; first = false {
		batch := gs[:min(len(gs), syncBatch)]
		gs = gs[len(batch):]
		entries := make([]replayEntry, len(batch))
		for i, g := range batch {
			e := replayEntry{id: g.id, at: g.at, costs: make([]int64, len(l.limits))}
			for j, c := range l.limits {
				e.costs[j] = g.costs[c.name] // a limit no longer configured is skipped
			}
			entries[i] = e
		}
		var cf []time.Time
		if first {
			cf = copyFrom
		}
		r, res, err := l.syncOnce(ctx, entries, restoring, audit && !restoring, cf)
		if err != nil {
			return rep, firstRes, err
		}
		if first {
			firstRes = res
		}
		rep.add(r)
		restoring = restoring || r.Restored
	}
	return rep, firstRes, nil
}

func (l *Limiter) syncOnce(ctx context.Context, entries []replayEntry, restoring, audit bool, copyFrom []time.Time) (SyncReport, syncResult, error) {
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	epoch, seen := l.books.current()
	r, err := l.backend.sync(bctx, l.cfg.Credential, syncRequest{epoch: epoch, seen: seen, grace: l.cfg.RebuildGrace,
		limits: l.limits, entries: entries, restoring: restoring, audit: audit, copyFrom: copyFrom})
	if err != nil {
		if errors.Is(err, ErrLimitConflict) || errors.Is(err, ErrLedgerDamaged) {
			return SyncReport{}, r, err
		}
		return SyncReport{}, r, &syncError{err}
	}
	if r.lost {
		l.log.Warn("quota: the ledger has lost its books (a restart, an eviction, a deleted key or a failover); "+
			"nothing is admitted while every process restores its share", "epoch", r.epoch, "grace_until", r.graceUntil)
	}
	l.books.saw(r.epoch, r.seq, r.at)
	rep := SyncReport{Epoch: r.epoch, Sent: len(entries), Added: r.added, Restored: r.restored || r.lost}
	// Added to books being restored once their grace was over: reservations
	// have been decided without these grants since it ended. (A loss this
	// call found starts its grace now, so it is never late; a fail-open
	// grant replayed outside a loss is the policy's own spend.)
	if (restoring || r.restored) && !r.graceUntil.After(r.at) {
		rep.Late = r.added
	}
	return rep, r, nil
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
