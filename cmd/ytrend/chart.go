package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

func (c *cli) chartCmd() *cobra.Command {
	var (
		at       string
		limit    int
		category string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "chart REGION",
		Short: "Show a region's trending chart as it stood at a time (no API quota spent)",
		Long: `Chart shows REGION's trending chart as the newest fetch at or before --at saw
it (default: now): rank, title, channel, views, and how each video moved
against the fetch before (▲3 up three places, ▼2 down two, NEW, = same).

--at is an RFC 3339 time (2026-03-01T12:00:00Z) or a date (2026-03-01), which
means the end of that day in UTC: the day's last chart. Imported datasets have
one chart a day, at 00:00 UTC of their trending_date.

--category keeps the videos of one category (its name, in any case, or its
id), at their rank in the whole chart. Names come from videoCategories.list,
which fetches ask once per region per day; a name the region's list does not
hold is an error that lists the names it does.

--json prints the entries as an array of objects (rank, video_id, title,
channel_id, channel_title, category_id, category, views, likes, comments,
fetched_at, previous_rank, change, movement); hidden counts are null, and
category is "" when the archive has no name for the id.`,
		Example: `  ytrend chart US
  ytrend chart GB --at 2018-01-15 --limit 10
  ytrend chart IN --at 2026-03-01T06:00:00Z --json
  ytrend chart US --category music`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			codes, err := parseRegions(args)
			if err != nil {
				return usageError{err}
			}
			var when time.Time
			if at != "" {
				if when, err = parseWhen("--at", at, time.Now(), true); err != nil {
					return usageError{err}
				}
			}
			if limit < 0 {
				return usageError{fmt.Errorf("--limit %d: must be 0 (all) or more", limit)}
			}
			a, err := c.open(cmd, openOpts{readOnly: true})
			if err != nil {
				return err
			}
			defer a.close()
			cats, err := categoryIDs(cmd.Context(), a.db, category, codes[:1])
			if err != nil {
				return err
			}
			chart, err := a.db.ChartOf(cmd.Context(), store.ChartQuery{Region: codes[0], At: when, Limit: limit, Categories: cats})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, view.ChartEntries(chart.Entries))
			}
			printChart(c.stdout, chart)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&at, "at", "", "the chart as it stood at this time: RFC 3339, or a date (its end, UTC)")
	f.IntVar(&limit, "limit", 50, "number of entries (0: all)")
	f.StringVar(&category, "category", "", categoryFlagHelp)
	f.BoolVar(&asJSON, "json", false, "print a JSON array of the entries")
	return cmd
}

// parseWhen reads a time flag: RFC 3339, 2006-01-02T15:04 (UTC), a date
// (its start, or with endOfDay its last microsecond, UTC), or a duration
// ago (24h, 7d).
func parseWhen(flag, s string, now time.Time, endOfDay bool) (time.Time, error) {
	if t, ok := config.ParseWhen(s, now, endOfDay); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time (2026-03-01T12:00:00Z), a date (2026-03-01) or a duration ago (7d)", flag, s)
}

func printChart(w io.Writer, c store.Chart) {
	against := "the region's first chart"
	if c.PreviousFetchedAt != nil {
		against = "moves against " + c.PreviousFetchedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	fmt.Fprintf(w, "%s trending chart fetched %s (%s)\n", c.Region, c.FetchedAt.UTC().Format("2006-01-02 15:04 UTC"), against)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tMOVE\tTITLE\tCHANNEL\tCATEGORY\t   VIEWS")
	for _, e := range c.Entries {
		views := "hidden"
		if e.Views != nil {
			views = humanfmt.Count(*e.Views)
		}
		fmt.Fprintf(tw, "%4d\t%s\t%s\t%s\t%s\t%8s\n", e.Rank, movement(e), termCell(e.Title, 60),
			termCell(e.ChannelTitle, 24), termCell(categoryText(e.CategoryID, e.Category), 20), views)
	}
	tw.Flush()
}

// categoryText is a category's name, or its id when the archive has no
// name for it.
func categoryText(id, name string) string {
	switch {
	case name != "":
		return name
	case id != "":
		return "#" + id
	}
	return "-"
}

// movement is ▲3, ▼2, NEW or =.
func movement(e store.ChartEntry) string {
	switch e.Movement {
	case store.MovementUp:
		return fmt.Sprintf("▲%d", e.Change)
	case store.MovementDown:
		return fmt.Sprintf("▼%d", -e.Change)
	case store.MovementSame:
		return "="
	}
	return "NEW"
}
