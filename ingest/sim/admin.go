package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// The simulator's own endpoints under /sim: usage, faults and the chart.

// usageReport is the /sim/usage document.
type usageReport struct {
	Now               time.Time        `json:"now"`
	Quota             int64            `json:"quota"`
	SearchCallsPerDay int64            `json:"search_calls_per_day"`
	TotalCharged      int64            `json:"total_charged"`
	TotalRequests     int64            `json:"total_requests"`
	Unauthenticated   int64            `json:"unauthenticated"`
	Keys              map[string]Usage `json:"keys"` // by Fingerprint
}

func (s *Server) serveUsage(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	charged, requests, unauth := s.ledger.totals()
	writeJSON(w, http.StatusOK, usageReport{
		Now:               now,
		Quota:             s.cfg.Quota,
		SearchCallsPerDay: s.cfg.SearchCallsPerDay,
		TotalCharged:      charged,
		TotalRequests:     requests,
		Unauthenticated:   unauth,
		Keys:              s.ledger.all(now),
	}, true)
}

func (s *Server) serveFaults(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodDelete:
		s.SetFaults(Faults{})
		s.log.Info("faults cleared")
	case http.MethodPost, http.MethodPut:
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err != nil {
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		var f Faults
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
			err = json.Unmarshal(t, &f)
		} else {
			f, err = ParseFaults(string(t))
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.SetFaults(f)
		s.log.Info("faults set", "faults", f.String())
	default:
		w.Header().Set("Allow", "GET, POST, PUT, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	writeJSON(w, http.StatusOK, s.Faults(), true)
}

type chartReport struct {
	RegionCode      string    `json:"regionCode"`
	VideoCategoryID string    `json:"videoCategoryId"`
	At              time.Time `json:"at"`
	VideoIDs        []string  `json:"videoIds"`
}

func (s *Server) serveChart(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	at := s.now()
	if v := q.Get("at"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			http.Error(w, fmt.Sprintf("at=%q: want an RFC 3339 time", v), http.StatusBadRequest)
			return
		}
		at = t
	}
	region := regions.Code(q.Get("regionCode"))
	if region == "" {
		region = "US"
	}
	category := q.Get("videoCategoryId")
	ids, err := s.Chart(region, category, at)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeJSON(w, http.StatusOK, chartReport{RegionCode: string(region), VideoCategoryID: cmp.Or(category, "0"), At: at, VideoIDs: ids}, true)
}
