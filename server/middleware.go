package server

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ytrend/ytrend/apiv1"
	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/internal/reply"
)

// csp allows the page's own stylesheet and YouTube's thumbnail servers, and
// nothing else: no script at all, no framing, forms only to this origin.
// Images come from YouTube only, never from this origin: an image URL on
// it (a thumbnail an import stored) would make every visitor's browser ask
// this server for a search.
const csp = "default-src 'none'; style-src 'self'; img-src https://i.ytimg.com https://*.ytimg.com; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// catchAll are the routes that answer 404 to every path no other route
// takes (the pages' and the API's): OPTIONS on them is not found.
var catchAll = map[string]bool{"/": true, apiv1.Prefix + "/": true, "other": true}

// statusWriter remembers the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	code  int
	bytes int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrap puts every guard around mux: request id, timeouts, recovery, bounds,
// security headers, CORS, the rate limit, then access log and metrics.
func (s *Server) wrap(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, id := reply.WithRequestID(r.Context())
		_, route := mux.Handler(r)
		if route == "" {
			route = "other"
		}
		timeout := s.cfg.HandlerTimeout
		if strings.HasSuffix(route, "/search") {
			timeout = min(timeout, s.cfg.SearchTimeout)
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		r = r.WithContext(ctx)
		client, clientErr := clientIP(r, s.cfg.TrustedProxies)
		w := &statusWriter{ResponseWriter: rw}
		h := w.Header()
		h.Set("X-Request-Id", id)
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		api := strings.HasPrefix(r.URL.Path, apiv1.Prefix+"/") || r.URL.Path == apiv1.Prefix
		if api {
			// Every API answer, the early errors (400, 405, 414) too: a
			// shared cache must not replay one origin's answer to another.
			reply.AddVary(h, "Origin", "Accept-Encoding")
		}

		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.deps.Log.Error("panic serving request", "request_id", id, "path", r.URL.Path, "panic", fmt.Sprint(p),
					"stack", string(debug.Stack()))
				if w.code == 0 {
					s.fail(w, r, api, http.StatusInternalServerError, "internal", "internal error; quote request id "+id+" to the operator")
				}
			}
			d := time.Since(start)
			code := w.code
			if code == 0 {
				code = http.StatusOK
			}
			if s.deps.Metrics != nil {
				s.deps.Metrics.ObserveRequest(route, code, d)
			}
			if s.deps.AccessLog != nil {
				s.deps.AccessLog.add(accessLine{id: id, client: client, method: r.Method, path: clipPath(r.URL.Path),
					route: route, code: code, bytes: w.bytes, took: d})
			}
		}()

		if clientErr != nil {
			s.fail(w, r, api, http.StatusBadRequest, "bad_request", clientErr.Error())
			return
		}
		if len(r.URL.RawQuery)+len(r.URL.Path) > MaxURLBytes {
			s.fail(w, r, api, http.StatusRequestURITooLong, "uri_too_long", fmt.Sprintf("the URL is over %d bytes", MaxURLBytes))
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			s.fail(w, r, api, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed; every route is a GET")
			return
		}
		if r.ContentLength > MaxBodyBytes {
			s.fail(w, r, api, http.StatusRequestEntityTooLarge, "too_large", "requests carry no body")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)

		if r.Method == http.MethodOptions && catchAll[route] {
			// A path that is no resource is not found, whatever the method.
			s.fail(w, r, api, http.StatusNotFound, "not_found", "there is nothing at "+clipPath(r.URL.Path))
			return
		}
		if api && s.cors(w, r) {
			return
		}
		if r.Method == http.MethodOptions {
			// What the resource allows, not the page: no query runs.
			h.Set("Allow", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		{ // /static/ too: a file is a request like any other
			if s.deps.Limiter != nil && !s.limit(w, r, api, client) {
				return
			}
			// An answer the cache holds costs no work of the archive's:
			// it takes no in-flight slot, so a client's cached pages are
			// not refused while its heavy requests run (the bound is on
			// work, and a cache hit is none). The rate limit above
			// still counts it.
			if s.cache != nil && s.cache.serveHit(w, r) {
				return
			}
			done, ok := s.flight.acquire(r.Context(), client)
			if !ok {
				if s.deps.Metrics != nil {
					s.deps.Metrics.ObserveLimited()
				}
				h.Set("Retry-After", "1")
				s.fail(w, r, api, http.StatusTooManyRequests, "rate_limited",
					fmt.Sprintf("more than %d requests in flight from one client; retry after 1 s", s.cfg.ClientInFlight))
				return
			}
			defer done()
		}
		if s.cache != nil {
			s.cache.serve(w, r, mux)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// cors answers the API's cross-origin requests from the configured origins;
// it reports whether it answered a preflight itself.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	h := w.Header()
	reply.AddVary(h, "Origin", "Accept-Encoding")
	allowed := origin != "" && (slices.Contains(s.cfg.CORSOrigins, "*") || slices.Contains(s.cfg.CORSOrigins, origin))
	if allowed {
		if slices.Contains(s.cfg.CORSOrigins, "*") {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin)
		}
		h.Set("Access-Control-Expose-Headers", "ETag, Last-Modified, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id")
	}
	if r.Method == http.MethodOptions {
		h.Set("Allow", "GET, HEAD, OPTIONS")
		if allowed {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD")
			h.Set("Access-Control-Allow-Headers", "If-None-Match, If-Modified-Since")
			h.Set("Access-Control-Max-Age", "600")
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}

// limit applies the per-client rate limit and sets the IETF httpapi
// RateLimit-Policy and RateLimit headers; it reports whether to go on. A
// limiter that cannot answer (Redis down) lets the request through: the
// pages are reads, and an outage of the limiter should not be one of the site.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, api bool, client string) bool {
	d, err := s.deps.Limiter.Allow(r.Context(), client)
	if err != nil {
		s.deps.Log.Warn("rate limiter unavailable; request let through", "request_id", reply.RequestID(r.Context()), "err", err)
		return true
	}
	l := d.Limit
	h := w.Header()
	h.Set("RateLimit-Policy", fmt.Sprintf(`"default";q=%d;w=%d`, l.Requests, int64(l.Window.Seconds())))
	h.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d`, d.Remaining, d.ResetSeconds()))
	if d.Allowed {
		return true
	}
	if s.deps.Metrics != nil {
		s.deps.Metrics.ObserveLimited()
	}
	h.Set("Retry-After", strconv.FormatInt(d.RetryAfterSeconds(), 10))
	s.fail(w, r, api, http.StatusTooManyRequests, "rate_limited",
		fmt.Sprintf("more than %d requests in %s; retry after %d s", l.Requests, l.Window, d.RetryAfterSeconds()))
	return false
}

// fail answers an error as JSON on the API and as a short page elsewhere.
// A 429 closes its connection: a client over its limits keeps no
// connection open that another client could use. The page is read with
// curl as often as in a browser, and msg may quote the request (its path):
// its terminal controls and line breaks are shown as escapes
// (humanfmt.TerminalLine), as the API's JSON writes them as \u escapes,
// so the one-line message stays one line.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, api bool, status int, code, msg string) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Connection", "close")
	}
	if api {
		reply.Error(w, r, status, code, msg)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "%d %s: %s\n", status, http.StatusText(status), humanfmt.TerminalLine(msg))
}

// clipPath shortens a path quoted in an access log line or an error to its
// first 200 bytes or fewer, cut between two characters: a character cut in
// two would reach the reader as an escape (\xe6) or as U+FFFD, which the
// path did not hold. Bytes that are no UTF-8 are cut where they fall (at
// most three are given back looking for a character's start).
func clipPath(p string) string {
	const max = 200
	if len(p) <= max {
		return p
	}
	cut := max
	for i := max; i > max-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(p[i]) {
			cut = i
			break
		}
	}
	return p[:cut] + "…"
}
