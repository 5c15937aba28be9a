package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
)

// One client keeps heavy searches running (they stay inside the engine,
// holding their connections, until the test lets them go); another
// client's requests are answered meanwhile: charts, a video, a page, a
// cached search and a search of its own. Before, every read shared two
// connections and one client could hold both, so the other client waited
// for as long as the heavy searches ran.
func TestOneClientCannotStarveAnother(t *testing.T) {
	entered := make(chan string, 16)
	release := make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	probe := &search.WalkProbe{InTx: func(q search.Query) {
		if strings.HasPrefix(q.Text, "heavy") {
			entered <- q.Text
			<-release
		}
	}}
	db, err := store.Open(context.Background(), fixture(t), store.ReadOnly(), store.WithReaders(2),
		store.WithSearch(search.WithWalkProbe(probe)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// A short wait: the test is about who is refused, not how long a
	// refused request waited (the default's 2 s would only slow it).
	s, err := server.New(server.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		ClientQueueWait: 200 * time.Millisecond},
		server.Deps{Archive: db, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	// A failing run waits here instead of forever; a passing one never
	// comes near it.
	client := &http.Client{Timeout: time.Minute}
	get := func(who, path string) (int, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("X-Forwarded-For", who)
		res, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		res.Body.Close()
		return res.StatusCode, res.Header
	}
	const heavy, other = "203.0.113.1", "203.0.113.2"
	word := aWord(t, db)
	c, err := db.Chart(context.Background(), "US", time.Time{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	cached := "/api/v1/search?q=" + word
	if code, _ := get(other, cached); code != 200 {
		t.Fatalf("warming the cache: %d", code)
	}

	const sent = 6
	codes := make(chan int, sent)
	retry := make(chan string, sent)
	for i := range sent {
		go func() {
			code, h := get(heavy, fmt.Sprintf("/api/v1/search?q=heavy%d&sort=views&region=US,GB,DE,FR,JP", i))
			if code == http.StatusTooManyRequests {
				retry <- h.Get("Retry-After")
			}
			codes <- code
		}()
	}
	// Two get in (the client's in-flight bound); the other four wait for
	// one of them briefly, then are refused.
	for range server.DefaultClientInFlight {
		<-entered
	}
	for range sent - server.DefaultClientInFlight {
		if code := <-codes; code != http.StatusTooManyRequests {
			t.Errorf("a heavy search past the bound: %d, want 429", code)
		} else if ra := <-retry; ra != "1" {
			t.Errorf("Retry-After %q, want 1", ra)
		}
	}
	// The heavy searches still hold their connections: the other client is
	// answered all the same.
	for _, path := range []string{"/api/v1/charts/US", "/api/v1/videos/" + c.Entries[0].VideoID, "/charts/US", cached,
		"/api/v1/search?q=" + word + "&sort=views", "/search?q=" + word} {
		if code, _ := get(other, path); code != http.StatusOK {
			t.Errorf("%s while the heavy searches run: %d", path, code)
		}
	}
	select {
	case q := <-entered:
		t.Errorf("a third heavy search (%s) ran at once", q)
	default:
	}
	letGo()
	for range server.DefaultClientInFlight {
		if code := <-codes; code != http.StatusOK {
			t.Errorf("a heavy search once let go: %d", code)
		}
	}
}

// serve's configuration reaches the server: a client's in-flight bound and
// its queue wait are the operator's (serve.client_in_flight,
// serve.client_queue_wait), and the defaults are config's.
func TestConfigFromCarriesTheClientBounds(t *testing.T) {
	cfg := config.Default()
	got := server.ConfigFrom(cfg)
	if got.ClientInFlight != server.DefaultClientInFlight || got.ClientQueueWait != server.DefaultClientQueueWait {
		t.Fatalf("defaults: %d, %s", got.ClientInFlight, got.ClientQueueWait)
	}
	cfg.Serve.ClientInFlight, cfg.Serve.ClientQueueWait = 7, config.Duration(300*time.Millisecond)
	got = server.ConfigFrom(cfg)
	if got.ClientInFlight != 7 || got.ClientQueueWait != 300*time.Millisecond {
		t.Fatalf("configured 7, 300ms: got %d, %s", got.ClientInFlight, got.ClientQueueWait)
	}
}
