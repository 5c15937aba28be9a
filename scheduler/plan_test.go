package scheduler

import (
	"testing"
	"time"

	"github.com/ytrend/ytrend/config"
)

func plan(t *testing.T, yaml string) Plan {
	t.Helper()
	c, err := config.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	return Project(c, jobs, time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
}

func TestProjectExactUnits(t *testing.T) {
	p := plan(t, `
regions:
  - {code: US, cron: "0 * * * *", pages: 4}
  - {code: GB, cron: "0 * * * *", pages: 2}
  - {code: IN, cron: "CRON_TZ=Asia/Kolkata 30 6 * * *", pages: 4, offset: 2m,
     searches: [{q: cricket, order: viewCount, published_within: 24h, pages: 1}]}
`)
	// US: 24 fetches x 4 units; GB: 24 x 2; IN: 1 x (4 + 100 search + 1
	// statistics). Plus one unit for category names at the first fetch of
	// each Pacific quota day: the week from 00:00 UTC touches 8 of them
	// (the first starts at 00:00 UTC, 16:00 the day before in Los Angeles;
	// the rest at 08:00 UTC) for the hourly regions, 7 for IN's daily fetch.
	want := map[string]float64{"US": (7*96 + 8) / 7.0, "GB": (7*48 + 8) / 7.0, "IN": 106}
	for _, r := range p.Regions {
		if r.UnitsPerDay != want[r.Region] {
			t.Errorf("%s units/day %v, want %v", r.Region, r.UnitsPerDay, want[r.Region])
		}
	}
	if p.Regions[1].Offset != 30*time.Minute {
		t.Errorf("GB offset %v, want 30m (two hourly regions)", p.Regions[1].Offset)
	}
	if got := p.Regions[2].Next[0]; !got.Equal(time.Date(2026, 11, 21, 1, 2, 0, 0, time.UTC)) {
		t.Errorf("IN next run %v", got)
	}
	if first := p.Regions[0].PerDayFirst["daily"]; first != 1 || p.Regions[0].PerFetch["daily"] != 4 {
		t.Errorf("US per fetch %v, first of the day adds %d", p.Regions[0].PerFetch, first)
	}
	daily, search := p.Limits[0], p.Limits[1]
	// The busiest 24h: 249 units of fetches, plus the category names of the
	// quota days starting at 00:00 and 08:00 UTC for US and GB, and IN's.
	perDay := (7*249 + 8 + 8 + 7) / 7.0
	if daily.Name != "daily" || daily.Peak != 254 || daily.PerDay != perDay || daily.Headroom != 9500-254 || daily.OverCommitted {
		t.Errorf("daily %+v, want peak 254 per day %v", daily, perDay)
	}
	if search.Name != "search" || search.Peak != 100 || search.PerDay != 100 || search.OverCommitted {
		t.Errorf("search %+v, want peak 100", search)
	}
	if p.OverCommitted() {
		t.Error("fits, but reported over-committed")
	}
	// US alone: 4 units of 9,500 per 24h -> every 24h*4/9500.
	day := 24 * time.Hour
	if got, want := p.Regions[0].FastestAlone, time.Duration(float64(day)*4/9500); got != want {
		t.Errorf("US fastest alone %v, want %v", got, want)
	}
	// IN spends 105 units a fetch: the daily limit (105 of 9,500 a day,
	// every ~15m55s) binds before the search limit (100 of 1,000 an hour,
	// every 6m).
	if got, want := p.Regions[2].FastestAlone, time.Duration(float64(day)*105/9500); got != want {
		t.Errorf("IN fastest alone %v, want %v", got, want)
	}
}

func TestProjectOverCommit(t *testing.T) {
	p := plan(t, `
regions:
  - {code: US, cron: "*/5 * * * *", pages: 4, searches: [{q: news, pages: 2}]}
`)
	// Every 5 minutes: 4 + 2x(100+1) = 206 units; 12 an hour.
	search := p.Limits[1]
	if search.Peak != 12*200 || !search.OverCommitted {
		t.Errorf("search %+v, want peak 2400 and over-committed", search)
	}
	daily := p.Limits[0]
	if want := (7*288*206 + 8) / 7.0; daily.PerDay != want || daily.Peak != 288*206+2 || !daily.OverCommitted {
		t.Errorf("daily %+v, want %v/day, peak %d and over-committed", daily, want, 288*206+2)
	}
	if !p.OverCommitted() {
		t.Error("not reported over-committed")
	}
}
