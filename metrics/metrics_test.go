package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
)

type fakeBudget struct{ err error }

func (f fakeBudget) Status(context.Context) (quota.Status, error) {
	if f.err != nil {
		return quota.Status{}, f.err
	}
	return quota.Status{Limits: []quota.LimitStatus{{Name: "daily", Remaining: 9000}, {Name: "search", Remaining: 800}}}, nil
}

func TestObservationsBecomeExactCounters(t *testing.T) {
	m := New(fakeBudget{})
	granted := quota.Result{Granted: true, Call: "search.list", Limits: []quota.Usage{{Name: "daily", Cost: 100}, {Name: "search", Cost: 100}}}
	m.ObserveReservation(granted)
	m.ObserveReservation(granted)
	dup := granted
	dup.Duplicate = true
	m.ObserveReservation(dup) // a retry charged nothing
	m.ObserveReservation(quota.Result{Granted: true, Call: "videos.list", Limits: []quota.Usage{{Name: "daily", Cost: 1}, {Name: "search", Cost: 0}}})
	m.ObserveReservation(quota.Result{RefusedBy: "daily"})
	m.ObserveReservation(quota.Result{RefusedBy: "upstream"})
	m.ObserveReservation(quota.Result{}) // a backend error: neither granted nor refused

	for _, c := range []struct {
		labels []string
		want   float64
	}{{[]string{"daily", "search.list"}, 200}, {[]string{"search", "search.list"}, 200}, {[]string{"daily", "videos.list"}, 1}} {
		if got := testutil.ToFloat64(m.unitsReserved.WithLabelValues(c.labels...)); got != c.want {
			t.Errorf("units reserved %v = %v, want %v", c.labels, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.unitsReserved); n != 3 {
		t.Errorf("%d unit series, want 3 (no series for uncounted limits)", n)
	}
	if got := testutil.ToFloat64(m.refusals.WithLabelValues("daily")); got != 1 {
		t.Errorf("refusals{daily} = %v", got)
	}
	if got := testutil.ToFloat64(m.refusals.WithLabelValues("upstream")); got != 1 {
		t.Errorf("refusals{upstream} = %v", got)
	}

	end := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	m.ObserveRun(ingest.Report{Region: "US", Status: store.StatusOK, Started: end.Add(-2 * time.Second), Finished: end})
	m.ObserveRun(ingest.Report{Region: "US", Status: store.StatusStoppedQuota, Started: end, Finished: end.Add(time.Second)})
	if got := testutil.ToFloat64(m.runs.WithLabelValues("US", "ok")); got != 1 {
		t.Errorf("runs{US,ok} = %v", got)
	}
	if got := testutil.ToFloat64(m.lastSuccess.WithLabelValues("US")); got != float64(end.Unix()) {
		t.Errorf("last success = %v, want %d (a stopped run must not move it)", got, end.Unix())
	}
}

func TestMaintenanceOutcomes(t *testing.T) {
	m := New(nil)
	ok := time.Date(2026, 11, 22, 4, 17, 9, 0, time.UTC)
	m.ObserveMaintenance(ok, nil, false)
	m.ObserveMaintenance(ok.Add(time.Hour), context.Canceled, true)
	m.ObserveMaintenance(ok.Add(2*time.Hour), errors.New("disk I/O error"), false)
	for status, want := range map[string]float64{"ok": 1, "stopped": 1, "failed": 1} {
		if got := testutil.ToFloat64(m.maintenance.WithLabelValues(status)); got != want {
			t.Errorf("maintenance runs{%s} = %v, want %v", status, got, want)
		}
	}
	if got := testutil.ToFloat64(m.lastUpkeep); got != float64(ok.Unix()) {
		t.Errorf("last upkeep = %v, want %d (only an ok run moves it)", got, ok.Unix())
	}
}

func TestReplicaSeries(t *testing.T) {
	m := New(nil)
	at := time.Date(2026, 11, 25, 21, 0, 0, 500_000_000, time.UTC)
	m.ReplicaSynced("file:///backups/ytrend", at)
	m.ReplicaError("s3://b/ytrend")
	m.ReplicaError("s3://b/ytrend")
	m.ReplicaLag("s3://b/ytrend", 2500*time.Millisecond)
	if got := testutil.ToFloat64(m.replicaSync.WithLabelValues("file:///backups/ytrend")); got != 1795640400.5 {
		t.Errorf("last sync = %v, want 1795640400.5", got)
	}
	if got := testutil.ToFloat64(m.replicaErrors.WithLabelValues("s3://b/ytrend")); got != 2 {
		t.Errorf("errors = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.replicaErrors.WithLabelValues("file:///backups/ytrend")); got != 0 {
		t.Errorf("errors of a synced replica = %v, want 0", got)
	}
	if got := testutil.ToFloat64(m.replicaLag.WithLabelValues("s3://b/ytrend")); got != 2.5 {
		t.Errorf("lag = %v, want 2.5", got)
	}
}

func TestHandlerServesMetricsAndHealth(t *testing.T) {
	m := New(fakeBudget{})
	ready := errors.New("redis: connection refused")
	detail := []string{"standing by: another replica leads"}
	srv := httptest.NewServer(m.Handler(func(context.Context) ([]string, error) { return detail, ready }))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, `ytrend_quota_remaining_units{limit="daily"} 9000`) {
		t.Errorf("/metrics %d:\n%s", code, body)
	}
	if code, _ := get("/livez"); code != 200 {
		t.Errorf("/livez %d", code)
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
		t.Errorf("/readyz %d %q with a failing dependency", code, body)
	}
	ready = nil
	if code, body := get("/readyz"); code != 200 || body != "ok\nstanding by: another replica leads\n" {
		t.Errorf("/readyz %d %q when ready, standing by", code, body)
	}
	m.SetLeader(true)
	m.ObserveRebuild(quota.Rebuilt{Added: 4})
	m.ObserveRebuild(quota.Rebuilt{Added: 3, Late: 3})
	if _, body := get("/metrics"); !strings.Contains(body, "ytrend_leader 1\n") || !strings.Contains(body, "ytrend_quota_ledger_rebuilds_total 2\n") ||
		!strings.Contains(body, "ytrend_quota_late_restores_total 3\n") {
		t.Errorf("/metrics lacks ytrend_leader 1, 2 rebuilds and 3 late restores:\n%s", body)
	}
	m.SetLeader(false)
	if _, body := get("/metrics"); !strings.Contains(body, "ytrend_leader 0\n") {
		t.Errorf("/metrics lacks ytrend_leader 0 after stepping down")
	}
}

func TestUnreadableBudgetDoesNotBreakTheScrape(t *testing.T) {
	m := New(fakeBudget{err: errors.New("redis down")})
	m.ObserveRun(ingest.Report{Region: "GB", Status: store.StatusFailed})
	srv := httptest.NewServer(m.Handler(func(context.Context) ([]string, error) { return nil, nil }))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `ytrend_runs_total{region="GB",status="failed"} 1`) {
		t.Errorf("other metrics lost while the budget is unreadable:\n%s", b)
	}
}
