package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/testkit/logbuf"
)

// /sim/usage reports the units charged per key, by fingerprint, so a test of
// ytrend can compare Google's side with its ledger; it never shows a key.
func TestUsageEndpoint(t *testing.T) {
	keys := []string{"AIzaSy-first-key-000000000", "AIzaSy-second-key-11111111"}
	s, hs, _ := newTestServer(t, Config{Keys: keys, SearchCallsPerDay: 5})
	a, b := client(t, hs, keys[0]), client(t, hs, keys[1])
	for range 3 {
		if _, err := a.Videos.List([]string{"id"}).Chart("mostPopular").Do(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Search.List([]string{"id"}).Q("news").Do(); err != nil {
		t.Fatal(err)
	}
	client(t, hs, "wrong").Videos.List([]string{"id"}).Chart("mostPopular").Do()

	code, body, _ := get(t, hs, "/sim/usage", nil)
	if code != 200 {
		t.Fatalf("HTTP %d", code)
	}
	for _, k := range keys {
		if bytes.Contains(body, []byte(k)) {
			t.Fatalf("/sim/usage shows the key %q:\n%s", k, body)
		}
	}
	var rep usageReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	ua, ub := rep.Keys[Fingerprint(keys[0])], rep.Keys[Fingerprint(keys[1])]
	if ua.Charged != 3 || ua.Calls["videos.list"] != 3 || ub.Charged != 0 || ub.SearchCalls != 1 {
		t.Errorf("usage a %+v b %+v", ua, ub)
	}
	if rep.TotalCharged != 3 || rep.TotalRequests != 5 || rep.Unauthenticated != 1 || rep.Quota != DefaultQuota || rep.SearchCallsPerDay != 5 {
		t.Errorf("report %+v", rep)
	}
	if got := s.Usage(keys[0]); got.Charged != ua.Charged || got.Fingerprint != ua.Fingerprint {
		t.Errorf("Usage() %+v differs from /sim/usage %+v", got, ua)
	}
	if fp := Fingerprint(keys[0]); len(fp) != 12 || fp == Fingerprint(keys[1]) {
		t.Errorf("fingerprint %q", fp)
	}
}

// Logs name keys by fingerprint only, whatever happens to the request.
func TestLogsNeverShowKeys(t *testing.T) {
	var buf logbuf.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, hs, _ := newTestServer(t, Config{Logger: log, Quota: 2})
	svc := client(t, hs, testKey)
	svc.Videos.List([]string{"id"}).Chart("mostPopular").Do()
	svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("ZZ").Do()
	svc.Videos.List([]string{"id"}).Chart("mostPopular").Do() // quotaExceeded
	s.SetFaults(Faults{Error503: 1})
	svc.Videos.List([]string{"id"}).Chart("mostPopular").Do()
	client(t, hs, testKey+"x").Videos.List([]string{"id"}).Chart("mostPopular").Do()
	out := buf.String()
	if strings.Contains(out, testKey) {
		t.Fatalf("the log shows the key:\n%s", out)
	}
	for _, want := range []string{"key=" + Fingerprint(testKey), "refused=quotaExceeded", "reason=invalidRegionCode", "status=400", "region=US"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestNewValidatesConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no keys":        {},
		"empty key":      {Keys: []string{"a", ""}},
		"negative quota": {Keys: []string{"a"}, Quota: -1},
		"negative day":   {Keys: []string{"a"}, Day: -time.Second},
		"negative churn": {Keys: []string{"a"}, Churn: -time.Second},
		"negative calls": {Keys: []string{"a"}, SearchCallsPerDay: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	s, err := New(Config{Keys: []string{"a"}, Day: 48 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.Quota != DefaultQuota || s.cfg.Churn != 2*time.Second {
		t.Errorf("defaults: quota %d churn %v; want 10000 and a 24th of the day", s.cfg.Quota, s.cfg.Churn)
	}
	if u := s.Usage("a"); u.Remaining != DefaultQuota {
		t.Errorf("a fresh key has %d units left", u.Remaining)
	}
}

// Serve answers until its context ends, then lets the request in flight
// finish.
func TestServeShutsDownGracefully(t *testing.T) {
	s, err := New(Config{Keys: []string{testKey}, Faults: Faults{Latency: 150 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	got := make(chan int, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/youtube/v3/i18nRegions?part=id&key=" + testKey)
		if err != nil {
			got <- -1
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	for s.TotalRequests() == 0 { // wait until the request is in flight
		time.Sleep(time.Millisecond)
	}
	cancel()
	if code := <-got; code != 200 {
		t.Errorf("request in flight at shutdown: %d", code)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/sim/healthz"); err == nil {
		t.Error("still answering after shutdown")
	}
}

func TestChartAndHealthEndpoints(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	code, body, _ := get(t, hs, "/sim/chart", url.Values{"regionCode": {"JP"}, "at": {t0.Add(-time.Hour).Format(time.RFC3339)}})
	var rep chartReport
	if err := json.Unmarshal(body, &rep); code != 200 || err != nil {
		t.Fatalf("HTTP %d %s", code, body)
	}
	want, _ := s.Chart("JP", "0", t0.Add(-time.Hour))
	if rep.RegionCode != "JP" || rep.VideoCategoryID != "0" || strings.Join(rep.VideoIDs, ",") != strings.Join(want, ",") {
		t.Errorf("chart report %+v", rep)
	}
	if code, _, _ := get(t, hs, "/sim/chart", url.Values{"regionCode": {"UK"}}); code != 400 {
		t.Errorf("/sim/chart?regionCode=UK: HTTP %d", code)
	}
	if code, body, _ := get(t, hs, "/sim/healthz", nil); code != 200 || string(body) != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	if s.TotalRequests() != 0 {
		t.Error("/sim endpoints were counted as API requests")
	}
}
