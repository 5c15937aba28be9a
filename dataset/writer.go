package dataset

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/store"
)

// Writer writes snapshots in ytrend's export layout.
type Writer interface {
	Write(s *store.Snapshot) error
	// Flush writes what is buffered; call it at the end.
	Flush() error
}

// CSVWriter writes ColumnsExport: the 2020 dataset's columns in their
// order, so notebooks written for it read the export unchanged, then
// region, rank, fetched_at and category.
type CSVWriter struct {
	bw   *bufio.Writer
	cw   *csv.Writer
	rec  []string
	safe bool
}

// CSVOption changes how a CSVWriter writes.
type CSVOption func(*CSVWriter)

// SafeForSpreadsheets prefixes every cell that begins with =, +, -, @, a
// tab or a carriage return with ', which spreadsheet programs take as
// "this is text": otherwise a title such as =HYPERLINK("http://...") or
// +cmd|' /C calc'!A0 runs as a formula when the file is opened (and a
// leading tab or CR, which some programs skip, can hide one: OWASP's CSV
// injection guidance lists all six). The prefix changes the data, so a file
// written this way is for reading in a spreadsheet, not for ytrend import:
// the default writes every value as it is, and an export imported and
// exported again gives the same bytes.
func SafeForSpreadsheets() CSVOption { return func(w *CSVWriter) { w.safe = true } }

// formulaStarts are the first characters SafeForSpreadsheets defuses.
const formulaStarts = "=+-@\t\r"

// NewCSVWriter writes the header and returns a writer for the rows.
func NewCSVWriter(w io.Writer, opts ...CSVOption) (*CSVWriter, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	cw := csv.NewWriter(bw)
	if err := cw.Write(ColumnsExport); err != nil {
		return nil, err
	}
	out := &CSVWriter{bw: bw, cw: cw, rec: make([]string, len(ColumnsExport))}
	for _, o := range opts {
		o(out)
	}
	return out, nil
}

// Write writes one row. Hidden counts are empty, never 0; dislikes are
// empty unless the snapshot came from a dataset that had them.
func (w *CSVWriter) Write(s *store.Snapshot) error {
	v := &s.Video
	r := w.rec
	r[0], r[1], r[2] = v.ID, text(v.Title), publishedAt(v.PublishedAt)
	r[3], r[4], r[5] = v.ChannelID, v.ChannelTitle, v.CategoryID
	r[6] = trendingDate(s.FetchedAt)
	r[7] = "[None]"
	if len(v.Tags) > 0 {
		r[7] = strings.Join(v.Tags, "|")
	}
	r[8], r[9], r[10], r[11] = count(s.Views), count(s.Likes), count(s.Dislikes), count(s.Comments)
	r[12], r[13], r[14], r[15] = v.ThumbnailURL, pyBool(s.CommentsDisabled), pyBool(s.RatingsDisabled), text(v.Description)
	r[16], r[17], r[18] = string(s.Region), strconv.Itoa(s.Rank), fetchedAt(s.FetchedAt)
	r[19] = s.Category
	if w.safe {
		for i, c := range r {
			if c != "" && strings.ContainsRune(formulaStarts, rune(c[0])) {
				r[i] = "'" + c
			}
		}
	}
	return w.cw.Write(r)
}

// Flush writes the buffered rows.
func (w *CSVWriter) Flush() error {
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		return err
	}
	return w.bw.Flush()
}

// JSONLWriter writes one JSON object a line, with the CSV's keys in the
// same order and JSON's types: counts are numbers or null (hidden), tags an
// array, the flags booleans. DEL, C1 controls and bidirectional overrides
// are written as \u escapes (humanfmt.AppendJSONEscaped): the same strings
// to a JSON reader, inert if the lines reach a terminal.
type JSONLWriter struct {
	bw   *bufio.Writer
	line bytes.Buffer
	enc  *json.Encoder
	out  []byte
}

// NewJSONLWriter returns a writer of JSON lines.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	jw := &JSONLWriter{bw: bufio.NewWriterSize(w, 256<<10)}
	jw.enc = json.NewEncoder(&jw.line)
	jw.enc.SetEscapeHTML(false)
	return jw
}

// jsonRow is one line of the JSONL export (and of its import).
type jsonRow struct {
	VideoID          string   `json:"video_id"`
	Title            string   `json:"title"`
	PublishedAt      string   `json:"publishedAt"`
	ChannelID        string   `json:"channelId"`
	ChannelTitle     string   `json:"channelTitle"`
	CategoryID       string   `json:"categoryId"`
	TrendingDate     string   `json:"trending_date"`
	Tags             []string `json:"tags"`
	ViewCount        *int64   `json:"view_count"`
	Likes            *int64   `json:"likes"`
	Dislikes         *int64   `json:"dislikes"`
	CommentCount     *int64   `json:"comment_count"`
	ThumbnailLink    string   `json:"thumbnail_link"`
	CommentsDisabled bool     `json:"comments_disabled"`
	RatingsDisabled  bool     `json:"ratings_disabled"`
	Description      string   `json:"description"`
	Region           string   `json:"region"`
	Rank             int      `json:"rank"`
	FetchedAt        string   `json:"fetched_at"`
	Category         string   `json:"category"`
}

// Write writes one line.
func (w *JSONLWriter) Write(s *store.Snapshot) error {
	v := &s.Video
	tags := v.Tags
	if tags == nil {
		tags = []string{}
	}
	w.line.Reset()
	err := w.enc.Encode(jsonRow{
		VideoID: v.ID, Title: text(v.Title), PublishedAt: publishedAt(v.PublishedAt), ChannelID: v.ChannelID,
		ChannelTitle: v.ChannelTitle, CategoryID: v.CategoryID, TrendingDate: trendingDate(s.FetchedAt), Tags: tags,
		ViewCount: s.Views, Likes: s.Likes, Dislikes: s.Dislikes, CommentCount: s.Comments, ThumbnailLink: v.ThumbnailURL,
		CommentsDisabled: s.CommentsDisabled, RatingsDisabled: s.RatingsDisabled, Description: text(v.Description),
		Region: string(s.Region), Rank: s.Rank, FetchedAt: fetchedAt(s.FetchedAt), Category: s.Category,
	})
	if err != nil {
		return err
	}
	w.out = humanfmt.AppendJSONEscaped(w.out[:0], w.line.Bytes())
	_, err = w.bw.Write(w.out)
	return err
}

// Flush writes the buffered lines.
func (w *JSONLWriter) Flush() error { return w.bw.Flush() }

func count(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

// pyBool writes a flag as the datasets do (pandas reads True/False as bool).
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// text writes line breaks as \n: a CSV reader turns a quoted \r\n into \n,
// so writing \n keeps an export and its re-import's export identical.
func text(s string) string {
	if strings.Contains(s, "\r\n") {
		return strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

func publishedAt(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// trendingDate is the day of the fetch, as the 2020 dataset writes it.
func trendingDate(t time.Time) string { return t.UTC().Format("2006-01-02") + "T00:00:00Z" }

func fetchedAt(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
