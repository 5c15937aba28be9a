package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// slow holds every search until release is closed.
type slow struct {
	view.Archive
	entered, release chan struct{}
}

func (s slow) Search(ctx context.Context, q store.Query) ([]store.Hit, error) {
	close(s.entered)
	<-s.release
	return s.Archive.Search(ctx, q)
}

// TestSoftStopLetsRequestsFinish: the soft stop (first signal) stops
// accepting and lets the request in flight finish; Run returns after it.
func TestSoftStopLetsRequestsFinish(t *testing.T) {
	db := openRO(t)
	sl := slow{Archive: db, entered: make(chan struct{}), release: make(chan struct{})}
	s, err := server.New(server.Config{Listen: "127.0.0.1:0"}, server.Deps{Archive: sl})
	if err != nil {
		t.Fatal(err)
	}
	soft := make(chan struct{})
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), soft, func(a net.Addr) { addrc <- a }) }()
	base := "http://" + (<-addrc).String()

	type result struct {
		code int
		body string
		err  error
	}
	resc := make(chan result, 1)
	go func() {
		res, err := http.Get(base + "/api/v1/search?q=" + url.QueryEscape(aWord(t, db)))
		if err != nil {
			resc <- result{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		resc <- result{code: res.StatusCode, body: string(b)}
	}()
	<-sl.entered
	close(soft)
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) with a request in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := net.DialTimeout("tcp", base[len("http://"):], time.Second); err == nil {
		t.Fatal("a new connection was accepted after the soft stop")
	}
	close(sl.release)
	r := <-resc
	if r.err != nil || r.code != 200 {
		t.Fatalf("in-flight request: %d %v %s", r.code, r.err, r.body)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
