package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Serve configures `ytrend serve`.
type Serve struct {
	Listen         string         `yaml:"listen"`
	RateLimit      ServeRateLimit `yaml:"rate_limit"`
	TrustedProxies []string       `yaml:"trusted_proxies"` // addresses or CIDRs allowed to set X-Forwarded-For
	CORSOrigins    []string       `yaml:"cors_origins"`    // origins that may read /api/v1 from a browser; "*" for any
	MaxConnections int            `yaml:"max_connections"` // open at once; an idle one (or one slow to send its headers) gives way, else more wait
	// MaxConnectionsPerClient is one client's share of MaxConnections
	// (its address; an IPv6 client's /64; a trusted proxy is exempt).
	MaxConnectionsPerClient int `yaml:"max_connections_per_client"`
	// ClientInFlight is how many requests one client may have at work at
	// once (an answer from the cache takes none); more wait up to
	// ClientQueueWait for one of them to finish, then get 429.
	ClientInFlight  int      `yaml:"client_in_flight"`
	ClientQueueWait Duration `yaml:"client_queue_wait"`
	// AccessLog writes one line per request to stderr, in the process's
	// log format, batched (server.AccessLog); false writes none.
	AccessLog bool `yaml:"access_log"`
}

// ServeRateLimit is each client's allowance.
type ServeRateLimit struct {
	Requests int      `yaml:"requests"`
	Window   Duration `yaml:"window"`
}

// Serve defaults.
const (
	DefaultServeListen   = "127.0.0.1:8080"
	DefaultServeRequests = 120
	DefaultServeWindow   = time.Minute
	// DefaultServeMaxConnections bounds the file descriptors serve holds:
	// without a cap, about 13,000 idle keep-alive connections exhausted
	// them. Past it, new connections wait in the kernel's backlog.
	DefaultServeMaxConnections = 1000
	// DefaultServeMaxConnectionsPerClient leaves room for an office of
	// browsers behind one NAT (a browser opens up to 6 per host), or a load
	// test's 50 connections from one host, while no client can hold more
	// than a few percent of DefaultServeMaxConnections.
	DefaultServeMaxConnectionsPerClient = 64
	// DefaultServeClientInFlight lets one client keep two cores busy, and
	// no more, whatever it sends.
	DefaultServeClientInFlight = 2
	// DefaultServeClientQueueWait is how long a client's request past its
	// in-flight bound waits. Its waiting holds nothing another client
	// needs (each client's bound is its own), and the queue is at most its
	// connections, so the wait only has to be short enough that a client
	// learns to slow down: at 0.5 s, a load test's 50 connections from one
	// host got 429s whenever the machine was busy with other work.
	DefaultServeClientQueueWait = 2 * time.Second
)

func defaultServe() Serve {
	return Serve{Listen: DefaultServeListen, MaxConnections: DefaultServeMaxConnections,
		MaxConnectionsPerClient: DefaultServeMaxConnectionsPerClient,
		ClientInFlight:          DefaultServeClientInFlight,
		ClientQueueWait:         Duration(DefaultServeClientQueueWait),
		AccessLog:               true,
		RateLimit:               ServeRateLimit{Requests: DefaultServeRequests, Window: Duration(DefaultServeWindow)}}
}

// ProxyPrefixes is TrustedProxies parsed (after Validate).
func (s Serve) ProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s.TrustedProxies {
		if pr, err := parseProxy(p); err == nil {
			out = append(out, pr)
		}
	}
	return out
}

func parseProxy(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

// ValidateListen checks a host:port to listen on (also for --listen).
func ValidateListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port, e.g. 127.0.0.1:8080 or :8080", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port %q: want 0-65535", addr, port)
	}
	if host != "" && net.ParseIP(host) == nil && strings.ContainsAny(host, " /?#") {
		return fmt.Errorf("%q: host %q is neither an address nor a name", addr, host)
	}
	return nil
}

func (s Serve) validate(add func(field, format string, args ...any)) {
	if err := ValidateListen(s.Listen); err != nil {
		add("serve.listen", "%v", err)
	}
	if s.RateLimit.Requests < 1 || s.RateLimit.Requests > 1_000_000 {
		add("serve.rate_limit.requests", "%d: allowed 1-1000000 requests per window", s.RateLimit.Requests)
	}
	// A client's counter lives two windows (in Redis, beside the budget):
	// the bound keeps an address seen once from holding memory for days.
	if w := s.RateLimit.Window.D(); w < time.Second || w > time.Hour {
		add("serve.rate_limit.window", "%s: allowed 1s-1h", s.RateLimit.Window)
	}
	if s.MaxConnections < 1 || s.MaxConnections > 1_000_000 {
		add("serve.max_connections", "%d: allowed 1-1000000", s.MaxConnections)
	}
	if s.MaxConnectionsPerClient < 1 || s.MaxConnectionsPerClient > s.MaxConnections {
		add("serve.max_connections_per_client", "%d: allowed 1-max_connections (%d)", s.MaxConnectionsPerClient, s.MaxConnections)
	}
	if s.ClientInFlight < 1 || s.ClientInFlight > s.MaxConnectionsPerClient {
		add("serve.client_in_flight", "%d: allowed 1-max_connections_per_client (%d)", s.ClientInFlight, s.MaxConnectionsPerClient)
	}
	if w := s.ClientQueueWait.D(); w < 10*time.Millisecond || w > time.Minute {
		add("serve.client_queue_wait", "%s: allowed 10ms-1m", s.ClientQueueWait)
	}
	for i, p := range s.TrustedProxies {
		if _, err := parseProxy(p); err != nil {
			add(fmt.Sprintf("serve.trusted_proxies[%d]", i), "%q: want an IP address or a CIDR such as 10.0.0.0/8", p)
		}
	}
	for i, o := range s.CORSOrigins {
		if o == "*" {
			continue
		}
		if why := originProblem(o); why != "" {
			add(fmt.Sprintf("serve.cors_origins[%d]", i), "%q can never match a browser's Origin: %s; want an origin such as https://example.com, or \"*\"", o, why)
		}
	}
}

// originProblem says why o is no origin a browser sends (RFC 6454's
// serialization: scheme://host[:port], lower case, no path, the default
// port left out), or "" if it is one. The match is exact, so a trailing
// slash or a capital letter would silently refuse every request.
func originProblem(o string) string {
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return err.Error()
	case u.Scheme != "http" && u.Scheme != "https":
		return "the scheme is http or https"
	case u.Host == "" || u.User != nil || u.Opaque != "":
		return "an origin is scheme://host[:port]"
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(o[len(u.Scheme)+3:], "/?#"):
		return "an origin has no path, not even a trailing slash"
	case o != strings.ToLower(o):
		return "browsers send origins in lower case"
	case u.Scheme == "https" && u.Port() == "443", u.Scheme == "http" && u.Port() == "80":
		return "browsers leave the default port out"
	case strings.Contains(u.Hostname(), "*"):
		return "the match is exact: a wildcard is compared as the character *, which no browser sends"
	case strings.IndexFunc(u.Hostname(), func(r rune) bool { return r > 0x7e }) >= 0:
		return "browsers send an international host name in its punycode form (xn--...)"
	}
	return ""
}
