package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"sync"
	"time"
	_ "time/tzdata" // the quota day is Pacific time, on machines without a zoneinfo database too
)

// DefaultQuota is the units a key may spend per day, as Google grants a new
// project.
const DefaultQuota = 10_000

// searchCost is search.list's price in units from the shared pool (before
// Google's 2026 pricing moved it into a bucket of its own).
const searchCost = 100

// Usage is what the server counted for one API key. Lifetime counters run
// from the server's start; the "today" ones from the start of the current
// quota day.
type Usage struct {
	Fingerprint string `json:"fingerprint"` // Fingerprint(key); the key itself is never exposed

	Requests     int64 `json:"requests"`      // API requests made with the key, whatever their outcome
	Charged      int64 `json:"charged"`       // units charged to the shared pool
	ChargedToday int64 `json:"charged_today"` // of those, in the current quota day
	Remaining    int64 `json:"remaining"`     // units left today

	// SearchCalls count search.list calls charged to the search bucket; they
	// stay 0 unless Config.SearchCallsPerDay is set, and such calls cost the
	// shared pool nothing.
	SearchCalls      int64 `json:"search_calls"`
	SearchCallsToday int64 `json:"search_calls_today"`

	QuotaExceeded  int64 `json:"quota_exceeded"`  // requests refused 403 quotaExceeded (not charged)
	SearchExceeded int64 `json:"search_exceeded"` // search.list refused 429 by its bucket (not charged)
	Faults         int64 `json:"faults"`          // requests answered with an injected fault (charged)

	// Calls counts requests per API method ("videos.list", "search.list",
	// "i18nRegions.list", "videoCategories.list"), refused ones included.
	Calls map[string]int64 `json:"calls"`

	DayStart time.Time `json:"day_start"` // start of the current quota day
	ResetAt  time.Time `json:"reset_at"`  // when the "today" counters go back to 0
}

// Fingerprint identifies an API key in logs and in /sim/usage without
// revealing it: the first 12 hex digits of its SHA-256.
func Fingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

// projectNumber is the Cloud project number the key "belongs" to, for the
// consumer named in 429 bodies.
func projectNumber(key string) string {
	sum := sha256.Sum256([]byte("project:" + key))
	return fmt.Sprintf("%012d", binary.BigEndian.Uint64(sum[:8])%1_000_000_000_000)
}

// dayClock says which quota day a moment belongs to: a calendar day in
// America/Los_Angeles, or, when length > 0, consecutive days of that length
// from origin.
type dayClock struct {
	length  time.Duration
	origin  time.Time
	pacific *time.Location
}

func newDayClock(length time.Duration, origin time.Time) (dayClock, error) {
	loc, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		return dayClock{}, fmt.Errorf("sim: load America/Los_Angeles: %w", err)
	}
	return dayClock{length: length, origin: origin, pacific: loc}, nil
}

// bounds returns the start and end of the quota day holding t.
func (c dayClock) bounds(t time.Time) (start, end time.Time) {
	if c.length > 0 {
		n := floorDiv(int64(t.Sub(c.origin)), int64(c.length))
		start = c.origin.Add(time.Duration(n) * c.length)
		return start, start.Add(c.length)
	}
	y, m, d := t.In(c.pacific).Date()
	// time.Date normalizes d+1 across month ends, and midnight is never
	// skipped by US daylight saving (it changes at 2:00), so this is the next
	// midnight Pacific whether the day has 23, 24 or 25 hours.
	return time.Date(y, m, d, 0, 0, 0, 0, c.pacific), time.Date(y, m, d+1, 0, 0, 0, 0, c.pacific)
}

type outcome int

const (
	admitted outcome = iota
	refusedQuota
	refusedSearch
)

// ledger is the server's quota accounting, per key.
type ledger struct {
	clock        dayClock
	quota        int64
	searchPerDay int64 // 0: search.list costs searchCost units from the pool

	mu              sync.Mutex
	accounts        map[string]*account
	unauthenticated int64
}

type account struct {
	u        Usage // lifetime counters and today's, as of dayStart
	dayStart time.Time
}

func newLedger(clock dayClock, quota, searchPerDay int64, keys []string) *ledger {
	l := &ledger{clock: clock, quota: quota, searchPerDay: searchPerDay, accounts: map[string]*account{}}
	for _, k := range keys {
		if _, ok := l.accounts[k]; !ok {
			l.accounts[k] = &account{u: Usage{Fingerprint: Fingerprint(k), Calls: map[string]int64{}}}
		}
	}
	return l
}

func (l *ledger) known(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.accounts[key]
	return ok
}

// rollover zeroes a's "today" counters when now is in a later quota day.
func (l *ledger) rollover(a *account, now time.Time) {
	start, end := l.clock.bounds(now)
	if !start.Equal(a.dayStart) {
		a.dayStart = start
		a.u.ChargedToday, a.u.SearchCallsToday = 0, 0
	}
	a.u.DayStart, a.u.ResetAt = start, end
}

// admit counts a request made with a known key and charges it, or refuses
// it when the day's units (or search calls) would run out. A refused request
// is counted but not charged: Google cannot take what is not left.
func (l *ledger) admit(key string, m *method, now time.Time) (outcome, Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.accounts[key]
	l.rollover(a, now)
	a.u.Requests++
	a.u.Calls[m.name]++
	out := admitted
	switch {
	case m.search && l.searchPerDay > 0:
		if a.u.SearchCallsToday+1 > l.searchPerDay {
			a.u.SearchExceeded++
			out = refusedSearch
			break
		}
		a.u.SearchCalls++
		a.u.SearchCallsToday++
	default:
		cost := l.cost(m)
		if a.u.ChargedToday+cost > l.quota {
			a.u.QuotaExceeded++
			out = refusedQuota
			break
		}
		a.u.Charged += cost
		a.u.ChargedToday += cost
	}
	return out, l.snapshot(a)
}

// unauthenticatedRequest counts a request whose key is missing or unknown:
// charged to nobody.
func (l *ledger) unauthenticatedRequest() {
	l.mu.Lock()
	l.unauthenticated++
	l.mu.Unlock()
}

func (l *ledger) noteFault(key string) {
	l.mu.Lock()
	l.accounts[key].u.Faults++
	l.mu.Unlock()
}

// cost is what m charges the shared pool.
func (l *ledger) cost(m *method) int64 {
	if m.search && l.searchPerDay > 0 {
		return 0 // its own bucket pays
	}
	return m.cost
}

func (l *ledger) usage(key string, now time.Time) Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.accounts[key]
	if !ok {
		start, end := l.clock.bounds(now)
		return Usage{Fingerprint: Fingerprint(key), Remaining: l.quota, Calls: map[string]int64{}, DayStart: start, ResetAt: end}
	}
	l.rollover(a, now)
	return l.snapshot(a)
}

func (l *ledger) snapshot(a *account) Usage {
	u := a.u
	u.Calls = maps.Clone(a.u.Calls)
	u.Remaining = l.quota - u.ChargedToday
	return u
}

// all returns every configured key's usage, keyed by fingerprint.
func (l *ledger) all(now time.Time) map[string]Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]Usage, len(l.accounts))
	for _, a := range l.accounts {
		l.rollover(a, now)
		out[a.u.Fingerprint] = l.snapshot(a)
	}
	return out
}

func (l *ledger) totals() (charged, requests, unauthenticated int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.accounts {
		charged += a.u.Charged
		requests += a.u.Requests
	}
	return charged, requests + l.unauthenticated, l.unauthenticated
}
