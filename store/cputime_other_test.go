//go:build !unix

package store_test

import "time"

// cpuTime is not measured here: rows/cpu-s then reads +Inf.
func cpuTime() time.Duration { return 0 }
