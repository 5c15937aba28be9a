package quota

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Limit is one sliding window over a credential's spending.
type Limit struct {
	Name   string
	Units  int64         // capacity within Window
	Window time.Duration // sliding window length
	// Costs maps a call to the units it spends from this limit. Nil means
	// "use Config.Costs". A call absent from a non-nil table does not count
	// against this limit (Google's 2026 pricing puts search.list in a bucket
	// of its own; that is a limit whose table holds only search.list).
	Costs map[string]int64
}

// Policy says what Reserve does for a call when the backend cannot be asked.
type Policy string

const (
	// FailOpen grants the reservation, records it as pending, and adds it to the
	// backend once the backend answers again.
	FailOpen Policy = "open"
	// FailClosed returns ErrBackend.
	FailClosed Policy = "closed"
)

// ManualCall is how a WithCost reservation without a call name is reported,
// and the Policies key that applies to it.
const ManualCall = "manual"

// DefaultTimeout bounds every backend call when Config.Timeout is zero.
const DefaultTimeout = 500 * time.Millisecond

// Config describes one credential's budget.
type Config struct {
	// Credential names the budget (e.g. "main"). It is part of every key and
	// row; it is never the API key itself.
	Credential string
	// Costs is the top-level cost table: the calls Reserve accepts and the
	// units each spends from a limit whose own Costs is nil.
	Costs  map[string]int64
	Limits []Limit
	// Policies says, per call, what happens when the backend is unreachable
	// or times out. Calls absent here fail closed. The key "manual" applies
	// to WithCost reservations without a call name.
	Policies map[string]Policy
	// Timeout bounds each backend call; zero means DefaultTimeout.
	Timeout time.Duration
	// RebuildGrace is how long the ledger admits nothing after a process
	// finds that it lost its books, so that the long-lived processes restore
	// their grants first; zero means DefaultRebuildGrace.
	RebuildGrace time.Duration
}

// DefaultConfig is the budget the issue specifies for one YouTube Data API
// key: 9,500 of Google's 10,000 daily units in a 24h sliding window, and at
// most ten search.list calls per hour so a runaway pagination loop cannot
// drain the day.
func DefaultConfig() Config {
	return Config{
		Credential: "main",
		Costs: map[string]int64{
			"videos.list":          1,
			"search.list":          100,
			"channels.list":        1,
			"videoCategories.list": 1,
			"i18nRegions.list":     1,
		},
		Limits: []Limit{
			{Name: "daily", Units: 9500, Window: 24 * time.Hour},
			{Name: "search", Units: 1000, Window: time.Hour, Costs: map[string]int64{"search.list": 100}},
		},
		Policies: map[string]Policy{
			"videos.list": FailOpen,
			"search.list": FailClosed,
		},
		Timeout:      DefaultTimeout,
		RebuildGrace: DefaultRebuildGrace,
	}
}

// Validate reports every problem in c, each naming the field and the bad
// value. All returned errors match ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}

	switch {
	case c.Credential == "":
		bad("credential: must not be empty")
	case !validName(c.Credential):
		bad("credential %q: must not contain '{', '}', '|' or whitespace", c.Credential)
	}

	if len(c.Costs) == 0 {
		bad("costs: at least one call is required")
	}
	known := slices.Sorted(maps.Keys(c.Costs))
	for _, call := range known {
		switch n := c.Costs[call]; {
		case call == "" || call == ManualCall:
			bad("costs[%q]: reserved call name", call)
		case !validName(call):
			bad("costs[%q]: a call name must not contain '{', '}', '|' or whitespace", call)
		case n <= 0:
			bad("costs[%q]: cost must be > 0, got %d", call, n)
		}
	}
	unknown := func(field, call string) {
		bad("%s: unknown call %q (not in costs: %s)", field, call, strings.Join(known, ", "))
	}

	if len(c.Limits) == 0 {
		bad("limits: at least one limit is required")
	}
	seen := map[string]int{}
	counted := map[string]bool{}
	for i, l := range c.Limits {
		field := fmt.Sprintf("limits[%d]", i)
		switch {
		case l.Name == "":
			bad("%s.name: must not be empty", field)
		case !validName(l.Name):
			bad("%s.name %q: must not contain '{', '}', '|' or whitespace", field, l.Name)
		default:
			if j, dup := seen[l.Name]; dup {
				bad("%s.name %q: duplicate of limits[%d]", field, l.Name, j)
			}
			seen[l.Name] = i
		}
		if l.Units <= 0 {
			bad("%s %q: units must be > 0, got %d", field, l.Name, l.Units)
		}
		if l.Window <= 0 {
			bad("%s %q: window must be > 0, got %s", field, l.Name, l.Window)
		} else if l.Window%time.Microsecond != 0 {
			bad("%s %q: window must be a whole number of microseconds, got %s", field, l.Name, l.Window)
		}
		table := l.Costs
		if table == nil {
			table = c.Costs
		} else if len(table) == 0 {
			bad("%s.costs: empty table counts no call; omit it to use the top-level costs", field)
		}
		for _, call := range slices.Sorted(maps.Keys(table)) {
			n := table[call]
			if l.Costs != nil {
				if _, ok := c.Costs[call]; !ok {
					unknown(field+".costs", call)
					continue
				}
				if n <= 0 {
					bad("%s.costs[%q]: cost must be > 0, got %d", field, call, n)
					continue
				}
			}
			if n > 0 {
				counted[call] = true
			}
			if l.Units > 0 && n > l.Units {
				bad("%s %q: %s costs %d but the limit holds only %d units; it could never be granted",
					field, l.Name, call, n, l.Units)
			}
		}
	}
	if len(c.Limits) > 0 {
		for _, call := range known {
			if c.Costs[call] > 0 && !counted[call] {
				bad("costs[%q]: no limit counts this call; it would never be metered", call)
			}
		}
	}

	for _, call := range slices.Sorted(maps.Keys(c.Policies)) {
		p := c.Policies[call]
		if _, ok := c.Costs[call]; !ok && call != ManualCall {
			unknown("policies", call)
		}
		if p != FailOpen && p != FailClosed {
			bad("policies[%q]: must be %q or %q, got %q", call, FailOpen, FailClosed, p)
		}
	}

	if c.Timeout < 0 {
		bad("timeout: must be >= 0 (0 means %s), got %s", DefaultTimeout, c.Timeout)
	}
	if c.RebuildGrace < 0 {
		bad("rebuild_grace: must be >= 0 (0 means %s), got %s", DefaultRebuildGrace, c.RebuildGrace)
	}
	return errors.Join(errs...)
}

// validName reports whether s can sit inside a Redis key and a member:
// braces would break the hash tag, '|' separates a member's ID from its cost,
// and whitespace is never what an operator meant.
func validName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return r == '{' || r == '}' || r == '|' || unicode.IsSpace(r)
	})
}

// clone returns a deep copy, so a Limiter never shares maps with its caller.
func (c Config) clone() Config {
	c.Costs = maps.Clone(c.Costs)
	c.Policies = maps.Clone(c.Policies)
	c.Limits = slices.Clone(c.Limits)
	for i := range c.Limits {
		c.Limits[i].Costs = maps.Clone(c.Limits[i].Costs)
	}
	return c
}
