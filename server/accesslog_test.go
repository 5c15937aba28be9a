package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ytrend/ytrend/internal/reply"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/testkit/logbuf"
	"github.com/ytrend/ytrend/testkit/wait"
)

// jsonLines is the access log's format in these tests: a torn line does
// not parse.
func jsonLines(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) }

// accessServer serves the fixture on a real listener with acc as its
// access log (nil: none).
type accessServer struct {
	s    *server.Server
	base string
	log  *logbuf.Buffer // the process's log
	reg  *prometheus.Registry
	done chan error // Serve's return
}

func serveAccess(t *testing.T, acc *server.AccessLog, log *logbuf.Buffer) *accessServer {
	t.Helper()
	a := &accessServer{log: log, reg: prometheus.NewRegistry(), done: make(chan error, 1)}
	s, err := server.New(server.Config{}, server.Deps{Archive: openRO(t), Metrics: metrics.NewHTTP(a.reg),
		Log: slog.New(slog.NewJSONHandler(log, nil)), AccessLog: acc})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.s, a.base = s, "http://"+ln.Addr().String()
	go func() { a.done <- s.Serve(ln) }()
	t.Cleanup(func() { s.Stop(context.Background()) })
	return a
}

// get asks for path and wants 404 (no test here asks for a page); c's
// timeout bounds the wait for an answer.
func (a *accessServer) get(c *http.Client, path string) error {
	res, err := c.Get(a.base + path)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		return fmt.Errorf("%s: %d", path, res.StatusCode)
	}
	return nil
}

// mustGet is get from the test's goroutine.
func (a *accessServer) mustGet(t *testing.T, c *http.Client, path string) {
	t.Helper()
	if err := a.get(c, path); err != nil {
		t.Fatal(err)
	}
}

// stop is the graceful stop; it fails the test unless Serve returns nil.
func (a *accessServer) stop(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := a.s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := <-a.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

type accessRecord struct {
	Msg        string  `json:"msg"`
	RequestID  string  `json:"request_id"`
	Client     string  `json:"client"`
	Method     string  `json:"method"`
	Path       string  `json:"path"`
	Route      string  `json:"route"`
	Code       int     `json:"code"`
	Bytes      int64   `json:"bytes"`
	DurationMS float64 `json:"duration_ms"`
}

// records parses every line of b as one access log line.
func records(t *testing.T, b []byte) []accessRecord {
	t.Helper()
	var out []accessRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var r accessRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Msg != "http" {
			t.Fatalf("line %d is not a whole access log line (%v): %q", len(out)+1, err, sc.Text())
		}
		out = append(out, r)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("the log ends in a torn line: %q", b[max(0, len(b)-200):])
	}
	return out
}

// A graceful stop writes every line the batch still held: whole, one per
// request, each client's in the order it asked. Nothing is written before
// (the batch neither filled nor aged), so the lines are batched, not
// written one by one.
func TestAccessLogWholeAndInOrderAfterStop(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	acc := server.NewAccessLogSized(f, jsonLines, nil, 1<<20, time.Hour, 4<<20)
	a := serveAccess(t, acc, &logbuf.Buffer{})

	const clients, each = 4, 50
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			hc := &http.Client{Timeout: 30 * time.Second}
			for i := range each {
				if err := a.get(hc, fmt.Sprintf("/nothing/%d/%03d", c, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if st, _ := f.Stat(); st.Size() != 0 {
		t.Fatalf("%d bytes written before the batch filled, aged or was closed", st.Size())
	}
	a.stop(t, context.Background())

	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	recs := records(t, b)
	if len(recs) != clients*each {
		t.Fatalf("%d lines after the stop, want %d", len(recs), clients*each)
	}
	next := make([]int, clients)
	for _, r := range recs {
		var c, i int
		if _, err := fmt.Sscanf(r.Path, "/nothing/%d/%d", &c, &i); err != nil || c < 0 || c >= clients {
			t.Fatalf("path %q", r.Path)
		}
		if i != next[c] {
			t.Fatalf("client %d: request %d logged where %d was next", c, i, next[c])
		}
		next[c]++
		if r.Method != "GET" || r.Route != "/" || r.Code != 404 || r.Client != "127.0.0.1" || r.RequestID == "" || r.Bytes == 0 {
			t.Fatalf("line %+v", r)
		}
	}
	if acc.Dropped() != 0 {
		t.Fatalf("%d dropped", acc.Dropped())
	}
}

// The batch goes out on its own once it fills, and once its first line is
// as old as the interval: a quiet server's lines do not wait for the stop.
func TestAccessLogWritesFullAndAgedBatches(t *testing.T) {
	for _, tc := range []struct {
		name       string
		flushBytes int
		every      time.Duration
		requests   int
	}{
		{"full", 1024, time.Hour, 10}, // 10 lines of over 200 bytes fill 1 KiB
		{"aged", 1 << 20, 10 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out logbuf.Buffer
			acc := server.NewAccessLogSized(&out, jsonLines, nil, tc.flushBytes, tc.every, 4<<20)
			a := serveAccess(t, acc, &logbuf.Buffer{})
			hc := &http.Client{Timeout: 30 * time.Second}
			for i := range tc.requests {
				a.mustGet(t, hc, fmt.Sprintf("/nothing/%d", i))
			}
			// The interval alone would not write "full"'s lines before
			// the stop.
			wait.For(t, "a batch written before the stop", 30*time.Second, func() bool {
				return strings.Contains(out.String(), "\n")
			})
			a.stop(t, context.Background())
			if n := len(records(t, []byte(out.String()))); n != tc.requests {
				t.Fatalf("%d lines, want %d", n, tc.requests)
			}
		})
	}
}

// Off, there is no access log at all: the requests leave no line in the
// process's log either.
func TestAccessLogOff(t *testing.T) {
	var log logbuf.Buffer
	a := serveAccess(t, nil, &log)
	hc := &http.Client{Timeout: 30 * time.Second}
	for i := range 5 {
		a.mustGet(t, hc, fmt.Sprintf("/nothing/%d", i))
	}
	a.stop(t, context.Background())
	if strings.Contains(log.String(), `"msg":"http"`) {
		t.Fatalf("access lines with the access log off:\n%s", log.String())
	}
}

// A destination that takes nothing (a pipe nobody reads) does not hold up
// the requests: once the lines waiting reach the bound, each new line is
// dropped and counted, and every request is answered. Once the pipe is
// read again, every line is either written, whole, or counted as dropped
// (in Dropped, the metric and the warnings alike).
func TestAccessLogBlockedDestinationDoesNotBlockRequests(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var log logbuf.Buffer
	acc := server.NewAccessLogSized(w, jsonLines, slog.New(slog.NewJSONHandler(&log, nil)), 4<<10, 10*time.Millisecond, 16<<10)
	a := serveAccess(t, acc, &log)
	hc := &http.Client{Timeout: 30 * time.Second}

	// The pipe's buffer (64 KiB on Linux) and then the 16 KiB bound fill.
	asked := 0
	for acc.Dropped() == 0 {
		if asked > 10000 {
			t.Fatal("10,000 requests and nothing dropped: is anyone reading the pipe?")
		}
		a.mustGet(t, hc, fmt.Sprintf("/nothing/%05d", asked))
		asked++
	}
	// The destination is stuck: these are answered all the same, and
	// their lines, longer than the one that did not fit, are all dropped.
	before := acc.Dropped()
	const more = 100
	for i := range more {
		a.mustGet(t, hc, fmt.Sprintf("/nothing/%s/%03d", strings.Repeat("x", 100), i))
	}
	asked += more
	if got := acc.Dropped() - before; got != more {
		t.Fatalf("%d of %d lines dropped while the pipe was full", got, more)
	}
	if got := counter(t, a.reg, "ytrend_http_access_log_dropped_total", nil); got != float64(acc.Dropped()) {
		t.Fatalf("metric %v, Dropped %d", got, acc.Dropped())
	}

	// The pipe is read again: the stop writes the rest.
	var out bytes.Buffer
	read := make(chan error, 1)
	go func() { _, err := io.Copy(&out, r); read <- err }()
	a.stop(t, context.Background())
	w.Close()
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	recs := records(t, out.Bytes())
	if int64(len(recs))+acc.Dropped() != int64(asked) {
		t.Fatalf("%d lines written + %d dropped, want the %d requests", len(recs), acc.Dropped(), asked)
	}
	if recs[0].Path != "/nothing/00000" {
		t.Fatalf("first line %+v", recs[0])
	}
	var warned int64
	sc := bufio.NewScanner(strings.NewReader(log.String()))
	for sc.Scan() {
		var l struct {
			Msg     string `json:"msg"`
			Dropped int64  `json:"dropped"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && strings.HasPrefix(l.Msg, "access log lines dropped") {
			warned += l.Dropped
		}
	}
	if warned != acc.Dropped() {
		t.Fatalf("the warnings count %d dropped, Dropped %d:\n%s", warned, acc.Dropped(), log.String())
	}
}

// A stop does not wait without bound for a destination that takes
// nothing: the last lines are given up, and the log says so.
func TestAccessLogStopDoesNotWaitForABlockedDestination(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var log logbuf.Buffer
	acc := server.NewAccessLogSized(w, jsonLines, nil, 4<<10, 10*time.Millisecond, 16<<10)
	a := serveAccess(t, acc, &log)
	hc := &http.Client{Timeout: 30 * time.Second}
	for i := 0; acc.Dropped() == 0; i++ {
		a.mustGet(t, hc, fmt.Sprintf("/nothing/%05d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- a.s.Stop(ctx) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Stop: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stop waits for a pipe nobody reads")
	}
	if !strings.Contains(log.String(), "the access log's last lines are lost") {
		t.Fatalf("no word of the lost lines:\n%s", log.String())
	}
	r.Close() // the stuck write fails, and the access log's goroutine ends
}

// A path over 200 bytes is quoted clipped, in the access log and in the
// 404 that quotes it, and the clip falls between two characters: it cut
// the 200th byte, splitting "日" (3 bytes) or "𝄞" (4) in two, which the
// plain-text error showed as \xe6 and the JSON ones as U+FFFD.
func TestClippedPathsKeepWholeCharacters(t *testing.T) {
	var logged bytes.Buffer
	a := serveAccess(t, server.NewAccessLogSized(&logged, jsonLines, nil, 1<<20, time.Hour, 4<<20), &logbuf.Buffer{})
	cases := []struct{ path, clipped string }{
		// 1 + 66×3 = 199 bytes: the 67th "日" spans bytes 199 to 201.
		{"/" + strings.Repeat("日", 70), "/" + strings.Repeat("日", 66)},
		// 8 + 48×4 = 200: the cut falls between two characters already.
		{"/api/v1/" + strings.Repeat("𝄞", 60), "/api/v1/" + strings.Repeat("𝄞", 48)},
		// 8 + 47×4 + 2 ("é") = 198: the next "𝄞" spans bytes 198 to 201.
		{"/api/v1/" + strings.Repeat("𝄞", 47) + "é" + strings.Repeat("𝄞", 3), "/api/v1/" + strings.Repeat("𝄞", 47) + "é"},
		{"/" + strings.Repeat("a", 199) + "é", "/" + strings.Repeat("a", 199)},
	}
	for _, tc := range cases {
		res, body := options(t, a.base+tc.path)
		want := "there is nothing at " + tc.clipped + "…"
		var msg string
		if strings.HasPrefix(tc.path, "/api/") {
			var eb reply.ErrorBody
			if err := json.Unmarshal(body, &eb); err != nil {
				t.Fatalf("OPTIONS %s: %v: %s", tc.path, err, body)
			}
			msg = eb.Error.Message
		} else {
			msg = strings.TrimPrefix(strings.TrimSuffix(string(body), "\n"), "404 Not Found: ")
		}
		if res.StatusCode != http.StatusNotFound || msg != want {
			t.Errorf("OPTIONS %s: %d %q, want 404 %q", tc.path, res.StatusCode, msg, want)
		}
	}
	a.stop(t, context.Background())
	recs := records(t, logged.Bytes())
	if len(recs) != len(cases) {
		t.Fatalf("%d access log lines, want %d", len(recs), len(cases))
	}
	for i, r := range recs {
		if want := cases[i].clipped + "…"; r.Path != want {
			t.Errorf("access log path %q, want %q", r.Path, want)
		}
	}
}
