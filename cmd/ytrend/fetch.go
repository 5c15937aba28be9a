package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/daemon"
	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/view"
)

func (c *cli) fetchCmd() *cobra.Command {
	var (
		pages    int
		asJSON   bool
		noSearch bool
	)
	cmd := &cobra.Command{
		Use:   "fetch REGION...",
		Short: "Fetch regions' trending charts now, through the shared budget",
		Long: `Fetch runs the same region fetch the scheduler runs, through the same shared
budget, and records it as a run with trigger "cli". Progress goes to stderr,
one line per stored page; a summary follows.

Exit status: 0 every region ok; 75 (EX_TEMPFAIL) a region stopped because the
budget refused (try again after the retry-after it prints); 1 errors.`,
		Example: "  ytrend fetch US GB\n  ytrend fetch IN --pages 1 --json",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			codes, err := parseRegions(args)
			if err != nil {
				return usageError{err}
			}
			if cmd.Flags().Changed("pages") && (pages < 1 || pages > config.MaxPages) {
				return usageError{fmt.Errorf("--pages %d: allowed 1-%d (the chart holds at most 200 videos, 50 a page)", pages, config.MaxPages)}
			}
			a, err := c.open(cmd, openOpts{limiter: true})
			if err != nil {
				return err
			}
			defer a.close()
			key, err := a.cfg.APIKey(config.Env(c.lookupEnv))
			if err != nil {
				return err
			}
			stop := daemon.OnSignals(cmd.Context(), tellUser(c.stderr, "finishing the page in flight"))
			defer stop.Close()
			f, err := ingest.New(stop.Hard, a.limiter, a.db, ingest.OptionsFrom(a.cfg, key, a.log))
			if err != nil {
				return err
			}
			var reports []ingest.Report
			for _, code := range codes {
				job := ingest.Job{Region: a.cfg.Region(code), Trigger: ingest.TriggerCLI, Stop: stop.Soft.Done()}
				if cmd.Flags().Changed("pages") {
					job.Pages = pages
				}
				if noSearch {
					job.Searches = nil
				}
				job.Progress = func(p ingest.Progress) { printProgress(c.stderr, p, job.Pages) }
				rep := f.Fetch(stop.Hard, job)
				reports = append(reports, rep)
				if rep.Status == ingest.StatusInterrupted {
					break
				}
			}
			if asJSON {
				if err := writeJSON(c.stdout, view.FetchReports(reports, time.Now())); err != nil {
					return err
				}
			} else {
				printSummary(c.stdout, reports)
			}
			return exitFor(reports)
		},
	}
	cmd.Flags().IntVar(&pages, "pages", config.DefaultPages, "chart pages of 50 videos per region (1-4; default: the region's entry in the config)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON on stdout")
	cmd.Flags().BoolVar(&noSearch, "no-search", false, "skip the region's configured search.list queries")
	return cmd
}

func parseRegions(args []string) ([]regions.Code, error) {
	var codes []regions.Code
	seen := map[regions.Code]bool{}
	var problems []string
	for _, a := range args {
		for _, part := range strings.Split(a, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			code, err := regions.Parse(part)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if !seen[code] {
				seen[code] = true
				codes = append(codes, code)
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	if len(codes) == 0 {
		return nil, fmt.Errorf("no region given; e.g. ytrend fetch US")
	}
	return codes, nil
}

func printProgress(w io.Writer, p ingest.Progress, pages int) {
	kind := "page"
	if p.Kind == ingest.PageSearch {
		kind = "search page"
	}
	total := ""
	if p.Kind == ingest.PageChart {
		total = fmt.Sprintf("/%d", pages)
	}
	fmt.Fprintf(w, "%s %s %d%s: %d videos (%d new, %d updated), %d units so far, %s\n",
		p.Region, kind, p.Page, total, p.Videos, p.New, p.Updated, p.Units, remainingText(p.Remaining, p.FailOpen))
}

func printSummary(w io.Writer, reports []ingest.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REGION\tSTATUS\tPAGES\tVIDEOS\tNEW\tUPDATED\tUNITS\tDETAIL")
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", r.Region, r.Status, r.Pages, r.Videos, r.New, r.Updated, r.Units, termLine(detail(r)))
	}
	tw.Flush()
}

func detail(r ingest.Report) string {
	switch r.Status {
	case ingest.StatusOK:
		return ""
	case ingest.StatusStoppedQuota:
		return fmt.Sprintf("refused by %s; quota frees up at %s (in %s)", r.RefusedBy,
			r.RetryAt.Format(time.RFC3339), config.FormatDuration(time.Until(r.RetryAt).Round(time.Second)))
	default:
		if r.Err != nil {
			return r.Err.Error()
		}
		return ""
	}
}

// exitFor maps run outcomes to the exit status: errors beat quota stops.
func exitFor(reports []ingest.Report) error {
	code := exitOK
	for _, r := range reports {
		switch r.Status {
		case ingest.StatusFailed, ingest.StatusInterrupted:
			code = exitError
		case ingest.StatusStoppedQuota:
			if code == exitOK {
				code = exitTempFail
			}
		}
	}
	if code == exitOK {
		return nil
	}
	return withCode(code, nil)
}

// writeJSON writes v as indented JSON, with the runes that act on a
// terminal as \u escapes (humanfmt.AppendJSONEscaped): this output often
// lands on one.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(humanfmt.AppendJSONEscaped(make([]byte, 0, len(b)+1), b), '\n'))
	return err
}
