package leader

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
)

// clock is a fake clock for the ledger (the lease's expiry) and for
// electors (their monotonic readings and timers), so the test decides when
// time passes. Timers due fire inside Advance, on the test's goroutine.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at   time.Time
	f    func()
	done bool
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// AfterFunc is time.AfterFunc on this clock.
func (c *clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	for _, t := range c.timers {
		if !t.done && !t.at.After(c.now) {
			t.done = true
			due = append(due, t)
		}
	}
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool { return t.done })
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// on makes e read c as its monotonic clock.
func (e *Elector) on(c *clock) *Elector {
	e.now, e.afterFunc = c.Now, c.AfterFunc
	return e
}

// fence is e's current fence, and whether it leads.
func fence(e *Elector) (quota.Fence, bool) {
	t, ok := e.Term()
	if !ok {
		return quota.Fence{}, false
	}
	return t.Fence(), true
}

func ledgerLimiter(t *testing.T, c *clock) *quota.Limiter {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l, err := quota.New(quota.DefaultConfig(), quota.NewSQLite(db.Writer(), quota.WithClock(c.Now)))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func leaders(es ...*Elector) (n int, who []string) {
	for _, e := range es {
		if e.Leading() {
			n++
			who = append(who, e.holder)
		}
	}
	return n, who
}

// TestOneLeaderThenTakeover: of three replicas exactly one leads; when it
// stops renewing (killed), a standby takes over once the lease runs out,
// with a larger token; the old leader, waking up, knows by its own clock
// that it no longer leads, and its fence is refused by the budget.
func TestOneLeaderThenTakeover(t *testing.T) {
	t.Parallel()
	c := newClock()
	l := ledgerLimiter(t, c)
	const ttl = 15 * time.Second
	var changes []string
	var mu sync.Mutex
	mk := func(name string) *Elector {
		e := New(l.Leases(), name, ttl, OnChange(func(leading bool) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, name+map[bool]string{true: "+", false: "-"}[leading])
		}))
		return e.on(c)
	}
	a, b, r := mk("a"), mk("b"), mk("c")
	ctx := context.Background()
	for _, e := range []*Elector{a, b, r} {
		e.tick(ctx)
	}
	if n, who := leaders(a, b, r); n != 1 || who[0] != "a" {
		t.Fatalf("leaders = %v, want exactly a", who)
	}
	fa, _ := fence(a)

	// Renewals keep a leading past its first TTL.
	for range 4 {
		c.Advance(ttl / 3)
		a.tick(ctx)
		b.tick(ctx)
	}
	if n, who := leaders(a, b, r); n != 1 || who[0] != "a" {
		t.Fatalf("after renewals leaders = %v, want a", who)
	}

	// a is killed (no more ticks). Until its lease runs out nobody takes
	// over; right after, the next standby tick does.
	c.Advance(ttl - time.Second)
	b.tick(ctx)
	if b.Leading() {
		t.Fatal("b took over before a's lease ran out")
	}
	c.Advance(time.Second)
	b.tick(ctx)
	fb, ok := fence(b)
	if !ok || fb.Token <= fa.Token {
		t.Fatalf("b = %+v, %v; want leading with a token above a's %d", fb, ok, fa.Token)
	}
	if a.Leading() {
		t.Error("a still thinks it leads after its lease ran out")
	}
	if _, err := l.Reserve(ctx, "videos.list", quota.WithFence(fa)); err == nil || !errorsIsFenced(err) {
		t.Errorf("a's reservation = %v, want ErrFenced", err)
	}
	if _, err := l.Reserve(ctx, "videos.list", quota.WithFence(fb)); err != nil {
		t.Errorf("b's reservation = %v", err)
	}
	// a's next tick finds the lease taken over.
	a.tick(ctx)
	mu.Lock()
	got := append([]string(nil), changes...)
	mu.Unlock()
	want := []string{"a+", "b+", "a-"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("changes = %v, want %v", got, want)
	}
}

// TestStepDownAndResign: a replica whose fence was refused stops leading at
// once; a clean shutdown releases the lease so a standby leads without
// waiting for the TTL.
func TestStepDownAndResign(t *testing.T) {
	t.Parallel()
	c := newClock()
	l := ledgerLimiter(t, c)
	a, b := New(l.Leases(), "a", time.Minute).on(c), New(l.Leases(), "b", time.Minute).on(c)
	ctx := context.Background()
	a.tick(ctx)
	b.tick(ctx)
	ta, _ := a.Term()
	ta.StepDown("test")
	if a.Leading() {
		t.Fatal("a leads after StepDown")
	}
	a.tick(ctx) // it still holds the lease in the backend: it takes it again
	if !a.Leading() {
		t.Fatal("a did not lead again after its own lease")
	}
	a.resign()
	b.tick(ctx)
	if !b.Leading() {
		t.Error("b does not lead after a resigned")
	}
}

func errorsIsFenced(err error) bool { return errors.Is(err, quota.ErrFenced) }

// stuckLeaser is a leaser cut off from its backend once stuck is closed:
// a renewal gets no answer until the test sends one, and an acquisition
// fails.
type stuckLeaser struct {
	leaser
	stuck   chan struct{}
	renewal chan struct{} // a hanging renewal arrived
	answer  chan bool     // what the hanging renewal returns
}

func (s *stuckLeaser) Renew(ctx context.Context, f quota.Fence, ttl time.Duration) (bool, error) {
	select {
	case <-s.stuck:
		s.renewal <- struct{}{}
		return <-s.answer, nil
	default:
		return s.leaser.Renew(ctx, f, ttl)
	}
}

func (s *stuckLeaser) Acquire(ctx context.Context, holder string, ttl time.Duration) (quota.Lease, error) {
	select {
	case <-s.stuck:
		return quota.Lease{}, errors.New("unreachable")
	default:
		return s.leaser.Acquire(ctx, holder, ttl)
	}
}

// changes records an elector's OnChange calls.
type changes struct {
	mu  sync.Mutex
	got []bool
}

func (c *changes) add(leading bool) { c.mu.Lock(); c.got = append(c.got, leading); c.mu.Unlock() }
func (c *changes) list() []bool     { c.mu.Lock(); defer c.mu.Unlock(); return slices.Clone(c.got) }

// TestTermEndsWhenLeaseRunsOutUnanswered: a leader's renewal gets no
// answer (a partition); its term ends when the lease runs out by its own
// clock, not when the renewal finally fails, and an answer arriving after
// that does not revive it.
func TestTermEndsWhenLeaseRunsOutUnanswered(t *testing.T) {
	t.Parallel()
	c := newClock()
	const ttl = 15 * time.Second
	sl := &stuckLeaser{leaser: ledgerLimiter(t, c).Leases(), stuck: make(chan struct{}),
		renewal: make(chan struct{}), answer: make(chan bool)}
	var ch changes
	a := New(sl, "a", ttl, OnChange(ch.add)).on(c)
	ctx := context.Background()
	a.tick(ctx)
	term, ok := a.Term()
	if !ok {
		t.Fatal("a does not lead")
	}
	c.Advance(ttl / 3)
	a.tick(ctx) // renewed: the lease now runs to 20s

	close(sl.stuck)
	ticked := make(chan struct{})
	go func() { defer close(ticked); a.tick(ctx) }()
	<-sl.renewal // the renewal is on its way and hangs

	c.Advance(ttl - time.Millisecond)
	if err := term.Err(); err != nil || !term.Leading() || !a.Leading() {
		t.Fatalf("1ms before the lease runs out: term err %v, leading %v; want the term to last", err, a.Leading())
	}
	select {
	case <-term.Done():
		t.Fatal("the term ended before its lease ran out")
	default:
	}
	c.Advance(time.Millisecond)
	select {
	case <-term.Done():
	default:
		t.Fatal("the lease ran out by the clock and the term did not end")
	}
	if !errors.Is(term.Err(), ErrExpired) || term.Leading() || a.Leading() {
		t.Fatalf("term err %v, leading %v; want ErrExpired and not leading", term.Err(), a.Leading())
	}

	// The backend answers at last, "renewed" (the lease's end by the
	// backend's clock came later): too late, the term stays ended, and the
	// tick that waited for the answer says so, once.
	sl.answer <- true
	<-ticked
	if !errors.Is(term.Err(), ErrExpired) || term.Leading() || a.Leading() {
		t.Errorf("after the late answer: term err %v, leading %v", term.Err(), a.Leading())
	}
	if got := ch.list(); !slices.Equal(got, []bool{true, false}) {
		t.Errorf("OnChange calls %v, want [true false]", got)
	}
}

// TestStepDownEndsOnlyItsTerm: StepDown ends the term at once; the term the
// elector begins next is a new one, and a late StepDown of the old term (a
// run of it ending fenced) does not end it.
func TestStepDownEndsOnlyItsTerm(t *testing.T) {
	t.Parallel()
	c := newClock()
	a := New(ledgerLimiter(t, c).Leases(), "a", time.Minute).on(c)
	ctx := context.Background()
	a.tick(ctx)
	first, ok := a.Term()
	if !ok {
		t.Fatal("a does not lead")
	}
	first.StepDown("refused")
	select {
	case <-first.Done():
	default:
		t.Fatal("StepDown did not end the term")
	}
	if !errors.Is(first.Err(), ErrSteppedDown) || a.Leading() {
		t.Fatalf("term err %v, leading %v; want ErrSteppedDown, not leading", first.Err(), a.Leading())
	}
	a.tick(ctx) // the backend still says the lease is a's: a new term
	second, ok := a.Term()
	if !ok || second == first {
		t.Fatalf("after the next tick: leading %v, same term %v; want a new term", ok, second == first)
	}
	first.StepDown("late")
	if second.Err() != nil || !a.Leading() {
		t.Errorf("the old term's StepDown ended the new one: %v", second.Err())
	}
}

// TestTermEndsOnTakeover: the backend's clock ran ahead of the leader's,
// another replica took the lease over, and the leader still thinks it
// leads by its own clock: its next renewal is answered "not yours", and the
// term ends with ErrTakenOver.
func TestTermEndsOnTakeover(t *testing.T) {
	t.Parallel()
	backend, own := newClock(), newClock()
	l := ledgerLimiter(t, backend)
	const ttl = 15 * time.Second
	a, b := New(l.Leases(), "a", ttl).on(own), New(l.Leases(), "b", ttl).on(backend)
	ctx := context.Background()
	a.tick(ctx)
	term, ok := a.Term()
	if !ok {
		t.Fatal("a does not lead")
	}
	backend.Advance(ttl)
	b.tick(ctx)
	if !b.Leading() {
		t.Fatal("b did not take over the expired lease")
	}
	if term.Err() != nil || !a.Leading() {
		t.Fatalf("by its own clock a still leads: term err %v", term.Err())
	}
	a.tick(ctx)
	select {
	case <-term.Done():
	default:
		t.Fatal("the term did not end when the renewal was refused")
	}
	if !errors.Is(term.Err(), ErrTakenOver) || a.Leading() {
		t.Errorf("term err %v, leading %v; want ErrTakenOver, not leading", term.Err(), a.Leading())
	}
}
