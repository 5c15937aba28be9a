package scheduler

import (
	"slices"
	"time"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/quota"
)

// Plan answers "will my schedule fit my quota?" before a 403 does.
type Plan struct {
	From    time.Time
	Regions []RegionPlan
	Limits  []LimitPlan
}

// RegionPlan is one region's projected spend.
type RegionPlan struct {
	Region   string
	Spec     string
	Offset   time.Duration
	Next     []time.Time      // the next three fire times
	PerFetch map[string]int64 // units one fetch reserves, per limit (worst case: every page fetched)
	// PerDayFirst is what the first fetch of each quota day reserves on top
	// of PerFetch, per limit: the region's category names
	// (videoCategories.list, once per region per Pacific day).
	PerDayFirst map[string]int64
	FiresPerDay float64
	UnitsPerDay float64 // in the top-level cost table
	// FastestAlone is how often this region alone could be refreshed within
	// the tightest limit; FastestShared, if every region were refreshed at
	// the same rate.
	FastestAlone  time.Duration
	FastestShared time.Duration
}

// LimitPlan is one limit's projected load.
type LimitPlan struct {
	Name          string
	Units         int64
	Window        time.Duration
	Peak          int64   // most units spent inside any one window over the projected week
	PerDay        float64 // average units per day counted by this limit
	Headroom      int64   // Units - Peak
	OverCommitted bool
}

// OverCommitted reports whether any limit cannot hold the schedule.
func (p Plan) OverCommitted() bool {
	return slices.ContainsFunc(p.Limits, func(l LimitPlan) bool { return l.OverCommitted })
}

// Project simulates a week of the schedule from `from`, assuming every fetch
// spends its whole worst case at its fire time, and measures each limit's
// peak over every window of that limit's length.
func Project(cfg *config.Config, jobs []config.Job, from time.Time) Plan {
	const days = 7
	q := cfg.QuotaConfig()
	var maxWindow time.Duration
	for _, l := range q.Limits {
		maxWindow = max(maxWindow, l.Window)
	}
	end := from.Add(days * 24 * time.Hour)
	type event struct {
		at    time.Time
		units []int64 // per limit
	}
	var events []event
	plan := Plan{From: from}

	costOf := func(limit int, call string) int64 {
		l := q.Limits[limit]
		table := l.Costs
		if table == nil {
			table = q.Costs
		}
		return table[call]
	}
	for _, j := range jobs {
		rp := RegionPlan{Region: j.Code.String(), Spec: j.Cron, Offset: j.Offset, PerFetch: map[string]int64{},
			PerDayFirst: map[string]int64{}}
		perLimit := make([]int64, len(q.Limits))
		firstOfDay := make([]int64, len(q.Limits)) // the day's first fetch also names categories
		for i, l := range q.Limits {
			u := int64(j.Pages) * costOf(i, "videos.list")
			for _, s := range j.Searches {
				u += int64(s.Pages) * (costOf(i, "search.list") + costOf(i, "videos.list"))
			}
			perLimit[i] = u
			rp.PerFetch[l.Name] = u
			firstOfDay[i] = u + costOf(i, "videoCategories.list")
			rp.PerDayFirst[l.Name] = costOf(i, "videoCategories.list")
		}
		base := int64(j.Pages) * q.Costs["videos.list"]
		for _, s := range j.Searches {
			base += int64(s.Pages) * (q.Costs["search.list"] + q.Costs["videos.list"])
		}
		t := from.Add(-time.Nanosecond) // a fire exactly at `from` counts
		fires, firsts := 0, 0
		var day time.Time // the quota day of the previous fire (its reset)
		for {
			t = j.Schedule.Next(t)
			if t.IsZero() || !t.Before(end.Add(maxWindow)) {
				break
			}
			if len(rp.Next) < 3 {
				rp.Next = append(rp.Next, t)
			}
			units := perLimit
			if d := quota.NextReset(t); !d.Equal(day) {
				day, units = d, firstOfDay
				if t.Before(end) {
					firsts++
				}
			}
			if t.Before(end) {
				fires++
			}
			events = append(events, event{at: t, units: units})
		}
		rp.FiresPerDay = float64(fires) / days
		rp.UnitsPerDay = float64(int64(fires)*base+int64(firsts)*q.Costs["videoCategories.list"]) / days
		plan.Regions = append(plan.Regions, rp)
	}
	slices.SortFunc(events, func(a, b event) int { return a.at.Compare(b.at) })

	for i, l := range q.Limits {
		lp := LimitPlan{Name: l.Name, Units: l.Units, Window: l.Window}
		var sum, total int64
		lo := 0
		for hi, e := range events {
			sum += e.units[i]
			// An entry counts while it is younger than the window.
			for !events[lo].at.After(e.at.Add(-l.Window)) {
				sum -= events[lo].units[i]
				lo++
			}
			lp.Peak = max(lp.Peak, sum)
			if events[hi].at.Before(end) {
				total += e.units[i]
			}
		}
		lp.PerDay = float64(total) / days
		lp.Headroom = l.Units - lp.Peak
		lp.OverCommitted = lp.Peak > l.Units
		plan.Limits = append(plan.Limits, lp)
	}

	// Refresh rates: units per fetch against each limit's rate, tightest wins.
	var shared = make([]int64, len(q.Limits))
	for _, rp := range plan.Regions {
		for i, l := range q.Limits {
			shared[i] += rp.PerFetch[l.Name]
		}
	}
	for r := range plan.Regions {
		rp := &plan.Regions[r]
		for i, l := range q.Limits {
			if per := rp.PerFetch[l.Name]; per > 0 {
				rp.FastestAlone = max(rp.FastestAlone, time.Duration(float64(l.Window)*float64(per)/float64(l.Units)))
			}
			if shared[i] > 0 {
				rp.FastestShared = max(rp.FastestShared, time.Duration(float64(l.Window)*float64(shared[i])/float64(l.Units)))
			}
		}
	}
	return plan
}
