package quota

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Limiter reserves units from one credential's budget before each API call.
// It is safe for concurrent use; every decision is made atomically by the
// Backend, so any number of Limiters in any number of processes may share a
// credential.
type Limiter struct {
	cfg     Config
	backend Backend
	journal *journal
	log     *slog.Logger
	observe func(Result)

	limits []charge            // every limit with cost 0: for status, release, replay
	plans  map[string][]charge // call -> its cost in every limit
	calls  []string            // the accepted calls, sorted
	known  string              // the same, for error messages

	pending   atomic.Bool // the journal may hold rows to replay
	replaying atomic.Bool
}

// Option configures a Limiter.
type Option func(*Limiter)

// WithJournal journals fail-open grants in db's quota_journal table
// (migrations/0002_quota.sql) so they reach the backend once it answers
// again. Without it a fail-open grant is logged but never added to the books.
func WithJournal(db *sql.DB) Option { return func(l *Limiter) { l.journal = &journal{db: db} } }

// WithLogger sets the logger (default: discard).
func WithLogger(log *slog.Logger) Option {
	return func(l *Limiter) {
		if log != nil {
			l.log = log
		}
	}
}

// WithObserver registers f to be called after every Reserve outcome: grants,
// duplicates, refusals, fail-open grants and backend errors (a Result with
// Granted false and RefusedBy ""). It is not called for input errors. f runs
// on the caller's goroutine and must be quick; metrics hang off it.
func WithObserver(f func(Result)) Option {
	return func(l *Limiter) {
		if f != nil {
			l.observe = f
		}
	}
}

// New returns a Limiter for cfg's credential over b.
func New(cfg Config, b Backend, opts ...Option) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("quota: nil backend")
	}
	l := &Limiter{cfg: cfg.clone(), backend: b, log: slog.New(slog.DiscardHandler), observe: func(Result) {}}
	if l.cfg.Timeout == 0 {
		l.cfg.Timeout = DefaultTimeout
	}
	for _, opt := range opts {
		opt(l)
	}
	l.log = l.log.With("credential", l.cfg.Credential)

	for _, lim := range l.cfg.Limits {
		l.limits = append(l.limits, charge{name: lim.Name, units: lim.Units, window: lim.Window})
	}
	l.plans = make(map[string][]charge, len(l.cfg.Costs))
	for call, top := range l.cfg.Costs {
		charges := slices.Clone(l.limits)
		for i, lim := range l.cfg.Limits {
			charges[i].cost = top
			if lim.Costs != nil {
				charges[i].cost = lim.Costs[call]
			}
		}
		l.plans[call] = charges
	}
	l.calls = slices.Sorted(maps.Keys(l.cfg.Costs))
	l.known = strings.Join(l.calls, ", ")
	// A previous run may have left fail-open grants behind.
	l.pending.Store(l.journal != nil)
	return l, nil
}

// Config returns a copy of the Limiter's configuration (Timeout filled in).
func (l *Limiter) Config() Config { return l.cfg.clone() }

// ReserveOption changes one Reserve.
type ReserveOption func(*reserveOptions)

type reserveOptions struct {
	id      string
	cost    int64
	costSet bool
}

// WithID sets the reservation ID (1-64 bytes of [A-Za-z0-9_.:-]). Repeating a
// Reserve with the ID of a granted reservation (after a timeout whose reply
// was lost) returns Granted and Duplicate and charges nothing. Without it a
// random 11-byte ID is generated.
func WithID(id string) ReserveOption { return func(o *reserveOptions) { o.id = id } }

// WithCost charges n units against every limit instead of the call's cost
// table. The call may then be "" (or "manual"), reported as "manual"; a
// named call must still be one of Config.Costs.
func WithCost(n int64) ReserveOption {
	return func(o *reserveOptions) { o.cost, o.costSet = n, true }
}

// Result is the outcome of one Reserve.
type Result struct {
	ID        string    `json:"id"`
	Call      string    `json:"call"` // "manual" for WithCost without a call
	Cost      int64     `json:"cost"` // units in the top-level cost table, or n for WithCost
	Granted   bool      `json:"granted"`
	Duplicate bool      `json:"duplicate,omitempty"` // an earlier Reserve with this ID was granted; nothing charged now
	FailOpen  bool      `json:"fail_open,omitempty"` // granted by policy while the backend was unreachable (journaled)
	RefusedBy string    `json:"refused_by,omitempty"`
	At        time.Time `json:"at"` // backend clock at the decision; the host clock for a fail-open grant
	// RetryAfter is, for a refusal, the exact earliest moment this same
	// reservation could fit (the end of the mark for an upstream refusal).
	RetryAfter time.Duration `json:"retry_after"`
	Limits     []Usage       `json:"limits"` // one per configured limit, in config order
}

// Usage is one limit as seen by one reservation. Used and Remaining are -1
// for a fail-open grant (the backend could not be asked).
type Usage struct {
	Name      string        `json:"name"`
	Units     int64         `json:"units"`
	Window    time.Duration `json:"window"`
	Cost      int64         `json:"cost"` // 0: this call is not counted by this limit
	Used      int64         `json:"used"`
	Remaining int64         `json:"remaining"`
}

// Remaining is the smallest Remaining across the limits that count this
// call: how many more units of this kind fit right now. -1 when unknown.
func (r Result) Remaining() int64 {
	rem, found := int64(-1), false
	for _, u := range r.Limits {
		if u.Cost > 0 && (!found || u.Remaining < rem) {
			rem, found = u.Remaining, true
		}
	}
	return rem
}

// Reserve spends the units call costs from every limit that counts it, or
// from none. See the package documentation for the outcomes.
func (l *Limiter) Reserve(ctx context.Context, call string, opts ...ReserveOption) (Result, error) {
	var o reserveOptions
	for _, opt := range opts {
		opt(&o)
	}
	res := Result{ID: o.id, Call: call}
	charges, err := l.plan(&res, o)
	if err != nil {
		return res, err
	}
	if res.ID == "" {
		res.ID = newID()
	} else if err := checkID(res.ID); err != nil {
		return res, err
	}

	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	d, err := l.backend.reserve(bctx, l.cfg.Credential, l.markScope(res.Call), res.ID, charges)
	cancel()
	if err != nil {
		return l.backendFailed(ctx, res, charges, err)
	}

	res.At = d.at
	res.Limits = l.usage(charges, d.used)
	if d.granted {
		res.Granted, res.Duplicate = true, d.duplicate
		l.log.Debug("quota: granted", "call", res.Call, "id", res.ID, "cost", res.Cost, "duplicate", d.duplicate)
		l.observe(res)
		l.afterContact(ctx)
		return res, nil
	}
	refusal := &RefusedError{RetryAfter: d.retryAfter}
	if d.refusedBy == upstreamRefusal {
		refusal.Limit, refusal.Until = Upstream, d.at.Add(d.retryAfter)
	} else {
		refusal.Limit = charges[d.refusedBy].name
	}
	res.RefusedBy, res.RetryAfter = refusal.Limit, refusal.RetryAfter
	l.log.Debug("quota: refused", "call", res.Call, "id", res.ID, "cost", res.Cost,
		"limit", refusal.Limit, "retry_after", refusal.RetryAfter)
	l.observe(res)
	l.afterContact(ctx)
	return res, refusal
}

// markScope is the call whose own upstream mark applies to a reservation,
// besides the credential's: none for a manual one.
func (l *Limiter) markScope(call string) string {
	if call == ManualCall {
		return ""
	}
	return call
}

// plan checks the input before anything touches the backend and returns the
// reservation's cost in every limit.
func (l *Limiter) plan(res *Result, o reserveOptions) ([]charge, error) {
	if !o.costSet {
		charges, ok := l.plans[res.Call]
		if !ok {
			return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownCall, res.Call, l.known)
		}
		res.Cost = l.cfg.Costs[res.Call]
		return charges, nil
	}
	if o.cost <= 0 {
		return nil, fmt.Errorf("%w: cost must be > 0, got %d", ErrInvalidCost, o.cost)
	}
	switch _, ok := l.cfg.Costs[res.Call]; {
	case res.Call == "" || res.Call == ManualCall:
		res.Call = ManualCall
	case !ok:
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownCall, res.Call, l.known)
	}
	res.Cost = o.cost
	charges := slices.Clone(l.limits)
	for i := range charges {
		if o.cost > charges[i].units {
			return nil, fmt.Errorf("%w: limit %q holds %d units, cost is %d; it could never be granted",
				ErrCostExceedsLimit, charges[i].name, charges[i].units, o.cost)
		}
		charges[i].cost = o.cost
	}
	return charges, nil
}

func (l *Limiter) usage(charges []charge, used []int64) []Usage {
	out := make([]Usage, len(charges))
	for i, c := range charges {
		out[i] = Usage{Name: c.name, Units: c.units, Window: c.window, Cost: c.cost, Used: -1, Remaining: -1}
		if used != nil {
			out[i].Used, out[i].Remaining = used[i], max(0, c.units-used[i])
		}
	}
	return out
}

// backendFailed applies the call's Policy to a reservation the backend could
// not decide.
func (l *Limiter) backendFailed(ctx context.Context, res Result, charges []charge, err error) (Result, error) {
	if ctx.Err() != nil {
		// The caller gave up; that says nothing about the backend.
		return res, fmt.Errorf("quota: reserve %s: %w", res.Call, context.Cause(ctx))
	}
	res.Limits = l.usage(charges, nil)
	policy := l.cfg.Policies[res.Call]
	if !isUnavailable(err) {
		l.log.Error("quota: backend error", "call", res.Call, "id", res.ID, "err", err)
		l.observe(res)
		return res, fmt.Errorf("%w: reserve %s: %w", ErrBackend, res.Call, err)
	}
	if policy != FailOpen {
		l.log.Warn("quota: backend unreachable; refusing by fail-closed policy", "call", res.Call, "id", res.ID, "err", err)
		l.observe(res)
		return res, fmt.Errorf("%w: reserve %s (policy closed): %w", ErrBackend, res.Call, err)
	}

	res.Granted, res.FailOpen, res.At = true, true, time.Now()
	if l.journal == nil {
		l.log.Warn("quota: backend unreachable; granted by fail-open policy, NOT journaled (no journal configured): these units will be missing from the books",
			"call", res.Call, "id", res.ID, "cost", res.Cost, "err", err)
		l.observe(res)
		return res, nil
	}
	row := journalRow{id: res.ID, call: res.Call, costs: map[string]int64{}, at: res.At}
	for _, c := range charges {
		if c.cost > 0 {
			row.costs[c.name] = c.cost
		}
	}
	// The grant stands even if the caller cancels now; the books need the row.
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalTimeout)
	defer cancel()
	if jerr := l.journal.add(jctx, l.cfg.Credential, row); jerr != nil {
		l.log.Error("quota: backend unreachable; granted by fail-open policy but the journal write failed: these units will be missing from the books",
			"call", res.Call, "id", res.ID, "cost", res.Cost, "err", err, "journal_err", jerr)
	} else {
		l.log.Warn("quota: backend unreachable; granted by fail-open policy and journaled",
			"call", res.Call, "id", res.ID, "cost", res.Cost, "err", err)
	}
	l.pending.Store(true)
	l.observe(res)
	return res, nil
}

// journalTimeout bounds a fail-open grant's journal write: the archive's
// single writer connection may be busy with a page write.
const journalTimeout = 2 * time.Second

// replayBatch is how many journal rows one replay script carries.
const replayBatch = 256

// afterContact replays the journal once the backend has answered, if a
// fail-open grant (in this process, or left by an earlier one) may be
// waiting. The flag keeps the common case to one atomic load.
func (l *Limiter) afterContact(ctx context.Context) {
	if l.journal == nil || !l.pending.Load() || !l.replaying.CompareAndSwap(false, true) {
		return
	}
	defer l.replaying.Store(false)
	l.pending.Store(false)
	if _, err := l.ReplayJournal(ctx); err != nil {
		l.pending.Store(true)
		l.log.Warn("quota: journal replay failed; will retry after the next answer", "err", err)
	}
}

// ReplayJournal adds the journaled fail-open grants of this credential to the
// backend and deletes them from the journal. Entries already outside their
// windows are dropped; entries the backend already holds (replayed by another
// process, or granted by a reply that was lost) are not counted twice. It
// returns how many entries added units. Reserve, Status and Ping run it
// automatically once the backend answers; call it directly at startup if you
// want the books complete before the first reservation.
func (l *Limiter) ReplayJournal(ctx context.Context) (int, error) {
	if l.journal == nil {
		return 0, nil
	}
	total, seen := 0, 0
	for {
		rows, err := l.journal.next(ctx, l.cfg.Credential, replayBatch)
		if err != nil {
			return total, err
		}
		if len(rows) == 0 {
			break
		}
		entries := make([]journalEntry, len(rows))
		ids := make([]string, len(rows))
		for i, r := range rows {
			e := journalEntry{id: r.id, at: r.at, costs: make([]int64, len(l.limits))}
			for j, c := range l.limits {
				e.costs[j] = r.costs[c.name] // a limit no longer configured is skipped
			}
			entries[i], ids[i] = e, r.id
		}
		bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
		added, err := l.backend.replay(bctx, l.cfg.Credential, l.limits, entries)
		cancel()
		if err != nil {
			return total, fmt.Errorf("%w: replay journal: %w", ErrBackend, err)
		}
		if _, err := l.journal.remove(ctx, l.cfg.Credential, ids); err != nil {
			return total, err
		}
		total += added
		seen += len(rows)
		if len(rows) < replayBatch {
			break
		}
	}
	if seen > 0 {
		l.log.Info("quota: replayed fail-open journal", "entries", seen, "added", total)
	}
	return total, nil
}

// Release gives back the units of a reservation whose call never left the
// process (it failed before being sent). A call that reached Google is never
// refunded: Google charged it. ErrNotFound if id holds no units.
func (l *Limiter) Release(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	var journaled bool
	if l.journal != nil {
		n, err := l.journal.remove(ctx, l.cfg.Credential, []string{id})
		if err != nil {
			return err
		}
		journaled = n > 0
	}
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	found, err := l.backend.release(bctx, l.cfg.Credential, id, l.limits)
	cancel()
	switch {
	case err != nil && journaled && isUnavailable(err):
		// A fail-open grant not yet replayed: dropping its row was the release.
		return nil
	case err != nil:
		return fmt.Errorf("%w: release %s: %w", ErrBackend, id, err)
	case !found && !journaled:
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	l.log.Debug("quota: released", "id", id)
	l.afterContact(ctx)
	return nil
}

// MarkExhausted records that Google answered quotaExceeded: every Reserve on
// this credential, in every process, is refused with RefusedBy "upstream"
// until until. With calls, only those calls are refused (Google's 2026
// pricing meters search.list in a bucket of its own; when that bucket is
// spent, videos.list still works). A zero until means the next midnight
// America/Los_Angeles (NextReset of the backend's clock). A mark already in
// force that lasts longer is kept.
func (l *Limiter) MarkExhausted(ctx context.Context, until time.Time, reason string, calls ...string) error {
	for _, call := range calls {
		if _, ok := l.cfg.Costs[call]; !ok {
			return fmt.Errorf("%w %q (known: %s)", ErrUnknownCall, call, l.known)
		}
	}
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	if until.IsZero() {
		now, err := l.backend.now(bctx)
		if err != nil {
			return fmt.Errorf("%w: mark exhausted: %w", ErrBackend, err)
		}
		until = NextReset(now)
	}
	err := l.backend.mark(bctx, l.cfg.Credential, calls, until, reason)
	var past pastMarkError
	switch {
	case errors.As(err, &past):
		return err
	case err != nil:
		return fmt.Errorf("%w: mark exhausted: %w", ErrBackend, err)
	}
	scope := "the whole credential"
	if len(calls) > 0 {
		scope = strings.Join(calls, ", ")
	}
	l.log.Warn("quota: upstream quota exhausted; refusing reservations", "until", until, "reason", reason, "scope", scope)
	return nil
}

// Status is a credential's budget at one instant.
type Status struct {
	Credential string        `json:"credential"`
	Backend    string        `json:"backend"` // "redis" or "ledger"
	At         time.Time     `json:"at"`      // backend clock
	Limits     []LimitStatus `json:"limits"`  // config order
	// Exhausted is the upstream mark on the whole credential, if one is in
	// force; ExhaustedCalls the marks on single calls, sorted by call.
	Exhausted      *Exhaustion  `json:"exhausted,omitempty"`
	ExhaustedCalls []Exhaustion `json:"exhausted_calls,omitempty"`
}

// LimitStatus is one limit at one instant.
type LimitStatus struct {
	Name         string        `json:"name"`
	Units        int64         `json:"units"`
	Window       time.Duration `json:"window"`
	Used         int64         `json:"used"`
	Remaining    int64         `json:"remaining"`
	Reservations int64         `json:"reservations"`
	// NextFree is how long until the oldest entry leaves the window (and its
	// units come back); 0 when the window is empty.
	NextFree time.Duration `json:"next_free"`
}

// Exhaustion is an upstream "quota exhausted" mark.
type Exhaustion struct {
	Until  time.Time `json:"until"`
	Reason string    `json:"reason"`
	Call   string    `json:"call,omitempty"` // "" for a mark on the whole credential
}

// Status reports every limit's usage and any upstream mark in force.
func (l *Limiter) Status(ctx context.Context) (Status, error) {
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	s, err := l.backend.status(bctx, l.cfg.Credential, l.calls, l.limits)
	cancel()
	if err != nil {
		return Status{}, fmt.Errorf("%w: status: %w", ErrBackend, err)
	}
	st := Status{Credential: l.cfg.Credential, Backend: l.backend.kind(), At: s.at,
		Exhausted: s.mark, ExhaustedCalls: s.callMarks}
	for i, c := range l.limits {
		ls := s.limits[i]
		lst := LimitStatus{Name: c.name, Units: c.units, Window: c.window, Used: ls.used,
			Remaining: max(0, c.units-ls.used), Reservations: ls.count}
		if !ls.oldest.IsZero() {
			lst.NextFree = max(0, ls.oldest.Add(c.window).Sub(s.at))
		}
		st.Limits = append(st.Limits, lst)
	}
	l.afterContact(ctx)
	return st, nil
}

// Ping reports whether the backend answers (for /readyz).
func (l *Limiter) Ping(ctx context.Context) error {
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	_, err := l.backend.now(bctx)
	cancel()
	if err != nil {
		return fmt.Errorf("%w: ping: %w", ErrBackend, err)
	}
	l.afterContact(ctx)
	return nil
}

// newID returns 64 random bits in 11 characters: unique among the few
// thousand reservations of one window, and short, because every member of a
// log carries it.
func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// checkID keeps IDs to characters that are literal in a Redis MATCH pattern
// and cannot be confused with the member's "|" separator.
func checkID(id string) error {
	if len(id) == 0 || len(id) > 64 {
		return fmt.Errorf("%w %q: must be 1-64 bytes", ErrInvalidID, id)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:-", r)) {
			return fmt.Errorf("%w %q: only [A-Za-z0-9_.:-] allowed", ErrInvalidID, id)
		}
	}
	return nil
}
