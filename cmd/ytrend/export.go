package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/store"
)

func (c *cli) exportCmd() *cobra.Command {
	var (
		format     string
		regionArgs []string
		since      string
		until      string
		category   string
		out        string
		safe       bool
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write every chart position fetched as CSV or JSON lines (no API quota spent)",
		Long: `Export writes one row per chart position fetched, in the order they were
fetched. The columns are the public 2020+ trending dataset's, in its order
(video_id, title, publishedAt, channelId, channelTitle, categoryId,
trending_date, tags, view_count, likes, dislikes, comment_count,
thumbnail_link, comments_disabled, ratings_disabled, description), so notebooks
written for it read the export unchanged, then region, rank, fetched_at and
category: the category's name in that region, as videoCategories.list gave it
(empty when the archive has no name for the id; categoryId always has the id).

Tags are |-joined, [None] when there are none. A count the owner hid is empty,
never 0; dislikes are empty unless they came from an imported dataset (the API
stopped giving them in 2021). Counts are the ones seen at each fetch; titles,
tags and descriptions are each video's latest.

--category keeps one category: its id, or its name in any case, looked up in
the names cached for the --region regions (every region's without --region).

--format jsonl writes the same keys as JSON, one object a line, with numbers,
booleans, null for hidden counts and tags as an array. ytrend import reads
both forms back (the default changes no value: an export imported and
exported again gives the same bytes).

--safe-for-spreadsheets prefixes every CSV cell that begins with =, +, -, @,
a tab or a carriage return with ', so that a title such as =HYPERLINK(...) is shown as text by Excel,
LibreOffice or Google Sheets instead of run as a formula. Use it for a file
people will open in a spreadsheet; it is not for ytrend import, which would
keep the '. The export streams: memory stays flat at any size. With
--out, it is written beside FILE and renamed into place when complete. Progress
goes to stderr when stderr is a terminal.`,
		Example: `  ytrend export > trending.csv
  ytrend export --region US --region GB --since 2026-01-01 --out uk-us.csv
  ytrend export --format jsonl --since 7d | jq .title
  ytrend export --region US --category Music --out us-music.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var f store.SnapshotFilter
			if len(regionArgs) > 0 {
				codes, err := parseRegions(regionArgs)
				if err != nil {
					return usageError{fmt.Errorf("--region: %w", err)}
				}
				f.Regions = codes
			}
			now := time.Now()
			var err error
			if since != "" {
				if f.Since, err = parseWhen("--since", since, now, false); err != nil {
					return usageError{err}
				}
			}
			if until != "" {
				if f.Until, err = parseWhen("--until", until, now, true); err != nil {
					return usageError{err}
				}
			}
			if format != "csv" && format != "jsonl" {
				return usageError{fmt.Errorf("--format %q: allowed csv, jsonl", format)}
			}
			if safe && format != "csv" {
				return usageError{fmt.Errorf("--safe-for-spreadsheets is for CSV; JSON lines are not opened as a spreadsheet")}
			}
			a, err := c.open(cmd, openOpts{readOnly: true})
			if err != nil {
				return err
			}
			defer a.close()
			if f.Categories, err = categoryIDs(cmd.Context(), a.db, category, f.Regions); err != nil {
				return err
			}
			return c.export(cmd.Context(), a.db, f, format, out, safe)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "csv", "csv or jsonl")
	fl.StringArrayVar(&regionArgs, "region", nil, "only this region (repeatable, or comma-separated)")
	fl.StringVar(&since, "since", "", "only positions fetched at or after: RFC 3339, a date, or a duration ago (7d)")
	fl.StringVar(&until, "until", "", "only positions fetched at or before: RFC 3339, a date (its end), or a duration ago")
	fl.StringVar(&category, "category", "", categoryFlagHelp)
	fl.StringVar(&out, "out", "", "write to FILE instead of stdout")
	fl.BoolVar(&safe, "safe-for-spreadsheets", false, "prefix CSV cells that begin with = + - @ TAB CR with ' (for opening in a spreadsheet; not for re-import)")
	return cmd
}

func (c *cli) export(ctx context.Context, db *store.DB, f store.SnapshotFilter, format, out string, safe bool) (err error) {
	dst := c.stdout
	if out != "" && out != "-" {
		tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := tmp.Chmod(0o644); err != nil { // CreateTemp's 0600 is for secrets
			tmp.Close()
			os.Remove(tmp.Name())
			return fmt.Errorf("export: %w", err)
		}
		defer func() {
			if err == nil {
				err = tmp.Close()
			} else {
				tmp.Close()
			}
			if err == nil {
				err = os.Rename(tmp.Name(), out)
			}
			if err != nil {
				os.Remove(tmp.Name())
			}
		}()
		dst = tmp
	}
	var w dataset.Writer
	if format == "jsonl" {
		w = dataset.NewJSONLWriter(dst)
	} else {
		var opts []dataset.CSVOption
		if safe {
			opts = append(opts, dataset.SafeForSpreadsheets())
		}
		if w, err = dataset.NewCSVWriter(dst, opts...); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	var total int64
	filtered := len(f.Regions) > 0 || !f.Since.IsZero() || !f.Until.IsZero() || len(f.Categories) > 0
	if counts, err := db.Counts(ctx); err == nil && !filtered {
		total = counts.Snapshots
	}
	p := newProgress(c.stderr, "exported", "rows", total)
	err = db.Snapshots(ctx, f, func(s *store.Snapshot) error {
		if err := w.Write(s); err != nil {
			return err
		}
		p.add(1)
		return nil
	})
	if err == nil {
		err = w.Flush()
	}
	p.done()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// progress draws a counter on stderr, in place, when stderr is a terminal;
// elsewhere it stays silent.
type progress struct {
	w          io.Writer
	verb, unit string
	total      int64
	n          int64
	start      time.Time
	next       time.Time
	on         bool
}

func newProgress(w io.Writer, verb, unit string, total int64) *progress {
	now := time.Now()
	return &progress{w: w, verb: verb, unit: unit, total: total, start: now, next: now.Add(200 * time.Millisecond), on: isTerminal(w)}
}

func (p *progress) add(n int64) {
	p.n += n
	if !p.on {
		return
	}
	if now := time.Now(); now.After(p.next) {
		p.next = now.Add(200 * time.Millisecond)
		p.draw(now, "")
	}
}

func (p *progress) draw(now time.Time, end string) {
	rate := float64(p.n) / max(now.Sub(p.start).Seconds(), 1e-3)
	of := ""
	if p.total > 0 {
		of = fmt.Sprintf(" of %d (%.0f%%)", p.total, 100*float64(p.n)/float64(p.total))
	}
	fmt.Fprintf(p.w, "\r%s %d%s %s, %.0f %s/s%s", p.verb, p.n, of, p.unit, rate, p.unit, end)
}

func (p *progress) done() {
	if p.on {
		p.draw(time.Now(), "\n")
	}
}
