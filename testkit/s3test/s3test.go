// Package s3test starts a real S3-compatible server for tests: versitygw
// (github.com/versity/versitygw, installed with `go install
// github.com/versity/versitygw/cmd/versitygw@v1.8.0`) over a directory.
//
// Key decision: the port is handed over by retrying the bind (a random port,
// another one if versitygw exits), never by asking the system for a "free"
// port and racing to use it. Without the binary a test skips locally and
// fails under CI (CI set): CI never passes by skipping.
package s3test

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Credentials of every server this package starts.
const (
	AccessKey = "ytrend-test"
	SecretKey = "ytrend-test-secret"
)

// Server is a running versitygw.
type Server struct {
	Addr   string // 127.0.0.1:port
	dir    string
	bin    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Binary finds versitygw on PATH or in $GOPATH/bin, skipping tb (failing
// it under CI) when it is missing.
func Binary(tb testing.TB) string {
	tb.Helper()
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		gopath = filepath.Join(os.Getenv("HOME"), "go")
	}
	if p := filepath.Join(gopath, "bin", "versitygw"); fileExists(p) {
		return p
	}
	msg := "versitygw not found: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Start runs versitygw over a fresh directory holding one bucket, stopped
// at cleanup.
func Start(tb testing.TB, bucket string) *Server {
	tb.Helper()
	s := &Server{dir: tb.TempDir(), bin: Binary(tb)}
	if err := os.Mkdir(filepath.Join(s.dir, bucket), 0o755); err != nil {
		tb.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(30000))
		if err := s.start(addr); err == nil {
			break
		} else if attempt >= 20 {
			tb.Fatalf("versitygw would not start: %v", err)
		}
	}
	tb.Cleanup(s.Stop)
	return s
}

// start runs versitygw on addr and waits until it answers, or exits (the
// port was taken).
func (s *Server) start(addr string) error {
	cmd := exec.Command(s.bin, "--port", addr, "posix", s.dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	for {
		select {
		case <-exited:
			return fmt.Errorf("versitygw on %s exited", addr)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			s.Addr, s.cmd, s.exited = addr, cmd, exited
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (its data stays, for Restart).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart starts the server again on the same address and data.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	for attempt := 0; ; attempt++ {
		if err := s.start(s.Addr); err == nil {
			return
		} else if attempt >= 50 {
			tb.Fatalf("versitygw would not restart on %s: %v", s.Addr, err)
		}
		time.Sleep(100 * time.Millisecond) // the old socket may linger
	}
}

// URL is a Litestream replica URL for path in bucket on this server.
func (s *Server) URL(bucket, path string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=http://%s&region=us-east-1&forcePathStyle=true", bucket, path, s.Addr)
}
