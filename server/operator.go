package server

import (
	"net/http"
	"net/netip"
)

// forwardingHeaders are what a proxy adds: a request carrying any of them
// came through one, whatever its peer address says.
var forwardingHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip", "Via"}

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
	for _, h := range forwardingHeaders {
		if _, ok := r.Header[h]; ok {
			return false
		}
	}
	return true
}
