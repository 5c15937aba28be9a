package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// jsonLines reads the export's JSONL form: one object a line, with the CSV
// columns as keys. Each object becomes the CSV record it stands for, so
// both forms are read by the same code.
type jsonLines struct {
	br    *bufio.Reader
	line  int
	first []byte // the first line, read to tell the layout
}

func newJSONLReader(br *bufio.Reader, name string) (*Reader, error) {
	jl := &jsonLines{br: br}
	first, _, err := jl.readLine()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(first, &keys); err != nil {
		return nil, fmt.Errorf("%s: %w", name, unknown(fmt.Sprintf("its first line starts like JSON but is not one object (%v)", err)))
	}
	for _, c := range ColumnsYtrend {
		if _, ok := keys[c]; !ok {
			names := slices.Sorted(maps.Keys(keys))
			return nil, fmt.Errorf("%s: %w", name, unknown(fmt.Sprintf("its first line is a JSON object with the keys %s", shortList(names))))
		}
	}
	jl.first = first
	cols := make(map[string]int, len(ColumnsExport))
	for i, c := range ColumnsExport {
		cols[c] = i
	}
	return &Reader{name: name, format: FormatYtrend, cols: cols, ncols: len(ColumnsExport), jl: jl,
		ended: map[time.Time]int{}, report: newReport(), now: time.Now}, nil
}

// errLineTooLarge: a line over MaxRecordBytes, of which only that much
// was kept (and the rest read past).
var errLineTooLarge = fmt.Errorf("the record is larger than %d KiB: no row of a real export is", MaxRecordBytes>>10)

// readLine returns the next line without its line end; io.EOF with the last
// line when it has no line end (and with nothing after it); errLineTooLarge
// for a line over MaxRecordBytes, which is read past without being held.
func (jl *jsonLines) readLine() ([]byte, bool, error) {
	var b []byte
	tooLarge := false
	for {
		chunk, err := jl.br.ReadSlice('\n')
		if !tooLarge {
			if len(b)+len(chunk) > MaxRecordBytes {
				tooLarge, b = true, nil
			} else {
				b = append(b, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLarge {
			jl.line++
			return nil, err == nil, errLineTooLarge
		}
		if len(b) > 0 {
			jl.line++
		}
		ended := bytes.HasSuffix(b, []byte("\n"))
		return bytes.TrimRight(b, "\r\n"), ended, err
	}
}

func (jl *jsonLines) next(r *Reader) (record, error) {
	for {
		var b []byte
		ended := true
		var err error
		if jl.first != nil {
			b, jl.first = jl.first, nil
			jl.line = 1
		} else {
			b, ended, err = jl.readLine()
			if errors.Is(err, errLineTooLarge) {
				return record{line: jl.line, syntax: true, tooLarge: true, err: err}, nil
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return record{}, fmt.Errorf("%s: %w", r.name, err)
			}
			if len(bytes.TrimSpace(b)) == 0 {
				if err != nil {
					return record{}, io.EOF
				}
				continue // a blank line
			}
		}
		var row jsonRow
		if e := json.Unmarshal(b, &row); e != nil {
			rec := record{line: jl.line, syntax: true, err: fmt.Errorf("not a JSON object of the export: %v", e)}
			if !ended {
				r.report.CutOff = true
				rec.cutOff, rec.err = true, errors.New("the file ends in the middle of this record")
			}
			return rec, nil
		}
		tags := row.Tags
		if tags == nil {
			tags = []string{}
		}
		return record{fields: row.fields(), line: jl.line, tags: tags}, nil
	}
}

// fields is the CSV record the object stands for (ColumnsExport's order; an
// object without "category" has it empty).
func (j jsonRow) fields() []string {
	tags := "[None]"
	if len(j.Tags) > 0 {
		tags = strings.Join(j.Tags, "|")
	}
	return slices.Clone([]string{j.VideoID, j.Title, j.PublishedAt, j.ChannelID, j.ChannelTitle, j.CategoryID,
		j.TrendingDate, tags, count(j.ViewCount), count(j.Likes), count(j.Dislikes), count(j.CommentCount),
		j.ThumbnailLink, pyBool(j.CommentsDisabled), pyBool(j.RatingsDisabled), j.Description, j.Region,
		strconv.Itoa(j.Rank), j.FetchedAt, j.Category})
}
