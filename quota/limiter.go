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
	"time"
)

// Limiter reserves units from one credential's budget before each API call.
// It is safe for concurrent use; every decision is made atomically by the
// Backend, so any number of Limiters in any number of processes may share a
// credential.
type Limiter struct {
	cfg       Config
	backend   Backend
	record    *record
	mirror    *mirror // nil unless WithMirror
	log       *slog.Logger
	observe   func(Result)
	onRebuild func(Rebuilt)

	limits  []charge            // every limit with cost 0: for status, release, sync
	plans   map[string][]charge // call -> its cost in every limit
	calls   []string            // the accepted calls, sorted
	known   string              // the same, for error messages
	longest time.Duration       // the longest window: how long the record keeps a grant

	books books // the epoch this process last saw and the state of its record
}

// Option configures a Limiter.
type Option func(*Limiter)

// WithRecord keeps this process's record of its grants in db's
// quota_grants table (migrations/0003_quota_books.sql): every grant for the
// longest window, so that the books can be restored if the ledger loses
// them, and the fail-open grants made while the backend was unreachable
// until they reach it. Without a record nothing can be restored, and no call
// fails open: a grant that cannot be recorded anywhere is not given.
func WithRecord(db *sql.DB) Option { return func(l *Limiter) { l.record = &record{db: db} } }

// WithMirror keeps, beside the record (WithRecord, which it needs), a
// mirror of the credential's whole shared log in quota_mirror
// (migrations/0010_quota_mirror.sql): every process's grants, copied on
// each Sync. When the ledger loses its books, the mirror is replayed with
// the record, so the grants of processes that never run again are restored
// too. `ytrend run` keeps one; short-lived commands do not.
func WithMirror() Option { return func(l *Limiter) { l.mirror = &mirror{} } }

// WithRebuildObserver registers f to be called each time this process finds
// that the ledger lost its books and restores its share of them.
func WithRebuildObserver(f func(Rebuilt)) Option {
	return func(l *Limiter) {
		if f != nil {
			l.onRebuild = f
		}
	}
}

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
	l := &Limiter{cfg: cfg.clone(), backend: b, log: slog.New(slog.DiscardHandler),
		observe: func(Result) {}, onRebuild: func(Rebuilt) {}}
	if l.cfg.Timeout == 0 {
		l.cfg.Timeout = DefaultTimeout
	}
	if l.cfg.RebuildGrace == 0 {
		l.cfg.RebuildGrace = DefaultRebuildGrace
	}
	for _, opt := range opts {
		opt(l)
	}
	if l.mirror != nil {
		if l.record == nil {
			return nil, errors.New("quota: WithMirror needs WithRecord")
		}
		l.mirror.db = l.record.db
	}
	l.log = l.log.With("credential", l.cfg.Credential)

	for _, lim := range l.cfg.Limits {
		l.limits = append(l.limits, charge{name: lim.Name, units: lim.Units, window: lim.Window})
		l.longest = max(l.longest, lim.Window)
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
	fence   *Fence
	leading func() bool // confirms the fence by the caller's own clock; nil: never confirmed
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

// WithFence makes the reservation on behalf of the leader holding f: it is
// refused with ErrFenced, charging nothing, unless f is still the current
// lease. A replica that was paused or cut off past its lease can spend
// nothing when it wakes up.
func WithFence(f Fence) ReserveOption { return func(o *reserveOptions) { o.fence = &f } }

// WithLeading lets a fenced reservation fail open: while the backend cannot
// be asked, the fence itself cannot be checked, so a fail-open grant goes
// only to a caller that leads by its own monotonic clock right now (leading
// returns true: it holds the lease and the lease has not run out since its
// last renewal). Without it a fenced reservation never fails open. leading
// is called once, after the backend failed to answer.
func WithLeading(leading func() bool) ReserveOption {
	return func(o *reserveOptions) { o.leading = leading }
}

// Result is the outcome of one Reserve.
type Result struct {
	ID        string
	Call      string // "manual" for WithCost without a call
	Cost      int64  // units in the top-level cost table, or n for WithCost
	Granted   bool
	Duplicate bool // an earlier Reserve with this ID was granted; nothing charged now
	FailOpen  bool // granted by policy while the backend was unreachable (recorded, added later)
	RefusedBy string
	At        time.Time // backend clock at the decision (a duplicate's: at its first grant, on Redis); for a fail-open grant, as last seen plus the time since
	// RetryAfter is, for a refusal, the exact earliest moment this same
	// reservation could fit (the end of the mark for an upstream refusal).
	RetryAfter time.Duration
	Limits     []Usage // one per configured limit, in config order
}

// Usage is one limit as seen by one reservation. Used and Remaining are -1
// for a fail-open grant (the backend could not be asked).
type Usage struct {
	Name      string
	Units     int64
	Window    time.Duration
	Cost      int64 // 0: this call is not counted by this limit
	Used      int64
	Remaining int64
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

	// Books first: grants this process made while the backend was
	// unreachable, and on first contact its whole record (an audit), reach
	// the backend before it decides anything.
	if err := l.prepare(ctx); err != nil {
		return l.backendFailed(ctx, res, charges, o, err)
	}
	rv := reservation{call: l.markScope(res.Call), id: res.ID, callerID: o.id != "", charges: charges,
		grace: l.cfg.RebuildGrace, fence: o.fence}
	d, err := l.decide(ctx, rv)
	if err != nil {
		if errors.Is(err, ErrFenced) || errors.Is(err, ErrLimitConflict) || errors.Is(err, ErrIDReused) ||
			errors.Is(err, ErrLedgerDamaged) {
			l.log.Warn("quota: reservation refused", "call", res.Call, "id", res.ID, "err", err)
			return res, err
		}
		return l.backendFailed(ctx, res, charges, o, err)
	}
	res.At = d.at
	res.Limits = l.usage(charges, d.used)
	l.books.answered(charges, d.used, d.graceUntil.After(d.at))
	if d.granted {
		res.Granted, res.Duplicate = true, d.duplicate
		if d.duplicate && !d.grantedAt.IsZero() {
			// The record keeps the first grant's time: a later one would
			// outlive the ledger's entry, and an audit would find it missing.
			res.At = d.grantedAt
		}
		if err := l.remember(ctx, res, charges, d.epoch); err != nil {
			res.Granted, res.Duplicate = false, false
			l.observe(res)
			return res, err
		}
		l.log.Debug("quota: granted", "call", res.Call, "id", res.ID, "cost", res.Cost, "duplicate", d.duplicate)
		l.observe(res)
		return res, nil
	}
	refusal := &RefusedError{RetryAfter: d.retryAfter}
	switch d.refusedBy {
	case upstreamRefusal:
		refusal.Limit, refusal.Until = Upstream, d.at.Add(d.retryAfter)
	case graceRefusal:
		refusal.Limit, refusal.Until = Rebuild, d.graceUntil
	default:
		refusal.Limit = charges[d.refusedBy].name
	}
	res.RefusedBy, res.RetryAfter = refusal.Limit, refusal.RetryAfter
	l.log.Debug("quota: refused", "call", res.Call, "id", res.ID, "cost", res.Cost,
		"limit", refusal.Limit, "retry_after", refusal.RetryAfter)
	l.observe(res)
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
func (l *Limiter) backendFailed(ctx context.Context, res Result, charges []charge, o reserveOptions, err error) (Result, error) {
	if ctx.Err() != nil {
		// The caller gave up; that says nothing about the backend.
		return res, fmt.Errorf("quota: reserve %s: %w", res.Call, context.Cause(ctx))
	}
	res.Limits = l.usage(charges, nil)
	policy := l.cfg.Policies[res.Call]
	if !isUnavailable(err) {
		l.log.Error("quota: backend error", "call", res.Call, "id", res.ID, "err", err)
		l.observe(res)
		return res, fmt.Errorf("%w: reserve %s: %w", headline(err), res.Call, err)
	}
	if policy != FailOpen {
		l.log.Warn("quota: backend unreachable; refusing by fail-closed policy", "call", res.Call, "id", res.ID, "err", err)
		l.observe(res)
		return res, fmt.Errorf("%w: reserve %s (policy closed): %w", ErrBackend, res.Call, err)
	}

	if o.fence != nil && (o.leading == nil || !o.leading()) {
		// The backend would have checked the fence; without it only the
		// caller's own clock can, and it does not confirm the lease.
		l.log.Warn("quota: backend unreachable; not failing open: this process is not the confirmed leader",
			"call", res.Call, "id", res.ID, "token", o.fence.Token, "err", err)
		l.observe(res)
		return res, fmt.Errorf("%w: reserve %s: backend unreachable (%w) and the leader lease is not confirmed by this process's clock",
			ErrFenced, res.Call, err)
	}
	if l.record == nil {
		l.log.Warn("quota: backend unreachable; not failing open: no record to keep the grant in", "call", res.Call, "id", res.ID, "err", err)
		l.observe(res)
		return res, fmt.Errorf("%w: reserve %s (policy open, but this process keeps no record of grants): %w", ErrBackend, res.Call, err)
	}
	if !l.books.openRoom(charges) {
		l.log.Warn("quota: backend unreachable; not failing open: the backend's last answer left no room for it",
			"call", res.Call, "id", res.ID, "cost", res.Cost, "err", err)
		l.observe(res)
		return res, fmt.Errorf("%w: reserve %s: backend unreachable (%w), and its last answer left no room for %d units",
			ErrBackend, res.Call, err, res.Cost)
	}
	// The backend's clock as last seen plus the time since; the host's only
	// when the backend never answered this process.
	if res.At = l.books.now(); res.At.IsZero() {
		res.At = time.Now()
	}
	// A grant that cannot be recorded anywhere is not given: the books
	// would never learn of it. The record write stands even if the caller
	// cancels now.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if rerr := l.record.add(rctx, l.cfg.Credential, l.grantRow(res, charges, "", true)); rerr != nil {
		l.log.Error("quota: backend unreachable and the grant could not be recorded; refusing",
			"call", res.Call, "id", res.ID, "cost", res.Cost, "err", err, "record_err", rerr)
		l.observe(res)
		return res, fmt.Errorf("%w: reserve %s: backend unreachable (%w) and the fail-open grant could not be recorded (%w)",
			ErrBackend, res.Call, err, rerr)
	}
	res.Granted, res.FailOpen = true, true
	l.log.Warn("quota: backend unreachable; granted by fail-open policy and recorded, to be added once it answers",
		"call", res.Call, "id", res.ID, "cost", res.Cost, "err", err)
	l.books.pending.Store(true)
	l.observe(res)
	return res, nil
}

// recordTimeout bounds a grant's record write: the archive's single writer
// connection may be busy with a page write.
const recordTimeout = 2 * time.Second

// Release gives back the units of a reservation whose call never left the
// process (it failed before being sent). A call that reached Google is never
// refunded: Google charged it. ErrNotFound if id holds no units.
func (l *Limiter) Release(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	found, err := l.backend.release(bctx, l.cfg.Credential, id, l.limits)
	cancel()
	if err != nil && isUnavailable(err) && l.record != nil {
		// A fail-open grant the backend never saw: dropping its row is the
		// release. Any other row stays: the backend still counts it.
		n, rerr := l.record.remove(ctx, l.cfg.Credential, []string{id}, true)
		if rerr == nil && n > 0 {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("%w: release %s: %w", headline(err), id, err)
	}
	var recorded int64
	if l.record != nil {
		if recorded, err = l.record.remove(ctx, l.cfg.Credential, []string{id}, false); err != nil {
			return err
		}
	}
	if !found && recorded == 0 {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	l.log.Debug("quota: released", "id", id)
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
			return fmt.Errorf("%w: mark exhausted: %w", headline(err), err)
		}
		until = NextReset(now)
	}
	err := l.backend.mark(bctx, l.cfg.Credential, calls, until, reason)
	var past pastMarkError
	switch {
	case errors.As(err, &past):
		return err
	case err != nil:
		return fmt.Errorf("%w: mark exhausted: %w", headline(err), err)
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
	Credential string
	Backend    string        // "redis" or "ledger"
	At         time.Time     // backend clock
	Limits     []LimitStatus // config order
	// Exhausted is the upstream mark on the whole credential, if one is in
	// force; ExhaustedCalls the marks on single calls, sorted by call.
	Exhausted      *Exhaustion
	ExhaustedCalls []Exhaustion
	// Ledger is the ledger's identity: its epoch, age and last rebuild.
	Ledger LedgerInfo
	// Leader is the `ytrend run` replica holding the leader lease, if any.
	Leader *Fence
}

// LimitStatus is one limit at one instant.
type LimitStatus struct {
	Name         string
	Units        int64
	Window       time.Duration
	Used         int64
	Remaining    int64
	Reservations int64
	// NextFree is how long until the oldest entry leaves the window (and its
	// units come back); 0 when the window is empty.
	NextFree time.Duration
}

// Exhaustion is an upstream "quota exhausted" mark.
type Exhaustion struct {
	Until  time.Time
	Reason string
	Call   string // "" for a mark on the whole credential
}

// Status reports every limit's usage and any upstream mark in force.
func (l *Limiter) Status(ctx context.Context) (Status, error) {
	if err := l.prepare(ctx); err != nil {
		return Status{}, fmt.Errorf("%w: status: %w", headline(err), err)
	}
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	s, err := l.backend.status(bctx, l.cfg.Credential, l.calls, l.limits)
	cancel()
	if err != nil {
		return Status{}, fmt.Errorf("%w: status: %w", headline(err), err)
	}
	st := Status{Credential: l.cfg.Credential, Backend: l.backend.kind(), At: s.at,
		Exhausted: s.mark, ExhaustedCalls: s.callMarks, Ledger: s.ledger, Leader: parseLease(s.lease)}
	if !st.Ledger.Created.IsZero() {
		st.Ledger.Age = max(0, s.at.Sub(st.Ledger.Created))
	}
	for i, c := range l.limits {
		ls := s.limits[i]
		lst := LimitStatus{Name: c.name, Units: c.units, Window: c.window, Used: ls.used,
			Remaining: max(0, c.units-ls.used), Reservations: ls.count}
		if !ls.oldest.IsZero() {
			lst.NextFree = max(0, ls.oldest.Add(c.window).Sub(s.at))
		}
		st.Limits = append(st.Limits, lst)
	}
	return st, nil
}

// Ping reports whether the backend answers (for /readyz).
func (l *Limiter) Ping(ctx context.Context) error {
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	_, err := l.backend.now(bctx)
	cancel()
	if err != nil {
		return fmt.Errorf("%w: ping: %w", headline(err), err)
	}
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
