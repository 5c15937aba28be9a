package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
)

// TestStandInSwapsOnOneListener: a server standing in answers the requests
// that arrive after StandIn, on the same listener and keep-alive
// connection; a request in flight ends on the server that began it; StandIn
// (nil) gives the answers back. (ytrend run --serve swaps the live
// archive's server for the followed copy's this way.)
func TestStandInSwapsOnOneListener(t *testing.T) {
	ctx := context.Background()
	live := openRO(t)
	sl := slow{Archive: live, entered: make(chan struct{}), release: make(chan struct{})}
	s, err := server.New(server.Config{}, server.Deps{Archive: sl})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := store.Open(ctx, filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { empty.Close() })
	other, err := server.New(server.Config{}, server.Deps{Archive: empty})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Stop(ctx) })
	base := "http://" + ln.Addr().String()

	var dials int
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
		dials++
		return (&net.Dialer{}).DialContext(ctx, n, a)
	}}}
	runs := func() int {
		t.Helper()
		res, err := client.Get(base + "/api/v1/runs")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var page struct {
			Runs []json.RawMessage `json:"runs"`
		}
		if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != 200 {
			t.Fatalf("runs: %d %v", res.StatusCode, err)
		}
		return len(page.Runs)
	}
	want := runs()
	if want == 0 {
		t.Fatal("the fixture holds no run")
	}

	// A search in flight on s when other stands in.
	type result struct {
		code int
		err  error
	}
	inFlight := make(chan result, 1)
	go func() {
		res, err := http.Get(base + "/api/v1/search?q=" + url.QueryEscape(aWord(t, live)))
		if err != nil {
			inFlight <- result{err: err}
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		inFlight <- result{code: res.StatusCode}
	}()
	<-sl.entered
	s.StandIn(other)
	if n := runs(); n != 0 {
		t.Errorf("standing in: %d runs, want the empty archive's 0", n)
	}
	close(sl.release)
	if r := <-inFlight; r.err != nil || r.code != 200 {
		t.Errorf("the request in flight at the swap: %d %v", r.code, r.err)
	}
	s.StandIn(nil)
	if n := runs(); n != want {
		t.Errorf("given back: %d runs, want %d", n, want)
	}
	if dials != 1 {
		t.Errorf("%d connections for three requests; the swap must keep the connection", dials)
	}
}
