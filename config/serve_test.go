package config_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
)

func TestServeSection(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`serve:
  listen: ":9000"
  rate_limit: {requests: 30, window: 10s}
  trusted_proxies: [10.0.0.0/8, 192.0.2.7, "::1"]
  cors_origins: ["https://charts.example", "*"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s := c.Serve
	if s.Listen != ":9000" || s.RateLimit.Requests != 30 || s.RateLimit.Window.D() != 10*time.Second {
		t.Fatalf("%+v", s)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("::1/128")}
	if got := s.ProxyPrefixes(); !slices.Equal(got, want) {
		t.Fatalf("proxies %v, want %v", got, want)
	}
	d := config.Default().Serve
	if d.Listen != "127.0.0.1:8080" || d.RateLimit.Requests != 120 || d.RateLimit.Window.D() != time.Minute {
		t.Fatalf("defaults %+v", d)
	}
	_, err = config.Parse("t.yaml", []byte("serve: {rate_limt: {}}\n"))
	if err == nil || err.Error() != `invalid configuration: t.yaml: serve: unknown field "rate_limt" (line 1); allowed: access_log, client_in_flight, client_queue_wait, cors_origins, listen, max_connections, max_connections_per_client, rate_limit, trusted_proxies` {
		t.Fatalf("typo: %v", err)
	}
	if d.MaxConnectionsPerClient != 64 {
		t.Fatalf("default max_connections_per_client %d", d.MaxConnectionsPerClient)
	}
	c, err = config.Parse("t.yaml", []byte("serve: {max_connections: 10, max_connections_per_client: 11}\n"))
	if err == nil {
		err = c.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "serve.max_connections_per_client: 11: allowed 1-max_connections (10)") {
		t.Fatalf("a client's share over the whole: %v", err)
	}
}

// A client's in-flight bound and how long a request past it waits are the
// operator's to set (a host that serves many users from one address, a
// bigger machine), within bounds that keep one client from holding every
// connection it may open.
func TestServeClientInFlight(t *testing.T) {
	d := config.Default().Serve
	if d.ClientInFlight != 2 || d.ClientQueueWait.D() != 2*time.Second {
		t.Fatalf("defaults: client_in_flight %d, client_queue_wait %s", d.ClientInFlight, d.ClientQueueWait)
	}
	c, err := config.Parse("t.yaml", []byte("serve: {client_in_flight: 8, client_queue_wait: 250ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Serve.ClientInFlight != 8 || c.Serve.ClientQueueWait.D() != 250*time.Millisecond {
		t.Fatalf("parsed %d, %s", c.Serve.ClientInFlight, c.Serve.ClientQueueWait)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"serve: {client_in_flight: 0}", "serve.client_in_flight: 0: allowed 1-max_connections_per_client (64)"},
		{"serve: {client_in_flight: 65}", "serve.client_in_flight: 65: allowed 1-max_connections_per_client (64)"},
		{"serve: {max_connections_per_client: 4, client_in_flight: 5}", "serve.client_in_flight: 5: allowed 1-max_connections_per_client (4)"},
		{"serve: {client_queue_wait: 1ms}", "serve.client_queue_wait: 1ms: allowed 10ms-1m"},
		{"serve: {client_queue_wait: 2m}", "serve.client_queue_wait: 2m: allowed 10ms-1m"},
	} {
		c, err := config.Parse("t.yaml", []byte(tc.yaml+"\n"))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %s", tc.yaml, err, tc.want)
		}
	}
}

// The access log is on unless serve.access_log turns it off; a value
// that is no boolean is refused with its line.
func TestServeAccessLog(t *testing.T) {
	if !config.Default().Serve.AccessLog {
		t.Fatal("the access log is off by default")
	}
	for _, tc := range []struct {
		yaml string
		want bool
	}{
		{"serve: {listen: ':9000'}", true},
		{"serve: {access_log: false}", false},
		{"serve: {access_log: true}", true},
	} {
		c, err := config.Parse("t.yaml", []byte(tc.yaml+"\n"))
		if err == nil {
			err = c.Validate()
		}
		if err != nil || c.Serve.AccessLog != tc.want {
			t.Errorf("%s: access_log %v, %v; want %v", tc.yaml, c.Serve.AccessLog, err, tc.want)
		}
	}
	_, err := config.Parse("t.yaml", []byte("serve:\n  access_log: maybe\n"))
	if err == nil || !strings.Contains(err.Error(), "t.yaml: line 2: cannot unmarshal !!str `maybe` into bool") {
		t.Fatalf("access_log: maybe: %v", err)
	}
}

// An origin that can never equal a browser's Origin header is refused at
// start with its value, not silently never matched.
func TestCORSOriginsThatCanNeverMatch(t *testing.T) {
	for _, tc := range []struct{ origin, why string }{
		{"https://charts.example/", "an origin has no path, not even a trailing slash"},
		{"https://Charts.example", "browsers send origins in lower case"},
		{"HTTPS://charts.example", "browsers send origins in lower case"},
		{"https://charts.example:443", "browsers leave the default port out"},
		{"https://charts.example/api", "an origin has no path, not even a trailing slash"},
		{"charts.example", "the scheme is http or https"},
	} {
		c, err := config.Parse("t.yaml", []byte("serve:\n  cors_origins: [\""+tc.origin+"\"]\n"))
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		want := `serve.cors_origins[0]: "` + tc.origin + `" can never match a browser's Origin: ` + tc.why
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", tc.origin, err, want)
		}
	}
	for _, ok := range []string{"https://charts.example", "http://localhost:8080", "*"} {
		c, _ := config.Parse("t.yaml", []byte("serve:\n  cors_origins: [\""+ok+"\"]\n"))
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
