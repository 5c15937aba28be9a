package metrics

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTP holds ytrend serve's request metrics.
type HTTP struct {
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	limited       prometheus.Counter
	accessDropped atomic.Pointer[func() int64] // WatchAccessLog's
}

// NewHTTP registers serve's collectors in reg.
func NewHTTP(reg prometheus.Registerer) *HTTP {
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ytrend_http_requests_total",
			Help: "HTTP requests answered by ytrend serve, by route pattern and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ytrend_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		limited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ytrend_http_limited_total",
			Help: "HTTP requests refused with 429 by the per-client rate limit.",
		}),
	}
	dropped := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "ytrend_http_access_log_dropped_total",
		Help: "Access log lines dropped: the log's destination had not taken the lines before them, or failed.",
	}, func() float64 {
		if f := h.accessDropped.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	reg.MustRegister(h.requests, h.latency, h.limited, dropped)
	return h
}

// WatchAccessLog reports dropped(), the access log's count of the lines it
// dropped, as ytrend_http_access_log_dropped_total (0 until then).
func (h *HTTP) WatchAccessLog(dropped func() int64) { h.accessDropped.Store(&dropped) }

// HTTP registers serve's request metrics beside the others.
func (m *Metrics) HTTP() *HTTP { return NewHTTP(m.reg) }

// ObserveRequest counts one answered request.
func (h *HTTP) ObserveRequest(route string, code int, d time.Duration) {
	h.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	h.latency.WithLabelValues(route).Observe(d.Seconds())
}

// ObserveLimited counts one request refused by the rate limit.
func (h *HTTP) ObserveLimited() { h.limited.Inc() }
