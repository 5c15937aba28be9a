package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrBackend wraps a failure of the limiter's store (Redis unreachable).
var ErrBackend = errors.New("ratelimit: backend")

// Limit is N requests per window, per client.
type Limit struct {
	Requests int
	Window   time.Duration
}

// Validate reports a limit that cannot be enforced.
func (l Limit) Validate() error {
	if l.Requests < 1 {
		return fmt.Errorf("ratelimit: requests %d: must be at least 1", l.Requests)
	}
	if l.Window < time.Millisecond {
		return fmt.Errorf("ratelimit: window %s: must be at least 1ms", l.Window)
	}
	return nil
}

// Decision is the answer to one request.
type Decision struct {
	Allowed bool
	Limit   Limit
	// Remaining is how many more requests the estimate admits now.
	Remaining int
	// Reset is how long until the estimate admits one more request when
	// none remain, otherwise until the current window ends.
	Reset time.Duration
	// RetryAfter is how long a refused client must wait; 0 when allowed.
	RetryAfter time.Duration
}

// state is one client's two buckets.
type state struct {
	bucket int64 // index of the current window: floor(now / window)
	cur    int64 // requests admitted in it
	prev   int64 // requests admitted in the window before
}

// decide applies one request at now (milliseconds) to s. window.lua is the
// same arithmetic on Redis; TestScriptMatchesGo holds them together.
func decide(s state, nowMS int64, l Limit) (state, Decision) {
	win := l.Window.Milliseconds()
	n := int64(l.Requests)
	idx := nowMS / win
	switch {
	case s.bucket == idx:
	case s.bucket == idx-1:
		s.prev, s.cur = s.cur, 0
	case s.bucket < idx-1:
		s.prev, s.cur = 0, 0
	default:
		// The clock went back (another process's, or a step): keep the
		// newer buckets and count this request in the current one.
		idx = s.bucket
	}
	s.bucket = idx
	elapsed := nowMS - idx*win
	elapsed = min(max(elapsed, 0), win)
	// prev × (win-elapsed)/win + cur, in integer arithmetic scaled by win so
	// that Go and Lua agree to the unit.
	est := s.prev*(win-elapsed) + s.cur*win
	d := Decision{Limit: l}
	if est+win <= n*win {
		s.cur++
		est += win
		d.Allowed = true
	}
	d.Remaining = int(max(0, (n*win-est)/win))
	if d.Allowed || d.Remaining > 0 {
		d.Reset = time.Duration(win-elapsed) * time.Millisecond
	} else {
		d.Reset = time.Duration(waitMS(s, elapsed, win, n)) * time.Millisecond
		d.RetryAfter = d.Reset
	}
	return s, d
}

// waitMS is how long until prev×(win-e)/win + cur + 1 <= n, given no more
// requests are admitted meanwhile.
func waitMS(s state, elapsed, win, n int64) int64 {
	if s.cur+1 <= n && s.prev > 0 {
		// Still in this window: need prev×(win-e) <= (n-cur-1)×win.
		e := win - (n-s.cur-1)*win/s.prev
		return max(1, e-elapsed)
	}
	// The next window: its previous bucket is cur.
	rest := win - elapsed
	if s.cur == 0 {
		return rest
	}
	e := win - (n-1)*win/s.cur
	return rest + max(0, e)
}

// seconds rounds a duration up to whole seconds, at least 1, for headers.
func seconds(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Seconds())))
}

// RetryAfterSeconds is d.RetryAfter in whole seconds, rounded up, for a
// Retry-After header.
func (d Decision) RetryAfterSeconds() int64 { return seconds(d.RetryAfter) }

// ResetSeconds is d.Reset in whole seconds, rounded up.
func (d Decision) ResetSeconds() int64 { return seconds(d.Reset) }
