package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
)

// Each fault class reaches the Go client as the real failure would, and
// every faulted request is charged.
func TestFaultsAsTheClientSeesThem(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	svc := client(t, hs, testKey)
	page := func() error {
		_, err := svc.Videos.List([]string{"snippet", "statistics"}).Chart("mostPopular").RegionCode("US").MaxResults(50).Do()
		return err
	}
	notGoogle := func(t *testing.T, err error) {
		t.Helper()
		var gerr *googleapi.Error
		if err == nil || errors.As(err, &gerr) {
			t.Fatalf("error %v, want a failure that is not an API error", err)
		}
	}
	for _, tc := range []struct {
		faults Faults
		check  func(t *testing.T, err error)
	}{
		{Faults{Error500: 1}, func(t *testing.T, err error) { googleErr(t, err, 500, "backendError") }},
		{Faults{Error503: 1}, func(t *testing.T, err error) { googleErr(t, err, 503, "backendError") }},
		{Faults{RateLimit403: 1}, func(t *testing.T, err error) {
			gerr := googleErr(t, err, 403, "rateLimitExceeded")
			if len(gerr.Details) != 0 {
				t.Errorf("403 throttling has details %v", gerr.Details)
			}
		}},
		{Faults{RateLimit429: 1}, func(t *testing.T, err error) {
			gerr := googleErr(t, err, 429, "rateLimitExceeded")
			if l := quotaLimit(gerr); l == "" || strings.Contains(strings.ToLower(l), "perday") {
				t.Errorf("429 throttling names quota_limit %q; want a per-minute limit", l)
			}
		}},
		{Faults{Malformed: 1}, func(t *testing.T, err error) {
			notGoogle(t, err)
			var syn *json.SyntaxError
			if !errors.As(err, &syn) {
				t.Errorf("first malformed answer: %T %v, want a *json.SyntaxError", err, err)
			}
			// The second is the real body cut short in a complete HTTP
			// message: the client reads all of it, then fails to decode.
			err = page()
			notGoogle(t, err)
			if !errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("second malformed answer: %T %v, want a *json.SyntaxError", err, err)
			}
		}},
		{Faults{Drop: 1}, func(t *testing.T, err error) {
			notGoogle(t, err)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("dropped connection: %T %v, want io.ErrUnexpectedEOF", err, err)
			}
		}},
	} {
		t.Run(tc.faults.String(), func(t *testing.T) {
			before := s.Usage(testKey)
			s.SetFaults(tc.faults)
			tc.check(t, page())
			s.SetFaults(Faults{})
			after := s.Usage(testKey)
			n := after.Requests - before.Requests
			if after.Charged-before.Charged != n || after.Faults-before.Faults != n {
				t.Errorf("%d faulted requests: %d charged, %d counted as faults", n, after.Charged-before.Charged, after.Faults-before.Faults)
			}
			if err := page(); err != nil {
				t.Errorf("after clearing faults: %v", err)
			}
		})
	}
}

// Latency delays every answer; a client that gives up meanwhile has still
// been charged.
func TestLatency(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{Faults: Faults{Latency: 40 * time.Millisecond}})
	start := time.Now()
	code, _, _ := get(t, hs, "/youtube/v3/i18nRegions", url.Values{"part": {"id"}, "key": {testKey}})
	if took := time.Since(start); code != 200 || took < 40*time.Millisecond {
		t.Errorf("HTTP %d after %v; want 200 after at least 40ms", code, took)
	}
	s.SetFaults(Faults{Latency: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := client(t, hs, testKey).I18nRegions.List([]string{"id"}).Context(ctx).Do()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the client's deadline", err)
	}
	if u := s.Usage(testKey); u.Charged != 2 {
		t.Errorf("charged %d, want 2: the abandoned request counts", u.Charged)
	}
}

// The fault sequence is a function of the seed and the request order.
func TestFaultsAreDeterministic(t *testing.T) {
	mixed := Faults{Error500: 0.2, Error503: 0.2, RateLimit403: 0.1, RateLimit429: 0.1}
	codes := func(seed uint64) []int {
		_, hs, _ := newTestServer(t, Config{Seed: seed, Faults: mixed})
		var out []int
		for range 30 {
			code, _, _ := get(t, hs, "/youtube/v3/i18nRegions", url.Values{"part": {"id"}, "key": {testKey}})
			out = append(out, code)
		}
		return out
	}
	a, b, c := codes(7), codes(7), codes(8)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 twice:\n%v\n%v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 gave the same sequence %v", a)
	}
	for _, code := range []int{200, 500, 503, 403, 429} {
		if !slices.Contains(a, code) {
			t.Errorf("30 requests never answered %d: %v", code, a)
		}
	}
}

// Faults can be read and changed over HTTP while the server runs.
func TestFaultsEndpoint(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	post := func(body string) (int, string) {
		resp, err := hs.Client().Post(hs.URL+"/sim/faults", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("5xx=1,latency=1ms"); code != 200 || !strings.Contains(body, `"500": 0.5`) {
		t.Fatalf("POST spec: HTTP %d %s", code, body)
	}
	if f := s.Faults(); f != (Faults{Error500: 0.5, Error503: 0.5, Latency: time.Millisecond}) {
		t.Errorf("faults %+v", f)
	}
	code, _, _ := get(t, hs, "/youtube/v3/i18nRegions", url.Values{"part": {"id"}, "key": {testKey}})
	if code != 500 && code != 503 {
		t.Errorf("with 5xx=1: HTTP %d", code)
	}
	if code, body := post(`{"drop": 0.25, "ratelimit429": "10%"}`); code != 200 || !strings.Contains(body, `"drop": 0.25`) {
		t.Fatalf("POST JSON: HTTP %d %s", code, body)
	}
	if f := s.Faults(); f != (Faults{Drop: 0.25, RateLimit429: 0.1}) {
		t.Errorf("faults %+v", f)
	}
	if code, body := post("5xx=2"); code != 400 || !strings.Contains(body, "outside 0..1") {
		t.Errorf("bad spec: HTTP %d %s", code, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, hs.URL+"/sim/faults", nil)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if f := s.Faults(); resp.StatusCode != 200 || f != (Faults{}) {
		t.Errorf("DELETE: HTTP %d, faults %+v", resp.StatusCode, f)
	}
	code, body, _ := get(t, hs, "/sim/faults", nil)
	var f Faults
	if err := json.Unmarshal(body, &f); code != 200 || err != nil || f != (Faults{}) {
		t.Errorf("GET: HTTP %d %s %v", code, body, err)
	}
}

func TestParseFaults(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Faults
	}{
		{"", Faults{}},
		{"none", Faults{}},
		{"5xx=0.1,ratelimit=0.05,latency=200ms,malformed=0.02,drop=0.01",
			Faults{Error500: 0.05, Error503: 0.05, RateLimit403: 0.025, RateLimit429: 0.025, Latency: 200 * time.Millisecond, Malformed: 0.02, Drop: 0.01}},
		{" 503 = 10% , ratelimit429=1% ", Faults{Error503: 0.1, RateLimit429: 0.01}},
		{"500=1", Faults{Error500: 1}},
		{"latency=1.5s", Faults{Latency: 1500 * time.Millisecond}},
	} {
		got, err := ParseFaults(tc.spec)
		if err != nil || got != tc.want {
			t.Errorf("ParseFaults(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
			continue
		}
		if back, err := ParseFaults(got.String()); err != nil || back != got {
			t.Errorf("%q: String() %q does not round-trip: %+v, %v", tc.spec, got.String(), back, err)
		}
		b, err := json.Marshal(got)
		var fromJSON Faults
		if err != nil || json.Unmarshal(b, &fromJSON) != nil || fromJSON != got {
			t.Errorf("%q: JSON %s does not round-trip: %+v", tc.spec, b, fromJSON)
		}
	}
	for _, tc := range []struct{ spec, msg string }{
		{"5xx", `faults: "5xx": want name=value`},
		{"boom=0.1", "faults: boom: unknown fault; want 5xx, 500, 503, ratelimit, ratelimit403, ratelimit429, malformed, drop or latency"},
		{"5xx=abc", `faults: 5xx: "abc" is not a fraction such as 0.05 or 5%`},
		{"drop=1.5", `faults: drop: "1.5" is outside 0..1 (0%..100%)`},
		{"drop=-0.1", `faults: drop: "-0.1" is outside 0..1 (0%..100%)`},
		{"latency=fast", `faults: latency: "fast" is not a duration such as 200ms`},
		{"latency=-1s", "faults: latency -1s is outside 0..10m0s"},
		{"drop=0.1,drop=0.2", "faults: drop given twice"},
		{"5xx=0.6,ratelimit=0.6", "faults: the fractions add up to 1.2; at most 1 (each request fails in at most one way)"},
	} {
		_, err := ParseFaults(tc.spec)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("ParseFaults(%q) error\n got  %v\n want %s", tc.spec, err, tc.msg)
		}
	}
	if _, err := New(Config{Keys: []string{"k"}, Faults: Faults{Drop: 2}}); err == nil {
		t.Error("New accepted invalid faults")
	}
}
