package dataset

import "io"

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
type recordGuard struct {
	r       io.Reader
	buf     []byte
	pending []byte

	line     int  // the file's line the next byte is on
	start    int  // where the record in progress starts
	size     int  // its bytes passed on so far
	inQuote  bool // inside a quoted field, in the file
	closing  bool // a quote was just read inside a quoted field: an end, or an escape
	atField  bool // the next byte starts a field
	dropping bool
	owed     bool         // the line end passed on at the cut stands for the next one dropped
	cut      map[int]bool // records cut, by their first line
}

func newRecordGuard(r io.Reader) *recordGuard {
	return &recordGuard{r: r, buf: make([]byte, 32<<10), line: 1, start: 1, atField: true, cut: map[int]bool{}}
}

func (g *recordGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		n, err := g.r.Read(g.buf)
		g.pending = g.scan(g.pending[:0], g.buf[:n])
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
	for _, c := range in {
		g.quotes(c)
		end := c == '\n' && !g.inQuote
		if g.dropping {
			if c == '\n' {
				g.line++
				if !g.owed {
					out = append(out, '\n') // an empty line: skipped, counted
				}
				g.owed = false
			}
			if end {
				g.dropping, g.start, g.size = false, g.line, 0
			}
			continue
		}
		out = append(out, c)
		g.size++
		if c == '\n' {
			g.line++
		}
		if end {
			g.start, g.size = g.line, 0
			continue
		}
		if g.size > MaxRecordBytes {
			g.cut[g.start] = true
			g.dropping, g.owed = true, true
			if g.inQuote && !g.closing {
				out = append(out, '"') // closes it for the reader; the file's state goes on
			}
			out = append(out, '\n')
		}
	}
	return out
}

// quotes follows c through the CSV's quoting, as the reader reads it.
func (g *recordGuard) quotes(c byte) {
	switch {
	case g.inQuote && g.closing:
		g.closing = false
		switch c {
		case '"': // an escaped quote: still inside
		case ',', '\n', '\r':
			g.inQuote = false
			g.atField = c != '\r'
		default: // a bare quote inside a quoted field: a character (LazyQuotes)
		}
	case g.inQuote:
		g.closing = c == '"'
	case c == '"' && g.atField:
		g.inQuote, g.atField = true, false
	default:
		g.atField = c == ',' || c == '\n'
	}
}

// wasCut reports whether the record starting at line was cut, and forgets
// the records before it.
func (g *recordGuard) wasCut(line int) bool {
	cut := g.cut[line]
	for l := range g.cut {
		if l <= line {
			delete(g.cut, l)
		}
	}
	return cut
}
