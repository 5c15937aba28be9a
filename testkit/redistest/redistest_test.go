package redistest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/testkit/redistest"
)

// TestClientFindsARedis: Client uses the Redis at REDIS_URL when it
// answers; otherwise a private redis-server, one per test binary, killed
// with it; without redis-server to start it skips, and under CI fails.
// Each case runs TestHelperClient in a child test binary, since the
// choice is made once per binary.
func TestClientFindsARedis(t *testing.T) {
	t.Parallel()
	shared := redistest.StartServer(t)
	dead := "unix://" + filepath.Join(t.TempDir(), "nothing.sock")
	noBinary := t.TempDir() // a PATH without redis-server
	tests := []struct {
		name string
		env  []string
		want string // the child's verdict on TestHelperClient
		says string
	}{
		{"REDIS_URL answers", []string{"REDIS_URL=" + shared.URL()}, "PASS", "redis " + shared.Addr() + " "},
		{"REDIS_URL dead", []string{"REDIS_URL=" + dead}, "PASS", "redis 127.0.0.1:"},
		{"REDIS_URL dead, no redis-server", []string{"REDIS_URL=" + dead, "PATH=" + noBinary}, "SKIP",
			"no redis-server installed to start one; start one or set REDIS_URL"},
		{"REDIS_URL dead, no redis-server, CI", []string{"REDIS_URL=" + dead, "PATH=" + noBinary, "CI=true"}, "FAIL",
			"Redis is required under CI: no Redis at " + dead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperClient$", "-test.v", "-test.count=1")
			cmd.Env = append(environWithout("REDIS_URL", "CI", "PATH"), "REDISTEST_HELPER=1", "PATH="+os.Getenv("PATH"))
			cmd.Env = append(cmd.Env, tt.env...)
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), "--- "+tt.want+": TestHelperClient") || !strings.Contains(string(out), tt.says) {
				t.Fatalf("child says:\n%s\nwant %s saying %q", out, tt.want, tt.says)
			}
			m := regexp.MustCompile(`redis (\S+) pid (\d+)`).FindStringSubmatch(string(out))
			if tt.name != "REDIS_URL dead" || runtime.GOOS != "linux" {
				return
			}
			if m == nil || m[1] == shared.Addr() {
				t.Fatalf("child used %q, want a private server:\n%s", m, out)
			}
			// The child has exited: its private server must not outlive it.
			deadline := time.Now().Add(time.Minute)
			for alive(m[2]) {
				if time.Now().After(deadline) {
					t.Fatalf("the child's redis-server (pid %s) outlived it", m[2])
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestHelperClient is run by TestClientFindsARedis in a child test
// binary; on its own it does nothing.
func TestHelperClient(t *testing.T) {
	if os.Getenv("REDISTEST_HELPER") == "" {
		t.Skip("run by TestClientFindsARedis")
	}
	c := redistest.Client(t)
	addr := c.Options().Addr
	if again := redistest.Client(t).Options().Addr; again != addr {
		t.Errorf("a second Client reached %s, the first %s: want one Redis per binary", again, addr)
	}
	if u := redistest.URL(); u != "redis://"+addr+"/0" {
		t.Errorf("URL() = %q, want the Redis Client reached (%s)", u, addr)
	}
	info, err := c.InfoMap(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("redis %s pid %s\n", addr, info["Server"]["process_id"])
}

func environWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			env = append(env, kv)
		}
	}
	return env
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
