package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ytrend/ytrend/daemon"
	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

func (c *cli) importCmd() *cobra.Command {
	var (
		region  string
		asJSON  bool
		merge   string
		compact string
	)
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import trending history from the public datasets or a ytrend export (no API quota spent)",
		Long: `Import reads the public "Trending YouTube Video Statistics" datasets, both the
2017-18 files (USvideos.csv, ...) and the 2020+ ones
(US_youtube_trending_data.csv, ...), and ytrend's own export (CSV or JSON
lines). The layout is told from each file's header.

A public file's region comes from its name, or from --region. Each
(region, trending_date) becomes one historical run with trigger "import",
fetched at 00:00 UTC of that day, ranked in the file's order; each run of an
export comes back as it was. Videos merge with the archive: older metadata
never replaces newer, and the search index changes only for videos whose text
changed. A chart the archive already has (same region, same time) is left as
it is, so importing a file twice changes nothing. Several files are read
together, earliest chart first across them, so the archive holds their
history in the order it happened, as fetching every region would have
stored it (its searches look at the newest videos first, and find them
together).

Rows that cannot be read (a bad date, an id such as Excel's #NAME?, a broken
record, the last record of a file cut off in its middle) are skipped and
reported with their line; the rest is imported. So are rows dated more than a
day ahead or before 2005 (a date from the future would be every video's newest
sighting for good), and records over 64 KiB. What YouTube itself would never
send is cut to its limits (title 100 characters, description 5,000 bytes, tags
500 characters in all) or, for a thumbnail_link that is not an https URL on
ytimg.com, dropped, and each change is reported with its line. A file whose header matches no
layout is refused with the columns each layout expects, and nothing is
imported when any file is refused. Charts are stored in batches of about 5,000
rows, each in one transaction: an interrupted import keeps every batch it
finished. Ctrl-C, or a file that cannot be read further, stores the charts already
read, then stops. An export's
category column teaches the archive the names of the categories it holds
(they never replace names videoCategories.list gave). Progress goes to stderr
when stderr is a terminal; a summary per file always does. After an import
of 50,000 chart positions or more, the search index is merged into one
segment, as "ytrend optimize" does (about 25 s at a million videos; Ctrl-C
stops the merge and keeps the import; --merge never skips it, --merge always
merges after any import that stored something). Then the archive is compacted
(--compact, with the same choices: SQLite's VACUUM, as "ytrend optimize
--compact" does), so that each table's pages lie together again; searches
take 10-25% less CPU for it. That takes about 30 s at a million videos and
free disk about twice the archive's size, and Ctrl-C stops it, keeping the
import.`,
		Example: `  ytrend import USvideos.csv GBvideos.csv
  ytrend import trending.csv --region DE
  ytrend import backup.jsonl --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for flag, v := range map[string]string{"--merge": merge, "--compact": compact} {
				if v != "auto" && v != "always" && v != "never" {
					return usageError{fmt.Errorf("%s: %q is not auto, always or never", flag, v)}
				}
			}
			var code regions.Code
			if region != "" {
				codes, err := parseRegions([]string{region})
				if err != nil || len(codes) != 1 {
					return usageError{fmt.Errorf("--region: %v", err)}
				}
				code = codes[0]
			}
			// Every file is read up to its header first: a file in no
			// known layout stops the import before anything is written.
			var files []*importFile
			defer func() {
				for _, f := range files {
					f.close()
				}
			}()
			var problems []string
			for _, path := range args {
				f, err := openImport(path, code)
				if err != nil {
					problems = append(problems, err.Error())
					continue
				}
				files = append(files, f)
			}
			if len(problems) > 0 {
				return withCode(exitError, fmt.Errorf("nothing imported:\n%s", strings.Join(problems, "\n")))
			}
			a, err := c.open(cmd, openOpts{})
			if err != nil {
				return err
			}
			defer a.close()
			stop := daemon.OnSignals(cmd.Context(), tellUser(c.stderr, "storing the charts already read"))
			defer stop.Close()
			// A file that stalls (a FIFO whose writer went quiet, a hung
			// network mount) holds the import in a read, where it looks
			// at no stop: the first signal closes the files, which ends
			// such a read with an error (the import then stops as told).
			unblock := context.AfterFunc(stop.Soft, func() {
				for _, f := range files {
					f.close()
				}
			})
			defer unblock()

			reports, failure := importAll(stop, a.db, files, c.stderr)
			if !asJSON {
				printImports(c.stderr, reports)
			}
			if failure == nil {
				failure = mergeAfterImport(stop.Soft, a.db, reports, merge, c.stderr)
			}
			if failure == nil {
				failure = compactAfterImport(stop.Soft, a.db, reports, compact, c.stderr)
			}
			if asJSON {
				if err := writeJSON(c.stdout, reports); err != nil {
					return err
				}
			}
			return failure
		},
	}
	cmd.Flags().StringVar(&region, "region", "", "the region of public dataset files whose names do not say it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON report per file on stdout")
	cmd.Flags().StringVar(&merge, "merge", "auto", "merge the search index into one segment afterwards: auto (after 50,000 positions or more), always, never")
	cmd.Flags().StringVar(&compact, "compact", "auto", "then compact the archive (VACUUM): auto (after 50,000 positions or more), always, never")
	return cmd
}

// mergeRows is the fewest chart positions an import stores for it to merge
// the search index afterwards. FTS5 leaves a large import's index in several
// segments, and every rowid range a search reads seeks each of them: merged,
// a million-video archive's searches took a third less CPU (BENCHMARKS.md,
// issue 21). The merge rewrites the whole index (about 25 s at a million
// videos), so a small import into a large archive leaves it to the daily
// upkeep.
const mergeRows = 50_000

// afterImport reports whether an upkeep step told when (--merge or
// --compact: auto, always, never) runs after an import that made reports:
// auto after mergeRows positions or more, always after any.
func afterImport(reports []view.ImportReport, when string) bool {
	rows := 0
	for _, r := range reports {
		rows += r.ImportedRows
	}
	return when != "never" && rows > 0 && (when != "auto" || rows >= mergeRows)
}

// mergeAfterImport merges the search index (store.Optimize, as "ytrend
// optimize") after an import that stored at least mergeRows positions
// (--merge auto), or any (always), unless told never. A
// stop (the first Ctrl-C) ends the merge between two of its short
// transactions: the import is kept whole, and the next optimize carries on.
func mergeAfterImport(ctx context.Context, db *store.DB, reports []view.ImportReport, when string, stderr io.Writer) error {
	if !afterImport(reports, when) {
		return nil
	}
	segments, err := db.IndexSegments(ctx)
	if err != nil || segments <= 1 {
		return err
	}
	start := time.Now()
	fmt.Fprintf(stderr, "merging the search index (%d segments) so searches read one ...\n", segments)
	if err := db.Optimize(ctx); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "merge stopped: every chart is imported; \"ytrend optimize\" (or the daily upkeep of \"ytrend run\") finishes it")
			return nil
		}
		return fmt.Errorf("the import is complete, but merging the search index failed (\"ytrend optimize\" retries it): %w", err)
	}
	fmt.Fprintf(stderr, "search index merged in %.1fs\n", time.Since(start).Seconds())
	return nil
}

// compactAfterImport compacts the archive (store.Compact, as "ytrend
// optimize --compact") after the merge, on the same terms: after mergeRows
// positions or more (auto), any (always), or never. A large import leaves
// every table's pages interleaved with the others', as each grew in turn.
// A stop rolls the compaction back whole; the import and the merge stay.
func compactAfterImport(ctx context.Context, db *store.DB, reports []view.ImportReport, when string, stderr io.Writer) error {
	if !afterImport(reports, when) || ctx.Err() != nil {
		return nil
	}
	start := time.Now()
	before := fileSize(db.Path())
	fmt.Fprintln(stderr, "compacting the archive so each table's pages lie together ...")
	if err := db.Compact(ctx); err != nil {
		if errors.Is(err, store.ErrArchiveInUse) {
			fmt.Fprintf(stderr, "compaction skipped: %v, and compacting would hold the archive longer than it waits. "+
				"Run \"ytrend optimize --compact\" while it is stopped\n", err)
			return nil
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "compaction interrupted: every chart is imported, and the archive is intact, compacted whole or not at all; \"ytrend optimize --compact\" does it later")
			return nil
		}
		return fmt.Errorf("the import is complete, but compacting the archive failed "+
			"(it needs free disk about twice the archive's size; \"ytrend optimize --compact\" retries it): %w", err)
	}
	fmt.Fprintf(stderr, "archive compacted in %.1fs (%.1f MB -> %.1f MB)\n", time.Since(start).Seconds(),
		float64(before)/1e6, float64(fileSize(db.Path()))/1e6)
	return nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// importFile is one file, opened and its layout told.
type importFile struct {
	path  string
	f     *os.File
	r     *dataset.Reader
	given bool // --region was given
}

func openImport(path string, region regions.Code) (*importFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	given := region != ""
	var nameErr error
	if !given {
		region, nameErr = dataset.RegionFromName(path)
	}
	r, err := dataset.NewReader(f, path, region)
	if err != nil {
		f.Close()
		if errors.Is(err, dataset.ErrNoRegion) && nameErr != nil {
			return nil, nameErr
		}
		return nil, err
	}
	if given && r.Format() == dataset.FormatYtrend {
		f.Close()
		return nil, fmt.Errorf("%s is a ytrend export, whose rows name their region: --region does not apply to it", path)
	}
	return &importFile{path: path, f: f, r: r, given: given}, nil
}

func (f *importFile) close() { f.f.Close() }

// importAll imports the files together, earliest chart first across them
// (dataset.ImportAll), and reports how it went, file by file.
func importAll(stop *daemon.Signals, db *store.DB, files []*importFile, stderr io.Writer) ([]view.ImportReport, error) {
	readers := make([]*dataset.Reader, len(files))
	what := files[0].path
	for i, f := range files {
		readers[i] = f.r
	}
	if len(files) > 1 {
		what = fmt.Sprintf("%d files", len(files))
	}
	start := time.Now()
	p := newProgress(stderr, what+": imported", "rows", 0)
	imps, err := dataset.ImportAll(stop.Hard, stop.Soft.Done(), readers, db, func(rows int) { p.add(int64(rows)) })
	p.done()
	secs := time.Since(start).Seconds()
	var re *dataset.ReadError
	failed := -1
	if errors.As(err, &re) {
		failed = re.Index
	}
	reports := make([]view.ImportReport, len(files))
	for i, f := range files {
		rep := f.report(imps[i], secs)
		switch {
		case errors.Is(err, dataset.ErrStopped):
			rep.Stopped = !imps[i].Ended
		case i == failed:
			rep.Error = re.Err.Error()
		case err != nil && !imps[i].Ended:
			rep.Stopped = true // another file's error stopped the import
		}
		reports[i] = rep
	}
	var se *dataset.StoreError
	switch {
	case errors.Is(err, dataset.ErrStopped):
		return reports, withCode(exitError, errors.New("stopped: every file imported up to the batch in flight"))
	case errors.As(err, &se):
		return reports, withCode(exitError, fmt.Errorf("import stopped: storing a batch failed (every batch before it is stored): %w", se.Err))
	case failed >= 0:
		return reports, withCode(exitError, fmt.Errorf("import stopped: %w (every batch before it is stored)", re.Err))
	}
	return reports, err
}

// report is what the import did with the file, which took secs along with
// the others.
func (f *importFile) report(imp dataset.Imported, secs float64) view.ImportReport {
	rep := view.ImportReport{File: f.path, Format: string(f.r.Format())}
	rep.Imported, rep.ImportedRows, rep.AlreadyThere = imp.Charts, imp.Rows, imp.AlreadyThere
	rep.NewVideos, rep.UpdatedVideos, rep.Region = imp.NewVideos, imp.UpdatedVideos, string(imp.Region)
	dr := f.r.Report()
	rep.Rows, rep.Charts, rep.Skipped, rep.SkippedBy, rep.CutOff = dr.Rows, dr.Charts, dr.Skipped, dr.ByKind, dr.CutOff
	rep.Skips = []view.ImportSkip{}
	for _, s := range dr.Skips {
		rep.Skips = append(rep.Skips, view.ImportSkip{Line: s.Line, Field: s.Field, Kind: s.Kind, Reason: s.Reason})
	}
	rep.Fixed, rep.FixedBy, rep.Fixes = dr.Fixed, dr.FixedBy, []view.ImportSkip{}
	for _, f := range dr.Fixes {
		rep.Fixes = append(rep.Fixes, view.ImportSkip{Line: f.Line, Field: f.Field, Kind: f.Kind, Reason: f.Reason})
	}
	rep.Seconds = secs
	rep.RowsPerSecond = float64(rep.Rows) / max(rep.Seconds, 1e-6)
	return rep
}

// printImports prints a summary per file and, for several files (imported
// together, so no file has a time of its own), one for the whole import.
func printImports(w io.Writer, reports []view.ImportReport) {
	rows := 0
	for _, r := range reports {
		printImport(w, r, len(reports) == 1)
		rows += r.Rows
	}
	if len(reports) > 1 {
		secs := reports[0].Seconds
		fmt.Fprintf(w, "%d files imported together, earliest chart first: %d rows read in %.1fs, %.0f rows/s\n",
			len(reports), rows, secs, float64(rows)/max(secs, 1e-6))
	}
}

func printImport(w io.Writer, r view.ImportReport, timed bool) {
	what := "days"
	if r.Format == string(dataset.FormatYtrend) {
		what = "runs"
	}
	layout := r.Format
	if r.Region != "" {
		layout += " " + r.Region
	}
	fmt.Fprintf(w, "%s (%s): %d rows read; %d %s imported (%d rows, %d new videos, %d with changed text), %d already in the archive",
		termLine(r.File), layout, r.Rows, r.Imported, what, r.ImportedRows, r.NewVideos, r.UpdatedVideos, r.AlreadyThere)
	if timed {
		fmt.Fprintf(w, "; %.1fs, %.0f rows/s", r.Seconds, r.RowsPerSecond)
	}
	fmt.Fprintln(w)
	if r.Skipped > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(r.SkippedBy)) {
			kinds = append(kinds, fmt.Sprintf("%d %s", r.SkippedBy[k], k))
		}
		fmt.Fprintf(w, "  %d rows skipped (%s):\n", r.Skipped, strings.Join(kinds, ", "))
		for i, s := range r.Skips {
			if i == 20 {
				fmt.Fprintf(w, "    ... %d more (--json lists up to 1000)\n", r.Skipped-20)
				break
			}
			field := ""
			if s.Field != "" {
				field = s.Field + ": "
			}
			fmt.Fprintf(w, "    line %d: %s: %s\n", s.Line, s.Kind, termLine(field+s.Reason))
		}
	}
	if r.Fixed > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(r.FixedBy)) {
			kinds = append(kinds, fmt.Sprintf("%d %s", r.FixedBy[k], k))
		}
		fmt.Fprintf(w, "  %d fields changed in imported rows (%s):\n", r.Fixed, strings.Join(kinds, ", "))
		for i, f := range r.Fixes {
			if i == 20 {
				fmt.Fprintf(w, "    ... %d more (--json lists up to 1000)\n", r.Fixed-20)
				break
			}
			fmt.Fprintf(w, "    line %d: %s: %s: %s\n", f.Line, f.Kind, f.Field, f.Reason)
		}
	}
	if r.CutOff {
		fmt.Fprintln(w, "  the file is cut off in the middle of its last record: every complete record before it was read")
	}
}
