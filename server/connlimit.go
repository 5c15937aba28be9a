package server

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// connLimiter is the listener's side of fairness: at most max connections
// open at once, and at most perClient of them from one client (the peer's
// address, an IPv6 peer's /64: the rate limiter's key). A trusted proxy is
// exempt from the per-client bound, since every client behind it shares
// its address; it still counts against max, and its clients against the
// rate and in-flight limits.
//
// An idle keep-alive connection holds a descriptor and nothing else, so it
// gives way: a new connection at the global cap closes an idle one (of the
// client holding the most connections, the one idle longest) rather than
// wait up to the idle timeout for it, and a client at its own cap closes
// one of its own idle ones. Before, one client holding max idle keep-alives
// made every other client wait 19-28 s per request.
//
// A connection that has not yet delivered a whole first request
// (http.StateNew: connected, headers not complete) gives way too at the
// global cap, once it has been reading for longer than readingGrace: when
// no connection is idle, a new one closes the reading connection of the
// client holding the most, the one reading longest. Before, slow-header
// connections (one header line every 0.5 s) were neither idle nor refused,
// so max/perClient addresses held the whole cap and every other client
// waited in the backlog until ReadHeaderTimeout (5 s) closed one. Only when
// no connection is idle or reading past the grace does a new one wait in
// the backlog (globally; at most until the next one passes its grace) or
// get a 429 and a closed connection (its client at its cap).
//
// The per-client cap counts reading connections like any other and does
// not close them for its own client: a browser opens its 6 connections to
// a host at once, all reading for a moment, and an attacker refused there
// only moves to more addresses (an IPv6 /64 is cheap), which the global
// cap's displacement already handles.
//
// Closing an idle connection races with a request the client may be
// sending on it at that moment, exactly as the server's own idle timeout
// does; HTTP clients retry an idempotent request on a reused connection the
// server closed. Closing a reading connection is what ReadHeaderTimeout
// would do later.
type connLimiter struct {
	net.Listener
	max, perClient int
	trusted        []netip.Prefix
	onRefuse       func() // a connection refused at the per-client cap (metrics); may be nil

	mu     sync.Mutex
	conns  map[*limitedConn]struct{}
	per    map[string]int // open connections by client
	wake   chan struct{}  // a connection closed or went idle
	done   chan struct{}  // the listener closed
	closer sync.Once

	refusing chan struct{} // bounds the goroutines writing a refusal
}

// limitedConn is a connection connLimiter counts.
type limitedConn struct {
	net.Conn
	l       *connLimiter
	client  string
	exempt  bool
	state   http.ConnState // guarded by l.mu; StateNew from admission
	since   time.Time      // when it entered state
	release sync.Once
}

// readingGrace is how long a connection may read its first request before
// it gives way at the global cap. A first request's headers come in one
// flight right after the TCP handshake: well under a second even on a slow
// mobile link (a few hundred ms of round trip), so an honest client is not
// closed at once; a slow-header connection holds its slot for about this
// long instead of ReadHeaderTimeout (5 s).
const readingGrace = time.Second

func newConnLimiter(ln net.Listener, max, perClient int, trusted []netip.Prefix) *connLimiter {
	return &connLimiter{Listener: ln, max: max, perClient: perClient, trusted: trusted,
		conns: map[*limitedConn]struct{}{}, per: map[string]int{},
		wake: make(chan struct{}, 1), done: make(chan struct{}), refusing: make(chan struct{}, 64)}
}

// Accept returns the next connection within the caps.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client, exempt := l.peer(c)
		lc := &limitedConn{Conn: c, l: l, client: client, exempt: exempt}
		if l.admit(lc) {
			return lc, nil
		}
		select {
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		default:
		}
		l.refuse(c)
	}
}

// admit counts lc in, closing idle (or long-reading) connections to make
// room; it waits while the global cap is reached and none can give way.
// false: lc's client is at its own cap with none of its connections idle,
// or the listener closed.
func (l *connLimiter) admit(lc *limitedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !lc.exempt && l.per[lc.client] >= l.perClient {
		v := l.idlest(func(c *limitedConn) bool { return c.client == lc.client })
		if v == nil {
			return false
		}
		l.closeLocked(v)
	}
	for len(l.conns) >= l.max {
		if v := l.idlest(nil); v != nil {
			l.closeLocked(v)
			continue
		}
		v, next := l.longestReading(time.Now())
		if v != nil {
			l.closeLocked(v)
			continue
		}
		if !l.await(next) {
			return false
		}
	}
	lc.state, lc.since = http.StateNew, time.Now()
	l.conns[lc] = struct{}{}
	l.per[lc.client]++
	return true
}

// await waits, with l.mu released, until a connection closes or goes
// idle, or until next (when a reading connection passes its grace; zero:
// none will). false: the listener closed.
func (l *connLimiter) await(next time.Time) bool {
	var passes <-chan time.Time
	if !next.IsZero() {
		t := time.NewTimer(time.Until(next))
		defer t.Stop()
		passes = t.C
	}
	l.mu.Unlock()
	defer l.mu.Lock()
	select {
	case <-l.wake:
	case <-passes:
	case <-l.done:
		return false
	}
	return true
}

// idlest is the idle connection to close first among those ok accepts
// (nil: all): the one of the client holding the most connections, idle the
// longest. nil if none is idle.
func (l *connLimiter) idlest(ok func(*limitedConn) bool) *limitedConn {
	return l.first(func(c *limitedConn) bool {
		return c.state == http.StateIdle && (ok == nil || ok(c))
	})
}

// longestReading is the reading connection to close first at now: of the
// client holding the most connections, the one reading its first request
// the longest, once it has read for longer than readingGrace. If that one
// is still within the grace, v is nil and next is when it passes it (zero:
// none is reading). The victim is chosen by who holds the most, then by
// age, never by which connection happens to pass its grace first: that
// would always be the oldest, whoever it belongs to.
func (l *connLimiter) longestReading(now time.Time) (v *limitedConn, next time.Time) {
	v = l.first(func(c *limitedConn) bool { return c.state == http.StateNew })
	if v == nil {
		return nil, time.Time{}
	}
	if due := v.since.Add(readingGrace); due.After(now) {
		return nil, due
	}
	return v, time.Time{}
}

// first is the connection ok accepts of the client holding the most
// connections, in its state the longest; nil if ok accepts none.
func (l *connLimiter) first(ok func(*limitedConn) bool) *limitedConn {
	var best *limitedConn
	for c := range l.conns {
		if !ok(c) {
			continue
		}
		if best == nil || l.per[c.client] > l.per[best.client] ||
			(l.per[c.client] == l.per[best.client] && c.since.Before(best.since)) {
			best = c
		}
	}
	return best
}

// closeLocked closes c and forgets it at once; the server's goroutine
// reading from it sees the close and ends.
func (l *connLimiter) closeLocked(c *limitedConn) {
	l.forgetLocked(c)
	c.Conn.Close()
}

func (l *connLimiter) forgetLocked(c *limitedConn) {
	c.release.Do(func() {
		delete(l.conns, c)
		if l.per[c.client]--; l.per[c.client] <= 0 {
			delete(l.per, c.client)
		}
		l.poke()
	})
}

func (l *connLimiter) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// peer is the client a connection counts for, and whether it is exempt
// from the per-client cap: a trusted proxy, or a peer with no IP address
// (a unix socket, which only a local proxy uses).
func (l *connLimiter) peer(c net.Conn) (string, bool) {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String(), true
	}
	ip := ap.Addr().Unmap().WithZone("")
	return clientKey(ip), isTrusted(ip, l.trusted)
}

// refusal is the whole answer to a connection over its client's cap: it
// is written before the request is read, so it names no route.
var refusal = func() string {
	body := "429 Too Many Requests: too many connections open from one client; retry after 1 s\n"
	return "HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nRetry-After: 1\r\nCache-Control: no-store\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
}()

// refuse answers c with 429 and closes it. The request is read (up to 64
// KB, for at most a second) after the answer so that closing does not
// reset the connection before the client reads it; at most 64 refusals
// linger at once, past that a connection is closed outright.
func (l *connLimiter) refuse(c net.Conn) {
	if l.onRefuse != nil {
		l.onRefuse()
	}
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		if _, err := io.WriteString(c, refusal); err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// Close stops accepting; connections already open stay until the server
// closes them.
func (l *connLimiter) Close() error {
	l.closer.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// connState is the http.Server's ConnState hook: it tells the limiter
// which connections are idle, and which are still reading their first
// request.
func (l *connLimiter) connState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || lc.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == lc.state {
		return // StateNew, set at admission: keep its time
	}
	lc.state, lc.since = st, time.Now()
	if st == http.StateIdle {
		l.poke()
	}
}

// Close gives the connection's slot back.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.forgetLocked(c)
	c.l.mu.Unlock()
	return err
}
