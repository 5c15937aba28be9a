package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a private redis-server a test starts on a loopback port of its
// own: for what must never be done to the shared one (restart it, kill it,
// lose its data, make it a cluster node or a sentinel).
//
// No port is reserved between choosing it and the server binding it, so
// another process may take it first (another test's server, a client's
// ephemeral port). A server that exits, or never answers as itself, is
// started again on another port; a restart, which must keep its port,
// retries the same one until it is free.
type Server struct {
	tb   testing.TB
	Port int
	Dir  string
	// Password is what "--requirepass" in StartServer's args set: the
	// start's readiness check, URL and Client authenticate with it.
	Password string
	argv     func(port int) []string // redis-server's arguments on port
	mu       sync.Mutex
	cmd      *exec.Cmd
	done     <-chan struct{} // closed when cmd has exited
}

const (
	// startAttempts is how many ports a new server tries.
	startAttempts = 5
	// readyTimeout bounds one start: the process answering as itself, or
	// exiting. A bind that fails exits at once; the bound is for a loaded
	// 2-core machine running the whole suite under -race.
	readyTimeout = 60 * time.Second
	// maxClusterPort is the highest port a cluster node can have: its bus
	// listens on port+10000.
	maxClusterPort = 65535 - 10000
)

// binary returns the path of name (redis-server, redis-cli), skipping
// (failing under CI) when there is none.
func binary(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Unavailable(tb, fmt.Errorf("%s not installed: %w", name, err))
	}
	return p
}

// freePort asks the kernel for a loopback port that is free now and at
// most maxPort. It is only a likely candidate: the caller retries a bind
// that fails.
func freePort(maxPort int) (int, error) {
	for range 1000 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if port <= maxPort {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free loopback port at most %d", maxPort)
}

// pickPort is freePort failing tb.
func pickPort(tb testing.TB, maxPort int) int {
	tb.Helper()
	port, err := freePort(maxPort)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return port
}

// spawn starts cmd, to be killed with the test binary, and returns a
// channel closed once it has exited. The goroutine that starts it stays on
// its OS thread until then: the kernel sends the death signal when the
// thread that forked the child ends, not the process, and the Go runtime
// may end a thread while the test runs.
func spawn(cmd *exec.Cmd) (<-chan struct{}, error) {
	setDeathSignal(cmd)
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Never unlocked: the thread ends with this goroutine, after the child.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

// StartServer starts a redis-server with no persistence, plus args (e.g.
// "--appendonly", "yes"), and stops it when the test ends.
func StartServer(tb testing.TB, args ...string) *Server {
	tb.Helper()
	dir := tb.TempDir()
	return startServer(tb, anyPort, func(port int) []string { return serverArgs(port, dir, args...) }, dir, requirePass(args))
}

// requirePass is the password "--requirepass" sets in args ("" if none).
func requirePass(args []string) string {
	pass := ""
	for i, a := range args {
		if a == "--requirepass" && i+1 < len(args) {
			pass = args[i+1]
		}
	}
	return pass
}

// serverArgs are a plain server's arguments: loopback only, no
// persistence unless args ask for it, a log in dir.
func serverArgs(port int, dir string, args ...string) []string {
	// No delay before a replica's full sync (default 5 s): a replica of
	// this server is in sync at once.
	return append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "redis.log"),
		"--repl-diskless-sync-delay", "0"}, args...)
}

// anyPort picks any free loopback port.
func anyPort(tb testing.TB) int { return pickPort(tb, 65535) }

// startServer starts a server on a port pick gives, trying another one
// when a start fails, and stops it when the test ends.
func startServer(tb testing.TB, pick func(testing.TB) int, argv func(port int) []string, dir, password string) *Server {
	tb.Helper()
	s := &Server{tb: tb, Dir: dir, argv: argv, Password: password}
	tb.Cleanup(s.stop)
	var errs []error
	for range startAttempts {
		s.Port = pick(tb)
		err := s.start()
		if err == nil {
			return s
		}
		errs = append(errs, err)
	}
	tb.Fatalf("redistest: no redis-server started in %d attempts:\n%v", startAttempts, errors.Join(errs...))
	return nil
}

// start runs redis-server on s.Port and waits until it answers as itself.
// An error means it exited first (its port taken, most likely) or never
// answered; it is no longer running then.
func (s *Server) start() error {
	s.tb.Helper()
	bin := binary(s.tb, "redis-server")
	// What redis-server writes before its log file is open (a bad
	// argument) goes to a file, not a pipe: a pipe would be held open by
	// the children it forks to save, and Wait would wait for them.
	out, err := os.OpenFile(filepath.Join(s.Dir, "redis.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.tb.Fatal(err)
	}
	defer out.Close()
	logs := s.logSizes()
	cmd := exec.Command(bin, s.argv(s.Port)...)
	cmd.Stdout, cmd.Stderr = out, out
	done, err := spawn(cmd)
	if err != nil {
		s.tb.Fatalf("redistest: start redis-server: %v", err)
	}
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := waitReady(s.Addr(), s.Password, cmd.Process.Pid, done); err != nil {
		s.Kill()
		return fmt.Errorf("redis-server on %s: %w\n%s", s.Addr(), err, s.logsSince(logs))
	}
	return nil
}

// waitReady waits until addr answers PING from the process pid, and not
// from another server that took the port (authenticating with password, if
// any). It returns at once when the process exits (done closed).
func waitReady(addr, password string, pid int, done <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: addr, Password: password, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: 2 * time.Second})
	defer c.Close()
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	want := "process_id:" + strconv.Itoa(pid)
	var last error
	for {
		select {
		case <-done:
			return errors.New("exited before answering")
		case <-deadline.C:
			return fmt.Errorf("did not answer within %s: %v", readyTimeout, last)
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		info, err := c.Info(ctx, "server").Result()
		if err == nil && !strings.Contains(info, want+"\r\n") {
			err = errors.New("another process answers on its port")
		}
		if err == nil {
			// PING, unlike INFO, waits until the data is loaded.
			err = c.Ping(ctx).Err()
		}
		cancel()
		if err == nil {
			return nil
		}
		last = err
	}
}

// logSizes are the sizes of s's log files now, to show what one start
// added to them.
func (s *Server) logSizes() map[string]int64 {
	m := map[string]int64{}
	for _, name := range []string{"redis.log", "redis.out", "sentinel.log"} {
		if fi, err := os.Stat(filepath.Join(s.Dir, name)); err == nil {
			m[name] = fi.Size()
		}
	}
	return m
}

// logsSince is what s's log files gained since sizes were taken.
func (s *Server) logsSince(sizes map[string]int64) string {
	var b strings.Builder
	for _, name := range []string{"redis.log", "redis.out", "sentinel.log"} {
		data, err := os.ReadFile(filepath.Join(s.Dir, name))
		if err != nil || int64(len(data)) <= sizes[name] {
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s", name, data[sizes[name]:])
	}
	return b.String()
}

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL is the server's redis:// URL, with its password if it has one.
func (s *Server) URL() string {
	u := url.URL{Scheme: "redis", Host: s.Addr(), Path: "/0"}
	if s.Password != "" {
		u.User = url.UserPassword("", s.Password)
	}
	return u.String()
}

// Client is a client of this server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: s.Password})
	s.tb.Cleanup(func() { c.Close() })
	return c
}

// Kill ends the server with SIGKILL: whatever it had not persisted is lost.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd != nil {
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

// Pause stops the server with SIGSTOP: it keeps its connections and
// answers nothing, as a frozen host would; a paused replica acknowledges no
// write. Resume continues it.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.tb.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		s.tb.Fatalf("redistest: %s: the server on %s is not running", sig, s.Addr())
	}
	if err := cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("redistest: %s to the server on %s: %v", sig, s.Addr(), err)
	}
}

// StartReplica starts a server (no persistence) replicating master and
// waits until it acknowledges the master's writes, so WAIT counts it.
func StartReplica(tb testing.TB, master *Server) *Server {
	tb.Helper()
	r := StartServer(tb, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	waitAcked(tb, master, 1)
	return r
}

// waitAcked waits until a write on master is acknowledged by n replicas,
// asked with WAIT on the writing connection. "master_link_status:up" is
// not enough: after a diskless sync the master streams to a replica, and
// WAIT counts it, only from its first ACK, up to a second later.
func waitAcked(tb testing.TB, master *Server, n int) {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: master.Addr(), MaxRetries: -1})
	defer c.Close()
	waitFor(tb, fmt.Sprintf("%d replicas of %s to acknowledge a write", n, master.Addr()), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn := c.Conn()
		defer conn.Close()
		var wait *redis.Cmd
		if _, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "redistest:ack-probe", time.Now().UnixNano(), time.Minute)
			wait = p.Do(ctx, "WAIT", n, 100)
			return nil
		}); err != nil {
			return false
		}
		acks, err := wait.Int64()
		return err == nil && acks >= int64(n)
	})
}

// Restart kills the server and starts it again on the same port and
// directory: with AOF or RDB configured it reloads them, without it comes
// back empty. Someone may take the port while it is down; Restart retries
// it until it is free again (up to a minute).
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	deadline := time.Now().Add(readyTimeout)
	for {
		err := s.start()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("redistest: restart on port %d: %v", s.Port, err)
		}
		time.Sleep(100 * time.Millisecond) // a retry's pace, not a proof
	}
}

func (s *Server) stop() { s.Kill() }

// Cluster is three private cluster-enabled masters, no replicas.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts a 3-master Redis Cluster and waits until it is ok.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	binary(tb, "redis-cli")
	c := &Cluster{}
	for range 3 {
		dir := tb.TempDir()
		clusterPort := func(tb testing.TB) int { return pickPort(tb, maxClusterPort) }
		c.Nodes = append(c.Nodes, startServer(tb, clusterPort, func(port int) []string {
			// A node's config file per port: the one a failed start
			// wrote names a port the node no longer has.
			return serverArgs(port, dir, "--cluster-enabled", "yes", "--cluster-config-file",
				filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port)), "--cluster-node-timeout", "2000")
		}, dir, ""))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	waitFor(tb, "the cluster to be ok", func() bool {
		for _, n := range c.Nodes {
			nc := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1})
			info, err := nc.ClusterInfo(context.Background()).Result()
			nc.Close()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	return c
}

// URL is the cluster in go-redis' URL form: several addr= and no master_name.
func (c *Cluster) URL() string {
	u := "redis://" + c.Nodes[0].Addr() + "?"
	for i, n := range c.Nodes[1:] {
		if i > 0 {
			u += "&"
		}
		u += "addr=" + n.Addr()
	}
	return u
}

// Sentinel is a master, one replica and three sentinels watching them.
type Sentinel struct {
	tb        testing.TB
	Name      string
	Master    *Server
	Replica   *Server
	Sentinels []*Server
}

// StartSentinel starts the topology with down-after-milliseconds 1000, so a
// SIGKILLed master is failed over in about 3 s. It returns once the replica
// acknowledges the master's writes (WAIT counts it) and every sentinel
// knows it. Each sentinel is told its peers and the replica in its config,
// rather than learning them from hello messages every 2 s.
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	s := &Sentinel{tb: tb, Name: "ytrendtest"}
	s.Master = StartServer(tb)
	s.Replica = StartReplica(tb, s.Master)
	var errs []error
	for range startAttempts {
		sentinels, err := s.startSentinels()
		if err == nil {
			s.Sentinels = sentinels
			break
		}
		errs = append(errs, err)
	}
	if s.Sentinels == nil {
		tb.Fatalf("redistest: no sentinels started in %d attempts:\n%v", startAttempts, errors.Join(errs...))
	}
	// Ready when every sentinel knows the replica (and so can fail over).
	s.waitSentinels(func(addr string, replicas int) bool { return addr == s.Master.Addr() && replicas >= 1 })
	return s
}

// startSentinels starts three sentinels on new ports. Each one's config
// names its peers' ports, so when one cannot start the others are stopped
// too, and the caller tries three new ports.
func (s *Sentinel) startSentinels() ([]*Server, error) {
	tb := s.tb
	tb.Helper()
	var ports [3]int
	var ids [3]string
	for i := range ports {
		for ports[i] == 0 || slices.Contains(ports[:i], ports[i]) {
			ports[i] = anyPort(tb)
		}
		ids[i] = fmt.Sprintf("%040x", ports[i]) // a sentinel ID is 40 hex digits
	}
	var started []*Server
	for i, port := range ports {
		dir := tb.TempDir()
		conf := filepath.Join(dir, "sentinel.conf")
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\nsentinel myid %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 5000\n"+
			"sentinel parallel-syncs %s 1\nsentinel known-replica %s 127.0.0.1 %d\n",
			port, dir, filepath.Join(dir, "sentinel.log"), ids[i], s.Name, s.Master.Port, s.Name, s.Name, s.Name,
			s.Name, s.Replica.Port)
		for j := range ports {
			if j != i {
				body += fmt.Sprintf("sentinel known-sentinel %s 127.0.0.1 %d %s\n", s.Name, ports[j], ids[j])
			}
		}
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
		srv := &Server{tb: tb, Port: port, Dir: dir, argv: func(int) []string { return []string{conf, "--sentinel"} }}
		tb.Cleanup(srv.stop)
		if err := srv.start(); err != nil {
			for _, o := range started {
				o.Kill()
			}
			return nil, fmt.Errorf("sentinel: %w", err)
		}
		started = append(started, srv)
	}
	return started, nil
}

// URL is the topology in go-redis' Sentinel URL form.
func (s *Sentinel) URL() string {
	u := "redis://" + s.Sentinels[0].Addr() + "?master_name=" + s.Name
	for _, n := range s.Sentinels[1:] {
		u += "&addr=" + n.Addr()
	}
	return u
}

// KillMaster SIGKILLs the master and waits until the sentinels have
// promoted the replica.
func (s *Sentinel) KillMaster() {
	s.tb.Helper()
	s.Master.Kill()
	s.waitSentinels(func(addr string, _ int) bool { return addr == s.Replica.Addr() })
	waitFor(s.tb, "the replica to become master", func() bool {
		info, err := s.Replica.Client().Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "role:master")
	})
}

// waitSentinels waits until every sentinel reports a master for which ok
// holds.
func (s *Sentinel) waitSentinels(ok func(addr string, replicas int) bool) {
	s.tb.Helper()
	waitFor(s.tb, "the sentinels to agree", func() bool {
		for _, sn := range s.Sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr()})
			addr, err := c.GetMasterAddrByName(context.Background(), s.Name).Result()
			var replicas int
			if err == nil {
				rs, rerr := c.Replicas(context.Background(), s.Name).Result()
				if rerr == nil {
					replicas = len(rs)
				}
			}
			c.Close()
			if err != nil || len(addr) != 2 || !ok(addr[0]+":"+addr[1], replicas) {
				return false
			}
		}
		return true
	})
}

// waitFor polls cond for up to a minute: a failover takes about 3 s, but a
// loaded 2-core machine running the whole suite under -race can take many
// times that.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
