package main

import (
	"net/http"
	"testing"

	"github.com/ytrend/ytrend/ingest/sim"
)

// Red team (issue 22): the operator's endpoints answer only a peer that
// "sends no forwarding header". X-Forwarded-For, Forwarded and X-Real-IP are
// refused, but the other headers proxies on the same host use to name the
// client are not: Cloudflare's tunnel (CF-Connecting-IP), Akamai and
// Cloudflare Enterprise (True-Client-IP), and others. Measured with the real
// binary: each header below, from 127.0.0.1, got /metrics, /readyz and
// /livez with 200.
func TestRedOperatorEndpointsRefuseEveryForwardingHeader(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.mustRun("migrate")
	w.config("serve:\n  rate_limit: {requests: 1000, window: 1m}\n")
	base := startServe(t, w)
	if got := getWith(t, base+"/metrics", nil); got != 200 {
		t.Fatalf("the operator, no header: /metrics %d, want 200", got)
	}
	for _, h := range []string{"True-Client-IP", "CF-Connecting-IP", "X-Client-IP",
		"X-Forwarded", "Forwarded-For", "X-Original-Forwarded-For", "X-Cluster-Client-IP", "Fastly-Client-IP"} {
		for _, path := range []string{"/metrics", "/readyz", "/livez"} {
			if got := getWith(t, base+path, http.Header{h: {"203.0.113.50"}}); got != 404 {
				t.Errorf("%s: 203.0.113.50 from 127.0.0.1: %s %d, want 404", h, path, got)
			}
		}
	}
}
