// Package wait is the tests' one way to wait: poll a condition until it
// holds, and fail with what it last said if it never does. On two loaded
// cores a sleep proves nothing; a condition does. The timeout only keeps a
// broken build from hanging the suite, so callers pick a generous one.
package wait

import (
	"testing"
	"time"
)

// poll is how often a condition is asked again.
const poll = 20 * time.Millisecond

// For polls cond until it holds, failing tb after timeout.
func For(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	Until(tb, what, timeout, func() (bool, string) { return cond(), "not yet" })
}

// Until polls cond until it holds, failing tb after timeout with the
// detail cond gave last.
func Until(tb testing.TB, what string, timeout time.Duration, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s: %s", what, detail)
		}
		time.Sleep(poll)
	}
}
