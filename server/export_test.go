package server

import (
	"net"
	"net/http"
)

// SetConnState sets the http.Server's ConnState hook (tests count the
// connections it holds).
func (s *Server) SetConnState(f func(net.Conn, http.ConnState)) { s.srv.ConnState = f }
