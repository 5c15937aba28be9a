package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ytrend/ytrend/replication"
)

// A standby of ytrend run --serve answers from the copy it follows of the
// leader's replicas, and from its own archive while it leads. Its listener,
// connection limits and timeouts stay those of one Server (the live
// archive's); Following builds the server of the followed copy beside it,
// and StandIn makes it answer in the live one's place. The swap is one
// atomic pointer read per request: no listener restarts, no connection is
// dropped, and a request in flight ends on the server that began it.

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if o := s.stand.Load(); o != nil {
		o.handler.ServeHTTP(w, r)
		return
	}
	s.handler.ServeHTTP(w, r)
}

// StandIn makes o answer the requests s receives from now on (pages, API,
// its own cache and archive); nil gives them back to s.
func (s *Server) StandIn(o *Server) { s.stand.Store(o) }

// Following builds a server like s (its configuration, budget, per-client
// limits, request metrics and log) over the copy f follows, read as
// OpenFollow reads it: every answer pinned to one state of the copy, cached
// answers moving with its changes. It does not listen: hand it to
// s.StandIn. close closes the copy's archive once nothing reads it.
func (s *Server) Following(f Follower) (o *Server, close func(), err error) {
	ar := &followedArchive{f: f}
	d := s.deps
	d.Archive = ar
	if o, err = New(s.cfg, d); err != nil {
		return nil, nil, err
	}
	return o, ar.close, nil
}

// FollowDetail is /readyz's word on a followed copy, as serve --follow
// says it.
func FollowDetail(st replication.FollowStatus) []string { return followDetail(st) }

// FollowCollector reports the copy that current() returns (nil: none now)
// as serve --follow does: ytrend_archive_follow_lag_seconds, _position and
// _term; nothing while there is none.
func FollowCollector(current func() Follower) prometheus.Collector {
	return followingCollector{current}
}

type followingCollector struct{ current func() Follower }

func (followingCollector) Describe(ch chan<- *prometheus.Desc) { followCollector{}.Describe(ch) }

func (c followingCollector) Collect(ch chan<- prometheus.Metric) {
	if f := c.current(); f != nil {
		followCollector{f}.Collect(ch)
	}
}
