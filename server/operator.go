package server

import (
	"net/http"
	"net/netip"
	"strings"
)

// proxyHeader reports whether a header name is one that a proxy, a CDN or a
// tunnel adds to say whom it forwards for: Forwarded, Via and anything with
// "forward" in its name (X-Forwarded-For, Forwarded-For,
// X-Original-Forwarded-For...), and the client-address headers of the
// common ones (X-Real-IP, True-Client-IP, CF-Connecting-IP, X-Client-IP,
// X-Cluster-Client-IP, Fastly-Client-IP). A request carrying any of them
// came through one, whatever its peer address says. A list of exact names
// missed most of them (the red team got /metrics with eight).
func proxyHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "via" || strings.Contains(n, "forward") ||
		strings.HasSuffix(n, "client-ip") || strings.HasSuffix(n, "connecting-ip") || strings.HasSuffix(n, "real-ip")
}

// operatorRequest reports whether r may read /metrics, /livez and /readyz:
// its peer is a loopback address that is not a trusted proxy, and it sends
// no forwarding header. Checking the peer alone let a proxy on the same
// host hand them to anyone: its peer address is loopback too.
func operatorRequest(r *http.Request, trusted []netip.Prefix) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap().WithZone("")
	if !ip.IsLoopback() || isTrusted(ip, trusted) {
		return false
	}
	for h := range r.Header {
		if proxyHeader(h) {
			return false
		}
	}
	return true
}
