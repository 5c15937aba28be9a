package main

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/testkit/logbuf"
)

// startServe runs `ytrend serve` on a port the kernel picks and returns its
// base URL, read from its log.
func startServe(t *testing.T, w *world) string {
	t.Helper()
	cmd := w.command("serve", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var logs logbuf.Buffer
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stderr, &logs))
		re := regexp.MustCompile(`serving (http://[0-9.:]+)/`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case base := <-addr:
		return base
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start:\n%s", logs.String())
	}
	return ""
}

// getWith is get with request headers.
func getWith(t *testing.T, url string, header http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// The operator's endpoints answer only a loopback peer that is no proxy and
// forwards nobody. Before, with trusted_proxies: [127.0.0.1] (a proxy on
// the same host), X-Forwarded-For: 203.0.113.50 got /metrics: only the TCP
// peer was checked.
func TestOperatorEndpointsStayPrivate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		proxies string
		header  http.Header
		want    int
	}{
		{"operator", "", nil, 200},
		{"forwarded by a proxy on this host", "", http.Header{"X-Forwarded-For": {"203.0.113.50"}}, 404},
		{"Forwarded", "", http.Header{"Forwarded": {"for=203.0.113.50"}}, 404},
		{"X-Real-IP", "", http.Header{"X-Real-Ip": {"203.0.113.50"}}, 404},
		{"the peer is a trusted proxy", "  trusted_proxies: [127.0.0.1]\n", http.Header{"X-Forwarded-For": {"203.0.113.50"}}, 404},
		{"the peer is a trusted proxy, no header", "  trusted_proxies: [127.0.0.1]\n", nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, sim.Config{})
			w.mustRun("migrate")
			w.config("serve:\n" + tc.proxies + "  rate_limit: {requests: 100, window: 1m}\n")
			base := startServe(t, w)
			for _, path := range []string{"/metrics", "/readyz", "/livez"} {
				if got := getWith(t, base+path, tc.header); got != tc.want {
					t.Errorf("%s: %d, want %d", path, got, tc.want)
				}
			}
		})
	}
}

// The operator's endpoints answer only a peer that
// sends no forwarding header, and that means every header proxies on the
// same host use to name the client, not only X-Forwarded-For: Cloudflare's
// tunnel (CF-Connecting-IP), Akamai and Cloudflare Enterprise
// (True-Client-IP), and others. The red team, with the real binary, got
// /metrics, /readyz and /livez with 200 from 127.0.0.1 with each of these.
func TestOperatorEndpointsRefuseEveryForwardingHeader(t *testing.T) {
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
