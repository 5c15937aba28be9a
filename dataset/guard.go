package dataset

import (
	"bytes"
	"io"
)

// MaxRecordBytes bounds one record of a dataset file. A real record is a
// few kilobytes (YouTube's limits keep a description to 5,000 bytes and a
// title to 100 characters); a longer one is skipped and reported, and only
// its first MaxRecordBytes are ever held in memory, whatever the file.
const MaxRecordBytes = 64 << 10

// recordGuard sits between the file and the CSV reader, which holds a whole
// record in memory: once a record passes MaxRecordBytes it ends it there
// (closing its quotes) and drops the rest of it, up to the line end that
// closes it outside quotes. The dropped part's line ends are passed on as
// empty lines, which the CSV reader skips but counts, so that line numbers
// stay the file's. Quotes are tracked as the CSV reader reads them (with
// LazyQuotes): a quote opens a quoted field only at the field's start, and
// inside one, a quote ends it only before a comma or a line end. A bare
// quote in an unquoted field (common in the 2017-18 files' tags) is a
// character like any other.
//
// A quote that opens a field and never closes (a title typed `"oops`) would
// make the rest of the file one record. So the lines of a quoted field that
// runs past its first line end are held back (at most MaxRecordBytes) until
// the quote closes. If instead earlyRecords held lines read as whole records
// of the header's width, or the record passes MaxRecordBytes or the file ends
// with one such line held, the quote is taken for a stray one: only the record up to the
// quote's line is skipped (reported as such) and the held lines are read
// again as records. While a too-large record is dropped inside its quotes,
// a line that reads as a whole record ends the dropping the same way.
type recordGuard struct {
	r       io.Reader
	buf     []byte
	pending []byte
	ncols   int // the header's fields; until its end, minus the commas read

	line     int // the file's line the next byte is on
	start    int // where the record in progress starts
	size     int // its bytes passed on or held so far
	q        quoting
	dropping bool
	dropLine int            // the line the record was cut on
	owed     bool           // the line end passed on at the cut stands for the next one dropped
	cut      map[int]cutWhy // records cut, by their first line

	hold     []byte // a quoted field's lines after its first line end, not passed on yet
	holdBuf  []byte // hold's memory, kept between fields
	holdLine int    // the line whose end starts hold: the line the quote is on
	heldFrom int    // where hold's line in progress starts
	// heldRecords counts hold's lines that read as whole records.
	heldRecords int
	lineBuf     []byte // while dropping: the line so far, up to MaxRecordBytes+1 bytes
}

// cutWhy says why the guard ended a record early.
type cutWhy struct {
	unclosed  bool // a quote opened on quoteLine and never closed
	quoteLine int
}

// quoting follows the CSV's quoting, as the reader reads it.
type quoting struct {
	inQuote bool // inside a quoted field
	closing bool // a quote was just read inside a quoted field: an end, or an escape
	atField bool // the next byte starts a field
}

func newRecordGuard(r io.Reader) *recordGuard {
	return &recordGuard{r: r, buf: make([]byte, 32<<10), line: 1, start: 1, q: quoting{atField: true}, cut: map[int]cutWhy{}}
}

func (g *recordGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		n, err := g.r.Read(g.buf)
		g.pending = g.scan(g.pending[:0], g.buf[:n])
		for err != nil && g.hold != nil {
			// The file ends inside a quoted field.
			if g.recoverableAtEnd() {
				g.pending = g.scan(g.pending, g.recover(&g.pending, nil))
			} else {
				g.pending = append(g.pending, g.hold...)
				g.holdBuf, g.hold = g.hold[:0], nil
			}
		}
		if err != nil && len(g.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// scan passes in's bytes on to out, cutting records that grow too large.
func (g *recordGuard) scan(out, in []byte) []byte {
	for i := 0; i < len(in); i++ {
		c := in[i]
		g.q.step(c)
		end := c == '\n' && !g.q.inQuote
		if g.dropping {
			if c == '\n' {
				if !end && g.line > g.dropLine && g.isRecord(g.lineBuf) {
					// A record inside what the quotes would drop: read it.
					in = append(append(append([]byte{}, g.lineBuf...), '\n'), in[i+1:]...)
					i = -1
					g.dropping, g.q, g.start, g.size = false, quoting{atField: true}, g.line, 0
					g.lineBuf = g.lineBuf[:0]
					continue
				}
				g.line++
				g.lineBuf = g.lineBuf[:0]
				if !g.owed {
					out = append(out, '\n') // an empty line: skipped, counted
				}
				g.owed = false
			} else if len(g.lineBuf) <= MaxRecordBytes {
				g.lineBuf = append(g.lineBuf, c)
			}
			if end {
				g.dropping, g.start, g.size = false, g.line, 0
			}
			continue
		}
		switch {
		case g.hold != nil:
			g.hold = append(g.hold, c)
			if c == '\n' && g.q.inQuote {
				if g.isRecord(g.hold[g.heldFrom : len(g.hold)-1]) {
					g.heldRecords++
				}
				g.heldFrom = len(g.hold)
			}
		case c == '\n' && g.q.inQuote:
			g.hold, g.holdLine = append(g.holdBuf[:0], c), g.line
			g.heldFrom, g.heldRecords = 1, 0
		default:
			out = append(out, c)
		}
		g.size++
		if c == '\n' {
			g.line++
		}
		if g.hold != nil && !g.q.inQuote {
			out = append(out, g.hold...) // the quote closed
			g.holdBuf, g.hold = g.hold[:0], nil
		}
		if g.heldRecords >= earlyRecords && g.hold != nil {
			// So many records inside one quoted field: the quote is a
			// stray one. Deciding now keeps a file of many such lines
			// from costing MaxRecordBytes of scanning each.
			in = g.recover(&out, in[i+1:])
			i = -1
			continue
		}
		if g.ncols <= 0 && c == ',' && !g.q.inQuote {
			g.ncols-- // the header's commas, counted down
		}
		if end {
			if g.ncols <= 0 {
				g.ncols = 1 - g.ncols // the header's fields
			}
			g.start, g.size = g.line, 0
			continue
		}
		if g.size > MaxRecordBytes {
			if g.hold != nil && g.heldRecords > 0 {
				in = g.recover(&out, in[i+1:])
				i = -1
				continue
			}
			g.cut[g.start] = cutWhy{}
			g.dropping, g.owed, g.dropLine = true, true, g.line
			g.lineBuf = g.lineBuf[:0]
			if g.q.inQuote && !g.q.closing {
				out = append(out, '"') // closes it for the reader; the file's state goes on
			}
			out = append(out, '\n')
			if g.hold != nil {
				// The held lines are dropped: their line ends are passed on,
				// the first as the one just written.
				out = append(out, bytes.Repeat([]byte{'\n'}, bytes.Count(g.hold, []byte{'\n'})-1)...)
				g.owed = false
				g.lineBuf = append(g.lineBuf, g.hold[bytes.LastIndexByte(g.hold, '\n')+1:]...)
				g.holdBuf, g.hold = g.hold[:0], nil
			}
		}
	}
	return out
}

// earlyRecords whole records held inside one quoted field make its quote a
// stray one without waiting for MaxRecordBytes: no description holds that
// many lines of exactly the header's fields.
const earlyRecords = 8

// recover ends the record in progress at the end of the line its open
// quote is on, reports it, and returns the held lines after it followed by
// rest, to be read again as records.
func (g *recordGuard) recover(out *[]byte, rest []byte) []byte {
	// The hold started at a line end inside the quotes, not just after a
	// quote: a quote closes the field.
	*out = append(*out, '"', '\n')
	g.cut[g.start] = cutWhy{unclosed: true, quoteLine: g.holdLine}
	again := append(append([]byte{}, g.hold[1:]...), rest...)
	g.holdBuf, g.hold = g.hold[:0], nil
	g.line = g.holdLine + 1
	g.start, g.size, g.q = g.line, 0, quoting{atField: true}
	return again
}

// recoverableAtEnd reports, at the end of the file, whether one of the held
// lines reads as a whole record: the quote before them is then a stray one.
func (g *recordGuard) recoverableAtEnd() bool {
	return g.heldRecords > 0 || g.isRecord(g.hold[g.heldFrom:])
}

// isRecord reports whether line, read from its start, is one whole record
// of the header's width.
func (g *recordGuard) isRecord(line []byte) bool {
	if g.ncols < 2 || len(line) > MaxRecordBytes {
		return false
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	q := quoting{atField: true}
	fields := 1
	for _, c := range line {
		q.step(c)
		if c == ',' && !q.inQuote {
			fields++
		}
	}
	return fields == g.ncols && (!q.inQuote || q.closing)
}

// step follows c through the CSV's quoting.
func (q *quoting) step(c byte) {
	switch {
	case q.inQuote && q.closing:
		q.closing = false
		switch c {
		case '"': // an escaped quote: still inside
		case ',', '\n', '\r':
			q.inQuote = false
			q.atField = c != '\r'
		default: // a bare quote inside a quoted field: a character (LazyQuotes)
		}
	case q.inQuote:
		q.closing = c == '"'
	case c == '"' && q.atField:
		q.inQuote, q.atField = true, false
	default:
		q.atField = c == ',' || c == '\n'
	}
}

// wasCut reports whether the record starting at line was cut, and why, and
// forgets the records before it.
func (g *recordGuard) wasCut(line int) (why cutWhy, cut bool) {
	why, cut = g.cut[line]
	for l := range g.cut {
		if l <= line {
			delete(g.cut, l)
		}
	}
	return why, cut
}
