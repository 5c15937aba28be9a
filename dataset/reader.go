package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Skip is a row that was not imported, and why.
type Skip struct {
	Line   int    // where the record starts (1 is the header)
	Field  string // the column at fault; "" for the whole record
	Kind   string // one of the Skip* kinds
	Reason string
}

func (s Skip) String() string {
	if s.Field == "" {
		return fmt.Sprintf("line %d: %s: %s", s.Line, s.Kind, s.Reason)
	}
	return fmt.Sprintf("line %d: %s: %s: %s", s.Line, s.Kind, s.Field, s.Reason)
}

// Why a row was skipped.
const (
	SkipCutOff    = "cut off"   // the file ends in the middle of it
	SkipMalformed = "malformed" // a field (or the CSV) cannot be read
	SkipDuplicate = "duplicate" // the same video earlier on the same trending_date
	SkipScattered = "scattered" // its trending_date's rows ended earlier in the file
	// SkipOutOfRange: its trending_date (fetched_at in the export) is more
	// than a day ahead or before 2005. A date from the future would make
	// the row every video's newest sighting for good.
	SkipOutOfRange = "out of range"
	SkipTooLarge   = "too large"  // the record is over MaxRecordBytes
	SkipChartFull  = "chart full" // its chart already has maxChartRows rows
)

// Fix is a row imported with a field changed, and why.
type Fix struct {
	Line   int
	Field  string
	Kind   string // one of the Fix* kinds
	Reason string
}

func (f Fix) String() string {
	return fmt.Sprintf("line %d: %s: %s: %s", f.Line, f.Kind, f.Field, f.Reason)
}

// What was done to a field YouTube itself would never send.
const (
	FixCut     = "cut"     // longer than YouTube's limit: cut to it
	FixDropped = "dropped" // not a thumbnail YouTube gave: left empty
	// FixControls: control characters (terminal escapes among them)
	// removed; tab and line feed are kept.
	FixControls = "controls"
)

// maxChartRows bounds the rows of one chart (a day of a public dataset, a
// run of an export): YouTube's charts have 200 at most, and a file that
// puts every row on one date must not be read into memory whole.
const maxChartRows = 1000

// maxSkipsKept bounds the skipped rows a Report lists; it counts them all.
const maxSkipsKept = 1000

// Report is what a Reader read.
type Report struct {
	Rows    int // data records read, imported or not
	Charts  int // charts returned by Next
	Skipped int // rows not in any chart
	// ByKind counts the skipped rows by kind (the Skip* constants).
	ByKind map[string]int
	// Skips lists the first skipped rows with their line and field.
	Skips []Skip
	// CutOff: the file ends in the middle of its last record.
	CutOff bool
	// Fixed counts the fields changed in rows that were imported, by
	// kind in FixedBy (the Fix* constants); Fixes lists the first.
	Fixed   int
	FixedBy map[string]int
	Fixes   []Fix
}

// Reader reads a dataset file, chart by chart.
type Reader struct {
	name   string
	format Format
	region regions.Code // of a public dataset; rows of the export name theirs
	cols   map[string]int
	ncols  int
	cr     *csv.Reader
	tail   *tailReader
	guard  *recordGuard
	jl     *jsonLines // instead of cr, for the export's JSONL form

	peeked  *record // the next record, read ahead to tell the last one
	pending *row    // a row read that belongs to the next chart
	// readErr is the file's own read error, once met: the chart being
	// gathered when it came is not returned (see Next), and every later
	// Next returns it.
	readErr error
	ended   map[time.Time]int
	report  Report
	now     func() time.Time // the clock that tells a future date; time.Now
}

type record struct {
	fields []string
	line   int
	err    error // why the record cannot be read
	syntax bool  // err is the CSV's (quoting, field count), not the file's
	cutOff bool  // the file's last record, broken off
	// tags are the JSONL export's, as they were: its fields hold them
	// joined with |, which a tag may contain.
	tags []string
	// tooLarge: the record is over MaxRecordBytes, and was not read whole.
	tooLarge bool
}

// row is a readable data row.
type row struct {
	line   int
	video  store.Video
	at     time.Time // trending_date of a public dataset; fetched_at of the export
	region regions.Code
	rank   int // the export's; 0 in the public datasets, whose order is the rank
	// category is the export's name for the video's category id; "" when
	// the file has none.
	category string
}

// NewReader reads the header of a dataset file (name is used in messages)
// and tells its layout. region is the public datasets' region (from the
// file name or the user); it is ignored for the export, whose rows carry
// their own. A header that matches no layout is an error that
// wraps ErrUnknownFormat and names the columns each layout expects.
func NewReader(r io.Reader, name string, region regions.Code) (*Reader, error) {
	tail := &tailReader{r: r}
	br := bufio.NewReaderSize(tail, 64<<10)
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		br.Discard(3) // a byte order mark, as Excel writes
	}
	if b, err := br.Peek(1); err == nil && b[0] == '{' {
		return newJSONLReader(br, name)
	}
	guard := newRecordGuard(br)
	cr := csv.NewReader(guard)
	cr.LazyQuotes = true // whatever the first line is, say what it holds
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s: %w: the file is empty", name, ErrUnknownFormat)
	case err != nil:
		return nil, fmt.Errorf("%s: %w: cannot read its header: %v", name, ErrUnknownFormat, err)
	}
	format, cols, err := detect(header)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if format == FormatYtrend {
		region = "" // its rows name theirs
	}
	switch {
	case format != FormatYtrend && region == "":
		return nil, fmt.Errorf("%s: %w given for this %s dataset", name, ErrNoRegion, format)
	case format != FormatYtrend && !regions.Valid(region):
		return nil, fmt.Errorf("%s: %q is not a region code", name, region)
	}
	cr.FieldsPerRecord = len(header)
	cr.ReuseRecord = false
	// The 2017-18 files were written by a scraper that quoted tags one by
	// one and joined them with |, unescaped: "a"|"b". Only lazy quoting
	// reads them; the later layouts are strict CSV, which also tells a
	// record cut off inside its quotes from a complete one.
	cr.LazyQuotes = format == Format2017
	return &Reader{name: name, format: format, region: region, cols: cols, ncols: len(header), cr: cr, tail: tail, guard: guard,
		ended: map[time.Time]int{}, report: newReport(), now: time.Now}, nil
}

func newReport() Report { return Report{ByKind: map[string]int{}, FixedBy: map[string]int{}} }

// Format is the file's layout.
func (r *Reader) Format() Format { return r.format }

// Report says what has been read so far.
func (r *Reader) Report() Report { return r.report }

// Next returns the file's next chart: the rows of one trending_date of a
// public dataset, ranked in file order (a video listed twice on a date
// keeps its first place), or one run of an export, its pages split where
// the fetch time changes. io.EOF after the last.
//
// A chart the file's read error cut short is not returned: Next returns
// the error instead. Its rows would otherwise be stored as the whole chart,
// and as the archive then has that chart, importing the file again would
// never store the rows after the failure.
func (r *Reader) Next() (store.ImportedChart, error) {
	for {
		if r.readErr != nil {
			return store.ImportedChart{}, r.readErr
		}
		first, err := r.nextRow()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.readErr = err
			}
			return store.ImportedChart{}, err
		}
		var c store.ImportedChart
		if r.format == FormatYtrend {
			c = r.run(first)
		} else {
			c = r.day(first)
		}
		if r.readErr != nil {
			return store.ImportedChart{}, r.readErr
		}
		if len(c.Pages) > 0 {
			r.report.Charts++
			return c, nil
		}
	}
}

// day gathers the rows of first's trending_date.
func (r *Reader) day(first *row) store.ImportedChart {
	row := first
	defer func() { r.pending = row }() // the first row of the next day, if any
	if line, ok := r.ended[first.at]; ok {
		// Rows of one day are contiguous in the datasets: a day met again
		// would be a second chart of that day. They are reported instead.
		for ; row != nil && row.at.Equal(first.at); row = r.take() {
			r.skip(Skip{Line: row.line, Field: "trending_date", Kind: SkipScattered,
				Reason: fmt.Sprintf("the rows of %s ended at line %d", row.at.Format(time.DateOnly), line)})
		}
		return store.ImportedChart{}
	}
	page := store.Page{FetchedAt: first.at, FirstRank: 1}
	seen := map[string]int{}
	last := first.line
	for ; row != nil && row.at.Equal(first.at); row = r.take() {
		last = row.line
		if l, dup := seen[row.video.ID]; dup {
			r.skip(Skip{Line: row.line, Field: "video_id", Kind: SkipDuplicate,
				Reason: fmt.Sprintf("%s is on line %d for %s too", row.video.ID, l, row.at.Format(time.DateOnly))})
			continue
		}
		if len(page.Videos) == maxChartRows {
			r.skip(Skip{Line: row.line, Field: "trending_date", Kind: SkipChartFull,
				Reason: fmt.Sprintf("%s already has %d rows", row.at.Format(time.DateOnly), maxChartRows)})
			continue
		}
		seen[row.video.ID] = row.line
		page.Videos = append(page.Videos, row.video)
	}
	r.ended[first.at] = last
	return store.ImportedChart{Region: r.region, Pages: []store.Page{page}}
}

// runGap is the longest pause between two pages of one run: a fetch takes
// its pages back to back. It separates two runs of a region when an export
// filtered by time starts in the middle of the second (at rank 51, say).
const runGap = 30 * time.Minute

// run gathers the rows of first's run: same region, ranks rising, fetched
// together.
func (r *Reader) run(first *row) store.ImportedChart {
	c := store.ImportedChart{Region: first.region}
	var page *store.Page
	prev := first
	rows := 0
	for row := first; row != nil; row = r.take() {
		if row != first && (row.region != first.region || row.rank <= prev.rank || row.at.Sub(prev.at) > runGap) {
			r.pending = row // the next run
			break
		}
		if rows == maxChartRows {
			r.skip(Skip{Line: row.line, Field: "rank", Kind: SkipChartFull,
				Reason: fmt.Sprintf("its run already has %d rows", maxChartRows)})
			prev = row
			continue
		}
		rows++
		if page == nil || !row.at.Equal(page.FetchedAt) || row.rank != prev.rank+1 {
			c.Pages = append(c.Pages, store.Page{FetchedAt: row.at, FirstRank: row.rank})
			page = &c.Pages[len(c.Pages)-1]
		}
		page.Videos = append(page.Videos, row.video)
		if row.category != "" && row.video.CategoryID != "" {
			if c.Categories == nil {
				c.Categories = map[string]string{}
			}
			c.Categories[row.video.CategoryID] = row.category
		}
		prev = row
	}
	return c
}

// take returns the next row if it continues the current chart's reading
// (the caller checks); it is nil at the end of the file.
func (r *Reader) take() *row {
	row, err := r.nextRow()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			r.readErr = err // Next returns it instead of the chart it cut
		}
		return nil
	}
	return row
}

// nextRow returns the pending row or reads the next readable one,
// reporting those it skips.
func (r *Reader) nextRow() (*row, error) {
	if p := r.pending; p != nil {
		r.pending = nil
		return p, nil
	}
	for {
		rec, err := r.nextRecord()
		if err != nil {
			return nil, err
		}
		r.report.Rows++
		if rec.err != nil {
			kind := SkipMalformed
			switch {
			case rec.tooLarge:
				kind = SkipTooLarge
			case rec.cutOff:
				kind = SkipCutOff
			}
			r.skip(Skip{Line: rec.line, Kind: kind, Reason: rec.err.Error()})
			continue
		}
		row, skip := r.parse(rec)
		if skip != nil {
			r.skip(*skip)
			continue
		}
		return row, nil
	}
}

func (r *Reader) fix(f Fix) {
	r.report.Fixed++
	r.report.FixedBy[f.Kind]++
	if len(r.report.Fixes) < maxSkipsKept {
		r.report.Fixes = append(r.report.Fixes, f)
	}
}

func (r *Reader) skip(s Skip) {
	r.report.Skipped++
	r.report.ByKind[s.Kind]++
	if len(r.report.Skips) < maxSkipsKept {
		r.report.Skips = append(r.report.Skips, s)
	}
}

// nextRecord reads the next CSV record, with one record read ahead so the
// last one is known: a last record is cut off when it is incomplete, and a
// record that broke the CSV syntax is "malformed" unless the file ends
// there (the reader ran to the end looking for a closing quote).
func (r *Reader) nextRecord() (record, error) {
	if r.jl != nil {
		return r.jl.next(r)
	}
	cur := r.peeked
	if cur == nil {
		c := r.read()
		cur = &c
	}
	if errors.Is(cur.err, io.EOF) {
		return record{}, io.EOF
	}
	if cur.err != nil && !cur.syntax {
		return record{}, fmt.Errorf("%s: %w", r.name, cur.err) // the file itself cannot be read
	}
	next := r.read()
	r.peeked = &next
	if errors.Is(next.err, io.EOF) && !cur.tooLarge && (cur.err != nil || !r.tail.endsRecord() || r.openQuoteAtEnd(cur)) {
		// The last record broke off: the reader ran to the end of the
		// file looking for its fields or its closing quote, or the file
		// stops inside its unquoted last field.
		r.report.CutOff = true
		cur.cutOff = true
		cur.err = errors.New("the file ends in the middle of this record")
		if len(cur.fields) > 0 && len(cur.fields) < r.ncols {
			cur.err = fmt.Errorf("the file ends in the middle of this record (%d of its %d fields)", len(cur.fields), r.ncols)
		}
	}
	return *cur, nil
}

// openQuoteAtEnd reports whether the last record's last field is a quoted
// field the file never closed: read with LazyQuotes (2017-18), it runs to
// the end of the file and keeps the file's final line end, and the file
// does not end with the closing quote before it ("...st"\n). A copy cut
// inside its last description and given a final newline looks whole
// otherwise.
func (r *Reader) openQuoteAtEnd(rec *record) bool {
	if len(rec.fields) != r.ncols || r.ncols == 0 || r.tail.last != '\n' {
		return false
	}
	return strings.HasSuffix(rec.fields[len(rec.fields)-1], "\n") && r.tail.beforeLineEnd() != '"'
}

func (r *Reader) read() record {
	fields, err := r.cr.Read()
	var pe *csv.ParseError
	line := 0
	switch {
	case err == nil:
		line, _ = r.cr.FieldPos(0)
	case errors.As(err, &pe):
		line = pe.StartLine
	}
	if why, cut := r.guard.wasCut(line); line > 0 && cut {
		if why.unclosed {
			// Only the lines up to the quote's are skipped: the guard reads
			// the lines after it again.
			where := "here"
			if why.quoteLine != line {
				where = fmt.Sprintf("on line %d", why.quoteLine)
			}
			return record{line: line, syntax: true,
				err: fmt.Errorf("a quoted field opens %s and never closes: the lines after it are read as records", where)}
		}
		return record{line: line, syntax: true, tooLarge: true,
			err: fmt.Errorf("the record is larger than %d KiB: no row of a real dataset is", MaxRecordBytes>>10)}
	}
	switch {
	case err == nil:
		return record{fields: fields, line: line}
	case errors.Is(err, io.EOF):
		return record{err: io.EOF}
	case errors.As(err, &pe) && errors.Is(err, csv.ErrFieldCount):
		return record{fields: fields, line: pe.StartLine, syntax: true,
			err: fmt.Errorf("%d fields where the header has %d", len(fields), r.ncols)}
	case errors.As(err, &pe):
		return record{line: pe.StartLine, syntax: true,
			err: fmt.Errorf("broken CSV quoting at line %d, column %d: %v", pe.Line, pe.Column, pe.Err)}
	}
	return record{err: err}
}

// tailReader remembers the last bytes read, to tell a file that ends at the
// end of a record from one cut off in the middle of it.
type tailReader struct {
	r          io.Reader
	tail       [3]byte // the last three bytes, oldest first
	prev, last byte
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for _, c := range p[:n][max(0, n-3):] {
		t.tail = [3]byte{t.tail[1], t.tail[2], c}
	}
	t.prev, t.last = t.tail[1], t.tail[2]
	return n, err
}

// beforeLineEnd is the byte before the file's final line end (\n or \r\n).
func (t *tailReader) beforeLineEnd() byte {
	if t.tail[2] == '\n' && t.tail[1] == '\r' {
		return t.tail[0]
	}
	return t.tail[1]
}

// endsRecord: the file ends with a line end, or with the closing quote of
// its last field (not an opening one, which a lazy reader would take for a
// whole empty field). A last field that is neither quoted nor followed by a
// line end may be cut off anywhere, so it is not trusted: every CSV writer
// the datasets came from ends its records with a line end or quotes its
// fields.
func (t *tailReader) endsRecord() bool {
	switch t.last {
	case '\n', '\r':
		return true
	case '"':
		return t.prev != ',' && t.prev != '\n'
	}
	return false
}

// parse turns a record into a row, or says why it cannot be one.
func (r *Reader) parse(rec record) (*row, *Skip) {
	get := func(col string) string { return rec.fields[r.cols[col]] }
	bad := func(col, format string, args ...any) (*row, *Skip) {
		return nil, &Skip{Line: rec.line, Field: col, Kind: SkipMalformed, Reason: fmt.Sprintf(format, args...)}
	}
	out := &row{line: rec.line, region: r.region}
	v := &out.video
	v.ID = strings.TrimSpace(get("video_id"))
	if !videoID().MatchString(v.ID) {
		if v.ID == "#NAME?" {
			return bad("video_id", "%q is not a video id (a spreadsheet program replaced an id that began with '-')", v.ID)
		}
		return bad("video_id", "%q is not a video id", v.ID)
	}
	v.Title, v.ThumbnailURL = get("title"), get("thumbnail_link")
	var err error
	var ratingsOff, commentsOff bool
	counts := []struct {
		col string
		dst **int64
	}{{"likes", &v.Likes}, {"dislikes", &v.Dislikes}, {"comment_count", &v.Comments}}
	switch r.format {
	case Format2017:
		if out.at, err = parseDate2017(get("trending_date")); err != nil {
			return bad("trending_date", "%v", err)
		}
		v.ChannelTitle, v.CategoryID = get("channel_title"), get("category_id")
		if v.PublishedAt, err = parseTime(get("publish_time")); err != nil {
			return bad("publish_time", "%v", err)
		}
		v.Tags = tags2017(get("tags"))
		// The scraper wrote each line break as the two characters \n.
		v.Description = strings.ReplaceAll(get("description"), `\n`, "\n")
		counts = append(counts, struct {
			col string
			dst **int64
		}{"views", &v.Views})
		if _, err := parseBool(get("video_error_or_removed")); err != nil {
			return bad("video_error_or_removed", "%v", err)
		}
	default:
		if out.at, err = parseDay(get("trending_date")); err != nil {
			return bad("trending_date", "%v", err)
		}
		v.ChannelID, v.ChannelTitle, v.CategoryID = get("channelId"), get("channelTitle"), get("categoryId")
		if v.PublishedAt, err = parseTime(get("publishedAt")); err != nil {
			return bad("publishedAt", "%v", err)
		}
		v.Tags = tags2020(get("tags"))
		if rec.tags != nil {
			v.Tags = rec.tags
		}
		v.Description = get("description")
		counts = append(counts, struct {
			col string
			dst **int64
		}{"view_count", &v.Views})
	}
	for _, c := range counts {
		if *c.dst, err = parseCount(get(c.col)); err != nil {
			return bad(c.col, "%v", err)
		}
	}
	if ratingsOff, err = parseBool(get("ratings_disabled")); err != nil {
		return bad("ratings_disabled", "%v", err)
	}
	if commentsOff, err = parseBool(get("comments_disabled")); err != nil {
		return bad("comments_disabled", "%v", err)
	}
	// The datasets write 0 for a count the owner hid: that is not a count.
	if ratingsOff {
		v.Likes, v.Dislikes = nil, nil
	}
	if commentsOff {
		v.Comments = nil
	}
	if r.format == FormatYtrend {
		if out.region, err = regions.Parse(get("region")); err != nil {
			return bad("region", "%v", err)
		}
		rank, err := strconv.Atoi(strings.TrimSpace(get("rank")))
		if err != nil || rank < 1 {
			return bad("rank", "%q is not a rank (1, 2, ...)", get("rank"))
		}
		out.rank = rank
		if out.at, err = time.Parse(time.RFC3339Nano, strings.TrimSpace(get("fetched_at"))); err != nil {
			return bad("fetched_at", "%q is not an RFC 3339 time", get("fetched_at"))
		}
		out.at = out.at.UTC()
		if i, ok := r.cols[ColumnCategory]; ok {
			out.category = strings.TrimSpace(rec.fields[i])
		}
	}
	if skip := r.checkRow(out, rec.line); skip != nil {
		return nil, skip
	}
	return out, nil
}

// channelTitleColumn is the file's name for the channel's name.
func (r *Reader) channelTitleColumn() string {
	if r.format == Format2017 {
		return "channel_title"
	}
	return "channelTitle"
}

// checkRow refuses a row dated where no chart can be, and cuts or drops
// what YouTube itself would never send, reporting each change.
func (r *Reader) checkRow(out *row, line int) *Skip {
	col := "trending_date"
	if r.format == FormatYtrend {
		col = "fetched_at"
	}
	if latest := store.LatestSighting(r.now()); out.at.After(latest) {
		return &Skip{Line: line, Field: col, Kind: SkipOutOfRange,
			Reason: fmt.Sprintf("%s is in the future (the latest a chart can be is %s)", out.at.Format(time.DateOnly), latest.Format(time.DateOnly))}
	}
	if out.at.Before(store.EarliestSighting) {
		return &Skip{Line: line, Field: col, Kind: SkipOutOfRange,
			Reason: fmt.Sprintf("%s is before YouTube's first year (%d)", out.at.Format(time.DateOnly), store.EarliestSighting.Year())}
	}
	v := &out.video
	var cut bool
	for _, f := range []struct {
		col string
		s   *string
	}{{"title", &v.Title}, {r.channelTitleColumn(), &v.ChannelTitle}, {"description", &v.Description}} {
		if *f.s, cut = dropControls(*f.s); cut {
			r.fix(Fix{Line: line, Field: f.col, Kind: FixControls, Reason: "control characters (ESC, BEL, CR, C1, ...) removed: YouTube never sends them"})
		}
	}
	tagsFixed := false
	for i, t := range v.Tags {
		v.Tags[i], cut = dropControls(t)
		tagsFixed = tagsFixed || cut
	}
	if tagsFixed {
		r.fix(Fix{Line: line, Field: "tags", Kind: FixControls, Reason: "control characters (ESC, BEL, CR, C1, ...) removed: YouTube never sends them"})
	}
	if out.category, cut = dropControls(out.category); cut {
		r.fix(Fix{Line: line, Field: ColumnCategory, Kind: FixControls, Reason: "control characters (ESC, BEL, CR, C1, ...) removed: YouTube never sends them"})
	}
	if v.ChannelTitle, cut = cutChars(v.ChannelTitle, maxChannelTitleChars); cut {
		r.fix(Fix{Line: line, Field: r.channelTitleColumn(), Kind: FixCut, Reason: fmt.Sprintf("longer than YouTube's %d characters", maxChannelTitleChars)})
	}
	if v.Title, cut = store.CutTitle(v.Title); cut {
		r.fix(Fix{Line: line, Field: "title", Kind: FixCut, Reason: fmt.Sprintf("longer than YouTube's %d characters", store.MaxTitleChars)})
	}
	if v.Description, cut = store.CutDescription(v.Description); cut {
		r.fix(Fix{Line: line, Field: "description", Kind: FixCut, Reason: fmt.Sprintf("longer than YouTube's %d bytes", store.MaxDescriptionBytes)})
	}
	if v.Tags, cut = store.CutTags(v.Tags); cut {
		r.fix(Fix{Line: line, Field: "tags", Kind: FixCut, Reason: fmt.Sprintf("longer than YouTube's %d characters in all: the tags that fit are kept", store.MaxTagsChars)})
	}
	if u := strings.TrimSpace(v.ThumbnailURL); u != "" && !store.ValidThumbnail(u) {
		r.fix(Fix{Line: line, Field: "thumbnail_link", Kind: FixDropped, Reason: fmt.Sprintf("%.80q is not an https URL on ytimg.com", u)})
		v.ThumbnailURL = ""
	} else {
		v.ThumbnailURL = u
	}
	return nil
}
