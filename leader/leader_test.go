package leader

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
)

// clock is one fake clock for the ledger (the lease's expiry) and for every
// elector (their monotonic readings), so the test decides when time passes.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func ledgerLimiter(t *testing.T, c *clock) *quota.Limiter {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l, err := quota.New(quota.DefaultConfig(), quota.NewLedger(db.Writer(), quota.WithClock(c.Now)))
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
	c := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	l := ledgerLimiter(t, c)
	const ttl = 15 * time.Second
	var changes []string
	var mu sync.Mutex
	mk := func(name string) *Elector {
		e := New(l, name, ttl, OnChange(func(leading bool) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, name+map[bool]string{true: "+", false: "-"}[leading])
		}))
		e.now = c.Now
		return e
	}
	a, b, r := mk("a"), mk("b"), mk("c")
	ctx := context.Background()
	for _, e := range []*Elector{a, b, r} {
		e.tick(ctx)
	}
	if n, who := leaders(a, b, r); n != 1 || who[0] != "a" {
		t.Fatalf("leaders = %v, want exactly a", who)
	}
	fa, _ := a.Fence()

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
	fb, ok := b.Fence()
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
	c := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	l := ledgerLimiter(t, c)
	a, b := New(l, "a", time.Minute), New(l, "b", time.Minute)
	a.now, b.now = c.Now, c.Now
	ctx := context.Background()
	a.tick(ctx)
	b.tick(ctx)
	a.StepDown("test")
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
