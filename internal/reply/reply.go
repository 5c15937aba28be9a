// Package reply writes ytrend serve's responses: conditional (a weak ETag
// from the body, Last-Modified from the archive, 304 when nothing changed),
// gzip-compressed when the client accepts it, JSON with whatever would act
// on a terminal as \u escapes, and errors as JSON {"error": {"code",
// "message"}} that never carry an internal error's text: that is logged
// with the request id, which the client gets instead.
//
// Key decision: the ETag hashes the rendered body, so it is right for every
// route whatever it reads, and a 304 saves the transfer (not the query).
package reply

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/ytrend/ytrend/internal/humanfmt"
)

type ctxKey struct{}

// WithRequestID returns ctx carrying a new request id, and the id.
func WithRequestID(ctx context.Context) (context.Context, string) {
	var b [8]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	return context.WithValue(ctx, ctxKey{}, id), id
}

// RequestID is the id WithRequestID put in ctx ("" if none).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// gzipPool keeps writers at BestSpeed, klauspost/compress's (gzip was a
// third of a chart's API answer with the standard library's): a chart page
// of 200 entries compresses to a fifth either way, and the default level
// cost more CPU than rendering it (BenchmarkServeLoad's profile).
var gzipPool = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

// minGzip is the smallest body worth compressing.
const minGzip = 1024

// Write sends body with status, conditionally and compressed. A zero
// lastMod sends no Last-Modified. A 200 is "Cache-Control: no-cache"
// (stored, revalidated at every use) unless the handler set its own.
func Write(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte, lastMod time.Time) {
	h := w.Header()
	sum := sha256.Sum256(body)
	etag := `W/"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
	h.Set("Content-Type", contentType)
	AddVary(h, "Accept-Encoding")
	if status == http.StatusOK {
		h.Set("ETag", etag)
		if !lastMod.IsZero() {
			h.Set("Last-Modified", lastMod.UTC().Format(http.TimeFormat))
		}
		if h.Get("Cache-Control") == "" { // the handler's own policy stays (a final chart's)
			h.Set("Cache-Control", "no-cache")
		}
		if NotModified(r, etag, lastMod) {
			h.Del("Content-Type")
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if len(body) >= minGzip && AcceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		w.WriteHeader(status)
		if r.Method == http.MethodHead {
			return
		}
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(w)
		zw.Write(body)
		zw.Close()
		gzipPool.Put(zw)
		return
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// NotModified applies If-None-Match (weak comparison), else
// If-Modified-Since, as RFC 9110 orders them.
func NotModified(r *http.Request, etag string, lastMod time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		want := strings.TrimPrefix(etag, "W/")
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == want {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && !lastMod.IsZero() {
		t, err := http.ParseTime(ims)
		return err == nil && !lastMod.Truncate(time.Second).After(t)
	}
	return false
}

// AcceptsGzip reports whether the request takes a gzip body: gzip (or,
// when gzip is not named, *) with a q-value above 0 (RFC 9110 12.5.3;
// gzip;q=0.5 accepts, q=0 and q=0.000 refuse).
func AcceptsGzip(r *http.Request) bool {
	gzip, star := -1.0, -1.0
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f < 0 || f > 1 {
				f = 0 // unreadable: not an acceptance
			}
			q = f
		}
		switch enc = strings.TrimSpace(enc); {
		case strings.EqualFold(enc, "gzip"), strings.EqualFold(enc, "x-gzip"):
			gzip = max(gzip, q)
		case enc == "*":
			star = max(star, q)
		}
	}
	if gzip >= 0 {
		return gzip > 0
	}
	return star > 0
}

// AddVary adds tokens to h's Vary, once each, keeping what is there: the
// CORS middleware varies by Origin, the body by Accept-Encoding, and a
// shared cache must key on both.
func AddVary(h http.Header, tokens ...string) {
	var have []string
	for _, v := range append(h.Values("Vary"), tokens...) {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t != "" && !slices.ContainsFunc(have, func(x string) bool { return strings.EqualFold(x, t) }) {
				have = append(have, t)
			}
		}
	}
	h.Set("Vary", strings.Join(have, ", "))
}

// JSON sends v as JSON, with DEL, the C1 controls and the bidirectional
// overrides as \u escapes (humanfmt.JSONEscaped), as the CLI's --json
// writes them: the answers carry outside text (titles, channel names), and
// a client that prints them to a terminal, curl for one, gets them inert.
// It is done here, once per rendering: the response cache keeps the bytes.
func JSON(w http.ResponseWriter, r *http.Request, status int, v any, lastMod time.Time) {
	b, err := json.Marshal(v)
	if err != nil {
		Internal(w, r, nil, err)
		return
	}
	Write(w, r, status, "application/json", append(humanfmt.JSONEscaped(b), '\n'), lastMod)
}

// ErrorBody is the JSON of every error response.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Error sends {"error": {"code", "message"}} with status.
func Error(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	var e ErrorBody
	e.Error.Code, e.Error.Message = code, message
	b, _ := json.Marshal(e)
	w.Header().Set("Cache-Control", "no-store")
	// A message may quote the request (its path), escaped as JSON's are.
	Write(w, r, status, "application/json", append(humanfmt.JSONEscaped(b), '\n'), time.Time{})
}

// Internal logs err with the request id and sends a 500 that carries only
// the id.
func Internal(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	id := RequestID(r.Context())
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Error("request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	Error(w, r, http.StatusInternalServerError, "internal", "internal error; quote request id "+id+" to the operator")
}
