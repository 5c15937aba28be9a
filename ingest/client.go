package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"
	"google.golang.org/api/youtube/v3"

	"github.com/ytrend/ytrend/internal/secret"
)

// GoogleEndpoint is the real API's server root.
const GoogleEndpoint = "https://youtube.googleapis.com"

// newService builds a youtube/v3 client for endpoint (a server root such as
// http://127.0.0.1:8089; the client adds /youtube/v3/...). The key goes in
// through option.WithAPIKey on Google's transport; beneath it sits
// captureTransport, which keeps a copy of each response body for the request
// that asked for it.
func newService(ctx context.Context, endpoint string, key secret.Value) (*youtube.Service, error) {
	if endpoint == "" {
		endpoint = GoogleEndpoint
	}
	if key.IsZero() {
		return nil, errors.New("ingest: empty API key")
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 8
	// option.WithHTTPClient alone would silently drop the key, so the key is
	// applied by Google's own transport over our base one, and the finished
	// client is handed to the service.
	// The SDK's own logger is pinned off: GOOGLE_SDK_GO_LOGGING_LEVEL would
	// otherwise make it dump every request and reply to stderr, past
	// ytrend's log format and level.
	quiet := option.WithLogger(slog.New(slog.DiscardHandler))
	rt, err := htransport.NewTransport(ctx, captureTransport{base: base},
		option.WithAPIKey(key.Reveal()), option.WithEndpoint(strings.TrimSuffix(endpoint, "/")+"/"), quiet)
	if err != nil {
		return nil, fmt.Errorf("ingest: build transport: %w", err)
	}
	svc, err := youtube.NewService(ctx,
		option.WithHTTPClient(&http.Client{Transport: rt}),
		option.WithEndpoint(strings.TrimSuffix(endpoint, "/")+"/"), quiet)
	if err != nil {
		return nil, fmt.Errorf("ingest: youtube client: %w", err)
	}
	return svc, nil
}

// captureTransport copies response bodies into the *capture found in the
// request's context, if any.
type captureTransport struct{ base http.RoundTripper }

type captureKey struct{}

type capture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capture) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

func withCapture(ctx context.Context) (context.Context, *capture) {
	c := &capture{}
	return context.WithValue(ctx, captureKey{}, c), c
}

func (t captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	if c, ok := req.Context().Value(captureKey{}).(*capture); ok {
		c.mu.Lock()
		c.buf.Reset()
		c.mu.Unlock()
		resp.Body = &teeBody{ReadCloser: resp.Body, c: c}
	}
	return resp, nil
}

type teeBody struct {
	io.ReadCloser
	c *capture
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.c.mu.Lock()
		b.c.buf.Write(p[:n])
		b.c.mu.Unlock()
	}
	return n, err
}

// redact removes the API key from everything an error will print. Transport
// failures arrive as *url.Error whose text holds the full request URL with
// key=...; the URL is rewritten in place so the error keeps its type. As a
// last guard, any remaining occurrence of the key in the text is masked.
// errKind is how a failed request is handled.
type errKind int

const (
	kindFatal     errKind = iota // no retry: the run fails (bad key, bad request, malformed reply)
	kindRetry                    // transient: back off, reserve again, retry
	kindExhausted                // Google's per-day quota is spent: mark the credential exhausted
)

// classified is a request failure with its handling decided.
type classified struct {
	kind   errKind
	reason string // Google's reason, or a short description
	// calls limits an exhaustion mark to these API calls; empty = the whole
	// credential (quotaExceeded spends the shared pool).
	calls []string
}

// classify decides how to handle err from a request for call.
func classify(err error, call string) classified {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		reason := ""
		if len(gerr.Errors) > 0 {
			reason = gerr.Errors[0].Reason
		}
		switch {
		case reason == "quotaExceeded" || reason == "dailyLimitExceeded":
			return classified{kind: kindExhausted, reason: reason}
		case gerr.Code == http.StatusTooManyRequests || reason == "rateLimitExceeded" || reason == "userRateLimitExceeded":
			if limit := perDayQuotaLimit(gerr); limit != "" {
				c := classified{kind: kindExhausted, reason: "quota limit " + limit}
				// Google's 2026 pricing meters search.list in a bucket of its
				// own; only that call is out for the day.
				if strings.Contains(strings.ToLower(limit), "search") {
					c.calls = []string{"search.list"}
				}
				return c
			}
			return classified{kind: kindRetry, reason: nonEmpty(reason, "rateLimitExceeded")}
		case gerr.Code >= 500:
			return classified{kind: kindRetry, reason: nonEmpty(reason, fmt.Sprintf("HTTP %d", gerr.Code))}
		default:
			return classified{kind: kindFatal, reason: nonEmpty(reason, fmt.Sprintf("HTTP %d", gerr.Code))}
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return classified{kind: kindRetry, reason: "timeout"}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || isNetError(err) {
		return classified{kind: kindRetry, reason: "connection failed"}
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return classified{kind: kindFatal, reason: "malformed response"}
	}
	return classified{kind: kindFatal, reason: "request failed"}
}

func nonEmpty(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

func isNetError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe") || strings.Contains(s, "unexpected EOF")
}

// wire notes whether any attempt the transport makes for one API request got
// a connection, so a failed request's units are released only when it
// provably never left this host.
//
// The error alone cannot tell: when a reused keep-alive connection fails
// after the request was written, the transport resends an idempotent GET on a
// new connection, and if that dial fails the caller sees a dial error for a
// request Google may already have received and charged.
//
// GotConn is the signal, not WroteRequest: a request's bytes can only reach a
// connection the transport has handed it, and both HTTP/1 and HTTP/2 report
// every such hand-over (HTTP/2 per retry as well), before writing. The Wrote*
// hooks are not enough: HTTP/2 reports no WroteRequest when writing the
// headers fails part-way. The price is that an attempt that got a connection
// but failed before writing stays counted: the budget errs towards spent.
type wire struct{ gotConn atomic.Bool }

// trace returns ctx with a client trace that reports to w. It keeps any trace
// already in ctx.
func (w *wire) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { w.gotConn.Store(true) },
	})
}

// neverLeft reports whether no attempt got a connection: then nothing of the
// request was written anywhere, whatever the error says.
func (w *wire) neverLeft() bool { return !w.gotConn.Load() }

// perDayQuotaLimit returns the quota_limit named by a 429's ErrorInfo detail
// when it is a per-day limit (e.g. defaultSearchListPerDayPerProject).
func perDayQuotaLimit(gerr *googleapi.Error) string {
	for _, d := range gerr.Details {
		m, ok := d.(map[string]any)
		if !ok {
			continue
		}
		md, ok := m["metadata"].(map[string]any)
		if !ok {
			continue
		}
		if limit, ok := md["quota_limit"].(string); ok && strings.Contains(strings.ToLower(limit), "perday") {
			return limit
		}
	}
	return ""
}
