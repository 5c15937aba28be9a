package redistest_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/internal/redistest"
)

// TestReplicaAcks: StartReplica returns a replica WAIT counts at once; paused
// it acknowledges nothing, resumed it does again.
func TestReplicaAcks(t *testing.T) {
	t.Parallel()
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	c := master.Client()
	ctx := context.Background()
	acks := func() int64 {
		t.Helper()
		conn := c.Conn()
		defer conn.Close()
		var wait *redis.Cmd
		if _, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, "k")
			wait = p.Do(ctx, "WAIT", 1, 200)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return wait.Val().(int64)
	}
	if n := acks(); n != 1 {
		t.Fatalf("WAIT 1 right after StartReplica = %d, want 1", n)
	}
	replica.Pause()
	if n := acks(); n != 0 {
		t.Errorf("WAIT 1 with the replica paused = %d, want 0", n)
	}
	replica.Resume()
	if n := acks(); n != 1 {
		t.Errorf("WAIT 1 after Resume = %d, want 1", n)
	}
	if v, err := replica.Client().Get(ctx, "k").Result(); err != nil || v != "3" {
		t.Errorf("the replica holds k = %q, %v; want 3", v, err)
	}
}
