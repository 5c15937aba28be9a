package server_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ytrend/ytrend/server"
)

// Connections beyond MaxConnections wait to be accepted until one closes:
// before there was a cap, 13,000 idle keep-alive connections exhausted the
// process's file descriptors. Five clients each keep a connection open
// until answered, against a cap of two: every one is answered, and the
// server never holds more than two.
func TestConnectionCap(t *testing.T) {
	db := openRO(t)
	s, err := server.New(server.Config{MaxConnections: 2}, server.Deps{Archive: db, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	open, peak := 0, 0
	changed := sync.NewCond(&mu)
	s.SetConnState(func(_ net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			open++
			peak = max(peak, open)
		case http.StateClosed, http.StateHijacked:
			open--
		}
		changed.Broadcast()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Stop(t.Context()) })

	const clients = 5
	conns := make([]net.Conn, clients)
	for i := range conns {
		if conns[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	// The server has taken what it may take.
	mu.Lock()
	for open < 2 {
		changed.Wait()
	}
	mu.Unlock()
	answered := make(chan int, clients)
	for i, c := range conns {
		go func() {
			fmt.Fprintf(c, "GET /static/style.css HTTP/1.1\r\nHost: x\r\n\r\n")
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Error(err)
				answered <- -1
				return
			}
			res.Body.Close()
			answered <- i
		}()
	}
	for range clients {
		i := <-answered
		if i < 0 {
			t.FailNow()
		}
		conns[i].Close() // its slot frees up for one still waiting
	}
	mu.Lock()
	defer mu.Unlock()
	if peak != 2 {
		t.Errorf("the server held %d connections at once, want at most 2", peak)
	}
}

// Headers over MaxHeaderBytes are refused (431), whatever net/http's
// slack: about 20 KB got through a documented 16 KB before.
func TestHeaderLimit(t *testing.T) {
	s, err := server.New(server.Config{}, server.Deps{Archive: openRO(t), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Stop(t.Context()) })
	// A raw connection: the server hangs up on headers that are too
	// large, and may reset the connection before the client reads its
	// 431; either is a refusal, and only a 200 is not.
	status := func(n int) string {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /api/v1/regions HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\n\r\n", strings.Repeat("a", n))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "refused (" + err.Error() + ")"
		}
		res.Body.Close()
		if res.StatusCode == http.StatusRequestHeaderFieldsTooLarge {
			return "refused (431)"
		}
		return res.Status
	}
	if got := status(server.MaxHeaderBytes - 2<<10); got != "200 OK" {
		t.Errorf("14 KB of headers: %s, want 200 OK", got)
	}
	if got := status(server.MaxHeaderBytes + 512); !strings.HasPrefix(got, "refused") {
		t.Errorf("16.5 KB of headers: %s, want refused", got)
	}
}
