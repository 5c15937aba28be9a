// Package redistest connects tests to a real Redis server.
//
// Tests that need Redis call Client. Without a reachable server the test is
// skipped with a clear message, except under CI (the CI environment variable
// set), where it fails: CI must never pass by skipping.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is used when REDIS_URL is unset.
const DefaultURL = "redis://127.0.0.1:6379/0"

// URL returns the Redis URL tests should use.
func URL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Client returns a client for the test Redis, closed when the test ends.
func Client(tb testing.TB) *redis.Client {
	tb.Helper()
	opt, err := redis.ParseURL(URL())
	if err != nil {
		tb.Fatalf("redistest: bad REDIS_URL %q: %v", URL(), err)
	}
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		Unavailable(tb, err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Unavailable skips the test, or fails it under CI.
func Unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("redis at %s is required under CI but unreachable: %v", URL(), err)
	}
	tb.Skipf("skipping: no Redis at %s (%v); start one or set REDIS_URL", URL(), err)
}

// Prefix returns a credential name unique to this test run, so tests can share
// one Redis in parallel without seeing each other's keys.
func Prefix(tb testing.TB) string {
	tb.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	return "t-" + hex.EncodeToString(b[:])
}
