package view

import (
	"html"
	"strings"
)

// Snippet markers: private-use characters a search puts around each match
// (store.Query's MarkOpen and MarkClose), which SnippetHTML turns into
// <mark> after escaping the text around them. A stray one in a title can
// only open or close a highlight, never inject markup.
const (
	SnippetOpen  = "\uE000"
	SnippetClose = "\uE001"
)

// SnippetHTML escapes a snippet marked with SnippetOpen and SnippetClose and
// turns the markers into <mark>: HTML text, the same for the pages and the
// API, so a consumer that sets it as innerHTML runs nothing a title holds.
func SnippetHTML(s string) string {
	var b strings.Builder
	open := false
	for len(s) > 0 {
		i := strings.IndexAny(s, SnippetOpen+SnippetClose)
		if i < 0 {
			b.WriteString(html.EscapeString(s))
			break
		}
		b.WriteString(html.EscapeString(s[:i]))
		switch {
		case strings.HasPrefix(s[i:], SnippetOpen) && !open:
			b.WriteString("<mark>")
			open = true
		case strings.HasPrefix(s[i:], SnippetClose) && open:
			b.WriteString("</mark>")
			open = false
		}
		s = s[i+len(SnippetOpen):] // both markers are 3 bytes
	}
	if open {
		b.WriteString("</mark>")
	}
	return b.String()
}
