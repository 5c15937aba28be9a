package view

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// The JSON shapes the CLI's --json prints and the API serves: one struct per
// concept, so that `ytrend search --json` and GET /api/v1/search agree field
// for field. Storage types (store's, search's) carry no JSON tags: a field of
// the wire format is declared here, and converted from the storage type.

// Hit is one search result.
type Hit struct {
	VideoID      string         `json:"video_id"`
	Title        string         `json:"title"`
	ChannelTitle string         `json:"channel_title"`
	Regions      []regions.Code `json:"regions"`
	BestRank     int            `json:"best_rank"`
	LastSeen     string         `json:"last_seen"`
	Views        *int64         `json:"views"`
	CategoryID   string         `json:"category_id"`
	Category     string         `json:"category"` // the region's name for CategoryID; "" if not cached
	Snippet      string         `json:"snippet"`
	PublishedAt  string         `json:"published_at,omitempty"`
	URL          string         `json:"url"`
	Score        float64        `json:"score"`
}

// WatchURL is a video's page on YouTube.
func WatchURL(id string) string { return "https://www.youtube.com/watch?v=" + id }

// Hits converts search results.
func Hits(hits []store.Hit) []Hit {
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		j := Hit{
			VideoID: h.VideoID, Title: h.Title, ChannelTitle: h.ChannelTitle, Regions: h.Regions,
			BestRank: h.BestRank, LastSeen: h.LastSeen.UTC().Format(time.RFC3339), Views: h.Views,
			CategoryID: h.CategoryID, Category: h.Category, Snippet: h.Snippet, URL: WatchURL(h.VideoID), Score: h.Score,
		}
		if j.Regions == nil {
			j.Regions = []regions.Code{}
		}
		if !h.PublishedAt.IsZero() {
			j.PublishedAt = h.PublishedAt.UTC().Format(time.RFC3339)
		}
		out = append(out, j)
	}
	return out
}

// Run is one fetch run.
type Run struct {
	ID              int64        `json:"id"`
	Region          regions.Code `json:"region"`
	Trigger         string       `json:"trigger"`
	StartedAt       string       `json:"started_at"`
	FinishedAt      string       `json:"finished_at,omitempty"`
	DurationSeconds float64      `json:"duration_seconds"`
	Status          string       `json:"status"`
	Pages           int          `json:"pages"`
	Videos          int          `json:"videos"`
	NewVideos       int          `json:"new_videos"`
	UpdatedVideos   int          `json:"updated_videos"`
	Units           int64        `json:"units"`
	RefusedBy       string       `json:"refused_by,omitempty"`
	RetryAt         string       `json:"retry_at,omitempty"`
	Error           string       `json:"error,omitempty"`
}

// Runs converts runs.
func Runs(runs []store.Run) []Run {
	out := make([]Run, 0, len(runs))
	for _, r := range runs {
		j := Run{
			ID: r.ID, Region: r.Region, Trigger: string(r.Trigger), StartedAt: r.StartedAt.UTC().Format(time.RFC3339),
			Status: string(r.Status), Pages: r.Pages, Videos: r.Videos, NewVideos: r.NewVideos,
			UpdatedVideos: r.UpdatedVideos, Units: r.Units, RefusedBy: r.RefusedBy, Error: r.Error,
		}
		if !r.FinishedAt.IsZero() {
			j.FinishedAt = r.FinishedAt.UTC().Format(time.RFC3339)
			j.DurationSeconds = r.FinishedAt.Sub(r.StartedAt).Seconds()
		}
		if !r.RetryAt.IsZero() {
			j.RetryAt = r.RetryAt.UTC().Format(time.RFC3339)
		}
		out = append(out, j)
	}
	return out
}

// Limit is one budget limit's state.
type Limit struct {
	Name            string  `json:"name"`
	Units           int64   `json:"units"`
	WindowSeconds   float64 `json:"window_seconds"`
	Used            int64   `json:"used"`
	Remaining       int64   `json:"remaining"`
	Reservations    int64   `json:"reservations"`
	NextFreeSeconds float64 `json:"next_free_seconds"`
}

// Exhausted is an upstream quotaExceeded mark.
type Exhausted struct {
	Until  string `json:"until"`
	Reason string `json:"reason"`
	Call   string `json:"call,omitempty"`
}

// QuotaStatus is the budget's state (quota status --json).
type QuotaStatus struct {
	Credential     string      `json:"credential"`
	Backend        string      `json:"backend"`
	At             string      `json:"at"`
	Limits         []Limit     `json:"limits"`
	Exhausted      *Exhausted  `json:"exhausted"`
	ExhaustedCalls []Exhausted `json:"exhausted_calls"`
	Ledger         Ledger      `json:"ledger"`
	Leader         *Leader     `json:"leader"` // the ytrend run replica firing the schedule, if any
	// Warnings say how the budget's Redis could lose the books (no AOF,
	// an evicting maxmemory-policy); empty when it cannot.
	Warnings []string `json:"warnings"`
}

// Ledger is the ledger's identity: rebuilt_at is null, and restored_grants
// 0, unless a process found its books lost.
type Ledger struct {
	Epoch          string  `json:"epoch"`
	AgeSeconds     float64 `json:"age_seconds"`
	RebuiltAt      *string `json:"rebuilt_at"`
	RestoredGrants int64   `json:"restored_grants"`
	GraceUntil     *string `json:"grace_until"`
}

// Status converts the budget's state.
func Status(st quota.Status) QuotaStatus {
	out := QuotaStatus{Credential: st.Credential, Backend: st.Backend, At: st.At.UTC().Format(time.RFC3339Nano),
		Limits: []Limit{}, ExhaustedCalls: []Exhausted{}, Warnings: []string{}}
	for _, l := range st.Limits {
		out.Limits = append(out.Limits, Limit{
			Name: l.Name, Units: l.Units, WindowSeconds: l.Window.Seconds(), Used: l.Used,
			Remaining: l.Remaining, Reservations: l.Reservations, NextFreeSeconds: l.NextFree.Seconds(),
		})
	}
	if st.Exhausted != nil {
		out.Exhausted = &Exhausted{Until: st.Exhausted.Until.UTC().Format(time.RFC3339), Reason: st.Exhausted.Reason}
	}
	for _, e := range st.ExhaustedCalls {
		out.ExhaustedCalls = append(out.ExhaustedCalls, Exhausted{Until: e.Until.UTC().Format(time.RFC3339), Reason: e.Reason, Call: e.Call})
	}
	l := st.Ledger
	out.Ledger = Ledger{Epoch: l.Epoch, AgeSeconds: l.Age.Seconds(), RestoredGrants: l.Restored}
	if !l.Rebuilt.IsZero() {
		at := l.Rebuilt.UTC().Format(time.RFC3339Nano)
		out.Ledger.RebuiltAt = &at
	}
	if l.GraceUntil.After(st.At) {
		at := l.GraceUntil.UTC().Format(time.RFC3339Nano)
		out.Ledger.GraceUntil = &at
	}
	if st.Leader != nil {
		out.Leader = &Leader{Token: st.Leader.Token, Holder: st.Leader.Holder}
	}
	return out
}

// Leader is the leader lease as status shows it.
type Leader struct {
	Token  int64  `json:"token"`
	Holder string `json:"holder"`
}

// PublicRuns is Runs for the pages and the API: each error is only its
// reason, one of a fixed list (RunReason). `ytrend runs` and the
// operator's log keep the whole text.
func PublicRuns(runs []store.Run) []Run {
	out := Runs(runs)
	for i := range out {
		out[i].Error = RunReason(runs[i])
	}
	return out
}

// The reasons the pages and the API give for a run that did not end ok:
// a fixed vocabulary, so no text an error carried (a proxy's error page, a
// certificate's host names, a URL with a user name) is ever published.
const (
	ReasonInterrupted   = "interrupted"
	ReasonFenced        = "fenced (another process leads)"
	ReasonBudget        = "budget refused"
	ReasonQuotaExceeded = "quota exceeded (YouTube 403 quotaExceeded)"
	ReasonRateLimited   = "rate limited by YouTube"
	ReasonAPIKey        = "invalid API key"
	ReasonForbidden     = "refused by YouTube (HTTP 403)"
	ReasonTLSCert       = "TLS certificate error"
	ReasonTLS           = "TLS handshake failed"
	ReasonDNS           = "DNS lookup failed"
	ReasonRefused       = "connection refused"
	ReasonUnreachable   = "network unreachable"
	ReasonTimeout       = "timeout"
	ReasonConnection    = "connection lost"
	ReasonMalformed     = "malformed response"
	ReasonArchiveBusy   = "archive busy"
	ReasonArchive       = "archive write failed"
	ReasonOther         = "error (details in the operator's log)"
	// upstream HTTP NNN is the one reason with a value in it: a status
	// code, three digits within 100-599.
	reasonHTTP = "upstream HTTP %d"
)

// httpStatus finds the status code of an HTTP answer in an error's text:
// ingest's "(HTTP 502)", googleapi's "response code 502" and "Error 502:".
var httpStatus = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bHTTP (\d{3})\b|response code (\d{3})\b|\bError (\d{3}):`)
})

// RunReason is why r did not end ok, from its status, the limit that
// refused it and the class of its error (the markers Go's net, crypto/tls,
// x509 and googleapi errors and ingest's classification put in the text
// the runs table stores), never the text itself. "" for a run that ended
// ok or has not ended.
func RunReason(r store.Run) string {
	switch r.Status {
	case store.StatusOK, store.StatusRunning:
		if r.Error == "" {
			return ""
		}
	case store.StatusInterrupted:
		return ReasonInterrupted
	case store.StatusFenced:
		return ReasonFenced
	case store.StatusStoppedQuota:
		if r.RefusedBy != "upstream" {
			return ReasonBudget
		}
	}
	return ErrorReason(r.Error)
}

// ErrorReason classifies an error's text into one of the reasons above;
// "" for none.
func ErrorReason(s string) string {
	if s == "" {
		return ""
	}
	has := func(markers ...string) bool {
		for _, m := range markers {
			if strings.Contains(s, m) {
				return true
			}
		}
		return false
	}
	// YouTube's own reasons (googleapi's, which ingest quotes) first: they
	// are the cause even when a status code rides along.
	switch {
	case has("quotaExceeded", "dailyLimitExceeded"):
		return ReasonQuotaExceeded
	case has("rateLimitExceeded", "userRateLimitExceeded", "quota limit "):
		return ReasonRateLimited
	case has("keyInvalid", "keyExpired", "API key not valid", "API key expired"):
		return ReasonAPIKey
	case has("quota: refused", "budget refused"):
		return ReasonBudget
	case has("quota: fenced"):
		return ReasonFenced
	case has("stopped by shutdown", "context canceled"):
		return ReasonInterrupted
	}
	// An HTTP answer's status before any word in its body: a proxy's error
	// page says "connection refused" as often as anything.
	if m := httpStatus().FindStringSubmatch(s); m != nil {
		for _, g := range m[1:] {
			if code, err := strconv.Atoi(g); err == nil && code >= 100 && code <= 599 {
				if code == 403 && has("forbidden", "accessNotConfigured", "Forbidden") {
					return ReasonForbidden
				}
				return fmt.Sprintf(reasonHTTP, code)
			}
		}
	}
	switch {
	case has("x509:", "certificate"):
		return ReasonTLSCert
	case has("no such host", "server misbehaving", "dial tcp: lookup ", "dial udp: lookup "):
		return ReasonDNS
	case has("connection refused"):
		return ReasonRefused
	case has("network is unreachable", "no route to host", "host is down"):
		return ReasonUnreachable
	case has("deadline exceeded", "i/o timeout", "Timeout", "timed out", "(timeout)"):
		return ReasonTimeout
	case has("tls:", "TLS handshake", "first record does not look like a TLS handshake"):
		return ReasonTLS
	case has("connection reset", "broken pipe", "EOF", "(connection failed)"):
		return ReasonConnection
	case has("malformed response", "invalid character", "cannot unmarshal", "json:"):
		return ReasonMalformed
	case has("database is locked", "SQLITE_BUSY", "write lock was not free"):
		return ReasonArchiveBusy
	case has("no space left", "disk I/O", "read-only", "permission denied", "store: "):
		return ReasonArchive
	}
	return ReasonOther
}
