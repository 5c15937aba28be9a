package ratelimit_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/ratelimit"
	"github.com/ytrend/ytrend/testkit/logbuf"
)

// flaky is a shared limiter whose backend can be taken away.
type flaky struct {
	down  bool
	calls int
	l     ratelimit.Limit
}

func (f *flaky) Limit() ratelimit.Limit { return f.l }
func (f *flaky) Allow(context.Context, string) (ratelimit.Decision, error) {
	f.calls++
	if f.down {
		return ratelimit.Decision{}, fmt.Errorf("%w: dial tcp: connection refused", ratelimit.ErrBackend)
	}
	return ratelimit.Decision{Allowed: true, Limit: f.l, Remaining: 99}, nil
}

// While Redis is down the breaker keeps requests away from it (one probe
// per cooldown), the process's own limiter enforces the limit, and each
// change of state is one log line. Before, every request waited for
// Redis' timeout and logged a warning.
func TestFallbackBreaker(t *testing.T) {
	l := ratelimit.Limit{Requests: 3, Window: time.Minute}
	shared := &flaky{l: l}
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	var logs logbuf.Buffer
	f := ratelimit.NewFallback(shared, ratelimit.NewMemory(l, ratelimit.WithClock(c.now)), 5*time.Second, slog.New(slog.NewTextHandler(&logs, nil)))
	f.SetClock(c.now)
	ctx := context.Background()
	allow := func() bool {
		t.Helper()
		d, err := f.Allow(ctx, "198.51.100.1")
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	lines := func() int { return strings.Count(logs.String(), "\n") }

	if !allow() || shared.calls != 1 || f.Local() {
		t.Fatalf("Redis up: calls %d, local %v", shared.calls, f.Local())
	}
	shared.down = true
	got := []bool{allow(), allow(), allow(), allow()} // local: 3 per minute
	if want := []bool{true, true, true, false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Redis down, the local limit decides: %v, want %v", got, want)
	}
	if shared.calls != 2 || !f.Local() || lines() != 1 || !strings.Contains(logs.String(), "Redis failed") {
		t.Errorf("after the failure: %d calls to Redis, local %v, log:\n%s", shared.calls, f.Local(), logs.String())
	}
	c.t = c.t.Add(5 * time.Second) // the cooldown: one probe, still down
	allow()
	allow()
	if shared.calls != 3 || !f.Local() || lines() != 1 {
		t.Errorf("probe while down: %d calls, local %v, %d log lines", shared.calls, f.Local(), lines())
	}
	shared.down = false
	allow()
	if shared.calls != 3 {
		t.Errorf("Redis asked again within the cooldown: %d calls", shared.calls)
	}
	c.t = c.t.Add(5 * time.Second)
	allow()
	allow()
	if shared.calls != 5 || f.Local() || lines() != 2 || !strings.Contains(logs.String(), "answers again") {
		t.Errorf("back up: %d calls, local %v, log:\n%s", shared.calls, f.Local(), logs.String())
	}
}

// A limiter whose Redis is not there at all answers from memory, with no
// error: the site stays up and limited.
func TestFallbackWithoutRedis(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: t.TempDir() + "/no-redis.sock", MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	l := ratelimit.Limit{Requests: 2, Window: time.Minute}
	f := ratelimit.NewFallback(ratelimit.NewRedis(rdb, l), ratelimit.NewMemory(l), 0, nil)
	var got []bool
	for range 3 {
		d, err := f.Allow(context.Background(), "198.51.100.1")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Allowed)
	}
	if fmt.Sprint(got) != "[true true false]" || !f.Local() {
		t.Errorf("without Redis: %v, local %v", got, f.Local())
	}
}
