// Package metrics exposes what an operator watches: the quota budget, the
// runs, and the daemon's health, as Prometheus metrics over HTTP with /livez
// and /readyz beside them.
//
// Key decision: the budget's remaining units are read from the backend at
// scrape time, so the gauge is exact even while nothing reserves and old
// reservations slide out of the window.
package metrics

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/quota"
)

// statuser reads the budget's state; *quota.Limiter implements it.
type statuser interface {
	Status(ctx context.Context) (quota.Status, error)
}

// Metrics holds ytrend's collectors in a registry of its own.
type Metrics struct {
	reg           *prometheus.Registry
	unitsReserved *prometheus.CounterVec
	refusals      *prometheus.CounterVec
	runs          *prometheus.CounterVec
	fetchDuration *prometheus.HistogramVec
	lastSuccess   *prometheus.GaugeVec
	maintenance   *prometheus.CounterVec
	lastUpkeep    prometheus.Gauge
	rebuilds      prometheus.Counter
	lateRestores  prometheus.Counter
	leader        prometheus.Gauge
	replicaLag    *prometheus.GaugeVec
	replicaSync   *prometheus.GaugeVec
	replicaErrors *prometheus.CounterVec
}

// New registers every collector. budget may be nil and given later with
// WatchBudget (the limiter takes the metrics' observer when it is built).
func New(budget statuser) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		unitsReserved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ytrend_quota_units_reserved_total",
			Help: "Units reserved from the shared budget, per limit and API call (fail-open grants included).",
		}, []string{"limit", "call"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ytrend_quota_refusals_total",
			Help: "Reservations refused, by the limit that refused (\"upstream\" for a quotaExceeded mark).",
		}, []string{"limit"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ytrend_runs_total",
			Help: "Finished region runs by status (ok, stopped_quota, failed, interrupted).",
		}, []string{"region", "status"}),
		fetchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ytrend_fetch_duration_seconds",
			Help:    "Duration of region runs.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"region"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ytrend_last_success_timestamp_seconds",
			Help: "Unix time of each region's last run that finished ok.",
		}, []string{"region"}),
		maintenance: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ytrend_maintenance_runs_total",
			Help: "Archive upkeep runs (scheduler.maintenance) by outcome: ok, failed, stopped.",
		}, []string{"status"}),
		lastUpkeep: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ytrend_maintenance_last_success_timestamp_seconds",
			Help: "Unix time the archive's last upkeep run finished ok.",
		}),
		rebuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ytrend_quota_ledger_rebuilds_total",
			Help: "Times this process found the budget's ledger had lost its books and restored its grants into it.",
		}),
		lateRestores: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ytrend_quota_late_restores_total",
			Help: "Grants this process restored after a loss's rebuild grace had ended: others decided without them, so the window may have held their units beyond its limit. Non-zero means rebuild_grace is shorter than this process's longest absence from the ledger.",
		}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ytrend_leader",
			Help: "1 while this ytrend run replica holds the leader lease and fires the schedule, 0 while it stands by.",
		}),
		replicaLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ytrend_archive_replica_lag_seconds",
			Help: "How long each archive replica has been behind the archive (0 when it holds every transaction); a follower's, how far behind the leader's replica.",
		}, []string{"replica"}),
		replicaSync: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ytrend_archive_replica_last_sync_timestamp_seconds",
			Help: "Unix time of the last write to (a follower: the last change applied from) each archive replica.",
		}, []string{"replica"}),
		replicaErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ytrend_archive_replica_errors_total",
			Help: "Failed calls to each archive replica; Litestream retries them, fetching goes on.",
		}, []string{"replica"}),
	}
	m.reg.MustRegister(m.unitsReserved, m.refusals, m.runs, m.fetchDuration, m.lastSuccess, m.maintenance, m.lastUpkeep,
		m.rebuilds, m.lateRestores, m.leader, m.replicaLag, m.replicaSync, m.replicaErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if budget != nil {
		m.reg.MustRegister(&remainingCollector{budget: budget})
	}
	return m
}

// WatchBudget adds the remaining-units gauge, read from budget at scrape time.
func (m *Metrics) WatchBudget(budget statuser) {
	m.reg.MustRegister(&remainingCollector{budget: budget})
}

// Registry is the registry the handler serves.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveReservation counts one Reserve outcome; pass it to quota.WithObserver.
func (m *Metrics) ObserveReservation(res quota.Result) {
	if !res.Granted {
		if res.RefusedBy != "" {
			m.refusals.WithLabelValues(res.RefusedBy).Inc()
		}
		return
	}
	if res.Duplicate {
		return
	}
	for _, u := range res.Limits {
		if u.Cost > 0 {
			m.unitsReserved.WithLabelValues(u.Name, res.Call).Add(float64(u.Cost))
		}
	}
}

// ObserveRebuild counts one restore of lost books; pass it to
// quota.WithRebuildObserver.
func (m *Metrics) ObserveRebuild(r quota.Rebuilt) {
	m.rebuilds.Inc()
	m.lateRestores.Add(float64(r.Late))
}

// SetLeader sets ytrend_leader; pass it to leader.OnChange.
func (m *Metrics) SetLeader(leading bool) {
	v := 0.0
	if leading {
		v = 1
	}
	m.leader.Set(v)
}

// ReplicaLag sets a replica's lag (replication.Observer).
func (m *Metrics) ReplicaLag(replica string, lag time.Duration) {
	m.replicaLag.WithLabelValues(replica).Set(lag.Seconds())
}

// ReplicaSynced records a write to a replica (replication.Observer).
func (m *Metrics) ReplicaSynced(replica string, at time.Time) {
	m.replicaSync.WithLabelValues(replica).Set(float64(at.UnixNano()) / 1e9)
	m.replicaErrors.WithLabelValues(replica) // the series exists from the first sync
}

// ReplicaError counts one failed call to a replica (replication.Observer).
func (m *Metrics) ReplicaError(replica string) { m.replicaErrors.WithLabelValues(replica).Inc() }

// ObserveRun counts one finished run; pass it to ingest.Options.Observe.
func (m *Metrics) ObserveRun(rep ingest.Report) {
	region := string(rep.Region)
	m.runs.WithLabelValues(region, string(rep.Status)).Inc()
	if !rep.Finished.IsZero() {
		m.fetchDuration.WithLabelValues(region).Observe(rep.Duration().Seconds())
	}
	if rep.Status == ingest.StatusOK {
		m.lastSuccess.WithLabelValues(region).Set(float64(rep.Finished.Unix()))
	}
}

// ObserveMaintenance counts one upkeep run: err nil is ok, stopped means a
// shutdown cut it off, anything else failed.
func (m *Metrics) ObserveMaintenance(finished time.Time, err error, stopped bool) {
	switch {
	case err == nil:
		m.maintenance.WithLabelValues("ok").Inc()
		m.lastUpkeep.Set(float64(finished.Unix()))
	case stopped:
		m.maintenance.WithLabelValues("stopped").Inc()
	default:
		m.maintenance.WithLabelValues("failed").Inc()
	}
}

// Handler serves /metrics, /livez and /readyz. ready reports whether the
// dependencies answer (the store and the quota backend), with detail lines
// for an operator (leading or standing by, warnings about the budget).
func (m *Metrics) Handler(ready func(context.Context) ([]string, error)) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		detail, err := ready(ctx)
		if err != nil {
			http.Error(w, strings.Join(append([]string{"not ready: " + err.Error()}, detail...), "\n"), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(strings.Join(append([]string{"ok"}, detail...), "\n") + "\n"))
	})
	return mux
}

// remainingCollector reads the budget at scrape time.
type remainingCollector struct{ budget statuser }

var remainingDesc = prometheus.NewDesc("ytrend_quota_remaining_units",
	"Units left in each limit's sliding window, read from the budget backend at scrape time.",
	[]string{"limit"}, nil)

func (c *remainingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- remainingDesc }

func (c *remainingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.budget.Status(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(remainingDesc, err)
		return
	}
	for _, l := range st.Limits {
		ch <- prometheus.MustNewConstMetric(remainingDesc, prometheus.GaugeValue, float64(l.Remaining), l.Name)
	}
}
