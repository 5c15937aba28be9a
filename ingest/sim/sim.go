package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// Config configures a Server. The zero value of each field is its default.
type Config struct {
	// Keys are the accepted API keys; at least one. Each key has its own
	// quota, as each Google Cloud project has.
	Keys []string
	// Quota is the units a key may spend per quota day; 0 means 10,000.
	Quota int64
	// Day is the length of a quota day. 0 means real days: the calendar day
	// in America/Los_Angeles, resetting at midnight Pacific. A positive Day
	// makes days of that length starting when New is called, so a test can
	// live through several quota days in seconds.
	Day time.Duration
	// SearchCallsPerDay, if positive, applies Google's 2026 pricing:
	// search.list is metered in a bucket of its own of that many calls per
	// day (cost 1 call, nothing from the unit pool) and, once the bucket is
	// spent, answered 429 naming the quota limit SearchQuotaLimit. 0 means
	// the classic price, 100 units from the pool.
	SearchCallsPerDay int64
	// Churn is how often charts reshuffle (the "epoch"). 0 means an hour,
	// or a 24th of Day when Day is set.
	Churn time.Duration
	// Seed drives all generated content and fault draws.
	Seed uint64
	// Faults to inject from the start; see SetFaults.
	Faults Faults
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger gets one debug line per API request and info lines for quota
	// refusals and injected faults; keys appear only as fingerprints. nil
	// discards.
	Logger *slog.Logger
}

// Server is the simulated YouTube: an http.Handler serving
// /youtube/v3/videos, /youtube/v3/search, /youtube/v3/i18nRegions and
// /youtube/v3/videoCategories as Google does, plus its own /sim/ endpoints for tests (see ServeHTTP). It is
// safe for concurrent use.
type Server struct {
	cfg    Config
	now    func() time.Time
	log    *slog.Logger
	world  *world
	ledger *ledger
	mux    *http.ServeMux

	mu        sync.Mutex // guards the fields below
	faults    Faults
	draws     *rand.Rand
	malformed int64 // malformed faults served so far, to alternate their form
}

// New builds a Server. It fails on a configuration that cannot work: no key,
// an empty key, negative numbers, invalid faults.
func New(cfg Config) (*Server, error) {
	if len(cfg.Keys) == 0 {
		return nil, errors.New("sim: no API keys configured")
	}
	if slices.Contains(cfg.Keys, "") {
		return nil, errors.New("sim: an API key is empty")
	}
	if cfg.Quota < 0 {
		return nil, fmt.Errorf("sim: quota %d is negative", cfg.Quota)
	}
	if cfg.Quota == 0 {
		cfg.Quota = DefaultQuota
	}
	if cfg.Day < 0 {
		return nil, fmt.Errorf("sim: day length %v is negative", cfg.Day)
	}
	if cfg.SearchCallsPerDay < 0 {
		return nil, fmt.Errorf("sim: search calls per day %d is negative", cfg.SearchCallsPerDay)
	}
	if cfg.Churn < 0 {
		return nil, fmt.Errorf("sim: churn %v is negative", cfg.Churn)
	}
	if cfg.Churn == 0 {
		cfg.Churn = time.Hour
		if cfg.Day > 0 {
			cfg.Churn = max(cfg.Day/24, time.Millisecond)
		}
	}
	if err := cfg.Faults.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	clock, err := newDayClock(cfg.Day, cfg.Now())
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:    cfg,
		now:    cfg.Now,
		log:    cfg.Logger,
		world:  newWorld(cfg.Seed, cfg.Churn),
		ledger: newLedger(clock, cfg.Quota, cfg.SearchCallsPerDay, cfg.Keys),
		faults: cfg.Faults,
		draws:  rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0xfa017)),
	}
	s.routes()
	return s, nil
}

// Usage returns what the server counted for key. A key it does not accept
// has no counts: requests with it are counted by Unauthenticated.
func (s *Server) Usage(key string) Usage { return s.ledger.usage(key, s.now()) }

// TotalCharged returns the units charged to the shared pools of all keys
// since the server started.
func (s *Server) TotalCharged() int64 {
	charged, _, _ := s.ledger.totals()
	return charged
}

// TotalRequests returns every API request the server answered, including
// those with a missing or unknown key.
func (s *Server) TotalRequests() int64 {
	_, requests, _ := s.ledger.totals()
	return requests
}

// Unauthenticated returns the API requests refused for a missing or unknown
// key; they are charged to nobody.
func (s *Server) Unauthenticated() int64 {
	_, _, n := s.ledger.totals()
	return n
}

// SetFaults replaces the injected faults from the next request on; the next
// malformed answer is the HTML page again. It panics on invalid faults;
// check them with Faults.Validate or build them with ParseFaults.
func (s *Server) SetFaults(f Faults) {
	if err := f.Validate(); err != nil {
		panic("sim: SetFaults: " + err.Error())
	}
	s.mu.Lock()
	s.faults = f
	s.malformed = 0
	s.mu.Unlock()
}

// Faults returns the faults currently injected.
func (s *Server) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// Chart returns the IDs of the region's chart for the category ("0" = all)
// as it stood at the moment at, best first, as a fetch started then would
// see them. It costs no quota.
func (s *Server) Chart(region regions.Code, category string, at time.Time) ([]string, error) {
	if !regions.Valid(region) {
		return nil, fmt.Errorf("sim: %q is not a region code", region)
	}
	if category == "" {
		category = "0"
	}
	if !chartCategories[category] {
		return nil, fmt.Errorf("sim: no chart for category %q", category)
	}
	vs := s.world.chart(region, category, s.world.epoch(at))
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.id
	}
	return ids, nil
}

// shutdownGrace is how long Serve lets requests in flight finish.
const shutdownGrace = 5 * time.Second

// Serve answers HTTP on ln until ctx is done, then shuts down gracefully:
// requests in flight get five seconds to finish before their connections
// are closed. It returns nil after a shutdown, else the listener's error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ServeHTTP answers:
//
//	GET /youtube/v3/videos        videos.list (chart=mostPopular or id=...), 1 unit
//	GET /youtube/v3/search        search.list, 100 units (or 1 call of the 2026 bucket)
//	GET /youtube/v3/i18nRegions   i18nRegions.list, 1 unit
//	GET /youtube/v3/videoCategories  videoCategories.list, 1 unit
//	GET /sim/usage                every key's Usage by fingerprint, and totals
//	GET /sim/faults               the injected faults (JSON)
//	POST|PUT /sim/faults          replace them: a JSON object or a ParseFaults spec
//	DELETE /sim/faults            stop injecting
//	GET /sim/chart?regionCode=US[&videoCategoryId=0][&at=RFC3339]  a chart's IDs, free
//	GET /sim/healthz              "ok"
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	for _, m := range methods {
		s.mux.HandleFunc(m.path, func(w http.ResponseWriter, r *http.Request) { s.serveAPI(w, r, m) })
	}
	s.mux.HandleFunc("GET /sim/usage", s.serveUsage)
	s.mux.HandleFunc("/sim/faults", s.serveFaults)
	s.mux.HandleFunc("GET /sim/chart", s.serveChart)
	s.mux.HandleFunc("GET /sim/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errorBody{errNotFound()}, true)
	})
}

// method is one API method the server implements.
type method struct {
	name   string // as quota pages name it: "videos.list"
	path   string
	cost   int64
	search bool // metered as search.list
	serve  func(s *Server, req *apiRequest) (response, *apiError)
}

var methods = []*method{
	{name: "videos.list", path: "/youtube/v3/videos", cost: 1, serve: (*Server).videosList},
	{name: "search.list", path: "/youtube/v3/search", cost: searchCost, search: true, serve: (*Server).searchList},
	{name: "i18nRegions.list", path: "/youtube/v3/i18nRegions", cost: 1, serve: (*Server).i18nRegionsList},
	{name: "videoCategories.list", path: "/youtube/v3/videoCategories", cost: 1, serve: (*Server).videoCategoriesList},
}

// apiRequest is one admitted API request.
type apiRequest struct {
	q   url.Values
	now time.Time
	log []slog.Attr // what the handler wants in the request's log line
}

// response is a successful answer: a JSON document with an etag.
type response interface{ etag() string }

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, m *method) {
	start := time.Now()
	q := r.URL.Query()
	pretty := q.Get("prettyPrint") != "false"
	attrs := []slog.Attr{slog.String("method", m.name)}
	logAt := slog.LevelDebug
	status := 0
	defer func() {
		attrs = append(attrs, slog.Int("status", status), slog.Duration("took", time.Since(start)))
		s.log.LogAttrs(r.Context(), logAt, "youtube request", attrs...)
	}()

	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		status = http.StatusMethodNotAllowed
		writeJSON(w, status, errorBody{errMethod()}, pretty)
		return
	}
	key := r.Header.Get("X-Goog-Api-Key")
	if key == "" {
		key = q.Get("key")
	}
	if key != "" {
		attrs = append(attrs, slog.String("key", Fingerprint(key)))
	}
	known := key != "" && s.ledger.known(key)
	var (
		out outcome
		u   Usage
	)
	now := s.now()
	if known {
		out, u = s.ledger.admit(key, m, now)
	} else {
		s.ledger.unauthenticatedRequest()
	}

	// The request is charged by now: a client that gives up while the
	// answer is delayed has still spent its units, as with Google.
	if lat := s.Faults().Latency; lat > 0 {
		t := time.NewTimer(lat)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			status = 499 // the client went away, as nginx logs it
			return
		}
	}

	switch {
	case !known:
		status = http.StatusBadRequest
		writeJSON(w, status, errorBody{errKeyInvalid()}, pretty)
		return
	case out == refusedQuota:
		status, logAt = http.StatusForbidden, slog.LevelInfo
		attrs = append(attrs, slog.String("refused", "quotaExceeded"), slog.Int64("charged_today", u.ChargedToday))
		writeJSON(w, status, errorBody{errQuotaExceeded()}, pretty)
		return
	case out == refusedSearch:
		status, logAt = http.StatusTooManyRequests, slog.LevelInfo
		attrs = append(attrs, slog.String("refused", SearchQuotaLimit), slog.Int64("search_calls_today", u.SearchCallsToday))
		writeJSON(w, status, errorBody{errSearchQuota(projectNumber(key), s.cfg.SearchCallsPerDay)}, pretty)
		return
	}
	attrs = append(attrs, slog.Int64("units", s.ledger.cost(m)), slog.Int64("charged_today", u.ChargedToday))

	f, variant := s.drawFault()
	if f != faultNone {
		s.ledger.noteFault(key)
		logAt = slog.LevelInfo
		attrs = append(attrs, slog.String("fault", f.String()))
	}
	switch f {
	case fault500:
		status = http.StatusInternalServerError
		writeJSON(w, status, errorBody{errBackend500()}, pretty)
		return
	case fault503:
		status = http.StatusServiceUnavailable
		writeJSON(w, status, errorBody{errBackend503()}, pretty)
		return
	case fault403:
		status = http.StatusForbidden
		writeJSON(w, status, errorBody{errRateLimit403()}, pretty)
		return
	case fault429:
		status = http.StatusTooManyRequests
		writeJSON(w, status, errorBody{errRateLimit429(projectNumber(key))}, pretty)
		return
	}

	req := &apiRequest{q: q, now: now}
	resp, apiErr := m.serve(s, req)
	attrs = append(attrs, req.log...)
	var body any
	status = http.StatusOK
	if apiErr != nil {
		status, body = apiErr.Code, errorBody{apiErr}
		attrs = append(attrs, slog.String("reason", apiErr.Errors[0].Reason))
	} else {
		body = resp
		if inm := strings.Trim(r.Header.Get("If-None-Match"), `"`); inm != "" && inm == resp.etag() {
			status = http.StatusNotModified
			w.WriteHeader(status)
			return
		}
	}

	switch f {
	case faultMalformed:
		status = http.StatusOK
		writeMalformed(w, encode(body, pretty), variant)
		return
	case faultDrop:
		drop(w, status, encode(body, pretty))
		return
	}
	writeJSON(w, status, body, pretty)
}

// drawFault decides whether this admitted request fails, and how: one draw
// per request, in arrival order.
func (s *Server) drawFault() (fault, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faults.pick(s.draws.Float64())
	var variant int64
	if f == faultMalformed {
		variant = s.malformed
		s.malformed++
	}
	return f, variant
}
