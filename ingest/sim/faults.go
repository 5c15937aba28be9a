package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Faults are the failures the server injects into API answers, to test a
// client's handling of the real API's bad days. Each fraction is the chance
// that an admitted request (valid key, within quota) gets that failure
// instead of its answer; the failures exclude one another, so the fractions
// add up to at most 1. A faulted request is charged, as Google charges it.
//
// Which requests fail is decided by one draw per admitted request from a
// generator seeded with Config.Seed: the same seed and the same request
// order give the same failures, and fractions of 0 and 1 are exact.
type Faults struct {
	Error500     float64 // 500 backendError "Backend Error"
	Error503     float64 // 503 backendError "The service is currently unavailable."
	RateLimit403 float64 // 403 rateLimitExceeded (domain usageLimits): short-term throttling
	RateLimit429 float64 // 429 RESOURCE_EXHAUSTED rateLimitExceeded whose quota_limit is per minute
	// Malformed answers 200 with a body that is not JSON, in a complete,
	// well-formed HTTP message: alternately (first, third, ...) an HTML
	// error page from an intermediary and (second, fourth, ...) the real
	// JSON cut in half. The Go client reads the whole body, then fails to
	// decode it: a *json.SyntaxError either way.
	Malformed float64
	// Drop sends the status line, the headers (with the full Content-Length)
	// and half the body, then closes the connection: the client's read of
	// the body fails with io.ErrUnexpectedEOF, a transport failure.
	Drop float64
	// Latency is added before every API answer, faulted or not.
	Latency time.Duration
}

// maxLatency bounds Faults.Latency: a longer delay is a hang, not latency.
const maxLatency = 10 * time.Minute

// faultKeys are the spec's keys for the fractions, in canonical order.
var faultKeys = []string{"500", "503", "ratelimit403", "ratelimit429", "malformed", "drop"}

func (f *Faults) fraction(key string) *float64 {
	switch key {
	case "500":
		return &f.Error500
	case "503":
		return &f.Error503
	case "ratelimit403":
		return &f.RateLimit403
	case "ratelimit429":
		return &f.RateLimit429
	case "malformed":
		return &f.Malformed
	case "drop":
		return &f.Drop
	}
	return nil
}

// ParseFaults reads a fault spec: comma-separated name=value pairs.
//
//	5xx=F            F of requests fail with 500 or 503, half each
//	500=F, 503=F     only that status
//	ratelimit=F      rateLimitExceeded, half 403 and half 429
//	ratelimit403=F, ratelimit429=F
//	malformed=F      200 with a non-JSON or truncated body
//	drop=F           connection closed mid-body
//	latency=D        added to every answer (a Go duration: 200ms, 1.5s)
//
// F is a fraction (0.05) or a percentage (5%). "" and "none" mean no faults.
// Example: "5xx=0.1,ratelimit=0.05,latency=200ms,malformed=0.02,drop=0.01".
func ParseFaults(spec string) (Faults, error) {
	var f Faults
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "none" {
		return f, nil
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, value, ok := strings.Cut(item, "=")
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		if !ok || key == "" {
			return Faults{}, fmt.Errorf("faults: %q: want name=value", item)
		}
		if seen[key] {
			return Faults{}, fmt.Errorf("faults: %s given twice", key)
		}
		seen[key] = true
		if err := f.set(key, value); err != nil {
			return Faults{}, fmt.Errorf("faults: %s: %w", key, err)
		}
	}
	if err := f.Validate(); err != nil {
		return Faults{}, err
	}
	return f, nil
}

func (f *Faults) set(key, value string) error {
	switch key {
	case "latency":
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 200ms", value)
		}
		f.Latency = d
		return nil
	case "5xx", "ratelimit":
		p, err := parseFraction(value)
		if err != nil {
			return err
		}
		if key == "5xx" {
			f.Error500, f.Error503 = p/2, p/2
		} else {
			f.RateLimit403, f.RateLimit429 = p/2, p/2
		}
		return nil
	}
	ptr := f.fraction(key)
	if ptr == nil {
		return fmt.Errorf("unknown fault; want 5xx, 500, 503, ratelimit, ratelimit403, ratelimit429, malformed, drop or latency")
	}
	p, err := parseFraction(value)
	if err != nil {
		return err
	}
	*ptr = p
	return nil
}

func parseFraction(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	p, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsNaN(p) {
		return 0, fmt.Errorf("%q is not a fraction such as 0.05 or 5%%", s)
	}
	if pct {
		p /= 100
	}
	if p < 0 || p > 1 {
		return 0, fmt.Errorf("%q is outside 0..1 (0%%..100%%)", s)
	}
	return p, nil
}

// Validate checks each fraction is within 0..1, that together they are at
// most 1, and that the latency is between 0 and 10 minutes.
func (f Faults) Validate() error {
	var sum float64
	for _, k := range faultKeys {
		p := *f.fraction(k)
		if math.IsNaN(p) || p < 0 || p > 1 {
			return fmt.Errorf("faults: %s=%v is outside 0..1", k, p)
		}
		sum += p
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("faults: the fractions add up to %v; at most 1 (each request fails in at most one way)", sum)
	}
	if f.Latency < 0 || f.Latency > maxLatency {
		return fmt.Errorf("faults: latency %v is outside 0..%v", f.Latency, maxLatency)
	}
	return nil
}

// String is the canonical spec: ParseFaults(f.String()) == f. "none" when
// nothing is injected.
func (f Faults) String() string {
	var parts []string
	for _, k := range faultKeys {
		if p := *f.fraction(k); p != 0 {
			parts = append(parts, k+"="+strconv.FormatFloat(p, 'g', -1, 64))
		}
	}
	if f.Latency != 0 {
		parts = append(parts, "latency="+f.Latency.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// MarshalJSON writes every fault under its spec name, latency as a duration
// string: {"500":0,"503":0.05,...,"latency":"200ms"}.
func (f Faults) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for _, k := range faultKeys {
		fmt.Fprintf(&b, "%q:%s,", k, strconv.FormatFloat(*f.fraction(k), 'g', -1, 64))
	}
	fmt.Fprintf(&b, "%q:%q}", "latency", f.Latency.String())
	return []byte(b.String()), nil
}

// UnmarshalJSON reads the object MarshalJSON writes; any subset of its keys,
// plus the spec's "5xx" and "ratelimit", may be given. Absent keys are zero.
func (f *Faults) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("faults: want a JSON object: %w", err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// The split keys go first so that an explicit 503 overrides half a 5xx.
	slices.SortFunc(keys, func(a, b string) int {
		ra, rb := a == "5xx" || a == "ratelimit", b == "5xx" || b == "ratelimit"
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return strings.Compare(a, b)
	})
	var out Faults
	for _, k := range keys {
		raw := m[k]
		var value string
		if err := json.Unmarshal(raw, &value); err != nil {
			var n json.Number
			if err := json.Unmarshal(raw, &n); err != nil {
				return fmt.Errorf("faults: %s: want a number or a string", k)
			}
			value = n.String()
		}
		if err := out.set(strings.ToLower(k), value); err != nil {
			return fmt.Errorf("faults: %s: %w", k, err)
		}
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*f = out
	return nil
}

// fault is the failure chosen for one request.
type fault int

const (
	faultNone fault = iota
	fault500
	fault503
	fault403
	fault429
	faultMalformed
	faultDrop
)

var faultNames = [...]string{"", "500", "503", "ratelimit403", "ratelimit429", "malformed", "drop"}

func (k fault) String() string { return faultNames[k] }

// pick maps a uniform draw u in [0, 1) to a failure: the fractions are laid
// end to end in canonical order.
func (f Faults) pick(u float64) fault {
	for i, k := range faultKeys {
		p := *f.fraction(k)
		if p > 0 && u < p {
			return fault(i + 1)
		}
		u -= p
	}
	return faultNone
}
