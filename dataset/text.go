package dataset

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxChannelTitleChars is YouTube's limit on a channel's name, in
// characters: the API has never returned a longer one. A file's longer name
// is cut to it, as a title is (store.MaxTitleChars).
const maxChannelTitleChars = 100

// cutChars cuts s to n characters; cut says it did.
func cutChars(s string, n int) (out string, cut bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	k := 0
	for i := range s {
		if k == n {
			return s[:i], true
		}
		k++
	}
	return s, false
}

// dropControls removes the control characters YouTube never sends in a
// title, a channel's name or a description: C0 (but tab and line feed; a
// CR LF line end, or a CR alone, becomes LF), DEL and C1 (U+0080-U+009F, among them U+009B,
// a terminal's CSI). A file's ESC, BEL, BS or CSI would otherwise reach a
// terminal that prints the archive: clear it, retitle it, write its
// clipboard (OSC 52). dropped says it removed any.
func dropControls(s string) (out string, dropped bool) {
	i := strings.IndexFunc(s, isDroppedControl)
	if i < 0 {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	rest := s[i:]
	for j, r := range rest {
		switch {
		case r == '\r' && !strings.HasPrefix(rest[j+1:], "\n"):
			b.WriteByte('\n') // a line end of its own (old Macs wrote them)
		case !isDroppedControl(r):
			b.WriteRune(r)
		}
	}
	return b.String(), true
}

func isDroppedControl(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != '\n'
}
