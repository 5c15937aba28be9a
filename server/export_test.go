package server

import (
	"net"
	"net/http"
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
