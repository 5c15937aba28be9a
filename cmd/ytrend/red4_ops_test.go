package main

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

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

// Red team (issue 22, point 6): the connection cap lets a handful of
// clients shut everyone out. Connections still sending their headers are
// neither idle (so none gives way) nor refused, so slow-header connections
// from cap/per-client addresses fill the cap, and every other client's
// connection waits in the kernel's backlog until ReadHeaderTimeout (5 s)
// closes one. Measured with the real binary on 1m.db at the defaults (cap
// 1,000, 64 per client): 17 loopback addresses x 64 connections each
// sending one header line every 0.5 s; a third client's GET
// /api/v1/regions took 4.1-4.9 s in 4 of 15 tries (connect 0.2 ms: the
// kernel accepted, serve did not). Here with a cap of 12 and 4 per client,
// 3 addresses hold it; the test asserts another client is answered while
// those connections are still open.
func TestRedSlowHeadersFromAFewAddressesDoNotShutOthersOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.mustRun("migrate")
	w.config("serve:\n  rate_limit: {requests: 1000, window: 1m}\n  max_connections: 12\n  max_connections_per_client: 4\n")
	base := startServe(t, w)
	target := strings.TrimPrefix(base, "http://")
	var held []net.Conn
	for a := 1; a <= 3; a++ {
		for i := 0; i < 4; i++ {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 2, byte(a))}}
			c, err := d.Dial("tcp", target)
			if err != nil {
				t.Skipf("no 127.0.2.%d on this host: %v", a, err)
			}
			defer c.Close()
			if _, err := c.Write([]byte("GET / HTTP/1.1\r\nX-Slow: 1\r\n")); err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
		}
	}
	// A 4th address asks; then each held connection is checked: if serve
	// had to close them (ReadHeaderTimeout) before answering, it did not
	// let the other client in while they were held.
	answered := make(chan int, 1)
	go func() {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 2, 9)}}
		c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 20 * time.Second}
		res, err := c.Get(base + "/api/v1/regions")
		if err != nil {
			answered <- -1
			return
		}
		res.Body.Close()
		answered <- res.StatusCode
	}()
	code := <-answered
	closed := 0
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == nil || !isTimeout(err) {
			closed++ // serve answered or closed it: it gave way
		}
	}
	if code != 200 || closed > 0 {
		t.Errorf("another client: %d, answered only after serve closed %d of the %d slow connections (ReadHeaderTimeout)", code, closed, len(held))
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
