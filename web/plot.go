package web

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/view"
)

// Plot geometry, in SVG user units; the SVG scales to the page's width.
const (
	plotW, plotH           = 720, 300
	padL, padR, padT, padB = 56, 16, 16, 56
	innerW, innerH         = plotW - padL - padR, plotH - padT - padB
	maxSeries              = 8 // colours in the stylesheet (.s0-.s7)
	legendRow              = 18
)

// series is one region's points, as x (time) and y (a value).
type series struct {
	name string
	ts   []time.Time
	ys   []float64
}

// rankPlot draws every region's rank over time: dates on the x axis, rank
// on an inverted y axis (1 at the top).
func rankPlot(rs []view.RegionHistory) template.HTML {
	var ss []series
	worst := 1.0
	for _, r := range rs {
		s := series{name: string(r.Region)}
		for _, p := range r.Points {
			s.ts = append(s.ts, p.At)
			s.ys = append(s.ys, float64(p.Rank))
			worst = max(worst, float64(p.Rank))
		}
		ss = append(ss, s)
	}
	top := max(10, niceCeil(worst))
	return plot("rank-plot", "Rank over time per region (1 is the top of the chart)",
		rankDesc(rs), ss, 1, top, true, func(v float64) string { return fmt.Sprintf("#%.0f", v) })
}

// viewsPlot draws every region's view counts over time; hidden counts are
// left out.
func viewsPlot(rs []view.RegionHistory) template.HTML {
	var ss []series
	hi := 0.0
	for _, r := range rs {
		s := series{name: string(r.Region)}
		for _, p := range r.Points {
			if p.Views == nil {
				continue
			}
			s.ts = append(s.ts, p.At)
			s.ys = append(s.ys, float64(*p.Views))
			hi = max(hi, float64(*p.Views))
		}
		if len(s.ts) > 0 {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return template.HTML(`<p class="meta">The owner hides this video's view count.</p>`)
	}
	return plot("views-plot", "Views over time per region", "View counts at each sighting.", ss, 0, niceCeil(hi), false,
		func(v float64) string { return humanfmt.Count(int64(v)) })
}

func rankDesc(rs []view.RegionHistory) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s: best #%d, from %s to %s", r.Region, r.BestRank,
			r.FirstSeen.UTC().Format(time.DateOnly), r.LastSeen.UTC().Format(time.DateOnly)))
	}
	return strings.Join(parts, "; ") + "."
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// plot draws series into an SVG with a title and a description for screen
// readers. lo..hi is the y range; inverted puts lo at the top.
func plot(id, title, desc string, ss []series, lo, hi float64, inverted bool, ylabel func(float64) string) template.HTML {
	if len(ss) > maxSeries {
		ss = ss[:maxSeries]
	}
	var t0, t1 time.Time
	for _, s := range ss {
		for _, t := range s.ts {
			if t0.IsZero() || t.Before(t0) {
				t0 = t
			}
			if t.After(t1) {
				t1 = t
			}
		}
	}
	span := t1.Sub(t0)
	if span <= 0 {
		span = time.Hour
		t0 = t0.Add(-span / 2)
	}
	if hi <= lo {
		hi = lo + 1
	}
	x := func(t time.Time) float64 { return padL + float64(innerW)*float64(t.Sub(t0))/float64(span) }
	y := func(v float64) float64 {
		f := (v - lo) / (hi - lo)
		if !inverted {
			f = 1 - f
		}
		return padT + float64(innerH)*f
	}
	legendRows := (len(ss) + 5) / 6
	h := plotH + legendRows*legendRow
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" id="%s" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-title %s-desc" xmlns="http://www.w3.org/2000/svg">`,
		id, plotW, h, id, id)
	fmt.Fprintf(&b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, html.EscapeString(title), id, html.EscapeString(desc))
	// Y grid and labels: five steps.
	for i := 0; i <= 4; i++ {
		// Round steps of the top value (#1, #50, #100, #150, #200), from
		// lo: rank 1 rather than 0.
		v := max(lo, hi*float64(i)/4)
		yy := y(v)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, padL, yy, plotW-padR, yy)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, padL-6, yy+4, html.EscapeString(ylabel(math.Round(v))))
	}
	// X axis with dates.
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, padL, padT+innerH, plotW-padR, padT+innerH)
	layout := "Jan 2"
	if span > 300*24*time.Hour {
		layout = "Jan 2006"
	} else if span < 48*time.Hour {
		layout = "Jan 2 15:04"
	}
	for i := 0; i <= 4; i++ {
		t := t0.Add(span * time.Duration(i) / 4)
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="%s">%s</text>`, x(t), padT+innerH+18, anchor, t.UTC().Format(layout))
	}
	for i, s := range ss {
		var pts []string
		for j := range s.ts {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.ts[j]), y(s.ys[j])))
		}
		fmt.Fprintf(&b, `<g class="s%d"><title>%s</title>`, i, html.EscapeString(s.name))
		if len(pts) == 1 {
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4"/>`, strings.Split(pts[0], ",")[0], strings.Split(pts[0], ",")[1])
		} else {
			fmt.Fprintf(&b, `<polyline points="%s"/>`, strings.Join(pts, " "))
		}
		b.WriteString(`</g>`)
		lx := padL + (i%6)*110
		ly := plotH - 14 + (i/6)*legendRow
		fmt.Fprintf(&b, `<rect class="s%d" x="%d" y="%d" width="14" height="4"/><text class="legend" x="%d" y="%d">%s</text>`,
			i, lx, ly-4, lx+18, ly, html.EscapeString(s.name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
