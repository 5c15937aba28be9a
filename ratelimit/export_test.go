package ratelimit

import "time"

// SetClock replaces the breaker's clock (tests).
func (f *Fallback) SetClock(now func() time.Time) { f.now = now }
