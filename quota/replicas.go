package quota

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOption changes a Redis backend.
type RedisOption func(*Redis)

// WithWaitReplicas makes every write (a grant, a release, a mark, a replay,
// a lease) return only once n replicas have acknowledged it, waiting at most
// timeout (Redis' WAIT, on the connection that ran the script). Fewer acks
// are a backend error of the "unavailable" kind, so the call's failure
// policy decides; the units already recorded on the master stay spent, the
// safe direction. With n replicas acknowledging, a failover to one of them
// loses no grant. Keep timeout below Config.Timeout.
func WithWaitReplicas(n int, timeout time.Duration) RedisOption {
	return func(r *Redis) { r.waitReplicas, r.waitTimeout = n, timeout }
}

// errNoWait is returned when WAIT is asked of a client that cannot run it on
// the connection of the write.
var errNoWait = errors.New("redis: wait_replicas needs a single-node, Sentinel or Cluster client")

// runWrite is run for the scripts that write. With WithWaitReplicas it runs
// the script and WAIT on one connection: the master's for the credential's
// slot on a Cluster.
func (r *Redis) runWrite(ctx context.Context, s *redis.Script, keys []string, args []any) (any, error) {
	if r.waitReplicas <= 0 {
		return r.run(ctx, s, keys, args)
	}
	var node *redis.Client
	switch c := r.rdb.(type) {
	case *redis.Client:
		node = c
	case *redis.ClusterClient:
		m, err := c.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, redisError(err)
		}
		node = m
	default:
		return nil, errNoWait
	}
	conn := node.Conn()
	defer conn.Close()
	v, err := s.Run(ctx, conn, keys, args...).Result()
	if err != nil {
		return nil, redisError(err)
	}
	n, err := conn.Wait(ctx, r.waitReplicas, r.waitTimeout).Result()
	if err != nil {
		return nil, redisError(err)
	}
	if n < int64(r.waitReplicas) {
		return nil, waitError{v: v, err: unavailableError{fmt.Errorf("redis: WAIT: %d of %d replicas acknowledged the write within %s",
			n, r.waitReplicas, r.waitTimeout)}}
	}
	return v, nil
}

// waitError is a write the master made but too few replicas acknowledged.
// It carries the script's reply: a refusal needs no replica to stand, so
// reserve still returns it.
type waitError struct {
	v   any
	err error
}

func (e waitError) Error() string { return e.err.Error() }
func (e waitError) Unwrap() error { return e.err }
