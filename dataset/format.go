package dataset

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/regions"
)

// Format is a CSV layout the package reads.
type Format string

const (
	// Format2017 is the 2017-18 dataset: USvideos.csv, GBvideos.csv, ...
	Format2017 Format = "2017-18"
	// Format2020 is the dataset from 2020 onwards: US_youtube_trending_data.csv, ...
	Format2020 Format = "2020+"
	// FormatYtrend is ytrend's export: Columns2020, then region, rank,
	// fetched_at and category (ColumnsExport). Files written before category
	// names existed lack the last column and are read all the same.
	FormatYtrend Format = "ytrend"
)

// The columns of each layout, in their order.
var (
	Columns2017 = []string{"video_id", "trending_date", "title", "channel_title", "category_id", "publish_time", "tags",
		"views", "likes", "dislikes", "comment_count", "thumbnail_link", "comments_disabled", "ratings_disabled",
		"video_error_or_removed", "description"}
	Columns2020 = []string{"video_id", "title", "publishedAt", "channelId", "channelTitle", "categoryId", "trending_date",
		"tags", "view_count", "likes", "dislikes", "comment_count", "thumbnail_link", "comments_disabled",
		"ratings_disabled", "description"}
	// ColumnsYtrend are the columns a file needs to be read as ytrend's
	// export.
	ColumnsYtrend = append(append([]string(nil), Columns2020...), "region", "rank", "fetched_at")
	// ColumnsExport are the columns ytrend's export writes: ColumnsYtrend,
	// then the category's name (empty when the archive has none cached).
	// New columns go at the end, so that notebooks that select columns by
	// position keep working.
	ColumnsExport = append(append([]string(nil), ColumnsYtrend...), ColumnCategory)
)

// ColumnCategory is the export's optional last column: the category's name.
const ColumnCategory = "category"

var (
	// ErrUnknownFormat is wrapped by the error for a file whose header
	// matches no layout; nothing of such a file is read.
	ErrUnknownFormat = errors.New("not a trending dataset ytrend can read")
	// ErrNoRegion is wrapped when a public dataset's region is neither
	// given nor in its file name.
	ErrNoRegion = errors.New("no region")
	// ErrStopped is returned by Import when its stop channel closed: the
	// charts already read were stored first.
	ErrStopped = errors.New("import stopped")
)

// layouts are tried in this order: the export's columns include 2020's.
var layouts = []struct {
	format  Format
	columns []string
	example string
}{
	{FormatYtrend, ColumnsYtrend, "ytrend export (CSV, or JSON lines with these keys)"},
	{Format2020, Columns2020, "2020 onwards, e.g. US_youtube_trending_data.csv"},
	{Format2017, Columns2017, "2017-18, e.g. USvideos.csv"},
}

// detect tells the layout from a header. Columns are matched by name
// (ignoring case and surrounding space), in any order; extra columns are
// ignored. It returns each column's index.
func detect(header []string) (Format, map[string]int, error) {
	idx := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF")))
		if _, dup := idx[h]; !dup {
			idx[h] = i
		}
	}
	for _, l := range layouts {
		cols := make(map[string]int, len(l.columns))
		for _, c := range l.columns {
			i, ok := idx[strings.ToLower(c)]
			if !ok {
				break
			}
			cols[c] = i
		}
		if len(cols) == len(l.columns) {
			if i, ok := idx[ColumnCategory]; ok && l.format == FormatYtrend {
				cols[ColumnCategory] = i
			}
			return l.format, cols, nil
		}
	}
	return "", nil, unknown(fmt.Sprintf("its header has %d columns (%s)", len(header), shortList(header)))
}

// unknown is the error for a file in no layout: what it holds, and what
// each layout expects.
func unknown(holds string) error {
	var b strings.Builder
	b.WriteString(holds)
	b.WriteString("; expected one of:")
	for _, l := range layouts {
		fmt.Fprintf(&b, "\n  %s: %s", l.example, strings.Join(l.columns, ","))
	}
	return fmt.Errorf("%w: %s", ErrUnknownFormat, b.String())
}

// shortList joins up to 20 names.
// shortList lists a file's header names for an error: the first 20, each
// cut to 40 characters and quoted when it is not plain text
// (humanfmt.Listed), so a header cannot forge lines of the message.
func shortList(names []string) string {
	out := make([]string, 0, min(len(names), 20)+1)
	for i, n := range names {
		if i == 20 {
			out = append(out, "...")
			break
		}
		if r := []rune(n); len(r) > 40 {
			n = string(r[:39]) + "…"
		}
		out = append(out, humanfmt.Listed(n))
	}
	return strings.Join(out, ",")
}

// The public datasets name their files for their region.
var regionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z]{2})(?:videos|_youtube_trending_data)\b`) })

// RegionFromName returns the region a public dataset's file name carries:
// "US" for USvideos.csv and US_youtube_trending_data.csv.
func RegionFromName(path string) (regions.Code, error) {
	m := regionName().FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return "", fmt.Errorf("%w: the file name %q does not start with a region as USvideos.csv and US_youtube_trending_data.csv do; give one with --region",
			ErrNoRegion, filepath.Base(path))
	}
	code, err := regions.Parse(m[1])
	if err != nil {
		return "", fmt.Errorf("file name %q: %w", filepath.Base(path), err)
	}
	return code, nil
}
