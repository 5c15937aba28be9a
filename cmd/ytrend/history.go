package main

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

func (c *cli) historyCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history VIDEO_ID",
		Short: "Show a video's life on the charts (no API quota spent)",
		Long: `History shows, for each region whose chart a video was on: when it was first and
last seen, its best rank, on how many days (UTC) it charted, and its rank and
views over time as sparklines (a taller bar is a better rank).

VIDEO_ID may also be a watch URL. --json prints video_id, title, channel,
category_id and category (its name; "" when the archive has none) and, per
region, every sighting as {at, rank, views} with RFC 3339 times (views null
when hidden).`,
		Example: `  ytrend history dQw4w9WgXcQ
  ytrend history "https://www.youtube.com/watch?v=dQw4w9WgXcQ" --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := videoIDArg(args[0])
			if id == "" {
				return usageError{fmt.Errorf("%q is not a video id or watch URL", args[0])}
			}
			a, err := c.open(cmd, openOpts{readOnly: true})
			if err != nil {
				return err
			}
			defer a.close()
			h, err := a.db.History(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, view.HistoryOf(h))
			}
			printHistory(c.stdout, h)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// videoIDArg accepts an id or a watch / short URL.
func videoIDArg(s string) string {
	s = strings.TrimSpace(s)
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		if v := u.Query().Get("v"); v != "" {
			return v
		}
		if strings.HasSuffix(u.Host, "youtu.be") {
			return strings.Trim(u.Path, "/")
		}
		return ""
	}
	return s
}

func printHistory(w io.Writer, h store.History) {
	// Archive text is printed through humanfmt.Terminal: an archive
	// imported before imports removed control characters may hold them.
	fmt.Fprintf(w, "%s  %s — %s · %s\n", termLine(h.VideoID), termLine(h.Title),
		termLine(h.ChannelTitle), termLine(categoryText(h.CategoryID, h.Category)))
	if len(h.Regions) == 0 {
		fmt.Fprintln(w, "never on a chart this archive holds")
		return
	}
	for _, r := range h.Regions {
		days := "days"
		if r.Days == 1 {
			days = "day"
		}
		fmt.Fprintf(w, "\n%s  first %s  last %s  best #%d  %d %s on the chart, %d sightings\n", r.Region,
			r.FirstSeen.UTC().Format("2006-01-02 15:04"), r.LastSeen.UTC().Format("2006-01-02 15:04"), r.BestRank, r.Days, days, len(r.Points))
		first, last := r.Points[0], r.Points[len(r.Points)-1]
		fmt.Fprintf(w, "    rank   %s  #%d → #%d\n", rankSparkline(r.Points, sparkWidth), first.Rank, last.Rank)
		fmt.Fprintf(w, "    views  %s  %s → %s\n", viewsSparkline(r.Points, sparkWidth), viewsText(first.Views), viewsText(last.Views))
	}
}

func viewsText(v *int64) string {
	if v == nil {
		return "hidden"
	}
	return humanfmt.Count(*v)
}

const sparkWidth = 60

var bars = []rune("▁▂▃▄▅▆▇█")

// buckets spreads points over at most width columns by time: each column
// holds the points of its share of the span.
func buckets(ps []store.HistoryPoint, width int) [][]store.HistoryPoint {
	if len(ps) <= width {
		out := make([][]store.HistoryPoint, len(ps))
		for i := range ps {
			out[i] = ps[i : i+1]
		}
		return out
	}
	out := make([][]store.HistoryPoint, width)
	span := ps[len(ps)-1].At.Sub(ps[0].At)
	for _, p := range ps {
		i := int(float64(width-1) * float64(p.At.Sub(ps[0].At)) / float64(max(span, time.Nanosecond)))
		out[i] = append(out[i], p)
	}
	return out
}

// rankSparkline draws each column's best rank: rank 1 (or the best seen)
// is the tallest bar; a column without a sighting is a space.
func rankSparkline(ps []store.HistoryPoint, width int) string {
	lo, hi := ps[0].Rank, ps[0].Rank
	for _, p := range ps {
		lo, hi = min(lo, p.Rank), max(hi, p.Rank)
	}
	var b strings.Builder
	for _, col := range buckets(ps, width) {
		if len(col) == 0 {
			b.WriteRune(' ')
			continue
		}
		best := col[0].Rank
		for _, p := range col {
			best = min(best, p.Rank)
		}
		b.WriteRune(level(float64(hi-best), float64(hi-lo)))
	}
	return b.String()
}

// viewsSparkline draws each column's largest view count.
func viewsSparkline(ps []store.HistoryPoint, width int) string {
	var lo, hi int64 = -1, -1
	for _, p := range ps {
		if p.Views != nil {
			if lo < 0 || *p.Views < lo {
				lo = *p.Views
			}
			hi = max(hi, *p.Views)
		}
	}
	var b strings.Builder
	for _, col := range buckets(ps, width) {
		var top int64 = -1
		for _, p := range col {
			if p.Views != nil {
				top = max(top, *p.Views)
			}
		}
		if top < 0 {
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(level(float64(top-lo), float64(hi-lo)))
	}
	return b.String()
}

// level maps v in [0, span] to a bar; a flat series is full height.
func level(v, span float64) rune {
	if span <= 0 {
		return bars[len(bars)-1]
	}
	i := int(v / span * float64(len(bars)-1))
	return bars[max(0, min(i, len(bars)-1))]
}
