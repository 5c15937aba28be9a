package replication_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// TestNATSConnectionsAreClosed: every call that reads or writes a nats://
// replica closes the connections it opened, on success and on error. A
// `ytrend archive status` or a takeover that left one open per replica per
// call would pile up connections in a long-lived leader or standby.
//
// The replica is reached through a proxy of the test's own, on a port no
// other process uses, so the count is of this test's connections only; a
// client's socket leaves ESTABLISHED in the kernel's table as soon as
// nats.go's Close returns, so each step is checked when it returns.
func TestNATSConnectionsAreClosed(t *testing.T) {
	ctx := context.Background()
	direct := natsURL(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	port, proxied := natsProxy(t, u.Host)
	u.Host = proxied
	replica := u.String()
	missing := strings.TrimSuffix(replica, u.Path) + "/ytrend-no-such-bucket"

	db, path := archivetest.Open(t)
	o := opts()
	o.Retention = time.Nanosecond // every ended term is pruned by the next start
	steps := []struct {
		name string
		run  func() error
	}{
		{"Start and Stop a term", func() error {
			s, err := replication.Start(ctx, path, []string{replica}, 1, o)
			if err != nil {
				return err
			}
			saveCharts(t, db, 0, 1)
			if err := s.Sync(ctx); err != nil {
				return err
			}
			return s.Stop(ctx)
		}},
		{"Terms", func() error {
			ts, err := replication.Terms(ctx, replica)
			if err == nil && len(ts) != 1 {
				err = fmt.Errorf("terms %v, want term 1", ts)
			}
			return err
		}},
		{"Terms of a bucket that does not exist", func() error {
			if _, err := replication.Terms(ctx, missing); err == nil {
				return errors.New("no error")
			}
			return nil
		}},
		{"ReadStatus", func() error {
			st := replication.ReadStatus(ctx, path, []string{replica})
			if len(st) != 1 || st[0].LastError != "" || st[0].Generation != "term-0000000000000000001" {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		}},
		{"Start of a term another archive holds", func() error {
			_, other := archivetest.Open(t)
			if _, err := replication.Start(ctx, other, []string{replica}, 1, o); !errors.Is(err, replication.ErrTermTaken) {
				return fmt.Errorf("start: %v, want ErrTermTaken", err)
			}
			return nil
		}},
		{"Restore past a term with no file", func() error {
			if err := replication.MarkTerm(ctx, replica, 2); err != nil {
				return err
			}
			out := filepath.Join(t.TempDir(), "restored.db")
			r, err := replication.Restore(ctx, []string{replica}, out, replication.RestoreOptions{})
			if err == nil && r.Generation != "term-0000000000000000001" {
				err = fmt.Errorf("restored %s, want term 1", r.Generation)
			}
			return err
		}},
		{"Start that prunes an ended term", func() error {
			s, err := replication.Start(ctx, path, []string{replica}, 3, o)
			if err != nil {
				return err
			}
			if err := s.Stop(ctx); err != nil {
				return err
			}
			ts, err := replication.Terms(ctx, replica)
			if err == nil && (len(ts) != 1 || ts[0].Token != 3) {
				err = fmt.Errorf("terms %v, want 3 alone (1 and 2 pruned)", ts)
			}
			return err
		}},
	}
	for _, step := range steps {
		before := established(t, port)
		if err := step.run(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if n := established(t, port) - before; n != 0 {
			t.Errorf("%s: left %d more connections to NATS open, want 0", step.name, n)
		}
	}
}

// natsProxy forwards connections from a port of its own, returned with its
// address, to the NATS server at upstream.
func natsProxy(tb testing.TB, upstream string) (int, string) {
	tb.Helper()
	p := newProxy(tb, upstream)
	return p.port, p.addr
}

// proxy forwards connections to a NATS server; hold stops what the server
// sends from reaching the clients until it is released.
type proxy struct {
	port int
	addr string
	hold sync.RWMutex // held (Lock): nothing reaches the clients
}

func newProxy(tb testing.TB, upstream string) *proxy {
	tb.Helper()
	p := &proxy{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var open []net.Conn
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				down.Close()
				continue
			}
			mu.Lock()
			open = append(open, down, up)
			mu.Unlock()
			wg.Add(2)
			pipe := func(to, from net.Conn, held bool) {
				defer wg.Done()
				defer to.Close()
				defer from.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := from.Read(buf)
					if held {
						p.hold.RLock()
					}
					_, werr := to.Write(buf[:n])
					if held {
						p.hold.RUnlock()
					}
					if werr != nil || err != nil {
						return
					}
				}
			}
			go pipe(up, down, false)
			go pipe(down, up, true)
		}
	}()
	p.port, p.addr = ln.Addr().(*net.TCPAddr).Port, ln.Addr().String()
	return p
}

// established counts the sockets in the kernel's TCP table connected to
// 127.0.0.1:port: the clients' ends of the proxy's connections.
func established(tb testing.TB, port int) int {
	tb.Helper()
	fh, err := os.Open("/proc/self/net/tcp")
	if err != nil {
		tb.Skipf("no /proc TCP table to count connections in: %v", err)
	}
	defer fh.Close()
	remote := fmt.Sprintf("0100007F:%04X", port)
	n := 0
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		// sl local_address rem_address st ...
		f := strings.Fields(sc.Text())
		if len(f) > 3 && f[2] == remote {
			if st, err := strconv.ParseUint(f[3], 16, 8); err == nil && st == 1 { // TCP_ESTABLISHED
				n++
			}
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return n
}
