package server_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// red3: /runs still publishes what a fetch's error carried when its last
// ": " segment is not a bare cause. Both texts below are what `ytrend
// fetch` really stored (a proxy answering 502 with its error page; a TLS
// interception proxy whose certificate names internal hosts).
func TestRed3RunErrorsLeakHostsAndPeople(t *testing.T) {
	raws := []string{
		`chart page 1: videos.list failed after 4 attempts (HTTP 502): googleapi: got HTTP response code 502 with body: <html><body>ERROR The requested URL could not be retrieved. Generated Tue by squid01.corp.internal (squid/4.10) admin alice.smith@corp.example</body></html>`,
		`chart page 1: videos.list failed after 4 attempts (connection failed): Get "https://localhost:18443/youtube/v3/videos?key=REDACTED": tls: failed to verify certificate: x509: certificate is valid for proxy.corp.internal, vault.alice-laptop.lan, not localhost`,
	}
	path := filepath.Join(t.TempDir(), "runs.db")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range raws {
		run, err := db.StartRun(ctx, "US", store.TriggerCLI, time.Now().Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusFailed, At: time.Now(), Error: raw}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ro, err := store.Open(ctx, path, store.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	s, err := server.New(server.Config{}, server.Deps{Archive: ro, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	e := &env{srv: srv}
	for _, p := range []string{"/api/v1/runs", "/runs"} {
		body := string(e.get(t, p).body)
		for _, secret := range []string{"squid01.corp.internal", "alice.smith@corp.example", "proxy.corp.internal", "vault.alice-laptop.lan"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s publishes %q", p, secret)
			}
		}
	}
}

// red3: the connection cap is global and the limiter never closes a
// connection, so one client that keeps MaxConnections keep-alive
// connections open (one request each, 429s included, then idle for
// IdleTimeout) makes every other client wait for a slot. With the default
// 1,000 and 30 s, measured on a real `ytrend serve`: a client at
// 127.0.0.2 waited 19-28 s per request while 127.0.0.1 held 1,000 idle
// connections. Here: a cap of 4, one client holding 4, and another
// client's request must still be answered promptly.
func TestRed3OneClientHoldsEveryConnection(t *testing.T) {
	db := openRO(t)
	s, err := server.New(server.Config{MaxConnections: 4}, server.Deps{Archive: db, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Stop(t.Context()) })

	for range 4 { // the hog: one request per connection, then idle
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /static/style.css HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Skip("cannot dial from 127.0.0.2:", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	fmt.Fprintf(c, "GET /static/style.css HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
		t.Errorf("another client, while one holds every connection idle: %v", err)
	}
}

// red3: thumbnail_url is promised to be "an https://*.ytimg.com/ URL or
// null", but the check parses and then hands back the stored string as
// it was, quotes and spaces included: an API consumer that puts the one
// field documented as a URL into an src attribute runs the import's
// onerror.
func TestRed3ThumbnailURLCarriesMarkup(t *testing.T) {
	for _, u := range []string{
		`https://i.ytimg.com/vi/x/a.jpg" onerror="alert(1)`,
		`https://i.ytimg.com/vi/x/a.jpg?x=<script>alert(1)</script>`,
	} {
		if got := view.Thumbnail(u); got != nil && strings.ContainsAny(*got, "\"<> ") {
			t.Errorf("thumbnail_url %q", *got)
		}
	}
}
