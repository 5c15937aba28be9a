package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTP holds ytrend serve's request metrics.
type HTTP struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	limited  prometheus.Counter
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
	reg.MustRegister(h.requests, h.latency, h.limited)
	return h
}

// HTTP registers serve's request metrics beside the others.
func (m *Metrics) HTTP() *HTTP { return NewHTTP(m.reg) }

// ObserveRequest counts one answered request.
func (h *HTTP) ObserveRequest(route string, code int, d time.Duration) {
	h.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	h.latency.WithLabelValues(route).Observe(d.Seconds())
}

// ObserveLimited counts one request refused by the rate limit.
func (h *HTTP) ObserveLimited() { h.limited.Inc() }
