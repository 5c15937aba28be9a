package config_test

import (
	"net/netip"
	"slices"
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
	if err == nil || err.Error() != `invalid configuration: t.yaml: serve: unknown field "rate_limt" (line 1); allowed: cors_origins, listen, rate_limit, trusted_proxies` {
		t.Fatalf("typo: %v", err)
	}
}
