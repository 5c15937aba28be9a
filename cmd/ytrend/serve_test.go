package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/testkit/logbuf"
)

// TestServeCommand runs the binary: serve answers from an archive that a
// fetch keeps writing to while it serves, and stops cleanly on SIGTERM.
func TestServeCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.mustRun("fetch", "US")
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
	read := make(chan struct{}) // closed when stderr ends: the process exited
	go func() {
		defer close(read)
		sc := bufio.NewScanner(io.TeeReader(stderr, &logs))
		re := regexp.MustCompile(`serving (http://[0-9.:]+)/`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-addr:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start:\n%s", logs.String())
	}
	code, body := get(t, base+"/api/v1/charts/US")
	var chart struct {
		Region  string `json:"region"`
		Entries []struct {
			ThumbnailURL string `json:"thumbnail_url"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(body), &chart); code != 200 || err != nil || chart.Region != "US" || len(chart.Entries) != 200 || chart.Entries[0].ThumbnailURL == "" {
		t.Fatalf("chart: %d %v %.300s", code, err, body)
	}
	if code, body := get(t, base+"/"); code != 200 || !strings.Contains(body, "United States trending chart") {
		t.Fatalf("home: %d %.300s", code, body)
	}
	// A fetch while serving is not blocked, and its chart is served at once.
	w.mustRun("fetch", "GB")
	if code, body := get(t, base+"/api/v1/charts/GB"); code != 200 || !strings.Contains(body, `"region":"GB"`) {
		t.Fatalf("GB after the fetch: %d %.300s", code, body)
	}
	if code, _ := get(t, base+"/api/v1/videos/AAAAAAAAAAA"); code != 404 {
		t.Fatalf("unknown video: %d", code)
	}
	if code, body := get(t, base+"/api/v1/quota"); code != 200 || !strings.Contains(body, `"name":"daily"`) {
		t.Fatalf("quota: %d %.300s", code, body)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, `ytrend_http_requests_total{code="200",route="/api/v1/charts/{region}"} 2`) {
		t.Fatalf("metrics: %d\n%s", code, body)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	// Every line is read before Wait, which closes the pipe: a Wait first
	// could drop the last lines (the stop line) unread.
	select {
	case <-read:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exited with %v:\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "stopped serving") || !strings.Contains(logs.String(), `msg=http`) {
		t.Fatalf("no access log or stop line:\n%s", logs.String())
	}
	w.assertNoKey(logs.String(), body)
}

// ytrend serve's access log: one line per request on stderr, all of them
// there once SIGTERM's stop is over, in the order they were asked; none at
// all with serve.access_log: false, while the rest of the log is as ever.
func TestServeAccessLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.mustRun("fetch", "US")
	const requests = 20
	for _, tc := range []struct {
		yaml string
		want int
	}{
		{"", requests},
		{"serve: {access_log: false}\n", 0},
	} {
		w.config(tc.yaml)
		cmd, logs := w.start("serve", "--listen", "127.0.0.1:0")
		re := regexp.MustCompile(`serving (http://[0-9.:]+)/`)
		var base string
		waitFor(t, "serve listening", 30*time.Second, func() bool {
			m := re.FindStringSubmatch(logs.String())
			if m != nil {
				base = m[1]
			}
			return m != nil
		})
		for i := range requests {
			if code, body := get(t, fmt.Sprintf("%s/nothing/%02d", base, i)); code != 404 {
				t.Fatalf("request %d: %d %.300s", i, code, body)
			}
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if code, _ := exitCode(t, cmd, 60*time.Second); code != 0 {
			t.Fatalf("%q: exit %d after SIGTERM:\n%s", tc.yaml, code, logs)
		}
		lines := regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=http .* path=/nothing/(\d\d) .*duration_ms=\S+$`).
			FindAllStringSubmatch(logs.String(), -1)
		if len(lines) != tc.want || !strings.Contains(logs.String(), "stopped serving") {
			t.Fatalf("%q: %d access lines, want %d, and the stop's line:\n%s", tc.yaml, len(lines), tc.want, logs)
		}
		for i, m := range lines {
			if m[1] != fmt.Sprintf("%02d", i) {
				t.Fatalf("line %d is request %s's:\n%s", i, m[1], logs)
			}
		}
	}
}

// A request's path reaches the access log as the server decoded it, so
// anyone who can reach serve could put CSI (U+009B) or a right-to-left
// override on the terminal that tails it (red team). In both log formats
// the line carries them as escapes and reads back to the path.
func TestServeAccessLogEscapesTerminalControls(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.mustRun("fetch", "US")
	const hostilePath = "/nothing/x\u009b31m\u202e\x7f"
	for _, format := range []string{"json", "text"} {
		cmd, logs := w.start("serve", "--listen", "127.0.0.1:0", "--log-format", format)
		re := regexp.MustCompile(`serving (http://[0-9.:]+)/`)
		var base string
		waitFor(t, "serve listening", 30*time.Second, func() bool {
			m := re.FindStringSubmatch(logs.String())
			if m != nil {
				base = m[1]
			}
			return m != nil
		})
		for _, path := range []string{"/nothing/x%C2%9B31m%E2%80%AE%7F", "/nothing/only%7Fdel"} {
			if code, body := get(t, base+path); code != 404 {
				t.Fatalf("%s: %d %.300s", path, code, body)
			}
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if code, _ := exitCode(t, cmd, 60*time.Second); code != 0 {
			t.Fatalf("%s: exit %d after SIGTERM:\n%s", format, code, logs)
		}
		out := logs.String()
		if strings.ContainsAny(out, "\u009b\u202e\x7f") {
			t.Fatalf("--log-format %s: a control is in the log raw: %q", format, out)
		}
		var paths []string
		for _, line := range strings.Split(out, "\n") {
			switch {
			case format == "json" && strings.Contains(line, `"msg":"http"`):
				var l struct{ Path string }
				if err := json.Unmarshal([]byte(line), &l); err != nil {
					t.Fatalf("not JSON: %v: %s", err, line)
				}
				paths = append(paths, l.Path)
			case format == "text" && strings.Contains(line, " msg=http "):
				m := regexp.MustCompile(` path=("(?:[^"\\]|\\.)*"|\S*) `).FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("no path in %q", line)
				}
				p, err := strconv.Unquote(m[1])
				if err != nil {
					t.Fatalf("path %s: %v", m[1], err)
				}
				paths = append(paths, p)
			}
		}
		if want := []string{hostilePath, "/nothing/only\x7fdel"}; !slices.Equal(paths, want) {
			t.Errorf("--log-format %s: the access log's paths read back as %q, want %q:\n%s", format, paths, want, out)
		}
	}
}

func TestServeBadConfig(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	if r := w.run("serve", "--listen", "nope"); r.code != 2 || !strings.Contains(r.stderr, `--listen "nope": want host:port`) {
		t.Fatalf("--listen nope: %d %s", r.code, r.stderr)
	}
	w.config("serve:\n  rate_limit: {requests: 0, window: 10ms}\n  trusted_proxies: [not-an-ip]\n  cors_origins: [example.com]\n")
	r := w.run("serve")
	for _, want := range []string{
		"serve.rate_limit.requests: 0: allowed 1-1000000 requests per window",
		"serve.rate_limit.window: 10ms: allowed 1s-1h",
		`serve.trusted_proxies[0]: "not-an-ip": want an IP address or a CIDR such as 10.0.0.0/8`,
		`serve.cors_origins[0]: "example.com" can never match a browser's Origin: the scheme is http or https; want an origin such as https://example.com`,
	} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d; stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
	// No archive yet: a clear error, and nothing created.
	w.config("")
	if r := w.run("serve"); r.code != 1 || !strings.Contains(r.stderr, "no archive at "+w.env["YTREND_DB"]) {
		t.Fatalf("serve without an archive: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(w.env["YTREND_DB"]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("serve without an archive created one (stat: %v)", err)
	}
}

// ytrend run --serve: the scheduler process serves the archive's pages and
// API while it fetches; a page it fetched is served without a restart, the
// access log and the fetches share one log, and SIGTERM stops both.
func TestRunServe(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.config(`
regions:
  - {code: US, cron: "@every 1s", pages: 1}
`)
	if r := w.run("run", "--serve", "nope"); r.code != 2 || !strings.Contains(r.stderr, `--serve "nope": want host:port`) {
		t.Fatalf("--serve nope: %d %s", r.code, r.stderr)
	}
	cmd, logs := w.start("run", "--serve", "127.0.0.1:0", "--listen", "127.0.0.1:0")
	re := regexp.MustCompile(`serving the archive's pages and API" addr=(http://127\.0\.0\.1:\d+)/`)
	var base string
	waitFor(t, "the archive served", 30*time.Second, func() bool {
		m := re.FindStringSubmatch(logs.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	var body string
	waitFor(t, "the first fetch served", 30*time.Second, func() bool {
		var code int
		code, body = get(t, base+"/api/v1/charts/US")
		return code == 200
	})
	var chart struct {
		Region  string            `json:"region"`
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal([]byte(body), &chart); err != nil || chart.Region != "US" || len(chart.Entries) != 50 {
		t.Fatalf("chart: %v %.300s", err, body)
	}
	if code, body := get(t, base+"/api/v1/quota"); code != 200 || !strings.Contains(body, `"name":"daily"`) {
		t.Fatalf("quota: %d %.300s", code, body)
	}
	if code, body := get(t, base+"/"); code != 200 || !strings.Contains(body, "United States trending chart") {
		t.Fatalf("home: %d %.300s", code, body)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code, _ := exitCode(t, cmd, 60*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", code, logs)
	}
	if !strings.Contains(logs.String(), `msg=http`) || !strings.Contains(logs.String(), `msg="run finished"`) {
		t.Fatalf("no access log or no run in the one log:\n%s", logs)
	}
	w.assertNoKey(logs.String(), body)
}
