package server

import (
	"net/http"
	"net/netip"
	"testing"
)

// Red team (issue 22, point 5): clientIP reads only X-Forwarded-For. A
// trusted proxy that names its client in the standard Forwarded header
// (RFC 7239: HAProxy's "option forwarded", Envoy, nginx configurations)
// makes every client behind it the proxy itself: one rate limit, one
// in-flight budget and one connection share for everyone, and a malformed
// Forwarded "for=" is not refused (400) but counted against the proxy.
// Measured with the real binary (trusted_proxies: [127.0.0.2], 5 requests
// per 10 s): Forwarded: for="[2001:db8:1:4::N]" and then for= from other
// /64s all drew on 127.0.0.2's bucket (200 x5, then 429), and the proxy's
// own /metrics probe got 429 from it.
func TestRedForwardedHeaderFromATrustedProxy(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		fwd  string
		want string
	}{
		{`for=198.51.100.7`, "198.51.100.7"},
		{`for="[2001:db8:cafe::17]:4711"`, "2001:db8:cafe::/64"},
		{`for=192.0.2.43, for=198.51.100.17`, "198.51.100.17"},
		{`for=garbage`, "error"},
	} {
		r := &http.Request{RemoteAddr: "10.0.0.5:5000", Header: http.Header{"Forwarded": {tc.fwd}}}
		got, err := clientIP(r, trusted)
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("Forwarded: %s from a trusted proxy: client %s, want %s", tc.fwd, got, tc.want)
		}
	}
}
