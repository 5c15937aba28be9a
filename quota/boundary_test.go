package quota_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// fixedWindow is the limiter everybody writes first (INCR + EXPIRE on a
// bucket named after the current window): test-only code, here to show the
// boundary burst the sliding log exists to prevent.
func fixedWindow(ctx context.Context, rdb *redis.Client, prefix string, limit int64, window time.Duration) (bool, error) {
	bucket := fmt.Sprintf("%s:fixed:%d", prefix, time.Now().UnixMilli()/window.Milliseconds())
	n, err := rdb.Incr(ctx, bucket).Result()
	if err != nil {
		return false, err
	}
	if n == 1 {
		rdb.Expire(ctx, bucket, 2*window)
	}
	return n <= limit, nil
}

// TestBoundaryBurst reproduces the seed experiment on real Redis: a full
// burst just before a window boundary and another just after. The fixed
// window admits twice its limit; the sliding log admits exactly the limit.
func TestBoundaryBurst(t *testing.T) {
	t.Parallel()
	const (
		limit  = 50
		window = 2 * time.Second
	)
	rdb := redistest.Client(t)
	ctx := context.Background()

	for attempt := 1; ; attempt++ {
		cred := redistest.Prefix(t)
		l := newLimiter(t, oneLimit(cred, limit, window, map[string]int64{"call": 1}), quota.NewRedis(rdb))
		burst := func() (fixed, sliding int) {
			for range limit {
				ok, err := fixedWindow(ctx, rdb, "ytrend-test:{"+cred+"}", limit, window)
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					fixed++
				}
				if reserve(t, l, "call").Granted {
					sliding++
				}
			}
			return fixed, sliding
		}

		// Park half a second before the next fixed-window boundary.
		w := window.Milliseconds()
		boundary := time.UnixMilli((time.Now().UnixMilli()/w + 1) * w)
		if time.Until(boundary) < 700*time.Millisecond {
			boundary = boundary.Add(window)
		}
		time.Sleep(time.Until(boundary.Add(-500 * time.Millisecond)))
		start := time.Now()
		f1, s1 := burst()
		if time.Now().After(boundary) {
			if attempt < 3 {
				continue // the first burst itself straddled the boundary; the experiment did not happen
			}
			t.Fatal("could not finish a burst within 500ms three times")
		}
		time.Sleep(time.Until(boundary.Add(200 * time.Millisecond)))
		f2, s2 := burst()
		if time.Since(start) >= window {
			// The first burst's grants began leaving the sliding window
			// before the second burst ended (a loaded machine): the log
			// rightly admitted again, and the experiment did not happen.
			if attempt < 3 {
				continue
			}
			t.Fatalf("could not fit both bursts within the %s window three times", window)
		}

		t.Logf("fixed   accepted %d requests in ~0.7s (limit %d/%s)", f1+f2, limit, window)
		t.Logf("sliding accepted %d requests in ~0.7s (limit %d/%s)", s1+s2, limit, window)
		if f1+f2 != 2*limit {
			t.Errorf("fixed window admitted %d+%d, want %d: the boundary leak did not reproduce", f1, f2, 2*limit)
		}
		if s1 != limit || s2 != 0 {
			t.Errorf("sliding log admitted %d+%d, want exactly %d+0", s1, s2, limit)
		}
		return
	}
}
