package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser accepts the standard five fields and the @descriptors
// (@hourly, @daily, @every 30m).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

const cronHelp = `want 5 fields "minute hour day-of-month month day-of-week" (e.g. "0 * * * *"), optionally prefixed by CRON_TZ=Area/City, or @hourly, @daily, @every 30m`

// ParseSchedule parses a cron spec. Specs without CRON_TZ= run in UTC, not in
// the host's local zone, so a schedule means the same on every host.
func ParseSchedule(spec string) (s cron.Schedule, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("empty cron spec; %s", cronHelp)
	}
	loc := time.UTC
	rest := spec
	if strings.HasPrefix(rest, "CRON_TZ=") || strings.HasPrefix(rest, "TZ=") {
		// Split the zone off ourselves: robfig/cron slices past the first
		// space without checking there is one, and panics on "CRON_TZ=UTC".
		tz, after, ok := strings.Cut(rest[strings.IndexByte(rest, '=')+1:], " ")
		if !ok || strings.TrimSpace(after) == "" {
			return nil, fmt.Errorf("%q has a time zone but no schedule; %s", spec, cronHelp)
		}
		if loc, err = time.LoadLocation(tz); err != nil || tz == "" || tz == "Local" {
			return nil, fmt.Errorf("%q: unknown time zone %q (use an IANA name such as Asia/Kolkata)", spec, tz)
		}
		rest = strings.TrimSpace(after)
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%q is not a valid cron spec; %s", spec, cronHelp)
		}
	}()
	if every, ok := strings.CutPrefix(rest, "@every "); ok {
		// robfig/cron rounds @every to whole seconds, silently: 500ms
		// would fire every second. Say so instead.
		d, err := time.ParseDuration(strings.TrimSpace(every))
		if err == nil && (d < time.Second || d%time.Second != 0) {
			return nil, fmt.Errorf("%q: @every counts whole seconds, at least 1s; got %s", spec, d)
		}
	}
	parsed, err := cronParser.Parse(rest)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid cron spec (%v); %s", spec, err, cronHelp)
	}
	if ss, ok := parsed.(*cron.SpecSchedule); ok {
		ss.Location = loc
	}
	if parsed.Next(referenceTime).IsZero() {
		return nil, fmt.Errorf("%q never fires (no date matches it); %s", spec, cronHelp)
	}
	return parsed, nil
}

// MaintenanceSchedule parses scheduler.maintenance; ok is false when it is
// "off".
func (c *Config) MaintenanceSchedule() (s cron.Schedule, ok bool, err error) {
	if strings.TrimSpace(c.Scheduler.Maintenance) == MaintenanceOff {
		return nil, false, nil
	}
	s, err = ParseSchedule(c.Scheduler.Maintenance)
	return s, err == nil, err
}

// referenceTime anchors interval measurements so they do not depend on when
// the program runs: a Monday at midnight UTC.
var referenceTime = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Job is a region's entry with its schedule resolved: the parsed spec and
// its stagger offset.
type Job struct {
	Region
	Offset   time.Duration
	Schedule cron.Schedule // Next already includes Offset
}

// Jobs resolves every region's schedule. Regions that share a spec and give
// no offset are spread evenly over the spec's interval, in file order: eight
// hourly regions fire 7m30s apart. Call Validate first: it parses the codes.
func (c *Config) Jobs() ([]Job, error) {
	groups := map[string][]int{}
	var order []string
	for i, r := range c.Regions {
		if r.Offset != nil {
			continue
		}
		key := normSpec(r.Cron)
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], i)
	}
	offsets := make([]time.Duration, len(c.Regions))
	for _, key := range order {
		idx := groups[key]
		s, err := ParseSchedule(key)
		if err != nil {
			return nil, err
		}
		step := Interval(s) / time.Duration(len(idx))
		step = step.Truncate(time.Second) // cron fires on whole seconds
		for k, i := range idx {
			offsets[i] = time.Duration(k) * step
		}
	}
	jobs := make([]Job, 0, len(c.Regions))
	for i, r := range c.Regions {
		s, err := ParseSchedule(r.Cron)
		if err != nil {
			return nil, fmt.Errorf("regions[%d].cron: %w", i, err)
		}
		off := offsets[i]
		if r.Offset != nil {
			off = r.Offset.D()
		}
		jobs = append(jobs, Job{Region: r, Offset: off, Schedule: Offset(s, off)})
	}
	return jobs, nil
}

func normSpec(s string) string { return strings.Join(strings.Fields(s), " ") }

// Interval is the shortest gap between consecutive fire times of s, measured
// over a week from a fixed reference: 1h for "0 * * * *", 24h for a daily spec.
func Interval(s cron.Schedule) time.Duration {
	if cd, ok := s.(cron.ConstantDelaySchedule); ok {
		return cd.Delay
	}
	var best time.Duration
	t := s.Next(referenceTime)
	end := referenceTime.Add(8 * 24 * time.Hour)
	for t.Before(end) {
		n := s.Next(t)
		if n.IsZero() {
			break
		}
		if gap := n.Sub(t); best == 0 || gap < best {
			best = gap
		}
		t = n
	}
	if best == 0 {
		best = 7 * 24 * time.Hour
	}
	return best
}

// Offset shifts every fire time of s later by d.
func Offset(s cron.Schedule, d time.Duration) cron.Schedule {
	if d == 0 {
		return s
	}
	return offsetSchedule{inner: s, offset: d}
}

type offsetSchedule struct {
	inner  cron.Schedule
	offset time.Duration
}

func (o offsetSchedule) Next(t time.Time) time.Time {
	n := o.inner.Next(t.Add(-o.offset))
	if n.IsZero() {
		return n
	}
	return n.Add(o.offset)
}
