package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTermCell: a cell is termLine cut to its width, and an escape is
// shown whole or not at all, wherever the cut falls.
func TestTermCell(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"short", "short"},
		{"  two\twords\n", "two words"},
		{"abcdefghij", "abcdefghij"},
		{"abcdefghijk", "abcdefghi…"},
		// The escape of ESC (4 runes) would end past the ninth rune.
		{"abcdefg\x1bhij", "abcdefg…"},
		{"abcde\x1bhijk", "abcde\\x1b…"},
		{"abcdefgh\u202ex", "abcdefgh…"},
		{"abc\xffdefghijk", "abc\\xffde…"},
		{"abcdefgh  ij", "abcdefgh…"},
		{"a b c d e f g", "a b c d e…"},
	} {
		got := termCell(c.in, 10)
		if got != c.want {
			t.Errorf("termCell(%q, 10) = %q, want %q", c.in, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > 10 {
			t.Errorf("termCell(%q, 10) = %q: %d runes", c.in, got, n)
		}
		if line := termLine(c.in); utf8.RuneCountInString(line) > 10 && !strings.HasPrefix(line, strings.TrimSuffix(got, "…")) {
			t.Errorf("termCell(%q, 10) = %q is not a start of termLine's %q", c.in, got, line)
		}
	}
}
