package redistest_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/testkit/redistest"
)

// TestReplicaAcks: StartReplica returns a replica WAIT counts at once; paused
// it acknowledges nothing, resumed it does again.
func TestReplicaAcks(t *testing.T) {
	t.Parallel()
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	c := master.Client()
	ctx := context.Background()
	acks := func() int64 {
		t.Helper()
		conn := c.Conn()
		defer conn.Close()
		var wait *redis.Cmd
		if _, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, "k")
			wait = p.Do(ctx, "WAIT", 1, 200)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return wait.Val().(int64)
	}
	if n := acks(); n != 1 {
		t.Fatalf("WAIT 1 right after StartReplica = %d, want 1", n)
	}
	replica.Pause()
	if n := acks(); n != 0 {
		t.Errorf("WAIT 1 with the replica paused = %d, want 0", n)
	}
	replica.Resume()
	if n := acks(); n != 1 {
		t.Errorf("WAIT 1 after Resume = %d, want 1", n)
	}
	if v, err := replica.Client().Get(ctx, "k").Result(); err != nil || v != "3" {
		t.Errorf("the replica holds k = %q, %v; want 3", v, err)
	}
}

// TestStartServerSkipsTakenPorts: a port someone took between being
// picked and bound (a listener, another redis-server) costs an attempt,
// not the test; the server that answers is the one started.
func TestStartServerSkipsTakenPorts(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	other := redistest.StartServer(t)
	ports := []int{taken, other.Port}
	// The attempts left go to ports free a moment ago: each may be taken
	// again, which is what the retries are for.
	for len(ports) < redistest.StartAttempts {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	s := redistest.StartServerOn(t, ports...)
	if s.Port == taken || s.Port == other.Port {
		t.Fatalf("started on taken port %d", s.Port)
	}
	ctx := context.Background()
	if err := s.Client().Set(ctx, "whose", "mine", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := other.Client().Get(ctx, "whose").Result(); err != redis.Nil {
		t.Errorf("the other server holds whose = %q, %v: the new one's client reached it", v, err)
	}
}

// fatalTB records a Fatal instead of failing the test, and ends the
// goroutine as Fatal does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatal(args ...any) { f.msg = fmt.Sprint(args...); runtime.Goexit() }
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestStartServerSaysWhyItExited: a server that exits is noticed when it
// exits, not after a timeout, and the failure quotes what it said.
func TestStartServerSaysWhyItExited(t *testing.T) {
	t.Parallel()
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		redistest.StartServer(f, "--no-such-directive", "yes")
	}()
	<-done
	for _, want := range []string{fmt.Sprintf("in %d attempts", redistest.StartAttempts), "exited before answering",
		"Bad directive or wrong number of arguments", "no-such-directive"} {
		if !strings.Contains(f.msg, want) {
			t.Errorf("failure %q\ndoes not say %q", f.msg, want)
		}
	}
}

// TestRestartWaitsForItsPort: a server restarted while another process
// holds its port comes back on that port once it is free.
func TestRestartWaitsForItsPort(t *testing.T) {
	t.Parallel()
	s := redistest.StartServer(t, "--appendonly", "yes")
	ctx := context.Background()
	if err := s.Client().Set(ctx, "k", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	port := s.Port
	s.Kill()
	ln, err := net.Listen("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	// Free the port once a start has failed on it.
	released := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer ln.Close()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log")); strings.Contains(string(log), "Address already in use") {
				close(released) // before the port is free: Restart cannot succeed first
				ln.Close()
				return
			}
		}
	}()
	s.Restart()
	select {
	case <-released:
	default:
		t.Fatal("restarted while the port was held")
	}
	if s.Port != port {
		t.Errorf("restarted on port %d, want %d", s.Port, port)
	}
	if v, err := s.Client().Get(ctx, "k").Result(); err != nil || v != "kept" {
		t.Errorf("after restart k = %q, %v; want kept (reloaded from its AOF)", v, err)
	}
}

// TestStartServerWithAPassword: a server started with --requirepass is
// ready once it answers its password, and its Client and URL carry it;
// a client without it is refused.
func TestStartServerWithAPassword(t *testing.T) {
	t.Parallel()
	const password = "p@ss/word:with-parts"
	s := redistest.StartServer(t, "--requirepass", password)
	ctx := context.Background()
	if err := s.Client().Ping(ctx).Err(); err != nil {
		t.Fatalf("Client: %v", err)
	}
	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatalf("URL %q: %v", s.URL(), err)
	}
	viaURL := redis.NewClient(opt)
	defer viaURL.Close()
	if err := viaURL.Ping(ctx).Err(); err != nil {
		t.Fatalf("a client of URL: %v", err)
	}
	bare := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer bare.Close()
	if err := bare.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("a client without the password: %v, want NOAUTH", err)
	}
}
