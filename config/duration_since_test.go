package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
)

// ParseSince takes a duration ago or a date, and refuses a duration no
// since can mean (negative, or too long) rather than reading it as a date.
func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"24h", now.Add(-24 * time.Hour)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"2026-11-01", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-11-01T08:30", time.Date(2026, 11, 1, 8, 30, 0, 0, time.UTC)},
		{"2026-11-01T08:30:00+01:00", time.Date(2026, 11, 1, 7, 30, 0, 0, time.UTC)},
	} {
		got, err := config.ParseSince(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"-7d", "", "yesterday", "2026-13-01"} {
		if _, err := config.ParseSince(in, now); err == nil {
			t.Errorf("ParseSince(%q): no error", in)
		}
	}
	if _, err := config.ParseSince("soon", now); err == nil || !strings.Contains(err.Error(), "want a duration") {
		t.Errorf("ParseSince(soon): %v, want the formats named", err)
	}
}
