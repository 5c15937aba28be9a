// Package redistest connects tests to a real Redis server.
//
// Tests that need Redis call Client. It uses the Redis at REDIS_URL (default
// redis://127.0.0.1:6379/0) when that answers; otherwise it starts a private
// redis-server, once per test binary, shared by the binary's tests and
// killed with it. Only when there is no redis-server to start is the test
// skipped with a clear message, except under CI (the CI environment
// variable set), where it fails: CI must never pass by skipping.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is used when REDIS_URL is unset.
const DefaultURL = "redis://127.0.0.1:6379/0"

// envURL is the Redis the environment names.
func envURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// shared is the Redis this test binary's tests use, chosen on first use.
var shared struct {
	once sync.Once
	url  string
	err  error // why there is none
}

// sharedURL chooses, once, the Redis at REDIS_URL if it answers, else a
// private redis-server started for this test binary.
func sharedURL() (string, error) {
	shared.once.Do(func() {
		u := envURL()
		opt, err := redis.ParseURL(u)
		if err != nil {
			shared.err = fmt.Errorf("bad REDIS_URL %q: %w", u, err)
			return
		}
		c := redis.NewClient(opt)
		err = ping(c)
		c.Close()
		if err == nil {
			shared.url = u
			return
		}
		bin, lerr := exec.LookPath("redis-server")
		if lerr != nil {
			shared.err = fmt.Errorf("no Redis at %s (%v), and no redis-server installed to start one", u, err)
			return
		}
		shared.url, shared.err = startPrivate(bin)
		if shared.err != nil {
			shared.err = fmt.Errorf("no Redis at %s (%v), and a private one did not start: %w", u, err, shared.err)
		}
	})
	return shared.url, shared.err
}

func ping(c *redis.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// startPrivate starts the binary's own redis-server, with no persistence,
// on a free loopback port (another if that one is taken), and returns its
// URL. It lives as long as the test binary: the kernel kills it when the
// binary exits. Its directory is removed once it answers: a server that
// saves nothing never writes there again.
func startPrivate(bin string) (string, error) {
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	out, err := os.Create(filepath.Join(dir, "redis.out"))
	if err != nil {
		return "", err
	}
	defer out.Close()
	var errs []error
	for range startAttempts {
		port, err := freePort(65535)
		if err != nil {
			return "", err
		}
		cmd := exec.Command(bin, serverArgs(port, dir)...)
		cmd.Stdout, cmd.Stderr = out, out
		done, err := spawn(cmd)
		if err != nil {
			return "", err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if err := waitReady(addr, "", cmd.Process.Pid, done); err != nil {
			cmd.Process.Kill()
			<-done
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			errs = append(errs, fmt.Errorf("redis-server on %s: %w\n%s", addr, err, log))
			os.Remove(filepath.Join(dir, "redis.log"))
			continue
		}
		return "redis://" + addr + "/0", nil
	}
	return "", fmt.Errorf("%d attempts: %w", startAttempts, errors.Join(errs...))
}

// URL returns the Redis URL tests should use: REDIS_URL's (default
// DefaultURL) if it answers, else the binary's private server's.
func URL() string {
	if u, err := sharedURL(); err == nil {
		return u
	}
	return envURL()
}

// Client returns a client for the test Redis, closed when the test ends.
func Client(tb testing.TB) *redis.Client {
	tb.Helper()
	u, err := sharedURL()
	if err != nil {
		Unavailable(tb, err)
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		tb.Fatalf("redistest: bad Redis URL %q: %v", u, err)
	}
	c := redis.NewClient(opt)
	if err := ping(c); err != nil {
		c.Close()
		Unavailable(tb, fmt.Errorf("the Redis at %s stopped answering: %w", u, err))
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Unavailable skips the test, or fails it under CI.
func Unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("redistest: Redis is required under CI: %v", err)
	}
	tb.Skipf("skipping: %v; start one or set REDIS_URL", err)
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
