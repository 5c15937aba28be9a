package quota_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// The concurrency test: two OS processes of 32 goroutines each hammer one
// credential with random costs; every grant is written down, and an
// independent sum over the merged grants checks that no window of the
// limit's length ever held more than the limit.

const (
	hammerProcs    = 2
	hammerWorkers  = 32
	hammerUnits    = 100
	hammerWindow   = 250 * time.Millisecond
	hammerDuration = 2500 * time.Millisecond

	envHelper   = "QUOTA_TEST_HELPER" // "redis" or "ledger": run as a hammering child
	envCred     = "QUOTA_TEST_CRED"
	envDB       = "QUOTA_TEST_DB"
	envOut      = "QUOTA_TEST_OUT"
	envStartAt  = "QUOTA_TEST_START" // unix µs: both children start together
	hammerCalls = "c1 c2 c3 c5 c8 c13"
)

func hammerConfig(cred string) quota.Config {
	costs := map[string]int64{}
	for _, c := range strings.Fields(hammerCalls) {
		n, _ := strconv.ParseInt(c[1:], 10, 64)
		costs[c] = n
	}
	cfg := oneLimit(cred, hammerUnits, hammerWindow, costs)
	cfg.Limits[0].Name = "burst"
	cfg.Timeout = 10 * time.Second // contention under -race; a backend error is counted, never granted (policy closed)
	return cfg
}

type grant struct {
	at   int64 // backend clock, µs
	cost int64
}

// It does not run in parallel with the package's other tests: it needs its
// two children to saturate a 250 ms window, and on a 2-core machine under
// -race the other tests' archive migrations would starve them.
func TestConcurrentProcesses(t *testing.T) {
	for _, kind := range []string{"redis", "ledger"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			env := []string{envHelper + "=" + kind}
			switch kind {
			case "redis":
				redistest.Client(t) // skip (or fail under CI) without Redis
				env = append(env, envCred+"="+redistest.Prefix(t))
			case "ledger":
				path := filepath.Join(dir, "shared.db")
				openStoreAt(t, path) // migrate once, before the children race to
				env = append(env, envCred+"=hammer", envDB+"="+path)
			}
			start := time.Now().Add(time.Second).UnixMicro() // time for both children to start up
			env = append(env, fmt.Sprintf("%s=%d", envStartAt, start))

			var wg sync.WaitGroup
			outs := make([]string, hammerProcs)
			logs := make([][]byte, hammerProcs)
			errs := make([]error, hammerProcs)
			for i := range hammerProcs {
				outs[i] = filepath.Join(dir, fmt.Sprintf("grants-%d.txt", i))
				cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
				cmd.Env = append(append(os.Environ(), env...), envOut+"="+outs[i])
				wg.Add(1)
				go func() {
					defer wg.Done()
					logs[i], errs[i] = cmd.CombinedOutput()
				}()
			}
			wg.Wait()
			var grants []grant
			for i := range hammerProcs {
				if errs[i] != nil {
					t.Fatalf("child %d: %v\n%s", i, errs[i], logs[i])
				}
				g, summary := readGrants(t, outs[i])
				t.Logf("child %d: %s", i, summary)
				if !strings.Contains(summary, " errors=0") {
					t.Errorf("child %d had backend errors: %s\n%s", i, summary, logs[i])
				}
				if len(g) == 0 {
					t.Errorf("child %d was granted nothing: the processes did not overlap", i)
				}
				grants = append(grants, g...)
			}
			checkWindows(t, grants)
		})
	}
}

// checkWindows is the independent check: for every grant at time t, the
// grants in (t - window, t] - the window the limiter saw when it decided -
// must sum to at most the limit.
func checkWindows(t testing.TB, grants []grant) {
	t.Helper()
	slices.SortFunc(grants, func(a, b grant) int { return int(a.at - b.at) })
	var total, peak, sum int64
	lo := 0
	w := hammerWindow.Microseconds()
	for hi, g := range grants {
		sum += g.cost
		total += g.cost
		for grants[lo].at <= g.at-w {
			sum -= grants[lo].cost
			lo++
		}
		if sum > hammerUnits {
			t.Fatalf("window (%d, %d] µs holds %d units > limit %d (%d grants)", g.at-w, g.at, sum, hammerUnits, hi-lo+1)
		}
		peak = max(peak, sum)
	}
	span := time.Duration(grants[len(grants)-1].at-grants[0].at) * time.Microsecond
	t.Logf("%d grants, %d units over %s; fullest window %d/%d", len(grants), total, span, peak, hammerUnits)
	// The test must actually have saturated and slid the window.
	if peak < hammerUnits-12 {
		t.Errorf("fullest window held %d units; the limit was never reached", peak)
	}
	if total < 2*hammerUnits {
		t.Errorf("only %d units granted in all; the window never slid", total)
	}
}

func readGrants(t testing.TB, path string) ([]grant, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []grant
	var summary string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			summary = line
			continue
		}
		var g grant
		if _, err := fmt.Sscan(line, &g.at, &g.cost); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		out = append(out, g)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, summary
}

// TestHelperProcess is the child of TestConcurrentProcesses; run directly it
// does nothing.
func TestHelperProcess(t *testing.T) {
	kind := os.Getenv(envHelper)
	if kind == "" {
		return
	}
	cred, out := os.Getenv(envCred), os.Getenv(envOut)
	startUS, _ := strconv.ParseInt(os.Getenv(envStartAt), 10, 64)
	var b quota.Backend
	switch kind {
	case "redis":
		b = quota.NewRedis(redistest.Client(t))
	case "ledger":
		b = quota.NewSQLite(openStoreAt(t, os.Getenv(envDB)).Writer())
	default:
		t.Fatalf("unknown backend %q", kind)
	}
	l := newLimiter(t, hammerConfig(cred), b)
	calls := strings.Fields(hammerCalls)

	time.Sleep(time.Until(time.UnixMicro(startUS)))
	deadline := time.Now().Add(hammerDuration)
	var (
		mu                sync.Mutex
		grants            []grant
		refused, failures int
		firstErr          error
		wg                sync.WaitGroup
	)
	for w := range hammerWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(w)))
			for time.Now().Before(deadline) {
				res, err := l.Reserve(context.Background(), calls[rng.IntN(len(calls))])
				mu.Lock()
				switch {
				case err == nil:
					grants = append(grants, grant{res.At.UnixMicro(), res.Cost})
				case errors.Is(err, quota.ErrRefused):
					refused++
				default:
					failures++
					if firstErr == nil {
						firstErr = err
					}
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
				}
			}
		}()
	}
	wg.Wait()

	var sb strings.Builder
	for _, g := range grants {
		fmt.Fprintf(&sb, "%d %d\n", g.at, g.cost)
	}
	fmt.Fprintf(&sb, "# granted=%d refused=%d errors=%d first_error=%v\n", len(grants), refused, failures, firstErr)
	if err := os.WriteFile(out, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
