package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/scheduler"
)

func (c *cli) scheduleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Work with the region schedule in schedule.yaml",
	}
	cmd.AddCommand(c.scheduleCheckCmd())
	return cmd
}

func (c *cli) scheduleCheckCmd() *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Validate the schedule and project its quota spend against every limit",
		Long: `Check validates the configuration and prints, per region, its spec, offset,
next three fire times and projected units per day; then each limit's peak
spend within its window over a projected week, against its units, and how
often the regions could be refreshed within the budget.

Exit status: 0 the schedule fits; 1 the file is invalid or a limit is
over-committed (the schedule would be refused before the day is out).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.loadConfig(cmd)
			if err != nil {
				return err
			}
			from := time.Now().UTC()
			if at != "" {
				if from, err = time.Parse(time.RFC3339, at); err != nil {
					return usageError{fmt.Errorf("--from %q: want RFC 3339, e.g. 2026-11-21T00:00:00Z", at)}
				}
			}
			jobs, err := cfg.Jobs()
			if err != nil {
				return err
			}
			plan := scheduler.Project(cfg, jobs, from)
			printPlan(c.stdout, cfg, plan)
			printMaintenance(c.stdout, cfg, from)
			if plan.OverCommitted() {
				var over []string
				for _, l := range plan.Limits {
					if l.OverCommitted {
						over = append(over, fmt.Sprintf("%s (peak %d > %d units per %s)", l.Name, l.Peak, l.Units, config.FormatDuration(l.Window)))
					}
				}
				return withCode(exitError, errors.New("schedule over-commits "+strings.Join(over, ", ")))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&at, "from", "", "project from this instant instead of now (RFC 3339)")
	return cmd
}

func printPlan(w io.Writer, cfg *config.Config, p scheduler.Plan) {
	src := cfg.Source
	if src == "" {
		src = "built-in defaults"
	}
	fmt.Fprintf(w, "%s: valid; %d regions, credential %q\n\n", src, len(p.Regions), cfg.Credential)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REGION\tSPEC\tOFFSET\tNEXT RUNS (UTC)\tUNITS/FETCH\tFETCHES/DAY\tUNITS/DAY")
	for _, r := range p.Regions {
		var next []string
		for _, t := range r.Next {
			next = append(next, t.UTC().Format("01-02 15:04:05"))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Region, r.Spec, config.FormatDuration(r.Offset),
			strings.Join(next, ", "), perFetch(r.PerFetch, p.Limits), num(r.FiresPerDay), num(r.UnitsPerDay))
	}
	tw.Flush()
	if len(p.Regions) > 0 {
		fmt.Fprintf(w, "(a region's first fetch of each quota day also asks for its category names: %s more; counted in UNITS/DAY and below)\n",
			perFetch(p.Regions[0].PerDayFirst, p.Limits))
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LIMIT\tUNITS\tWINDOW\tPEAK IN WINDOW\tHEADROOM\tPER DAY\tFITS")
	for _, l := range p.Limits {
		fits := "yes"
		if l.OverCommitted {
			fits = "NO: over-committed"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\t%s\n", l.Name, l.Units, config.FormatDuration(l.Window), l.Peak, l.Headroom, num(l.PerDay), fits)
	}
	tw.Flush()

	if len(p.Regions) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Fastest refresh the budget allows:")
		for _, r := range p.Regions {
			fmt.Fprintf(w, "  %s alone: every %s\n", r.Region, config.FormatDuration(r.FastestAlone.Round(time.Second)))
		}
		fmt.Fprintf(w, "  all %d regions at the same rate: every %s\n", len(p.Regions), config.FormatDuration(p.Regions[0].FastestShared.Round(time.Second)))
	}
}

// printMaintenance says when `ytrend run` does the archive's upkeep.
func printMaintenance(w io.Writer, cfg *config.Config, from time.Time) {
	s, on, _ := cfg.MaintenanceSchedule() // validated at load
	if !on {
		fmt.Fprintln(w, "\nArchive maintenance: off (run \"ytrend optimize\" now and then)")
		return
	}
	fmt.Fprintf(w, "\nArchive maintenance (no quota): %s, next %s UTC\n", cfg.Scheduler.Maintenance, s.Next(from).UTC().Format("01-02 15:04:05"))
}

func perFetch(m map[string]int64, limits []scheduler.LimitPlan) string {
	parts := make([]string, 0, len(limits))
	for _, l := range limits {
		parts = append(parts, fmt.Sprintf("%s %d", l.Name, m[l.Name]))
	}
	return strings.Join(parts, ", ")
}

// num prints whole numbers without decimals and others with one.
func num(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprintf("%.1f", f)
}
