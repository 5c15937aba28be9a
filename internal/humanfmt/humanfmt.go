// Package humanfmt formats numbers and outside text for people: the
// terminal's tables and the web pages print counts the same way, and text
// from outside (titles, file names, error bodies) reaches a terminal with
// whatever would act on it shown as an escape.
package humanfmt

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Count prints 1234567 as 1.2M, 1234 as 1.2K, 999 as 999.
func Count(n int64) string {
	switch {
	case n >= 1_000_000_000:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Terminal makes archive text safe to print to a terminal: each control
// character but tab and line feed (ESC, BEL, BS, CR, DEL, C1 such as U+009B,
// a terminal's CSI) and each byte that is not UTF-8 is shown as a visible
// escape (\x1b, \u009b) instead of acting on the terminal. Imports remove
// them, but archives imported before that still hold them. So are the
// bidirectional embeddings, overrides and isolates (U+202A-U+202E,
// U+2066-U+2069), which reorder how the rest of a line shows ("Trojan
// Source", CVE-2021-42574); the marks U+200E and U+200F, which right-to-left
// text uses, stay.
func Terminal(s string) string { return escapeRunes(s, TerminalControl) }

// TerminalLine is Terminal for text that must stay on one line, such as a
// request path quoted in a one-line error: line feeds and the Unicode line
// and paragraph separators (U+2028, U+2029) are escaped too, so that the
// text cannot add a line of its own choosing to what quotes it.
func TerminalLine(s string) string {
	return escapeRunes(s, func(r rune) bool {
		return r == '\n' || r == '\u2028' || r == '\u2029' || TerminalControl(r)
	})
}

// escapeRunes shows each rune esc reports, and each byte that is not
// UTF-8, as a visible escape.
func escapeRunes(s string, esc func(rune) bool) string {
	if strings.IndexFunc(s, esc) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case esc(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case esc(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// TerminalControl reports whether r acts on a terminal instead of showing
// (Terminal escapes it): a control character but tab and line feed, or a
// bidirectional embedding, override or isolate.
func TerminalControl(r rune) bool {
	return (unicode.IsControl(r) && r != '\t' && r != '\n') || ('\u202a' <= r && r <= '\u202e') || ('\u2066' <= r && r <= '\u2069')
}

// Listed is a name as a message lists it among others: as it is, or quoted
// with Go's escapes when it is empty, has spaces at either end, holds a
// comma, or holds anything strconv.Quote would escape, so that a name read
// from a file or a reply cannot break the message's line, act on a
// terminal, pass for another name, or be read as two.
func Listed(s string) string {
	if q := strconv.Quote(s); s == "" || q[1:len(q)-1] != s || strings.TrimSpace(s) != s || strings.Contains(s, ",") {
		return q
	}
	return s
}

// AppendJSONEscaped appends JSON text src to dst with each rune
// TerminalControl reports (DEL, the C1 controls, the bidirectional
// overrides; encoding/json already escapes the C0 controls inside strings)
// written as its \u escape: the same strings to every JSON reader, inert on
// a terminal. Outside strings JSON is ASCII, so nothing else can hold them.
func AppendJSONEscaped(dst, src []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for {
		i, r, n := nextJSONEscape(src, start)
		if i < 0 {
			return append(dst, src[start:]...)
		}
		dst = append(dst, src[start:i]...)
		dst = append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		start = i + n
	}
}

// JSONEscaped is src as AppendJSONEscaped writes it, or src itself when
// it holds nothing to escape, which is nearly always: then an answer or a
// log line costs one scan and no copy.
func JSONEscaped(src []byte) []byte {
	if IndexJSONEscape(src) < 0 {
		return src
	}
	return AppendJSONEscaped(make([]byte, 0, len(src)+len(src)/8), src)
}

// IndexJSONEscape is the index in src of the first rune AppendJSONEscaped
// escapes, or -1.
func IndexJSONEscape(src []byte) int {
	i, _, _ := nextJSONEscape(src, 0)
	return i
}

// nextJSONEscape returns the first rune AppendJSONEscaped escapes in src
// from i on: its index, the rune and its length; the index is -1 if none.
//
// The runes in question start with 0x7f, 0xc2 (U+0080-U+009F) or 0xe2
// (U+202A-U+2069), and only there is a rune decoded. Eight bytes at a time
// are passed over while none of them is one of those: a chart's API answer
// (86 KB, JSON's ASCII with titles in many scripts) took 140 µs byte by
// byte, 6% of rendering it, and takes 25 µs so.
func nextJSONEscape(src []byte, i int) (int, rune, int) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i < len(src) {
		if i+8 <= len(src) {
			w := binary.LittleEndian.Uint64(src[i:])
			// ASCII below DEL, the common case, in one test: a byte of
			// w+ones has its high bit set when its byte in w is 0x7f
			// (a carry comes only from 0xff, itself high).
			if (w|(w+ones))&highs == 0 || !hasByte(w, 0x7f) && !hasByte(w, 0xc2) && !hasByte(w, 0xe2) {
				i += 8
				continue
			}
		}
		for end := min(i+8, len(src)); i < end; i++ {
			if c := src[i]; c != 0x7f && c != 0xc2 && c != 0xe2 {
				continue
			}
			r, n := utf8.DecodeRune(src[i:])
			if TerminalControl(r) {
				return i, r, n
			}
			i += n - 1
		}
	}
	return -1, 0, 0
}

// hasByte reports whether one of w's bytes is b. (x-ones)&^x&highs is not
// zero exactly when a byte of x is zero: its borrow sets the high bit of a
// byte that had none.
func hasByte(w uint64, b byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := w ^ (ones * uint64(b))
	return (x-ones)&^x&highs != 0
}
