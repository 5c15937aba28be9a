package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a private redis-server a test starts on a free loopback port:
// for what must never be done to the shared one (restart it, kill it, lose
// its data, make it a cluster node or a sentinel).
type Server struct {
	tb   testing.TB
	Port int
	Dir  string
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// binary returns the path of redis-server, skipping (failing under CI) when
// there is none.
func binary(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Unavailable(tb, fmt.Errorf("%s not installed: %w", name, err))
	}
	return p
}

// freePort asks the kernel for a free loopback port.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// StartServer starts a redis-server with no persistence, plus args (e.g.
// "--appendonly", "yes"), and stops it when the test ends.
func StartServer(tb testing.TB, args ...string) *Server {
	tb.Helper()
	s := &Server{tb: tb, Port: freePort(tb), Dir: tb.TempDir(), args: args}
	s.start()
	tb.Cleanup(s.stop)
	return s
}

func (s *Server) start() {
	s.tb.Helper()
	bin := binary(s.tb, "redis-server")
	// No delay before a replica's full sync (default 5 s): a replica of
	// this server is in sync at once.
	args := append([]string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--dir", s.Dir,
		"--save", "", "--appendonly", "no", "--logfile", filepath.Join(s.Dir, "redis.log"),
		"--repl-diskless-sync-delay", "0"}, s.args...)
	cmd := exec.Command(bin, args...)
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		s.tb.Fatalf("redistest: start redis-server: %v", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	waitPing(s.tb, s.Addr(), cmd)
}

// waitPing waits until addr answers PING (or cmd exits).
func waitPing(tb testing.TB, addr string, cmd *exec.Cmd) {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: redis on %s did not answer: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Client is a client of this server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	s.tb.Cleanup(func() { c.Close() })
	return c
}

// Kill ends the server with SIGKILL: whatever it had not persisted is lost.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
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
// back empty.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	s.start()
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
		c.Nodes = append(c.Nodes, StartServer(tb, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--cluster-node-timeout", "2000"))
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok := true
		for _, n := range c.Nodes {
			info, err := n.Client().ClusterInfo(context.Background()).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				ok = false
			}
		}
		if ok {
			return c
		}
		if time.Now().After(deadline) {
			tb.Fatal("redistest: cluster not ok after 20s")
		}
		time.Sleep(100 * time.Millisecond)
	}
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
	var ports [3]int
	var ids [3]string
	for i := range ports {
		ports[i] = freePort(tb)
		ids[i] = fmt.Sprintf("%040x", ports[i]) // a sentinel ID is 40 hex digits
	}
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
		srv := &Server{tb: tb, Port: port, Dir: dir}
		cmd := exec.Command(binary(tb, "redis-server"), conf, "--sentinel")
		setDeathSignal(cmd)
		if err := cmd.Start(); err != nil {
			tb.Fatalf("redistest: start sentinel: %v", err)
		}
		srv.cmd = cmd
		tb.Cleanup(srv.stop)
		waitPing(tb, srv.Addr(), cmd)
		s.Sentinels = append(s.Sentinels, srv)
	}
	// Ready when every sentinel knows the replica (and so can fail over).
	s.waitSentinels(func(addr string, replicas int) bool { return addr == s.Master.Addr() && replicas >= 1 })
	return s
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
