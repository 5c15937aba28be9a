// Package server is ytrend serve: the archive's pages (web) and JSON API
// (apiv1) behind one hardened http.Handler, with per-client rate limits
// (ratelimit), access logs, metrics and graceful shutdown.
//
// Key decision: it only reads. The archive is opened query_only by its
// caller, so serving never takes the write lock a fetch needs, and each
// answer reflects the pages stored so far. ytrend serve runs it alone;
// a daemon (ytrend run --serve) mounts Handler on its own listener or
// calls Serve and Stop beside its other parts.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ytrend/ytrend/apiv1"
	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/metrics"
	"github.com/ytrend/ytrend/ratelimit"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
	"github.com/ytrend/ytrend/web"
)

// Config is how the server listens and whom it trusts.
type Config struct {
	Listen string
	// RateLimit applies per client (the remote IP, or the address a
	// trusted proxy forwarded).
	RateLimit ratelimit.Limit
	// TrustedProxies may set X-Forwarded-For; from anyone else it is ignored.
	TrustedProxies []netip.Prefix
	// CORSOrigins may read the API from a browser ("*" for anyone).
	CORSOrigins []string
	// Timeouts; zero takes the defaults below.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// HandlerTimeout bounds one request's work (the archive's queries).
	HandlerTimeout time.Duration
	// SearchTimeout bounds a search's (shorter: searches are what can be
	// slow, and they have a pool of their own to hold).
	SearchTimeout time.Duration
	// ClientInFlight is how many requests one client may have in flight
	// (an answer from the cache takes no slot); more wait up to
	// ClientQueueWait for one to finish, then get 429. Zero takes the
	// defaults.
	ClientInFlight  int
	ClientQueueWait time.Duration
	// ShutdownTimeout is how long Run lets in-flight requests finish.
	ShutdownTimeout time.Duration
	// NoCache turns the response cache off (see cache.go).
	NoCache bool
	// MaxConnections bounds the connections open at once (every one
	// counts, /static/ and idle keep-alives included). At the cap a new
	// connection closes an idle keep-alive one; when none is idle it waits
	// in the kernel's backlog until one closes. Zero takes the default.
	MaxConnections int
	// MaxConnectionsPerClient bounds one client's (its address, an IPv6
	// client's /64; a trusted proxy is exempt). Past it a new connection
	// closes one of the client's idle ones, or gets 429 and is closed.
	// Zero takes the default.
	MaxConnectionsPerClient int
}

// Defaults for the zero Config fields.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
	DefaultMaxConnections    = config.DefaultServeMaxConnections
	DefaultMaxConnsPerClient = config.DefaultServeMaxConnectionsPerClient
	DefaultHandlerTimeout    = 10 * time.Second
	DefaultSearchTimeout     = 5 * time.Second
	DefaultClientInFlight    = config.DefaultServeClientInFlight
	DefaultClientQueueWait   = config.DefaultServeClientQueueWait
	DefaultShutdownTimeout   = 20 * time.Second
	// MaxURLBytes bounds a request's path and query string.
	MaxURLBytes = 4096
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes = 16 << 10
	// MaxBodyBytes bounds a request body: every route is a GET.
	MaxBodyBytes = 1 << 10
)

// Limiter decides one request of a client; *ratelimit.Memory and
// *ratelimit.Redis implement it.
type Limiter interface {
	Allow(ctx context.Context, client string) (ratelimit.Decision, error)
	Limit() ratelimit.Limit
}

// Deps is what the server serves and reports to.
type Deps struct {
	Archive view.Archive
	Budget  view.Budget // nil: /quota answers 503
	Limiter Limiter     // nil: no rate limit
	Metrics *metrics.HTTP
	Log     *slog.Logger
	// AccessLog gets a line per request (nil: none). Stop closes it.
	AccessLog *AccessLog
	Now       func() time.Time
}

// Server is ytrend serve's HTTP server.
type Server struct {
	cfg     Config
	deps    Deps
	handler http.Handler
	srv     *http.Server
	cache   *responseCache // nil with Config.NoCache
	flight  *inflight
	stand   atomic.Pointer[Server] // answers in this one's place (StandIn)
}

// New builds the server; it does not listen yet.
func New(cfg Config, d Deps) (*Server, error) {
	if d.Archive == nil {
		return nil, errors.New("server: no archive")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	def := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&cfg.ReadTimeout, DefaultReadTimeout)
	def(&cfg.WriteTimeout, DefaultWriteTimeout)
	def(&cfg.IdleTimeout, DefaultIdleTimeout)
	def(&cfg.HandlerTimeout, DefaultHandlerTimeout)
	def(&cfg.ShutdownTimeout, DefaultShutdownTimeout)
	def(&cfg.SearchTimeout, DefaultSearchTimeout)
	def(&cfg.ClientQueueWait, DefaultClientQueueWait)
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.MaxConnectionsPerClient <= 0 {
		cfg.MaxConnectionsPerClient = DefaultMaxConnsPerClient
	}
	if cfg.ClientInFlight <= 0 {
		cfg.ClientInFlight = DefaultClientInFlight
	}
	if cfg.HandlerTimeout >= cfg.WriteTimeout {
		return nil, fmt.Errorf("server: handler timeout %s must be below the write timeout %s", cfg.HandlerTimeout, cfg.WriteTimeout)
	}
	vs, ok := d.Archive.(versioned)
	if !ok {
		vs = lastChangeVersion{d.Archive}
	}
	version := newArchiveVersion(vs, d.Now)
	d.Archive = &regionCache{Archive: versionedArchive{Archive: d.Archive, version: version}, version: version, ttl: time.Second}
	mux := http.NewServeMux()
	for pattern, h := range apiv1.Routes(apiv1.Deps{Archive: d.Archive, Budget: d.Budget, Log: d.Log, Now: d.Now}) {
		mux.Handle(pattern, h)
	}
	pages, err := web.Routes(web.Deps{Archive: d.Archive, Budget: d.Budget, Log: d.Log, Now: d.Now})
	if err != nil {
		return nil, err
	}
	for pattern, h := range pages {
		mux.Handle(pattern, h)
	}
	s := &Server{cfg: cfg, deps: d, flight: newInflight(cfg.ClientInFlight, cfg.ClientQueueWait)}
	if d.AccessLog != nil && d.Metrics != nil {
		d.Metrics.WatchAccessLog(d.AccessLog.Dropped)
	}
	if !cfg.NoCache {
		s.cache = newResponseCache(version, d.Now)
	}
	s.handler = s.wrap(mux)
	s.srv = &http.Server{
		Addr:              cfg.Listen,
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		// net/http reads up to MaxHeaderBytes plus 4 KB of slack (its
		// initial read buffer), so the documented bound is met by asking
		// for 4 KB less: about 20 KB got through before.
		MaxHeaderBytes: MaxHeaderBytes - 4<<10,
		ErrorLog:       slog.NewLogLogger(d.Log.Handler(), slog.LevelWarn),
		// Tells Serve's connLimiter which connections are idle.
		ConnState: func(c net.Conn, st http.ConnState) {
			if lc, ok := c.(*limitedConn); ok {
				lc.l.connState(lc, st)
			}
		},
	}
	return s, nil
}

// Handler is everything the server answers, for mounting elsewhere.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers on ln until Stop; it returns nil after a Stop. At most
// MaxConnections of ln's connections are open at once, and
// MaxConnectionsPerClient of one client's (see connLimiter).
func (s *Server) Serve(ln net.Listener) error {
	l := newConnLimiter(ln, s.cfg.MaxConnections, s.cfg.MaxConnectionsPerClient, s.cfg.TrustedProxies)
	if s.deps.Metrics != nil {
		l.onRefuse = s.deps.Metrics.ObserveLimited
	}
	err := s.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Stop is the soft stop: no new connections, in-flight requests finish.
// When ctx ends first, the remaining connections are closed (the hard stop).
// Then the access log writes its last lines.
func (s *Server) Stop(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	s.closeAccessLog(ctx)
	return err
}

// closeAccessLog writes the access log's last lines, waiting for them until
// ctx ends, or for accessCloseWait after a hard stop.
func (s *Server) closeAccessLog(ctx context.Context) {
	if s.deps.AccessLog == nil {
		return
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), accessCloseWait)
		defer cancel()
	}
	if err := s.deps.AccessLog.Close(ctx); err != nil {
		s.deps.Log.Warn("serve: the access log's last lines are lost", "err", err)
	}
}

// Run listens on the configured address and serves until soft is closed or
// ctx ends (ytrend's two-stage stop: soft lets in-flight requests finish, up
// to ShutdownTimeout; a cancelled ctx closes at once). ready, if not nil,
// gets the bound address once listening.
func (s *Server) Run(ctx context.Context, soft <-chan struct{}, ready func(addr net.Addr)) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("serve: listen %s: %w", s.cfg.Listen, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	s.deps.Log.Info("serving", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-soft:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
	defer cancel()
	if ctx.Err() != nil {
		s.srv.Close()
		s.closeAccessLog(ctx)
	} else if err := s.Stop(sctx); err != nil {
		s.deps.Log.Warn("serve: in-flight requests cut off", "err", err)
	}
	<-errc
	s.deps.Log.Info("stopped serving")
	return nil
}

// clientIP is the client the limits count: the peer, unless the peer is a
// trusted proxy, in which case X-Forwarded-For is read from the right,
// skipping trusted proxies, and the first untrusted address is the client.
// An address a trusted proxy forwarded that cannot be read is an error (the
// request is refused), never the proxy's own address: that would count the
// request against every client behind it.
//
// An IPv6 client is its /64, zone dropped: one host holds a whole /64 and
// could otherwise make a new client per request.
func clientIP(r *http.Request, trusted []netip.Prefix) (string, error) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	var ip netip.Addr
	if err == nil {
		ip = peer.Addr()
	} else if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		ip = a
	} else {
		return r.RemoteAddr, nil // not IP (a unix socket): one client
	}
	ip = ip.Unmap().WithZone("")
	if !isTrusted(ip, trusted) {
		return clientKey(ip), nil
	}
	var addrs []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		addrs = append(addrs, strings.Split(h, ",")...)
	}
	for i := len(addrs) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(addrs[i]))
		if err != nil {
			return "", fmt.Errorf("X-Forwarded-For: %q is not an IP address", clipPath(strings.TrimSpace(addrs[i])))
		}
		ip = a.Unmap().WithZone("")
		if !isTrusted(ip, trusted) {
			break
		}
	}
	return clientKey(ip), nil
}

// clientKey is the limits' name for ip: itself, or its /64 for IPv6.
func clientKey(ip netip.Addr) string {
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// regionCache keeps the archive's region list for a second while the
// archive does not change: the home and search pages list regions on every
// request, and the list (a scan of the runs' index, 3 ms at a million
// videos) changes once per fetch or import.
type regionCache struct {
	view.Archive
	version *archiveVersion
	ttl     time.Duration

	mu  sync.Mutex
	at  time.Time
	gen int64
	rfs []store.RegionFetch
}

func (c *regionCache) RegionFetches(ctx context.Context) ([]store.RegionFetch, error) {
	gen, _, err := c.version.get(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rfs != nil && c.gen == gen && time.Since(c.at) < c.ttl {
		return c.rfs, nil
	}
	rfs, err := c.Archive.RegionFetches(ctx)
	if err != nil {
		return nil, err
	}
	c.rfs, c.at, c.gen = rfs, time.Now(), gen
	return rfs, nil
}
