package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ratelimit"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var limit30 = ratelimit.Limit{Requests: 30, Window: 10 * time.Second}

// boundary is a window boundary of the 10 s limit: a multiple of 10 s since
// the Unix epoch, as both backends count windows.
var boundary = time.UnixMilli(1_790_000_000_000)

type allower interface {
	Allow(ctx context.Context, client string) (ratelimit.Decision, error)
}

// backends returns the in-memory and the Redis limiter, both on c's clock.
func backends(t *testing.T, l ratelimit.Limit, c *clock) map[string]allower {
	t.Helper()
	rdb := redistest.Client(t)
	return map[string]allower{
		"memory": ratelimit.NewMemory(l, ratelimit.WithClock(c.now)),
		"redis":  ratelimit.NewRedis(rdb, l, ratelimit.WithPrefix("ytrend:test:"+redistest.Prefix(t)), ratelimit.WithRedisClock(c.now)),
	}
}

func TestBurstAtBoundary(t *testing.T) {
	// 60 requests: 30 in the last 100 ms before a boundary, 30 in the first
	// 100 ms after. An exact log admits 30; so does the counter, because
	// the previous bucket still weighs 99% of its 30 right after the
	// boundary.
	c := &clock{}
	for name, l := range backends(t, limit30, c) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			admitted := 0
			var refusals []ratelimit.Decision
			for i := range 60 {
				c.t = boundary.Add(-100*time.Millisecond + time.Duration(i)*200*time.Millisecond/60)
				d, err := l.Allow(ctx, "198.51.100.7")
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					admitted++
				} else {
					refusals = append(refusals, d)
				}
			}
			if admitted != 30 {
				t.Fatalf("admitted %d of 60, want 30", admitted)
			}
			// The first refusal is request 31, at the boundary itself: the
			// previous bucket's 30 weigh (win-e)/win and must drop to 29:
			// e >= 10000 - 29*10000/30 = 334 ms.
			first := refusals[0]
			if first.RetryAfter != 334*time.Millisecond {
				t.Fatalf("first refusal (at the boundary): RetryAfter %s, want 334ms", first.RetryAfter)
			}
			for i, d := range refusals {
				if d.RetryAfter <= 0 || d.Remaining != 0 || d.RetryAfterSeconds() < 1 {
					t.Fatalf("refusal %d: %+v: want a positive RetryAfter and nothing remaining", i, d)
				}
			}
			// The last refusal, at boundary+~97ms: the previous bucket holds
			// 30, this one 0: wait until e = 334 ms.
			last := refusals[len(refusals)-1]
			at := c.t.Sub(boundary).Milliseconds()
			if want := time.Duration(334-at) * time.Millisecond; last.RetryAfter != want {
				t.Fatalf("last refusal at +%dms: RetryAfter %s, want %s", at, last.RetryAfter, want)
			}
			// And at that moment exactly one more is admitted.
			c.t = boundary.Add(334 * time.Millisecond)
			d, err := l.Allow(ctx, "198.51.100.7")
			if err != nil || !d.Allowed {
				t.Fatalf("at +334ms: %+v, %v; want admitted", d, err)
			}
			d, _ = l.Allow(ctx, "198.51.100.7")
			if d.Allowed {
				t.Fatalf("at +334ms, again: admitted; want refused")
			}
		})
	}
}

func TestClientsAreSeparate(t *testing.T) {
	c := &clock{t: boundary}
	for name, l := range backends(t, ratelimit.Limit{Requests: 2, Window: time.Second}, c) {
		t.Run(name, func(t *testing.T) {
			got := ""
			for _, client := range []string{"a", "a", "a", "b", "b", "b"} {
				d, err := l.Allow(context.Background(), client)
				if err != nil {
					t.Fatal(err)
				}
				got += fmt.Sprintf("%s%v%d ", client, d.Allowed, d.Remaining)
			}
			if want := "atrue1 atrue0 afalse0 btrue1 btrue0 bfalse0 "; got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

// TestScriptMatchesGo runs random request sequences through window.lua and
// the Go decide: every decision must be identical.
func TestScriptMatchesGo(t *testing.T) {
	rdb := redistest.Client(t)
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		l := ratelimit.Limit{Requests: 1 + rng.IntN(40), Window: time.Duration(100+rng.IntN(20000)) * time.Millisecond}
		c := &clock{t: boundary.Add(time.Duration(rng.IntN(100000)) * time.Millisecond)}
		mem := ratelimit.NewMemory(l, ratelimit.WithClock(c.now))
		red := ratelimit.NewRedis(rdb, l, ratelimit.WithPrefix("ytrend:test:"+redistest.Prefix(t)), ratelimit.WithRedisClock(c.now))
		for i := range 400 {
			c.t = c.t.Add(time.Duration(rng.ExpFloat64() * float64(l.Window) / float64(l.Requests)))
			client := fmt.Sprint(rng.IntN(3))
			a, err := mem.Allow(context.Background(), client)
			if err != nil {
				t.Fatal(err)
			}
			b, err := red.Allow(context.Background(), client)
			if err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Fatalf("seed %d, request %d (limit %+v): Go %+v, Lua %+v", seed, i, l, a, b)
			}
		}
	}
}

// TestRedisBoundaryRealClock is the promise as a client sees it, on Redis'
// own clock: 60 requests from one client against 30 per 10 s, fired across
// a window boundary, let at most 33 through, and every 429 carries a
// Retry-After.
func TestRedisBoundaryRealClock(t *testing.T) {
	rdb := redistest.Client(t)
	l := ratelimit.NewRedis(rdb, limit30, ratelimit.WithPrefix("ytrend:test:"+redistest.Prefix(t)))
	ctx := context.Background()
	// Wait until 300 ms before a boundary of Redis' clock.
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	w := limit30.Window
	next := now.Truncate(w).Add(w)
	if wait := next.Add(-300 * time.Millisecond).Sub(now); wait > 0 {
		time.Sleep(wait)
	} else {
		time.Sleep(wait + w)
	}
	admitted := 0
	for i := range 60 {
		d, err := l.Allow(ctx, "203.0.113.9")
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		} else if d.RetryAfter <= 0 || d.RetryAfterSeconds() < 1 {
			t.Fatalf("request %d refused without a Retry-After: %+v", i, d)
		}
		time.Sleep(10 * time.Millisecond) // 60 requests over ~600 ms, across the boundary
	}
	t.Logf("admitted %d of 60", admitted)
	if admitted > 33 || admitted < 30 {
		t.Fatalf("admitted %d of 60, want 30-33", admitted)
	}
	ttl, err := rdb.PTTL(ctx, l.Key("203.0.113.9")).Result()
	if err != nil || ttl <= 0 || ttl > 2*w {
		t.Fatalf("key TTL %s (%v): want at most two windows", ttl, err)
	}
}

func TestMemoryEvictsIdleAndStaysBounded(t *testing.T) {
	c := &clock{t: boundary}
	m := ratelimit.NewMemory(ratelimit.Limit{Requests: 5, Window: time.Second}, ratelimit.WithClock(c.now), ratelimit.WithMaxClients(100))
	for i := range 1000 {
		if _, err := m.Allow(context.Background(), fmt.Sprint("c", i)); err != nil {
			t.Fatal(err)
		}
		if m.Len() > 100 {
			t.Fatalf("after %d clients: %d tracked, bound 100", i+1, m.Len())
		}
	}
	// Two windows later every one of them is idle: the next request sweeps.
	c.t = c.t.Add(2 * time.Second)
	m.Allow(context.Background(), "new")
	if m.Len() != 1 {
		t.Fatalf("after two idle windows: %d tracked, want 1", m.Len())
	}
}

func TestLimitValidate(t *testing.T) {
	for _, tc := range []struct {
		l    ratelimit.Limit
		want string
	}{
		{ratelimit.Limit{Requests: 0, Window: time.Second}, "ratelimit: requests 0: must be at least 1"},
		{ratelimit.Limit{Requests: 1, Window: 0}, "ratelimit: window 0s: must be at least 1ms"},
		{ratelimit.Limit{Requests: 1, Window: time.Second}, ""},
	} {
		err := tc.l.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.l, got, tc.want)
		}
	}
}
