package redisclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/internal/secret"
)

// lastDial remembers how a client's latest dial failed, so that a call
// that runs out of time says why. go-redis retries a failed dial inside the
// call (5 attempts, 100 ms apart), and when the call's deadline comes
// first it returns "context deadline exceeded" alone: a host name that
// does not resolve, a refused port or a failed TLS handshake all read as a
// slow Redis. The dial's error is added to such a call's error, which
// still matches context.DeadlineExceeded (the budget's failure policy
// tells an outage by it) and now also the dial's (*net.DNSError, ...).
//
// A dial's error names the address, never the URL's password (AUTH comes
// after the dial); it is redacted all the same, as every error of this
// package is.
type lastDial struct {
	password secret.Value

	mu  sync.Mutex
	err error     // the latest dial's failure; nil once a dial succeeds
	at  time.Time // when it failed
}

func (d *lastDial) record(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.err, d.at = err, time.Now()
}

// explain adds the dial's failure to err, a call's error, when the call
// timed out and a dial failed while it ran (one that failed before it is
// not its cause) and err does not say so already (go-redis returns the
// dial's error itself once a pool has seen a dial fail often enough). It
// returns nil when it has nothing to add.
func (d *lastDial) explain(err error, since time.Time) error {
	if err == nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, redis.ErrPoolTimeout)) {
		return nil
	}
	d.mu.Lock()
	dial, at := d.err, d.at
	d.mu.Unlock()
	if dial == nil || at.Before(since) || strings.Contains(err.Error(), dial.Error()) {
		return nil
	}
	return fmt.Errorf("%w (the last dial failed: %w)", err, d.password.RedactErr(dial))
}

// dialer is base, go-redis' own dialer, recording each dial's outcome. It
// is the client's Dialer rather than a DialHook so that it sees every dial,
// a Sentinel client's dials to its sentinels included: they lie behind the
// master's dial, whose error, after a deadline, is the deadline's alone.
func (d *lastDial) dialer(base dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := base(ctx, network, addr)
		d.record(err)
		return cn, err
	}
}

// dialFunc is a go-redis client's Dialer.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// DialHook leaves dials to dialer.
func (*lastDial) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook explains a command's timeout. The command's own error is
// replaced too: callers read it (cmd.Err, Result) rather than the hook's.
func (d *lastDial) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		since := time.Now()
		err := next(ctx, cmd)
		if e := d.explain(err, since); e != nil {
			cmd.SetErr(e)
			return e
		}
		return err
	}
}

// ProcessPipelineHook explains a pipeline's timeout, and its commands'.
func (d *lastDial) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		since := time.Now()
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if e := d.explain(cmd.Err(), since); e != nil {
				cmd.SetErr(e)
			}
		}
		if e := d.explain(err, since); e != nil {
			return e
		}
		return err
	}
}
