package ratelimit

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed window.lua
var windowLua string

// windowScript is built when first run (NewScript hashes the script): most
// processes never limit a client.
var windowScript = sync.OnceValue(func() *redis.Script { return redis.NewScript(windowLua) })

// scripter is what Redis needs of a client: *redis.Client, ClusterClient
// and the failover clients all have it.
type scripter interface {
	redis.Scripter
}

// Redis is the limiter shared by every serve process using one Redis.
type Redis struct {
	rdb    scripter
	limit  Limit
	prefix string
	now    func() time.Time // nil: Redis' clock
}

// RedisOption configures NewRedis.
type RedisOption func(*Redis)

// WithPrefix changes the key prefix (default "ytrend:ratelimit"); tests use
// one per test.
func WithPrefix(p string) RedisOption { return func(r *Redis) { r.prefix = p } }

// WithRedisClock makes the script use now instead of Redis' TIME (tests that
// must place requests exactly at a window boundary).
func WithRedisClock(now func() time.Time) RedisOption { return func(r *Redis) { r.now = now } }

// NewRedis returns a limiter on rdb for l (which must Validate).
func NewRedis(rdb scripter, l Limit, opts ...RedisOption) *Redis {
	r := &Redis{rdb: rdb, limit: l, prefix: "ytrend:ratelimit"}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Limit is the limit every client gets.
func (r *Redis) Limit() Limit { return r.limit }

// Key is the hash holding client's buckets. The client sits in the hash tag,
// so a Cluster spreads clients over slots and each decision touches one.
func (r *Redis) Key(client string) string { return r.prefix + ":{" + client + "}" }

// Allow decides one request of client in one atomic script.
func (r *Redis) Allow(ctx context.Context, client string) (Decision, error) {
	now := ""
	if r.now != nil {
		now = strconv.FormatInt(r.now().UnixMilli(), 10)
	}
	v, err := windowScript().Run(ctx, r.rdb, []string{r.Key(client)},
		r.limit.Requests, r.limit.Window.Milliseconds(), now).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("%w: %w", ErrBackend, err)
	}
	if len(v) != 4 {
		return Decision{}, fmt.Errorf("%w: window.lua replied %v", ErrBackend, v)
	}
	d := Decision{Allowed: v[0] == 1, Limit: r.limit, Remaining: int(v[1]),
		Reset: time.Duration(v[2]) * time.Millisecond, RetryAfter: time.Duration(v[3]) * time.Millisecond}
	return d, nil
}
