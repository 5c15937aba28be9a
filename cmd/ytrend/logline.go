package main

import (
	"io"
	"strconv"

	"github.com/ytrend/ytrend/internal/humanfmt"
)

// logLines is the writer the log's handler writes to: it passes each line
// on to w with the runes that act on a terminal (humanfmt.TerminalControl:
// DEL, C1 controls such as CSI U+009B, the bidirectional overrides) made
// inert. A line carries outside text (a title, an upstream error's body, a
// request's path in the access log) and an operator tails the log. slog's
// JSON handler writes those runes raw, and its text handler quotes a value
// holding C1 or an override (strconv.Quote, which escapes them) but not one
// whose only control is DEL.
//
// Mending the encoded line, not the attributes, reaches every string the
// handler writes: the message, keys, values in nested groups, an error's
// text, a LogValuer's. A slog handler writes each record in one Write.
type logLines struct {
	w    io.Writer
	text bool // slog.TextHandler's lines, else slog.JSONHandler's
}

func (l logLines) Write(line []byte) (int, error) {
	var out []byte
	if l.text {
		out = quoteUnquoted(line)
	} else {
		out = humanfmt.JSONEscaped(line)
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(line), nil
}

// quoteUnquoted is a text handler's line with each key or value that holds
// DEL, a C1 control or an override raw quoted as slog quotes a value that
// needs it (strconv.Quote), so that it reads back the same. Only one slog
// left unquoted can hold one raw, and that holds no space, '=' or '"':
// those bound it. A line without them is returned as it is.
func quoteUnquoted(line []byte) []byte {
	i := humanfmt.IndexJSONEscape(line)
	if i < 0 {
		return line
	}
	bound := func(c byte) bool { return c == ' ' || c == '=' || c == '"' || c == '\n' }
	out := make([]byte, 0, len(line)+16)
	done := 0 // line[:done] is in out
	for i >= 0 {
		start, end := i, i
		for start > done && !bound(line[start-1]) {
			start--
		}
		for end < len(line) && !bound(line[end]) {
			end++
		}
		out = append(out, line[done:start]...)
		out = strconv.AppendQuote(out, string(line[start:end]))
		done = end
		if i = humanfmt.IndexJSONEscape(line[done:]); i >= 0 {
			i += done
		}
	}
	return append(out, line[done:]...)
}
