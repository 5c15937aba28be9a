package server

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ytrend/ytrend/internal/reply"
	"github.com/ytrend/ytrend/view"
)

// The response cache keeps the bytes of recent page and API answers, so that
// the many visitors asking for the same chart or search cost one rendering.
// An answer is served from it only while the archive has not changed since
// it was made (archiveVersion: kept in memory, so a hit touches no SQLite
// connection), and for at most its TTL:
//   - an answer made of the archive alone (charts, videos, searches, the
//     region list) changes only with the archive, so it lives until the
//     archive changes, up to cacheArchiveTTL. On a trending site almost
//     every request is one of these, and most are the same few;
//   - anything else (a run's status, a time relative to now such as
//     since=7d) lives cacheTTL, which bounds how stale it can be.
//
// A conditional request whose answer is cached is answered from it too (304
// or the cached body), so a browser's revalidation costs no rendering.
const (
	cacheTTL        = time.Second
	cacheArchiveTTL = 10 * time.Minute
	cacheMaxEntries = 4096
	cacheMaxBytes   = 64 << 20 // over every entry
	cacheMaxBody    = 1 << 20  // one answer
)

type cachedAnswer struct {
	header  http.Header
	body    []byte
	version int64 // the archive's generation when it was made (archiveVersion)
	made    time.Time
	ttl     time.Duration
}

type responseCache struct {
	mu      sync.Mutex
	entries map[string]*cachedAnswer
	order   []string // insertion order, for eviction
	bytes   int
	version *archiveVersion
	now     func() time.Time
	filling map[string]chan struct{} // keys being rendered; closed when done
	waiting atomic.Int64             // requests waiting for another's rendering
}

func newResponseCache(version *archiveVersion, now func() time.Time) *responseCache {
	return &responseCache{entries: map[string]*cachedAnswer{}, filling: map[string]chan struct{}{}, version: version, now: now}
}

// cacheKey is the request's key, or "" when its answer must not be shared:
// anything but a GET, the budget's status, the operator's endpoints.
func cacheKey(r *http.Request) string {
	if r.Method != http.MethodGet {
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
	return gz + r.URL.Path + "?" + view.CacheKey(r.URL.Query())
}

// archivePaths are the routes whose answers are made of the archive alone.
var archivePaths = []string{"/charts/", "/videos/", "/search", "/api/v1/charts/", "/api/v1/videos/", "/api/v1/search", "/api/v1/regions", "/api/v1/openapi.json"}

// ttlFor is how long the answer to r may be served from the cache while the
// archive does not change.
func ttlFor(r *http.Request) time.Duration {
	p := r.URL.Path
	archive := p == "/"
	for _, prefix := range archivePaths {
		archive = archive || strings.HasPrefix(p, prefix)
	}
	if !archive {
		return cacheTTL
	}
	q := r.URL.Query()
	for _, name := range []string{"at", "since"} {
		if v := q.Get(name); v != "" && !view.AbsoluteTime(v) {
			return cacheTTL // "7d" means something else a second later
		}
	}
	return cacheArchiveTTL
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
	if !ok || a.version != v || c.now().Sub(a.made) > a.ttl {
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
	if !ok {
		// One rendering per key at a time: when a popular page expires (a
		// page landed), the visitors asking for it meanwhile wait for the
		// first one's answer instead of each rendering it again.
		var mine bool
		a, version, ok, mine = c.wait(r, key)
		if mine {
			defer c.filled(key)
		}
	}
	if ok {
		c.write(w, r, a)
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
		c.put(key, &cachedAnswer{header: h, body: tw.buf, version: version, made: c.now(), ttl: ttlFor(r)})
	}
	return false
}

// serveHit answers r from the cache if it holds a fresh answer, without
// waiting for one being rendered; it reports whether it answered.
func (c *responseCache) serveHit(w http.ResponseWriter, r *http.Request) bool {
	key := cacheKey(r)
	if key == "" {
		return false
	}
	a, _, ok := c.get(r.Context(), key)
	if ok {
		c.write(w, r, a)
	}
	return ok
}

// write sends a cached answer (304 to a request that has it).
func (c *responseCache) write(w http.ResponseWriter, r *http.Request, a *cachedAnswer) {
	h := w.Header()
	for k, v := range a.header {
		if k == "Vary" {
			reply.AddVary(h, v...) // the middleware's (Origin) stay
			continue
		}
		h[k] = v
	}
	lastMod, _ := http.ParseTime(a.header.Get("Last-Modified"))
	if reply.NotModified(r, a.header.Get("Etag"), lastMod) {
		h.Del("Content-Type")
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	w.Write(a.body)
}

// wait returns a fresh answer for key once no other request is rendering
// it, or reports that the caller is now the one rendering it (and must call
// filled). A caller waits for one rendering at most: when that one was not
// kept (an error page, too big), it renders its own.
func (c *responseCache) wait(r *http.Request, key string) (a *cachedAnswer, version int64, ok, mine bool) {
	c.mu.Lock()
	ch, busy := c.filling[key]
	if !busy {
		c.filling[key] = make(chan struct{})
		c.mu.Unlock()
		a, version, ok = c.get(r.Context(), key) // it may have landed meanwhile
		if ok {
			c.filled(key)
			return a, version, true, false
		}
		return nil, version, false, true
	}
	c.mu.Unlock()
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	select {
	case <-ch:
	case <-r.Context().Done():
		return nil, 0, false, false
	}
	a, version, ok = c.get(r.Context(), key)
	return a, version, ok, false
}

// filled ends the caller's rendering of key.
func (c *responseCache) filled(key string) {
	c.mu.Lock()
	ch := c.filling[key]
	delete(c.filling, key)
	c.mu.Unlock()
	if ch != nil {
		close(ch)
	}
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
