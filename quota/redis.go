package quota

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scripts. Each is window.lua (the shared prune and clock functions)
// followed by its own file, whose header states its KEYS, ARGV and reply.
// redis.Script.Run sends EVALSHA and falls back to EVAL when the server's
// script cache was flushed (SCRIPT FLUSH, restart, failover).
var (
	//go:embed window.lua
	windowLua string
	//go:embed reserve.lua
	reserveLua string
	//go:embed release.lua
	releaseLua string
	//go:embed status.lua
	statusLua string
	//go:embed mark.lua
	markLua string
	//go:embed replay.lua
	replayLua string
	//go:embed time.lua
	timeLua string

	reserveScript = redis.NewScript(windowLua + reserveLua)
	releaseScript = redis.NewScript(windowLua + releaseLua)
	statusScript  = redis.NewScript(windowLua + statusLua)
	markScript    = redis.NewScript(windowLua + markLua)
	replayScript  = redis.NewScript(windowLua + replayLua)
	timeScript    = redis.NewScript(windowLua + timeLua)
)

// Redis keeps the log in Redis, shared by every process and host that spends
// from the same credential. Every operation is one Lua script on Redis' clock.
type Redis struct {
	rdb redis.Scripter
	// boundByClient: the client itself cuts a call off at its context's
	// deadline (ContextTimeoutEnabled), so run need not watch the context.
	boundByClient bool
}

// NewRedis returns a backend over rdb (a *redis.Client, *redis.ClusterClient
// or *redis.Ring). All keys of one credential share a hash tag, so a Cluster
// runs each script on one node.
//
// Config.Timeout bounds every call whatever the client's options. Give the
// client ContextTimeoutEnabled: true: it then ends a timed-out call itself and
// frees its connection at once, and Reserve avoids a goroutine per call.
func NewRedis(rdb redis.Scripter) *Redis {
	r := &Redis{rdb: rdb}
	switch c := rdb.(type) {
	case *redis.Client:
		r.boundByClient = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		r.boundByClient = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		r.boundByClient = c.Options().ContextTimeoutEnabled
	}
	return r
}

func (r *Redis) kind() string { return "redis" }

// key builds every Redis key this package uses:
// ytrend:{cred}:log:<limit>, ytrend:{cred}:total:<limit>,
// ytrend:{cred}:exhausted and ytrend:{cred}:exhausted:<call>.
// The braces are a Cluster hash tag: one credential, one slot.
func key(cred string, parts ...string) string {
	return "ytrend:{" + cred + "}:" + strings.Join(parts, ":")
}

const (
	keyLog       = "log"
	keyTotal     = "total"
	keyExhausted = "exhausted"
)

func (r *Redis) reserve(ctx context.Context, cred, call, id string, charges []charge) (decision, error) {
	keys := make([]string, 0, 2+2*len(charges))
	args := make([]any, 0, 1+4*len(charges))
	keys = append(keys, key(cred, keyExhausted))
	if call == "" {
		keys = append(keys, keys[0])
	} else {
		keys = append(keys, key(cred, keyExhausted, call))
	}
	args = append(args, id)
	for _, c := range charges {
		keys = append(keys, key(cred, keyLog, c.name), key(cred, keyTotal, c.name))
		args = append(args, c.units, micros(c.window), ttl(c.window), c.cost)
	}
	v, err := r.run(ctx, reserveScript, keys, args)
	if err != nil {
		return decision{}, err
	}
	n, err := ints(v, 5+len(charges))
	if err != nil {
		return decision{}, err
	}
	d := decision{
		granted:    n[0] == 1,
		refusedBy:  int(n[1]) - 1,
		retryAfter: time.Duration(n[2]) * time.Microsecond,
		at:         time.UnixMicro(n[3]),
		duplicate:  n[4] == 1,
		used:       n[5:],
	}
	if n[1] < 0 {
		d.refusedBy = upstreamRefusal
	}
	return d, nil
}

func (r *Redis) release(ctx context.Context, cred, id string, limits []charge) (bool, error) {
	keys := make([]string, 0, 2*len(limits))
	args := make([]any, 0, 1+2*len(limits))
	args = append(args, id)
	for _, c := range limits {
		keys = append(keys, key(cred, keyLog, c.name), key(cred, keyTotal, c.name))
		args = append(args, micros(c.window), ttl(c.window))
	}
	v, err := r.run(ctx, releaseScript, keys, args)
	if err != nil {
		return false, err
	}
	n, ok := v.(int64)
	if !ok {
		return false, fmt.Errorf("redis: release.lua: unexpected reply %T", v)
	}
	return n > 0, nil
}

func (r *Redis) mark(ctx context.Context, cred string, calls []string, until time.Time, reason string) error {
	keys := []string{key(cred, keyExhausted)}
	if len(calls) > 0 {
		keys = keys[:0]
		for _, c := range calls {
			keys = append(keys, key(cred, keyExhausted, c))
		}
	}
	v, err := r.run(ctx, markScript, keys, []any{until.UnixMicro(), reason})
	if err != nil {
		return err
	}
	n, err := ints(v, 2)
	if err != nil {
		return err
	}
	if n[0] < 0 {
		return markInPast(until, time.UnixMicro(n[1]))
	}
	return nil
}

func (r *Redis) status(ctx context.Context, cred string, calls []string, limits []charge) (snapshot, error) {
	keys := make([]string, 0, 1+len(calls)+2*len(limits))
	args := make([]any, 0, 1+2*len(limits))
	keys = append(keys, key(cred, keyExhausted))
	for _, c := range calls {
		keys = append(keys, key(cred, keyExhausted, c))
	}
	args = append(args, len(calls))
	for _, c := range limits {
		keys = append(keys, key(cred, keyLog, c.name), key(cred, keyTotal, c.name))
		args = append(args, micros(c.window), ttl(c.window))
	}
	v, err := r.run(ctx, statusScript, keys, args)
	if err != nil {
		return snapshot{}, err
	}
	marks := 1 + len(calls)
	vs, ok := v.([]any)
	if !ok || len(vs) != 1+2*marks+3*len(limits) {
		return snapshot{}, fmt.Errorf("redis: status.lua: unexpected reply %v", v)
	}
	reasons := make([]string, marks)
	for j := range marks {
		reasons[j], _ = vs[2+2*j].(string)
		vs[2+2*j] = int64(0)
	}
	n, err := ints(vs, len(vs))
	if err != nil {
		return snapshot{}, err
	}
	s := snapshot{at: time.UnixMicro(n[0])}
	for j := range marks {
		if until := n[1+2*j]; until > 0 {
			e := Exhaustion{Until: time.UnixMicro(until), Reason: reasons[j]}
			if j == 0 {
				s.mark = &e
			} else {
				e.Call = calls[j-1]
				s.callMarks = append(s.callMarks, e)
			}
		}
	}
	base := 1 + 2*marks
	for i := range limits {
		ls := limitSnapshot{used: n[base+3*i], count: n[base+1+3*i]}
		if o := n[base+2+3*i]; o > 0 {
			ls.oldest = time.UnixMicro(o)
		}
		s.limits = append(s.limits, ls)
	}
	return s, nil
}

func (r *Redis) replay(ctx context.Context, cred string, limits []charge, entries []journalEntry) (int, error) {
	keys := make([]string, 0, 2*len(limits))
	args := make([]any, 0, 1+2*len(limits)+len(entries)*(2+len(limits)))
	args = append(args, len(entries))
	for _, c := range limits {
		keys = append(keys, key(cred, keyLog, c.name), key(cred, keyTotal, c.name))
		args = append(args, micros(c.window), ttl(c.window))
	}
	for _, e := range entries {
		args = append(args, e.id, e.at.UnixMicro())
		for _, c := range e.costs {
			args = append(args, c)
		}
	}
	v, err := r.run(ctx, replayScript, keys, args)
	if err != nil {
		return 0, err
	}
	n, err := ints(v, 2)
	if err != nil {
		return 0, err
	}
	return int(n[0]), nil
}

func (r *Redis) now(ctx context.Context) (time.Time, error) {
	v, err := r.run(ctx, timeScript, nil, nil)
	if err != nil {
		return time.Time{}, err
	}
	us, ok := v.(int64)
	if !ok {
		return time.Time{}, fmt.Errorf("redis: time.lua: unexpected reply %T", v)
	}
	return time.UnixMicro(us), nil
}

// run runs s and returns when it answers or ctx ends, whichever is first.
// go-redis only honours a context's deadline for reads and writes when the
// client has ContextTimeoutEnabled; without it a stalled server holds a call
// for ReadTimeout times MaxRetries. Waiting on ctx here makes Config.Timeout
// hold for any client. A script abandoned this way may still run on the
// server: that is a lost reply, which the reservation ID makes harmless.
func (r *Redis) run(ctx context.Context, s *redis.Script, keys []string, args []any) (any, error) {
	if r.boundByClient {
		v, err := s.Run(ctx, r.rdb, keys, args...).Result()
		if err != nil {
			return nil, redisError(err)
		}
		return v, nil
	}
	type reply struct {
		v   any
		err error
	}
	done := make(chan reply, 1)
	go func() {
		v, err := s.Run(ctx, r.rdb, keys, args...).Result()
		done <- reply{v, err}
	}()
	select {
	case rep := <-done:
		if rep.err != nil {
			return nil, redisError(rep.err)
		}
		return rep.v, nil
	case <-ctx.Done():
		return nil, unavailableError{fmt.Errorf("redis: %w", context.Cause(ctx))}
	}
}

// redisError separates "Redis could not be asked" (the call's Policy
// decides) from "Redis answered with an error" (a bug or a misconfigured
// server: never granted by policy).
func redisError(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) && !errors.Is(err, context.DeadlineExceeded) {
		msg := strings.TrimPrefix(rerr.Error(), "ERR ")
		for _, transient := range []string{"LOADING", "BUSY", "MASTERDOWN", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "OOM"} {
			if strings.HasPrefix(msg, transient) {
				return unavailableError{fmt.Errorf("redis: %w", err)}
			}
		}
		return fmt.Errorf("redis: %w", err)
	}
	return unavailableError{fmt.Errorf("redis: %w", err)}
}

// ints converts a script's array reply of integers.
func ints(v any, want int) ([]int64, error) {
	vs, ok := v.([]any)
	if !ok || len(vs) != want {
		return nil, fmt.Errorf("redis: unexpected script reply %v (want %d integers)", v, want)
	}
	out := make([]int64, len(vs))
	for i, x := range vs {
		switch x := x.(type) {
		case int64:
			out[i] = x
		case string:
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("redis: unexpected script reply element %q", x)
			}
			out[i] = n
		default:
			return nil, fmt.Errorf("redis: unexpected script reply element %T", x)
		}
	}
	return out, nil
}
