package server

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// SetConnState adds f to the http.Server's ConnState hook (tests watch
// the connections it holds).
func (s *Server) SetConnState(f func(net.Conn, http.ConnState)) {
	prev := s.srv.ConnState
	s.srv.ConnState = func(c net.Conn, st http.ConnState) { prev(c, st); f(c, st) }
}

// CacheWaiting counts the requests waiting for another's rendering of the
// same answer.
func (s *Server) CacheWaiting() int64 { return s.cache.waiting.Load() }

// NewAccessLogSized is NewAccessLog with its batch size, interval and bound
// on the bytes waiting set by the test.
func NewAccessLogSized(dst io.Writer, format func(io.Writer) slog.Handler, log *slog.Logger,
	flushBytes int, every time.Duration, maxPending int) *AccessLog {
	return newAccessLog(dst, format, log, flushBytes, every, maxPending)
}
