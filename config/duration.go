package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written as in Go ("90s", "7m30s", "24h") or in
// days ("7d"), in the file and on the command line.
type Duration time.Duration

// D returns the standard library value.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return FormatDuration(time.Duration(d)) }

// UnmarshalYAML accepts a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 90s, 30m, 24h or 7d", n.Line)
	}
	// A negative value is left to Validate, which names the field.
	v, err := parseDuration(n.Value, true)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration back in the same form.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// durationShape is what time.ParseDuration reads, whatever the size.
var durationShape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))*$`)
})

// MaxDays is the longest duration ParseDuration accepts, in days: the
// largest whole number of days a time.Duration holds (about 292 years).
const MaxDays = int64(math.MaxInt64 / int64(24*time.Hour))

// ParseDuration parses Go durations plus a whole-day suffix: "7d", "1d12h".
// A negative duration, and one too long for time.Duration (which would wrap
// around to a negative or small value), are errors.
func ParseDuration(s string) (time.Duration, error) { return parseDuration(s, false) }

// ParseSince reads a point in the past as a search's since filter takes it:
// a duration ago ("24h", "7d"; not a negative one, nor one too long to
// hold) or a date or RFC 3339 time.
func ParseSince(s string, now time.Time) (time.Time, error) {
	d, derr := ParseDuration(s)
	if derr == nil {
		return now.Add(-d), nil
	}
	if strings.HasPrefix(strings.TrimSpace(s), "-") || strings.Contains(derr.Error(), "too long") {
		// A duration, but not one a "since" can mean.
		return time.Time{}, derr
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want a duration such as 24h or 7d, or a date such as 2026-11-01", s)
}

func parseDuration(s string, negative bool) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration; want e.g. 90s, 30m, 24h or 7d")
	}
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		if !negative {
			return 0, fmt.Errorf("%q is negative; want e.g. 90s, 30m, 24h or 7d", s)
		}
		d, err := parseDuration(rest, false)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", s, err)
		}
		return -d, nil
	}
	tooLong := fmt.Errorf("%q is too long: at most %dd", s, MaxDays)
	orig := s
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil && errors.Is(err, strconv.ErrRange) || err == nil && n > MaxDays {
			return 0, tooLong
		}
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a duration; want e.g. 90s, 30m, 24h or 7d", orig)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		if durationShape().MatchString(s) {
			return 0, tooLong // well formed: time.ParseDuration refused its size
		}
		return 0, fmt.Errorf("%q is not a duration; want e.g. 90s, 30m, 24h or 7d", orig)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is not a duration; want e.g. 90s, 30m, 24h or 7d", orig)
	}
	if days > math.MaxInt64-v {
		return 0, tooLong
	}
	return days + v, nil
}

// FormatDuration prints whole days as "Nd" and trims zero units ("1h0m0s" -> "1h").
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	if days := d / (24 * time.Hour); days > 0 && d%(24*time.Hour) == 0 {
		fmt.Fprintf(&b, "%dd", days)
		return b.String()
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	b.WriteString(s)
	return b.String()
}

// ParseWhen reads a point in time as a person types it: RFC 3339,
// 2006-01-02T15:04 (UTC), a date (its start, or with endOfDay its last
// microsecond, UTC), or a duration before now (24h, 7d). ok is false when s
// is none of these; callers say which flag or parameter it was.
func ParseWhen(s string, now time.Time, endOfDay bool) (t time.Time, ok bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Microsecond)
		}
		return t, true
	}
	if d, err := ParseDuration(s); err == nil {
		return now.Add(-d), true
	}
	return time.Time{}, false
}
