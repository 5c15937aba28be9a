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
// stay the file's. Quotes are tracked as RFC 4180 writes them; in the
// 2017-18 files, whose tags hold bare quotes, a record only that long may
// end at a different line end, which at worst skips one more record.
type recordGuard struct {
	r       io.Reader
	buf     []byte
	pending []byte

	line     int  // the file's line the next byte is on
	start    int  // where the record in progress starts
	size     int  // its bytes passed on so far
	inQuote  bool // inside a quoted field, in the file
	dropping bool
	owed     bool         // the line end passed on at the cut stands for the next one dropped
	cut      map[int]bool // records cut, by their first line
}

func newRecordGuard(r io.Reader) *recordGuard {
	return &recordGuard{r: r, buf: make([]byte, 32<<10), line: 1, start: 1, cut: map[int]bool{}}
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
		if c == '"' {
			g.inQuote = !g.inQuote
		}
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
			if g.inQuote {
				out = append(out, '"')
			}
			out = append(out, '\n')
		}
	}
	return out
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
