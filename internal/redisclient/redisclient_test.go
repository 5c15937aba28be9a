package redisclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/internal/secret"
	"github.com/ytrend/ytrend/testkit/logbuf"
	"github.com/ytrend/ytrend/testkit/redistest"
)

func TestKindOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want Kind
	}{
		{"redis://127.0.0.1:6379/0", Single},
		{"rediss://user:pw@cache.example:6380/1", Single},
		{"unix:///run/redis.sock", Single},
		{"redis://s1:26379?master_name=main&addr=s2:26379&addr=s3:26379", Sentinel},
		{"redis://n1:6379?addr=n2:6379&addr=n3:6379", Cluster},
		{"redis://n1:6379/0?addr=n2:6379", Cluster},
	}
	for _, tt := range tests {
		if got, err := KindOf(tt.url); err != nil || got != tt.want {
			t.Errorf("KindOf(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
		}
	}
	for bad, why := range map[string]string{
		"http://x:6379":                        "allowed schemes",
		"127.0.0.1:6379":                       "",
		"redis://u:s3cr%zz@h":                  "",
		"redis://s1:1?master_name=&addr=s2:1":  "master_name is empty",
		"redis://n1:1/2?addr=n2:1":             `database "2": Redis Cluster has only database 0`,
		"redis://h:1?timeout=1s":               "unexpected option: timeout",
		"redis://h:1/x":                        `invalid database number: "x"`,
		"redis://s1:1?master_name=m&addr=oops": "unable to parse addr param: oops",
	} {
		_, err := KindOf(bad)
		if !errors.Is(err, ErrBadURL) || !strings.Contains(err.Error(), why) {
			t.Errorf("KindOf(%q) = %v, want ErrBadURL saying %q", bad, err, why)
		}
	}
}

// TestPasswordNeverShown: neither Redact nor any error of Open carries the
// password.
func TestPasswordNeverShown(t *testing.T) {
	t.Parallel()
	const pw = "hunter2-very-secret"
	if got := secret.URL("redis://app:" + pw + "@h:6379/0"); strings.Contains(got, pw) || got != "redis://app:"+secret.Mask+"@h:6379/0" {
		t.Errorf("secret.URL = %q", got)
	}
	for _, raw := range []string{
		"redis://app:" + pw + "@h:6379/notadb",
		"redis://app:" + pw + "@h:6379?master_name=m&addr=x:1&dial_timeout=nonsense",
		"ftp://app:" + pw + "@h",
		"rediss//app:" + pw + "@h", // a scheme's typo: no URL to parse
		// An unescaped "/" in the password (base64 holds them): Go's parse
		// error quoted the piece before it as a port.
		"redis://app:zq9x/" + pw + "@h:1/0",
	} {
		_, err := Open(raw, 0)
		if err == nil || strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "zq9x") {
			t.Errorf("Open(%q) = %v; want an error without the password", secret.URL(raw), err)
		}
	}
}

// TestOpenEachForm: each URL form gives a client of its kind that reaches
// a real server (a single node, a Sentinel topology, a Cluster).
func TestOpenEachForm(t *testing.T) {
	t.Parallel()
	single := redistest.StartServer(t)
	cluster := redistest.StartCluster(t)
	sentinel := redistest.StartSentinel(t)
	for name, tt := range map[string]struct {
		url  string
		want string
	}{
		"single":   {single.URL(), "*redis.Client"},
		"sentinel": {sentinel.URL(), "*redis.Client"},
		"cluster":  {cluster.URL(), "*redis.ClusterClient"},
	} {
		c, err := Open(tt.url, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer c.Close()
		if got := typeName(c); got != tt.want {
			t.Errorf("%s: client %s, want %s", name, got, tt.want)
		}
		// ytrend's options reach every form (FailoverClient is a
		// *redis.Client; a ClusterClient passes them to its nodes).
		var o *redis.Options
		switch c := c.(type) {
		case *redis.Client:
			o = c.Options()
		case *redis.ClusterClient:
			node, err := c.MasterForKey(context.Background(), "ytrend:{t}:probe")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			o = node.Options()
		}
		if o == nil || o.ReadTimeout != 5*time.Second || o.DialTimeout != 5*time.Second || !o.ContextTimeoutEnabled || o.MaxRetries != 1 {
			t.Errorf("%s: options %+v, want 5s timeouts, context deadlines honoured, one retry", name, o)
		}
		if err := c.Set(context.Background(), "ytrend:{t}:probe", name, 0).Err(); err != nil {
			t.Errorf("%s: SET through the client: %v", name, err)
		}
	}
	// The Sentinel client reached the master, not a sentinel.
	if v, err := sentinel.Master.Client().Get(context.Background(), "ytrend:{t}:probe").Result(); err != nil || v != "sentinel" {
		t.Errorf("master holds %q, %v", v, err)
	}
}

func typeName(c redis.UniversalClient) string {
	switch c.(type) {
	case *redis.Client:
		return "*redis.Client"
	case *redis.ClusterClient:
		return "*redis.ClusterClient"
	}
	return "other"
}

// TestDurability: the warnings say exactly what can lose the budget.
func TestDurability(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string // substrings, one per warning, in order
	}{
		{"nothing persisted", nil, []string{"no persistence"}},
		{"aof", []string{"--appendonly", "yes"}, nil},
		{"rdb only", []string{"--save", "3600 1"}, []string{"RDB snapshots only"}},
		// The budget's keys have no TTL: volatile-* never evicts them.
		{"evicting keys with a TTL", []string{"--appendonly", "yes", "--maxmemory", "100mb", "--maxmemory-policy", "volatile-lru"}, nil},
		{"evicting any key", []string{"--appendonly", "yes", "--maxmemory", "100mb", "--maxmemory-policy", "allkeys-random"},
			[]string{"maxmemory-policy allkeys-random"}},
		{"noeviction", []string{"--appendonly", "yes", "--maxmemory", "100mb", "--maxmemory-policy", "noeviction"}, nil},
		{"a policy but no maxmemory", []string{"--appendonly", "yes", "--maxmemory-policy", "allkeys-lru"}, nil},
		{"aof without fsync", []string{"--appendonly", "yes", "--appendfsync", "no"}, []string{"appendfsync no"}},
		{"aof fsynced every second", []string{"--appendonly", "yes", "--appendfsync", "everysec"}, nil},
		{"CONFIG renamed away", []string{"--rename-command", "CONFIG", ""}, []string{"CONFIG is not allowed"}},
		{"CONFIG renamed away, aof", []string{"--appendonly", "yes", "--rename-command", "CONFIG", ""}, nil},
		{"nothing safe", []string{"--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"},
			[]string{"no persistence", "maxmemory-policy allkeys-lru"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := redistest.StartServer(t, tt.args...)
			got, err := Durability(context.Background(), s.Client())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", got, len(tt.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("warning %d = %q, want it to say %q", i, got[i], tt.want[i])
				}
			}
		})
	}
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.StartCluster(t)
		client, err := Open(c.URL(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		got, err := Durability(context.Background(), client)
		if err != nil || len(got) != 3 {
			t.Fatalf("warnings = %q, %v; want one per master", got, err)
		}
		for _, w := range got {
			if !strings.Contains(w, "no persistence") {
				t.Errorf("warning %q", w)
			}
		}
	})
}

// TestOpenTimeoutFloor: a zero or tiny timeout gets the 50 ms floor.
func TestOpenTimeoutFloor(t *testing.T) {
	t.Parallel()
	c, err := Open("redis://127.0.0.1:1/0", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if o := c.(*redis.Client).Options(); o.ReadTimeout != 50*time.Millisecond || o.WriteTimeout != 50*time.Millisecond {
		t.Errorf("read %s write %s, want 50ms", o.ReadTimeout, o.WriteTimeout)
	}
}

// TestSentinelLogsRoutineAtDebug: a Sentinel client names its master on
// first contact; that is routine, logged at DEBUG, and nothing it says on
// a healthy topology is a warning. Not parallel: go-redis' logger is
// process-wide.
func TestSentinelLogsRoutineAtDebug(t *testing.T) {
	s := redistest.StartSentinel(t)
	var buf logbuf.Buffer
	RouteLogs(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer RouteLogs(slog.Default())
	c, err := Open(s.URL(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(context.Background(), "ytrend:{t}:probe", "x", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	sawMaster := false
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if strings.HasPrefix(rec.Msg, "redis client: sentinel: new master=") {
			sawMaster = true
		}
		if rec.Level != "DEBUG" {
			t.Errorf("%s %q, want DEBUG", rec.Level, rec.Msg)
		}
	}
	if !sawMaster {
		t.Errorf("no \"new master\" line; logged:\n%s", buf.String())
	}
}

// TestRouteLogsLevels: routine lines at DEBUG, problems at WARN, with
// go-redis' own formats.
func TestRouteLogsLevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format string
		args   []any
		want   slog.Level
	}{
		{"sentinel: new master=%q addr=%q", []any{"main", "10.0.0.2:6379"}, slog.LevelDebug},
		{"sentinel: selected addr=%s masterAddr=%s", []any{"s1:26379", "10.0.0.2:6379"}, slog.LevelDebug},
		{"sentinel: discovered new sentinel=%q for master=%q", []any{"s4:26379", "main"}, slog.LevelDebug},
		{"sentinel: GetMasterAddrByName name=%q failed: %s", []any{"main", "i/o timeout"}, slog.LevelWarn},
		{"redis: connection pool: failed to get a usable connection after %d attempts", []any{3}, slog.LevelWarn},
	}
	for _, tt := range tests {
		var buf logbuf.Buffer
		p := slogPrinter{log: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		p.Printf(context.Background(), tt.format, tt.args...)
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(buf.String()), &rec); err != nil {
			t.Fatalf("%q: %v", buf.String(), err)
		}
		if rec.Level != tt.want.String() || rec.Msg != "redis client: "+fmt.Sprintf(tt.format, tt.args...) {
			t.Errorf("%s %q, want %s", rec.Level, rec.Msg, tt.want)
		}
	}
}

// TestDialFailureNamesItsCause: a Redis whose host name does not resolve
// (RFC 2606 keeps .invalid from ever resolving) fails a call with the
// lookup's error, in each URL form, and not with "context deadline
// exceeded" alone: go-redis retries the dial past the call's deadline, and
// the deadline's error was all it returned. The URL's password is not in
// the error.
func TestDialFailureNamesItsCause(t *testing.T) {
	t.Parallel()
	const pw = "hunter2-dial-secret"
	for _, raw := range []string{
		"redis://app:" + pw + "@no-such-host.invalid:6379/0",
		"redis://app:" + pw + "@no-such-host.invalid:26379?master_name=main",
		"redis://app:" + pw + "@no-such-host.invalid:6379?addr=no-such-host.invalid:6380",
	} {
		t.Run(secret.URL(raw), func(t *testing.T) {
			t.Parallel()
			c, err := Open(raw, 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err = c.Ping(ctx).Err()
			var dns *net.DNSError
			if !errors.As(err, &dns) || dns.Name != "no-such-host.invalid" || !strings.Contains(err.Error(), "lookup no-such-host.invalid") {
				t.Errorf("Ping = %v; want the failed lookup of no-such-host.invalid (a *net.DNSError)", err)
			}
			if err != nil && strings.Contains(err.Error(), pw) {
				t.Errorf("Ping = %v: the error shows the password", err)
			}
		})
	}
}

// TestDialFailureBeforeACallIsNotItsCause: a dial that failed before a
// call began, or that a later dial mended, does not explain the call's
// timeout.
func TestDialFailureBeforeACallIsNotItsCause(t *testing.T) {
	t.Parallel()
	refused := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	var d lastDial
	d.record(refused)
	if err := d.explain(context.DeadlineExceeded, time.Now().Add(time.Second)); err != nil {
		t.Errorf("a dial failed before the call: explain = %v, want nothing added", err)
	}
	since := time.Now().Add(-time.Second)
	if err := d.explain(context.DeadlineExceeded, since); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, refused) {
		t.Errorf("a dial failed during the call: explain = %v, want the timeout and the dial's error", err)
	}
	if err := d.explain(errors.New("ERR unknown command"), since); err != nil {
		t.Errorf("an answer from Redis: explain = %v, want nothing added", err)
	}
	d.record(nil)
	if err := d.explain(context.DeadlineExceeded, since); err != nil {
		t.Errorf("the last dial worked: explain = %v, want nothing added", err)
	}
}
