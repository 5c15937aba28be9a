package server

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ytrend/ytrend/internal/reply"
)

// The response cache keeps the bytes of recent page and API answers, so that
// the many visitors asking for the same chart or search cost one rendering.
// An answer is served from it only while the archive has not changed since
// it was made (archiveVersion: kept in memory, so a hit touches no SQLite
// connection) and for at most cacheTTL, which bounds how stale anything else
// (a run's status) can be.
const (
	cacheTTL        = time.Second
	cacheMaxEntries = 4096
	cacheMaxBytes   = 64 << 20 // over every entry
	cacheMaxBody    = 1 << 20  // one answer
)

type cachedAnswer struct {
	header  http.Header
	body    []byte
	version int64 // the archive's generation when it was made (archiveVersion)
	made    time.Time
}

type responseCache struct {
	mu      sync.Mutex
	entries map[string]*cachedAnswer
	order   []string // insertion order, for eviction
	bytes   int
	version *archiveVersion
	now     func() time.Time
}

func newResponseCache(version *archiveVersion, now func() time.Time) *responseCache {
	return &responseCache{entries: map[string]*cachedAnswer{}, version: version, now: now}
}

// cacheKey is the request's key, or "" when its answer must not be shared:
// anything but a GET, conditional requests (their handler answers 304), the
// budget's status, the operator's endpoints.
func cacheKey(r *http.Request) string {
	if r.Method != http.MethodGet || r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
		return ""
	}
	switch p := r.URL.Path; {
	case p == "/quota", strings.HasSuffix(p, "/quota"), p == "/metrics", p == "/livez", p == "/readyz":
		return ""
	}
	gz := "0"
	if reply.AcceptsGzip(r) { // as the handlers decide, so a key holds one encoding
		gz = "1"
	}
	return gz + r.URL.Path + "?" + r.URL.RawQuery
}

// get returns a fresh answer for key, if any.
func (c *responseCache) get(ctx context.Context, key string) (*cachedAnswer, int64, bool) {
	v, _, err := c.version.get(ctx)
	if err != nil {
		return nil, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.entries[key]
	if !ok || a.version != v || c.now().Sub(a.made) > cacheTTL {
		return nil, v, false
	}
	return a, v, true
}

func (c *responseCache) put(key string, a *cachedAnswer) {
	if len(a.body) > cacheMaxBody {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[key]; ok {
		c.bytes -= len(old.body)
	} else {
		c.order = append(c.order, key)
	}
	c.entries[key] = a
	c.bytes += len(a.body)
	for (len(c.entries) > cacheMaxEntries || c.bytes > cacheMaxBytes) && len(c.order) > 0 {
		k := c.order[0]
		c.order = c.order[1:]
		if e, ok := c.entries[k]; ok {
			c.bytes -= len(e.body)
			delete(c.entries, k)
		}
	}
}

// serve answers from the cache, or runs next and keeps its answer if it is
// a 200 small enough. It reports whether the answer came from the cache.
func (c *responseCache) serve(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
	key := cacheKey(r)
	if key == "" {
		next.ServeHTTP(w, r)
		return false
	}
	a, version, ok := c.get(r.Context(), key)
	if ok {
		h := w.Header()
		for k, v := range a.header {
			if k == "Vary" {
				reply.AddVary(h, v...) // the middleware's (Origin) stay
				continue
			}
			h[k] = v
		}
		w.WriteHeader(http.StatusOK)
		w.Write(a.body)
		return true
	}
	tw := &teeWriter{ResponseWriter: w}
	next.ServeHTTP(tw, r)
	if tw.code == http.StatusOK && !tw.over && version != 0 {
		// Only what describes the answer itself; the middleware's headers
		// (request id, rate limit, CORS) belong to each request.
		h := http.Header{}
		for _, k := range answerHeaders {
			if v := w.Header().Values(k); len(v) > 0 {
				h[k] = v
			}
		}
		c.put(key, &cachedAnswer{header: h, body: tw.buf, version: version, made: c.now()})
	}
	return false
}

var answerHeaders = []string{"Content-Type", "Content-Encoding", "Vary", "Etag", "Last-Modified", "Cache-Control"}

// teeWriter keeps a copy of what it writes, up to cacheMaxBody.
type teeWriter struct {
	http.ResponseWriter
	code int
	buf  []byte
	over bool
}

func (w *teeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if !w.over {
		if len(w.buf)+len(b) > cacheMaxBody {
			w.over, w.buf = true, nil
		} else {
			w.buf = append(w.buf, b...)
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
