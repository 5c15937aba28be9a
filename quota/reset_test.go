package quota_test

import (
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
)

func TestNextReset(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name string
		t    time.Time
		want time.Time // exact instant, in UTC
	}{
		{"winter afternoon (PST, UTC-8)", utc("2026-01-15T20:00:00Z"), utc("2026-01-16T08:00:00Z")},
		{"summer afternoon (PDT, UTC-7)", utc("2026-07-04T19:00:00Z"), utc("2026-07-05T07:00:00Z")},
		{"just before midnight PT", utc("2026-01-16T07:59:59.999999Z"), utc("2026-01-16T08:00:00Z")},
		{"exactly midnight PT is not strictly after", utc("2026-01-16T08:00:00Z"), utc("2026-01-17T08:00:00Z")},
		{"just after midnight PT", utc("2026-01-16T08:00:00.000001Z"), utc("2026-01-17T08:00:00Z")},
		{"evening before spring forward: next midnight still PST", utc("2026-03-08T05:00:00Z"), utc("2026-03-08T08:00:00Z")},
		{"night of spring forward (01:00 PST): next midnight is PDT, 22h away", utc("2026-03-08T09:00:00Z"), utc("2026-03-09T07:00:00Z")},
		{"after spring forward (03:30 PDT)", utc("2026-03-08T10:30:00Z"), utc("2026-03-09T07:00:00Z")},
		{"night of fall back (00:30 PDT): next midnight is PST, 24h30m away", utc("2026-11-01T07:30:00Z"), utc("2026-11-02T08:00:00Z")},
		{"the repeated hour, first pass (01:30 PDT)", utc("2026-11-01T08:30:00Z"), utc("2026-11-02T08:00:00Z")},
		{"the repeated hour, second pass (01:30 PST)", utc("2026-11-01T09:30:00Z"), utc("2026-11-02T08:00:00Z")},
		{"new year's eve in UTC is still the 31st in LA", utc("2027-01-01T03:00:00Z"), utc("2027-01-01T08:00:00Z")},
		{"input in another zone", utc("2026-06-01T12:00:00Z").In(time.FixedZone("CEST", 2*3600)), utc("2026-06-02T07:00:00Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quota.NextReset(tt.t)
			if !got.Equal(tt.want) {
				t.Errorf("NextReset(%s) = %s (%s), want %s", tt.t.Format(time.RFC3339Nano), got.UTC(), got, tt.want)
			}
			if !got.After(tt.t) {
				t.Errorf("NextReset(%s) = %s is not strictly after", tt.t, got)
			}
			if h, m, s := got.In(la).Clock(); h != 0 || m != 0 || s != 0 || got.Nanosecond() != 0 {
				t.Errorf("NextReset(%s) = %s is not midnight in Los Angeles", tt.t, got.In(la))
			}
		})
	}
}
