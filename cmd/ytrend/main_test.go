package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/ingest/sim"
	"github.com/ytrend/ytrend/internal/redisclient"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// The command tests run the real binary, built once, against the simulated
// YouTube over real HTTP, real SQLite files and (where named) real Redis.

var ytrendBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ytrend-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ytrendBin = filepath.Join(dir, "ytrend")
	if out, err := exec.Command("go", "build", "-o", ytrendBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ytrend: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// Tests that run the binary as another user (runUnprivileged) need
	// to reach it.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testKey is distinctive so a leak is easy to grep for.
const testKey = "AIzaCLI-test-key-never-print-me-42"

// world is a test's environment: a simulator, a working directory with an
// archive, and the environment variables the binary sees.
type world struct {
	t   testing.TB
	sim *sim.Server
	srv *httptest.Server
	dir string
	env map[string]string
	// unsettled: config leaves a fresh credential's books alone (see settle).
	unsettled bool
}

// newWorld starts a simulator; wrap, if given, sits in front of it.
func newWorld(t testing.TB, cfg sim.Config, wrap ...func(*sim.Server) http.Handler) *world {
	t.Helper()
	if cfg.Keys == nil {
		cfg.Keys = []string{testKey}
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = s
	for _, wr := range wrap {
		h = wr(s)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return &world{t: t, sim: s, srv: srv, dir: dir, env: map[string]string{
		"PATH":             os.Getenv("PATH"),
		"HOME":             dir,
		"YTREND_DB":        filepath.Join(dir, "archive.db"),
		"YOUTUBE_ENDPOINT": srv.URL,
		"YOUTUBE_API_KEY":  testKey,
		"REDIS_URL":        "",
	}}
}

// config writes a config file and points YTREND_CONFIG at it.
func (w *world) config(yaml string) string {
	w.t.Helper()
	p := filepath.Join(w.dir, fmt.Sprintf("config-%d.yaml", time.Now().UnixNano()))
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		w.t.Fatal(err)
	}
	w.env["YTREND_CONFIG"] = p
	if u := w.env["REDIS_URL"]; u != "" && !w.unsettled {
		settle(w.t, u, yaml)
	}
	return p
}

// settle starts the credential's books on the Redis at url as a long
// running deployment has them: on Redis a missing epoch is a loss, so the
// very first process to spend would otherwise meet a grace that the tests
// of other things should not wait out. The tests of that grace are quota's.
func settle(tb testing.TB, url, yaml string) {
	tb.Helper()
	cfg, err := config.Parse("test config", []byte(yaml))
	if err != nil {
		tb.Fatalf("settle: %v", err)
	}
	qc := cfg.QuotaConfig()
	qc.RebuildGrace = time.Microsecond
	// Setup, not the test: a config's short backend timeout (200ms in the
	// outage tests) is for the processes under test. Loading the scripts
	// took longer than that beside the race run (FUNCTION LOAD: context
	// deadline exceeded).
	qc.Timeout = max(qc.Timeout, 10*time.Second)
	rdb, err := redisclient.Open(url, 10*time.Second)
	if err != nil {
		tb.Fatalf("settle: %v", err)
	}
	defer rdb.Close()
	l, err := quota.New(qc, quota.NewRedis(rdb))
	if err != nil {
		tb.Fatalf("settle: %v", err)
	}
	if _, err := l.Sync(context.Background(), false); err != nil {
		tb.Fatalf("settle the books on %s: %v", url, err)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

func (w *world) command(args ...string) *exec.Cmd {
	cmd := exec.Command(ytrendBin, args...)
	cmd.Dir = w.dir
	for k, v := range w.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func (w *world) run(args ...string) result {
	w.t.Helper()
	return w.runCmd(w.command(args...), 0)
}

// runCmd runs cmd, one of w.command's, to its end and returns what it
// printed and its exit code. within, if positive, is how long it may run:
// one still running then is killed and fails the test, instead of holding
// it until go test's own timeout.
func (w *world) runCmd(cmd *exec.Cmd, within time.Duration) result {
	w.t.Helper()
	what := fmt.Sprintf("ytrend %v", cmd.Args[1:])
	if a := cmd.SysProcAttr; a != nil && a.Credential != nil {
		what += fmt.Sprintf(" as uid %d", a.Credential.Uid)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	var timer *time.Timer
	if within > 0 {
		timer = time.AfterFunc(within, func() { cmd.Process.Kill() })
	}
	err := cmd.Wait()
	if timer != nil && !timer.Stop() {
		w.t.Fatalf("%s was still running after %v; stderr:\n%s", what, within, errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	return result{out.String(), errb.String(), code}
}

func (w *world) mustRun(args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	if r.code != 0 {
		w.t.Fatalf("ytrend %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, s)
	}
	return v
}

func (w *world) openDB() *store.DB {
	w.t.Helper()
	db, err := store.Open(context.Background(), w.env["YTREND_DB"])
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { db.Close() })
	return db
}

// assertNoKey greps every output and every file in the working directory
// for the API key.
// indexSegments is how many segments the archive's full-text index has.
func (w *world) indexSegments() int {
	w.t.Helper()
	db := w.openDB()
	defer db.Close()
	n, err := db.IndexSegments(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return n
}

// freePages is the archive's count of pages on SQLite's free list.
func (w *world) freePages() int {
	w.t.Helper()
	db := w.openDB()
	defer db.Close()
	var n int
	if err := db.Reader().QueryRow(`PRAGMA freelist_count`).Scan(&n); err != nil {
		w.t.Fatal(err)
	}
	return n
}

func (w *world) assertNoKey(outputs ...string) {
	w.t.Helper()
	for _, o := range outputs {
		if strings.Contains(o, testKey) {
			w.t.Errorf("the API key appears in command output:\n%s", o)
		}
	}
	filepath.WalkDir(w.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(testKey)) {
			w.t.Errorf("the API key appears in %s", filepath.Base(path))
		}
		return nil
	})
}

func TestFetchAllDefaultRegions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	// Everything that could print requests is on; the key still must not show.
	w.env["GOOGLE_SDK_GO_LOGGING_LEVEL"] = "debug"
	r := w.mustRun("fetch", "US", "GB", "DE", "FR", "IN", "BR", "AU", "CA", "--json", "--log-level", "debug")
	if strings.Contains(r.stderr, `"api request"`) {
		t.Error("the Google SDK's own request log reached stderr")
	}
	reports := decode[[]view.FetchReport](t, r.stdout)
	if len(reports) != 8 {
		t.Fatalf("%d reports", len(reports))
	}
	// Each region's first fetch of the day also asks for its category
	// names: one unit more than its four pages.
	for _, rep := range reports {
		if rep.Status != "ok" || rep.Pages != 4 || rep.Videos != 200 || rep.Units != 5 || rep.Error != "" {
			t.Errorf("%+v", rep)
		}
	}
	if n := strings.Count(r.stderr, " page "); n != 32 {
		t.Errorf("%d progress lines on stderr, want 32 (one per page):\n%s", n, r.stderr)
	}
	if !strings.Contains(r.stderr, "US page 1/4: 50 videos (50 new, 0 updated), 2 units so far, 9498 remaining") {
		t.Errorf("first progress line missing or wrong:\n%s", r.stderr)
	}
	if got := w.sim.Usage(testKey).Charged; got != 40 {
		t.Errorf("simulator charged %d, want 40", got)
	}

	runs := decode[[]runJSON](t, w.mustRun("runs", "--json").stdout)
	if len(runs) != 8 || runs[0].Region != "CA" || runs[0].Trigger != "cli" || runs[0].Units != 5 || runs[0].Status != "ok" {
		t.Errorf("runs: %+v", runs)
	}
	if one := decode[[]runJSON](t, w.mustRun("runs", "--region", "de", "--json").stdout); len(one) != 1 || one[0].Region != "DE" {
		t.Errorf("runs --region de: %+v", one)
	}

	st := decode[quotaStatusJSON](t, w.mustRun("quota", "status", "--json").stdout)
	if st.Backend != "ledger" || st.Limits[0].Name != "daily" || st.Limits[0].Used != 40 || st.Limits[0].Remaining != 9460 || st.Exhausted != nil {
		t.Errorf("quota status: %+v", st)
	}
	human := w.mustRun("quota", "status").stdout
	if !strings.Contains(human, "daily") || !strings.Contains(human, "9460") || !strings.Contains(human, "[") {
		t.Errorf("human quota status:\n%s", human)
	}

	// A word from a stored title finds that video, grouped with its regions.
	ids, err := w.sim.Chart("IN", "0", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	db := w.openDB()
	v, _, err := db.Video(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	word := longestWord(v.Title)
	hits := decode[[]map[string]any](t, w.mustRun("search", word, "--json", "--limit", "50").stdout)
	if len(hits) == 0 {
		t.Fatalf("search %q found nothing", word)
	}
	var found bool
	for _, h := range hits {
		for _, k := range []string{"video_id", "title", "channel_title", "regions", "best_rank", "last_seen", "views", "snippet"} {
			if _, ok := h[k]; !ok {
				t.Fatalf("hit lacks %q: %v", k, h)
			}
		}
		if h["video_id"] == ids[0] {
			found = true
			if !strings.Contains(h["snippet"].(string), "<mark>") {
				t.Errorf("snippet without markers: %v", h["snippet"])
			}
		}
	}
	if !found {
		t.Errorf("search %q did not find %s (%q)", word, ids[0], v.Title)
	}
	if out := w.mustRun("search", "zzqqxxnothing", "--json").stdout; strings.TrimSpace(out) != "[]" {
		t.Errorf("no hits printed %q, want []", out)
	}
	w.assertNoKey(r.stdout, r.stderr)
}

func longestWord(s string) string {
	best := ""
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" -|:()[]!?,.\"'#&/", r) }) {
		if len([]rune(f)) > len([]rune(best)) {
			best = f
		}
	}
	return best
}

func TestFetchRefusedByBudgetExits75(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.config(`
costs: {videos.list: 1, search.list: 100}
limits:
  - {name: daily,  units: 2,    window: 24h, costs: {videos.list: 1}}
  - {name: search, units: 1000, window: 1h,  costs: {search.list: 100}}
`)
	r := w.run("fetch", "US", "--json")
	if r.code != 75 {
		t.Fatalf("exit %d, want 75\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep := decode[[]view.FetchReport](t, r.stdout)[0]
	if rep.Status != "stopped_quota" || rep.Pages != 2 || rep.Videos != 100 || rep.RefusedBy != "daily" ||
		rep.RetryAfterSeconds < 86300 || rep.RetryAfterSeconds > 86400 {
		t.Errorf("%+v", rep)
	}
	if got := w.sim.Usage(testKey).Charged; got != 2 {
		t.Errorf("simulator charged %d, want 2", got)
	}
	// The next fetch is refused before any request is sent.
	if r := w.run("fetch", "GB"); r.code != 75 || !strings.Contains(r.stdout, "refused by daily") {
		t.Errorf("second fetch: exit %d\n%s", r.code, r.stdout)
	}
	if got := w.sim.TotalRequests(); got != 2 {
		t.Errorf("%d requests reached the simulator, want 2", got)
	}
	runs := decode[[]runJSON](t, w.mustRun("runs", "--json").stdout)
	if runs[1].Status != "stopped_quota" || runs[1].Pages != 2 || runs[1].RetryAt == "" || runs[0].Pages != 0 {
		t.Errorf("runs: %+v", runs)
	}
}

func TestBadInputGetsClearErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	typo := filepath.Join(w.dir, "typo.yaml")
	os.WriteFile(typo, []byte("regions:\n  - {code: US, cronn: \"0 * * * *\"}\n"), 0o644)
	cases := []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{[]string{"fetch", "UK"}, nil, 2, `"UK" is not a region code; did you mean "GB"?`},
		{[]string{"fetch"}, nil, 2, "requires at least 1 arg"},
		{[]string{"fetch", "US", "--pages", "9"}, nil, 2, "--pages 9: allowed 1-4"},
		{[]string{"fetch", "US"}, map[string]string{"YOUTUBE_API_KEY": ""}, 1, "no YouTube API key: set YOUTUBE_API_KEY"},
		{[]string{"--config", "missing.yaml", "quota", "status"}, nil, 1, "no such file"},
		{[]string{"--config", typo, "schedule", "check"}, nil, 1, `regions[0]: unknown field "cronn"`},
		{[]string{"quota", "reserve", "--cost", "0"}, nil, 1, "cost"},
		{[]string{"quota", "reserve", "--cost", "20000"}, nil, 1, "9500"},
		{[]string{"quota", "reserve", "--call", "nope.list"}, nil, 1, "nope.list"},
		{[]string{"quota", "reserve"}, nil, 2, "exactly one of --call NAME or --cost N"},
		{[]string{"quota", "status", "--redis", "http://localhost:6379"}, nil, 1, "invalid configuration:\n  redis.url (from --redis): "},
		{[]string{"quota", "status"}, map[string]string{"REDIS_URL": "redis://u:hunter2@localhost:bad/0"}, 1,
			"invalid configuration:\n  redis.url (from environment variable REDIS_URL): bad Redis URL \"redis://u:REDACTED@localhost:bad/0\""},
		{[]string{"search", "x", "--since", "yesterday"}, nil, 2, "--since"},
		{[]string{"search", "x", "--since", "-24h"}, nil, 2, `--since "-24h" is negative`},
		{[]string{"search", "x", "--since", "106752d"}, nil, 2, `--since "106752d" is too long: at most 106751d`},
		{[]string{"--db", ":memory:", "migrate"}, nil, 1, "WAL cannot be enabled"},
		{[]string{"--db", ":memory:", "search", "x"}, nil, 1, "no archive at :memory:"},
		{[]string{"search", "x", "--sort", "best"}, nil, 2, "--sort"},
		{[]string{"search", "x", "--limit", "0"}, nil, 2, "--limit"},
		{[]string{"runs", "--region", "XX"}, nil, 2, "XX"},
		{[]string{"run", "--once", "--log-format", "xml"}, nil, 2, "--log-format"},
		{[]string{"nosuch"}, nil, 2, "unknown command"},
	}
	for _, tc := range cases {
		saved := map[string]string{}
		for k, v := range tc.env {
			saved[k] = w.env[k]
			w.env[k] = v
		}
		r := w.run(tc.args...)
		for k, v := range saved {
			w.env[k] = v
		}
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("ytrend %s: exit %d, stderr %q; want exit %d mentioning %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.want)
		}
		if strings.Contains(r.stdout+r.stderr, "hunter2") {
			t.Errorf("ytrend %s printed the password in a URL: %q", strings.Join(tc.args, " "), r.stderr)
		}
	}
	if got := w.sim.TotalRequests(); got != 0 {
		t.Errorf("bad input sent %d requests to the API", got)
	}
}

func TestSearchTakesAnyText(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.mustRun("fetch", "US", "IN", "--pages", "1")
	for _, q := range []string{`"unbalanced`, "AND", "OR NOT", "NEAR(", "-", "*", "title:x", "c++", "don't", "🎵🔥", "a\x01b\x7f", strings.Repeat("long ", 2000), `") OR 1=1 --`} {
		r := w.run("search", q, "--json")
		if r.code != 0 {
			t.Errorf("search %q: exit %d: %s", q, r.code, r.stderr)
			continue
		}
		decode[[]map[string]any](t, r.stdout)
	}
}

func TestQuotaReserveByHand(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	r := w.mustRun("quota", "reserve", "--call", "videos.list", "--json", "--id", "script-1")
	res := decode[view.Reservation](t, r.stdout)
	if !res.Granted || remaining(res) != 9499 || res.RefusedBy != "" || res.RetryAfterSeconds != 0 || res.ID != "script-1" || res.Cost != 1 {
		t.Errorf("%+v", res)
	}
	// The same ID again is the same reservation: charged once.
	res = decode[view.Reservation](t, w.mustRun("quota", "reserve", "--call", "videos.list", "--json", "--id", "script-1").stdout)
	if !res.Granted || !res.Duplicate || remaining(res) != 9499 {
		t.Errorf("repeat: %+v", res)
	}
	// --cost charges every limit: the search limit is then down to 50.
	res = decode[view.Reservation](t, w.mustRun("quota", "reserve", "--cost", "950", "--json").stdout)
	if !res.Granted || remaining(res) != 50 || res.Call != "manual" {
		t.Errorf("--cost 950: %+v", res)
	}
	r = w.run("quota", "reserve", "--call", "search.list", "--json")
	if r.code != 75 {
		t.Fatalf("exit %d, want 75: %s", r.code, r.stderr)
	}
	res = decode[view.Reservation](t, r.stdout)
	if res.Granted || res.RefusedBy != "search" || res.RetryAfterSeconds < 3500 || res.RetryAfterSeconds > 3600 || remaining(res) != 50 {
		t.Errorf("refusal: %+v", res)
	}
	if !strings.Contains(r.stderr, `refused by limit "search"; retry after`) {
		t.Errorf("stderr %q", r.stderr)
	}
	// The ID can be given back (a call that was never sent).
	w.mustRun("quota", "release", "script-1")
	st := decode[quotaStatusJSON](t, w.mustRun("quota", "status", "--json").stdout)
	if st.Limits[0].Used != 950 {
		t.Errorf("used %d after release, want 950", st.Limits[0].Used)
	}
}

// remaining is a reservation's remaining units, -1 for null.
func remaining(res view.Reservation) int64 {
	if res.Remaining == nil {
		return -1
	}
	return *res.Remaining
}

func TestScheduleCheck(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.config(`
regions:
  - {code: US, cron: "0 * * * *", pages: 4}
  - {code: GB, cron: "0 * * * *", pages: 2}
  - {code: IN, cron: "CRON_TZ=Asia/Kolkata 30 6 * * *", pages: 4, offset: 2m,
     searches: [{q: cricket, order: viewCount, published_within: 24h, pages: 1}]}
`)
	out := w.mustRun("schedule", "check", "--from", "2026-11-21T00:00:00Z").stdout
	for _, want := range []string{
		"US      0 * * * *", "30m", "11-21 01:02:00", "daily 4, search 0", "daily 105, search 100",
		"daily   9500   1d      254", "9246", "search  1000   1h      100", "yes",
		"US      0 * * * *                        0s      11-21 00:00:00, 11-21 01:00:00, 11-21 02:00:00  daily 4, search 0      24           97.1",
		"category names: daily 1, search 0 more",
		"IN alone: every 15m55s", "all 3 regions at the same rate: every 16m50s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("schedule check output lacks %q:\n%s", want, out)
		}
	}
	w.config("regions:\n  - {code: US, cron: \"*/5 * * * *\", searches: [{q: news, pages: 2}]}\n")
	r := w.run("schedule", "check")
	if r.code != 1 || !strings.Contains(r.stderr, "over-commits") || !strings.Contains(r.stdout, "NO: over-committed") {
		t.Errorf("over-commit: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for yaml, want := range map[string]string{
		"regions:\n  - {code: US, cron: \"61 * * * *\"}\n":     `regions[0].cron: "61 * * * *" is not a valid cron spec`,
		"regions:\n  - {code: UK}\n":                           `did you mean "GB"?`,
		"limits:\n  - {name: daily, units: 50, window: 24h}\n": "search.list costs 100 but the limit holds only 50 units",
		"limits:\n  - {name: daily, units: -1, window: 24h}\n": "-1",
	} {
		w.config(yaml)
		if r := w.run("schedule", "check"); r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", yaml, r.code, r.stderr, want)
		}
	}
}

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	// A fresh file: everything pending.
	w.mustRun("migrate")
	out := w.mustRun("migrate", "--status").stdout
	if strings.Contains(out, "pending") || !strings.Contains(out, "0001_") || !strings.Contains(out, "applied") {
		t.Errorf("status after migrate:\n%s", out)
	}
	if out := w.mustRun("migrate").stdout; !strings.Contains(out, "schema up to date") {
		t.Errorf("second migrate: %s", out)
	}
}

// migrate, a writing command, makes the archive's missing directory as
// fetch does (red team: it failed with SQLite's "unable to open database
// file"), while migrate --status, which only reads, refuses the path and
// creates nothing.
func TestMigrateCreatesTheArchiveDirectory(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	path := filepath.Join(w.dir, "new", "deeper", "archive.db")
	if r := w.run("--db", path, "migrate", "--status"); r.code != exitError || !strings.Contains(r.stderr, "no archive at "+path) {
		t.Errorf("migrate --status on a missing directory: exit %d, stderr %q; want exit %d, no archive at %s", r.code, r.stderr, exitError, path)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("migrate --status created the directory (%v)", err)
	}
	if out := w.mustRun("--db", path, "migrate").stdout; !strings.Contains(out, path+": applied migrations [1 ") {
		t.Errorf("migrate into a new directory: %s", out)
	}
	if out := w.mustRun("--db", path, "migrate", "--status").stdout; strings.Contains(out, "pending") || !strings.Contains(out, "0001_") {
		t.Errorf("status after migrate:\n%s", out)
	}
	// The same directories fetch makes.
	fetched := filepath.Join(w.dir, "byfetch", "deeper", "archive.db")
	w.mustRun("--db", fetched, "fetch", "US")
	for _, d := range []string{"", "deeper"} {
		got, err := os.Stat(filepath.Join(w.dir, "new", d))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.Stat(filepath.Join(w.dir, "byfetch", d))
		if err != nil {
			t.Fatal(err)
		}
		if !got.IsDir() || got.Mode() != want.Mode() {
			t.Errorf("migrate made %s %v; fetch makes %v", filepath.Join("new", d), got.Mode(), want.Mode())
		}
	}
}

// migrate finishes every pending index upgrade and says which: an archive
// written before 0007 and 0009 has both.
func TestMigrateCommandUpgradesIndex(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	ctx := context.Background()
	db, err := store.Open(ctx, w.env["YTREND_DB"])
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	run, err := db.StartRun(ctx, "RU", store.TriggerSchedule, at)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SavePage(ctx, store.Page{RunID: run, Region: "RU", FetchedAt: at, Kind: store.PageChart, FirstRank: 1,
		Videos: []store.Video{{ID: "ru1", Title: "Дорого🤍Идеальные", ChannelID: "UCru", ChannelTitle: "Канал"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().ExecContext(ctx, `UPDATE index_upgrades SET done = 0, next_id = 0`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	const both = "words written against an emoji; CJK/Thai words in every column"
	r := w.mustRun("migrate")
	if !strings.Contains(r.stderr, "indexing "+both+": 1 videos") || !strings.Contains(r.stdout, "indexed "+both) {
		t.Errorf("migrate with two upgrades pending:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if r := w.mustRun("migrate"); strings.Contains(r.stderr+r.stdout, "indexing") || strings.Contains(r.stdout, "indexed") {
		t.Errorf("second migrate upgraded again:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	hits := decode[[]map[string]any](t, w.mustRun("search", "Дорого", "--json").stdout)
	if len(hits) != 1 || hits[0]["video_id"] != "ru1" {
		t.Errorf("search Дорого after migrate: %v", hits)
	}
}

// TestMakeDemo runs the demo script against the test binary: it must pass
// from a fresh tree with no Redis and no network but the simulator's.
func TestMakeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs the whole demo")
	}
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	// A copy of what the script needs, so the real .demo/ is untouched.
	for _, f := range []string{"scripts/demo.sh", "schedule.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(work, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(work, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "scripts/demo.sh")
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "BIN=" + ytrendBin, "REDIS_URL=redis://127.0.0.1:1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	for _, want := range []string{"run finished", "region=CA", "LIMIT", "stopped_quota", "exit status 75", "seen"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// No simulator left behind.
	if b, _ := exec.Command("pgrep", "-f", ytrendBin+" simulate").Output(); len(bytes.TrimSpace(b)) > 0 {
		t.Errorf("simulator still running: pids %s", b)
	}
}

// scraper polls an HTTP endpoint.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// within reports whether cond holds before d passes.
func within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUpstreamMarksShowInStatus: Google's 2026 search bucket runs out; the
// fetch stops on quota, status shows the mark on search.list alone, and the
// chart keeps working.
func TestUpstreamMarksShowInStatus(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{SearchCallsPerDay: 1})
	w.config(`
regions:
  - {code: US, pages: 1, searches: [{q: music, pages: 3}]}
`)
	r := w.run("fetch", "US", "--json")
	if r.code != 75 {
		t.Fatalf("exit %d, want 75\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep := decode[[]view.FetchReport](t, r.stdout)[0]
	if rep.Status != "stopped_quota" || rep.RefusedBy != "upstream" || !strings.Contains(rep.Error, sim.SearchQuotaLimit) {
		t.Errorf("%+v", rep)
	}
	st := decode[quotaStatusJSON](t, w.mustRun("quota", "status", "--json").stdout)
	if st.Exhausted != nil || len(st.ExhaustedCalls) != 1 || st.ExhaustedCalls[0].Call != "search.list" {
		t.Errorf("status marks: %+v %+v", st.Exhausted, st.ExhaustedCalls)
	}
	if out := w.mustRun("quota", "status").stdout; !strings.Contains(out, "search.list is refused until") {
		t.Errorf("human status does not show the mark:\n%s", out)
	}
	if r := w.run("fetch", "GB", "--no-search", "--json"); r.code != 0 {
		t.Errorf("chart after the search bucket ran out: exit %d\n%s", r.code, r.stderr)
	}
}

// TestNewerSchemaIsRefusedAndListed: an archive migrated by a newer ytrend
// is refused by every command, untouched, and migrate --status still lists it.
func TestNewerSchemaIsRefusedAndListed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	w.mustRun("migrate")
	db := w.openDB()
	if _, err := db.Writer().Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES (99, '0099_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, args := range [][]string{{"search", "x"}, {"runs"}, {"migrate"}, {"quota", "status"}} {
		if r := w.run(args...); r.code != 1 || !strings.Contains(r.stderr, "newer") {
			t.Errorf("ytrend %v: exit %d, stderr %q; want a refusal naming the newer schema", args, r.code, r.stderr)
		}
	}
	r := w.run("migrate", "--status")
	if r.code != 1 || !strings.Contains(r.stdout, "0001_init.sql") || !strings.Contains(r.stderr, "upgrade ytrend") {
		t.Errorf("migrate --status: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// optimize merges the index of a real archive into one segment, keeps every
// search answer, and refuses a path with no archive instead of creating one.
func TestOptimizeCommand(t *testing.T) {
	w := newWorld(t, sim.Config{})
	r := w.run("optimize")
	if r.code != 1 || !strings.Contains(r.stderr, "no archive at "+w.env["YTREND_DB"]) {
		t.Fatalf("optimize without an archive: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(w.env["YTREND_DB"]); err == nil {
		t.Fatal("optimize created an archive")
	}
	w.mustRun("fetch", "US", "IN", "BR")
	if n := w.indexSegments(); n < 2 {
		t.Fatalf("%d index segments after 12 pages; the test needs several", n)
	}
	before := w.mustRun("search", "the", "--limit", "50", "--json").stdout
	r = w.mustRun("optimize")
	if !strings.Contains(r.stderr, "maintenance finished") || !strings.Contains(r.stderr, "index_segments=1 ") {
		t.Errorf("optimize log:\n%s", r.stderr)
	}
	if n := w.indexSegments(); n != 1 {
		t.Errorf("%d index segments after optimize, want 1", n)
	}
	if after := w.mustRun("search", "the", "--limit", "50", "--json").stdout; after != before {
		t.Errorf("search answers changed:\nbefore %s\nafter  %s", before, after)
	}
	// --compact then rewrites the file: the pages the merge freed are gone.
	if w.freePages() == 0 {
		t.Fatal("no free page after the merge; the test cannot tell a compaction")
	}
	r = w.mustRun("optimize", "--compact")
	if !strings.Contains(r.stderr, "archive compacted") || w.freePages() != 0 {
		t.Errorf("optimize --compact: %d free pages after it, log:\n%s", w.freePages(), r.stderr)
	}
	if after := w.mustRun("search", "the", "--limit", "50", "--json").stdout; after != before {
		t.Errorf("search answers changed by the compaction:\nbefore %s\nafter  %s", before, after)
	}
}

// A writer given the archive's path with a trailing slash must not make
// the archive's own path a directory (red team 27): makeArchiveDir takes
// filepath.Dir of "new/archive.db/", which is "new/archive.db", makes it,
// and SQLite then fails with "unable to open database file", leaving a
// directory where the archive belongs, which the next run with the right
// path trips on.
func TestWriterWithTrailingSlashMakesNoDirectoryAtTheArchive(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	for _, args := range [][]string{{"migrate"}, {"fetch", "US"}} {
		path := filepath.Join(w.dir, args[0], "archive.db")
		r := w.run(append([]string{"--db", path + "/"}, args...)...)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			t.Errorf("%s --db %s/: exit %d, stderr %q, and %s is now a directory", args[0], path, r.code, r.stderr, path)
		}
		if r.code != 1 || !strings.Contains(r.stderr, "name the archive's file, such as "+filepath.Join(path, "ytrend.db")) {
			t.Errorf("%s --db %s/: exit %d, stderr %q; want 1 and the file to name", args[0], path, r.code, r.stderr)
		}
	}
	// A directory where the archive goes: every command says so, and
	// nothing is made in it.
	dir := filepath.Join(w.dir, "adir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"search", "x"}, {"migrate"}, {"fetch", "US"}} {
		r := w.run(append([]string{"--db", dir}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, dir+" is a directory: not a ytrend archive") {
			t.Errorf("%s --db DIR: exit %d, stderr %q; want 1 and \"is a directory\"", args[0], r.code, r.stderr)
		}
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("the directory holds %v (%v), want nothing", ents, err)
	}
}
