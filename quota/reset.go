package quota

import (
	"sync"
	"time"
	_ "time/tzdata" // NextReset must work in a scratch container without /usr/share/zoneinfo
)

// pacific is Google's quota clock: the daily quota resets at midnight
// America/Los_Angeles. It is loaded when first asked for: a process that
// never spends (a search) need not read the zone.
var pacific = sync.OnceValue(func() *time.Location { return mustLoad("America/Los_Angeles") })

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic("quota: " + err.Error()) // unreachable: time/tzdata is linked in
	}
	return loc
}

// NextReset returns the next midnight America/Los_Angeles strictly after t:
// when Google's daily quota starts afresh. It follows DST, so the day it
// returns may be 23 or 25 hours after the previous reset.
func NextReset(t time.Time) time.Time {
	la := pacific()
	y, m, d := t.In(la).Date()
	// Midnight always exists in Los Angeles (the switches happen at 02:00),
	// so time.Date never has to pick between two instants here.
	return time.Date(y, m, d+1, 0, 0, 0, 0, la)
}
