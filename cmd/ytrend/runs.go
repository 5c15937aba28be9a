package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

func (c *cli) runsCmd() *cobra.Command {
	var (
		region string
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List recent fetch runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := store.RunFilter{Limit: limit}
			if region != "" {
				codes, err := parseRegions([]string{region})
				if err != nil {
					return usageError{fmt.Errorf("--region: %w", err)}
				}
				if len(codes) != 1 {
					return usageError{fmt.Errorf("--region %s: give one region", region)}
				}
				f.Region = codes[0]
			}
			if limit < 1 {
				return usageError{fmt.Errorf("--limit %d: must be at least 1", limit)}
			}
			a, err := c.open(cmd, openOpts{existing: true})
			if err != nil {
				return err
			}
			defer a.close()
			runs, err := a.db.Runs(cmd.Context(), f)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, view.Runs(runs))
			}
			printRuns(c.stdout, runs, time.Now())
			return nil
		},
	}
	cmd.Flags().StringVar(&region, "region", "", "only this region")
	cmd.Flags().IntVar(&limit, "limit", 20, "number of runs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printRuns(w io.Writer, runs []store.Run, now time.Time) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tREGION\tTRIGGER\tSTARTED\tDURATION\tPAGES\tVIDEOS\tUNITS\tSTATUS\tDETAIL")
	for _, r := range runs {
		dur := "running"
		if !r.FinishedAt.IsZero() {
			dur = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		d := r.Error
		if r.Status == store.StatusStoppedQuota {
			d = fmt.Sprintf("refused by %s; retry at %s", r.RefusedBy, r.RetryAt.UTC().Format(time.RFC3339))
			if r.RetryAt.After(now) {
				d += " (in " + config.FormatDuration(r.RetryAt.Sub(now).Round(time.Second)) + ")"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.ID, r.Region, r.Trigger,
			r.StartedAt.UTC().Format("2006-01-02 15:04:05"), dur, r.Pages, r.Videos, r.Units, r.Status, termCell(d, 80))
	}
	tw.Flush()
}

// termCell is termLine(s) cut to at most n runes, the last of them "…" when
// anything was left out. It cuts between the runes of s, before escaping,
// so an escape is shown whole or not at all: cut in half, "\x1b" would
// read as a backslash and some letters.
func termCell(s string, n int) string {
	line := termLine(s)
	if utf8.RuneCountInString(line) <= n {
		return line
	}
	var b strings.Builder
	width, gap := 0, false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		piece := s[i : i+size]
		i += size
		if !(r == utf8.RuneError && size == 1) && !humanfmt.TerminalControl(r) && unicode.IsSpace(r) {
			// Whitespace folds into one space between words, as in termLine.
			gap = width > 0
			continue
		}
		piece = humanfmt.Terminal(piece)
		w := utf8.RuneCountInString(piece)
		if gap {
			w++
		}
		if width+w > n-1 {
			break
		}
		if gap {
			b.WriteByte(' ')
			gap = false
		}
		b.WriteString(piece)
		width += w
	}
	return b.String() + "…"
}
