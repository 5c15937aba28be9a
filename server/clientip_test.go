package server

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, tc := range []struct {
		remote string
		xff    []string
		want   string
	}{
		{"198.51.100.1:5000", nil, "198.51.100.1"},
		{"198.51.100.1:5000", []string{"1.2.3.4"}, "198.51.100.1"},           // not a proxy we trust
		{"10.0.0.5:5000", []string{"1.2.3.4"}, "1.2.3.4"},                    // our proxy
		{"10.0.0.5:5000", []string{"6.6.6.6, 1.2.3.4"}, "1.2.3.4"},           // the client can prepend anything
		{"10.0.0.5:5000", []string{"6.6.6.6, 1.2.3.4, 10.0.0.9"}, "1.2.3.4"}, // two of our proxies
		{"10.0.0.5:5000", []string{"6.6.6.6", "1.2.3.4"}, "1.2.3.4"},         // several headers
		{"10.0.0.5:5000", []string{"garbage"}, "error"},                      // unreadable: refused, not the proxy's
		{"10.0.0.5:5000", []string{"1.2.3.4, garbage"}, "error"},             // the rightmost is garbage
		{"10.0.0.5:5000", []string{"garbage, 1.2.3.4"}, "1.2.3.4"},           // what the client prepends is never read
		{"10.0.0.5:5000", []string{"1.2.3.4, "}, "error"},                    // an empty hop
		{"[::1]:5000", []string{"2001:db8::7"}, "2001:db8::/64"},             // IPv6: its /64
		{"[::1]:5000", []string{"2001:db8::8%eth1"}, "2001:db8::/64"},        // zone dropped
		{"[2001:db8:0:1::5%eth1]:5000", nil, "2001:db8:0:1::/64"},            // a peer with a zone
		{"[fe80::1%eth0]:5000", nil, "fe80::/64"},
		{"[::ffff:198.51.100.1]:5000", nil, "198.51.100.1"},           // mapped
		{"10.0.0.5:5000", []string{"10.0.0.6, 10.0.0.7"}, "10.0.0.6"}, // all trusted: the farthest
	} {
		r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
		for _, x := range tc.xff {
			r.Header.Add("X-Forwarded-For", x)
		}
		got, err := clientIP(r, trusted)
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.remote, tc.xff, got, tc.want)
		}
	}
}
