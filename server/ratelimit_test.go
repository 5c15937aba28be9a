package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/internal/reply"
	"github.com/ytrend/ytrend/ratelimit"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// TestRateLimit429: 60 requests from one client against 30 per 10 s: 30
// pass, 30 get a 429 with Retry-After, every response says the policy, and
// the metrics count them. In memory and in Redis.
func TestRateLimit429(t *testing.T) {
	l := ratelimit.Limit{Requests: 30, Window: 10 * time.Second}
	for _, backend := range []string{"memory", "redis"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t, func(c *server.Config, d *server.Deps) {
				c.RateLimit = l
				if backend == "memory" {
					d.Limiter = ratelimit.NewMemory(l)
				} else {
					d.Limiter = ratelimit.NewRedis(redistest.Client(t), l, ratelimit.WithPrefix("ytrend:test:"+redistest.Prefix(t)))
				}
			})
			ok, limited := 0, 0
			for i := range 60 {
				r := e.get(t, "/api/v1/regions")
				if p := r.header.Get("RateLimit-Policy"); p != `"default";q=30;w=10` {
					t.Fatalf("request %d: RateLimit-Policy %q", i, p)
				}
				rl := r.header.Get("RateLimit")
				switch r.code {
				case http.StatusOK:
					ok++
					if want := `"default";r=` + strconv.Itoa(30-ok) + `;t=`; !strings.HasPrefix(rl, want) {
						t.Fatalf("request %d: RateLimit %q, want prefix %q", i, rl, want)
					}
				case http.StatusTooManyRequests:
					limited++
					// At most a window and a third of a second: 30 admitted
					// in this window weigh 29 at 334 ms into the next.
					ra, err := strconv.Atoi(r.header.Get("Retry-After"))
					if err != nil || ra < 1 || ra > 11 {
						t.Fatalf("request %d: Retry-After %q", i, r.header.Get("Retry-After"))
					}
					if !r.close {
						t.Fatalf("request %d: 429 without Connection: close: the client keeps no connection it may not use", i)
					}
					if !strings.HasPrefix(rl, `"default";r=0;t=`) {
						t.Fatalf("request %d: RateLimit %q", i, rl)
					}
					if er := decode[reply.ErrorBody](t, r); er.Error.Code != "rate_limited" {
						t.Fatalf("429 body %s", r.body)
					}
				default:
					t.Fatalf("request %d: %d", i, r.code)
				}
			}
			// All 60 land well inside one 10 s window (or straddle one
			// boundary, where the previous bucket still weighs ~100%).
			if ok != 30 || limited != 30 {
				t.Fatalf("%d passed, %d limited; want 30 and 30", ok, limited)
			}
			if n := counter(t, e.reg, "ytrend_http_limited_total", nil); n != 30 {
				t.Fatalf("ytrend_http_limited_total %v, want 30", n)
			}
			if n := counter(t, e.reg, "ytrend_http_requests_total", map[string]string{"route": "/api/v1/regions", "code": "429"}); n != 30 {
				t.Fatalf("requests_total{code=429} %v, want 30", n)
			}
			if n := counter(t, e.reg, "ytrend_http_request_duration_seconds", map[string]string{"route": "/api/v1/regions"}); n != 60 {
				t.Fatalf("latency samples %v, want 60", n)
			}
			// Static files count against the client like any request (an
			// exemption let one client keep thousands of connections busy).
			if r := e.get(t, "/static/style.css"); r.code != 429 {
				t.Fatalf("static while limited: %d, want 429", r.code)
			}
			// Pages get a 429 as text.
			if r := e.get(t, "/"); r.code != 429 || r.header.Get("Retry-After") == "" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
				t.Fatalf("page while limited: %d %v", r.code, r.header)
			}
		})
	}
}

// TestForwardedForOnlyFromTrustedProxies: behind a trusted proxy each
// forwarded client has its own allowance; from anyone else the header is
// ignored and every request counts against the peer.
func TestForwardedForOnlyFromTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []string
		want    [2]int // 200s for client A, then for client B, 3 each against 3 per minute
	}{
		{"trusted", []string{"127.0.0.0/8"}, [2]int{3, 3}},
		{"untrusted", []string{"10.0.0.0/8"}, [2]int{3, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withLimit(3, time.Minute), func(c *server.Config, _ *server.Deps) {
				for _, p := range tc.trusted {
					c.TrustedProxies = append(c.TrustedProxies, mustPrefix(t, p))
				}
			})
			var got [2]int
			for i, client := range []string{"203.0.113.1", "203.0.113.2"} {
				for range 3 {
					if r := e.get(t, "/api/v1/regions", "X-Forwarded-For: "+client); r.code == 200 {
						got[i]++
					}
				}
			}
			if got != tc.want {
				t.Fatalf("200s per client %v, want %v", got, tc.want)
			}
		})
	}
}
