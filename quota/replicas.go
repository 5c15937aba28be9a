package quota

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOption changes a Redis backend.
type RedisOption func(*Redis)

// WithWaitReplicas makes every write (a grant, a release, a mark, a replay,
// a lease) return only once n replicas have acknowledged it, waiting at most
// timeout (Redis' WAIT, on the connection that ran the script). Fewer acks
// are an answer, not an outage: the grant is refused (ErrBackend) and never
// granted by policy; the units already recorded on the master stay spent,
// the safe direction. With n replicas acknowledging, a failover to one of them
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
func (r *Redis) runWrite(ctx context.Context, fn string, keys []string, args []any) (any, error) {
	if r.waitReplicas <= 0 {
		return r.run(ctx, fn, keys, args)
	}
	var node *redis.Client
	cc, cluster := r.rdb.(*redis.ClusterClient)
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
	v, err := r.runWait(ctx, node, fn, keys, args)
	var moved redis.Error
	if !errors.As(err, &moved) || !redis.HasErrorPrefix(err, "MOVED") {
		return v, err
	}
	if !cluster {
		return nil, redisError(err)
	}
	// The slot moved since the cluster client loaded its slot map, and the
	// pinned connection bypasses the client's own redirects: the script
	// was refused before it ran. Run it on the owner the reply names, and
	// have the client reload its map for the next call.
	cc.ReloadState(ctx)
	f := strings.Fields(moved.Error()) // MOVED <slot> <host:port>
	if owner := clusterMaster(ctx, cc, f[len(f)-1]); owner != nil {
		return r.runWait(ctx, owner, fn, keys, args)
	}
	return nil, fmt.Errorf("redis: %w", err)
}

// clusterMaster is the cluster client's connection to the master at addr,
// or nil when the client does not know one there.
func clusterMaster(ctx context.Context, cc *redis.ClusterClient, addr string) *redis.Client {
	var mu sync.Mutex
	var found *redis.Client
	cc.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		if c.Options().Addr == addr {
			mu.Lock()
			found = c
			mu.Unlock()
		}
		return nil
	})
	return found
}

// runWait runs the script and WAIT on one connection of node. A MOVED reply
// comes back as it is; ASK (the slot is migrating) refuses like any other
// answer.
func (r *Redis) runWait(ctx context.Context, node *redis.Client, fn string, keys []string, args []any) (any, error) {
	conn := node.Conn()
	defer conn.Close()
	v, err := fcall(ctx, conn, fn, keys, args)
	switch {
	case redis.HasErrorPrefix(err, "MOVED"):
		return nil, err
	case err != nil:
		return nil, redisError(err)
	}
	n, err := conn.Wait(ctx, r.waitReplicas, r.waitTimeout).Result()
	if err != nil {
		return nil, redisError(err)
	}
	if n < int64(r.waitReplicas) {
		return nil, waitError{v: v, err: fmt.Errorf("redis: WAIT: %d of %d replicas acknowledged the write within %s",
			n, r.waitReplicas, r.waitTimeout)}
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
