package web

import (
	"html/template"
	"strconv"
	"strings"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// A chart page's 200 entries are made here, not by a range in the template.
// Each action of html/template is a reflective call of text/template's
// executor, and each escaper it inserts another: an entry with a thumbnail
// took eleven, so the loop was about half of a past chart page's CPU, the
// page every visitor of an old chart asks for uncached. chartRowsHTML writes
// the entries with html/template's own escaping, context by context, as the
// template below would have made them, byte for byte:
//
//	{{range .}}<li>
//	{{.Head}}
//	{{if .Thumb}}<img class="thumb" src="{{.Thumb}}" alt="Thumbnail of {{.Title}}" width="120" height="68" loading="lazy">{{else}}<span class="thumb hide-narrow" aria-hidden="true"></span>{{end}}
//	<span><a class="title" href="/videos/{{.VideoID}}"><bdi>{{.Title}}</bdi></a><br><span class="meta"><bdi>{{.Channel}}</bdi> · {{.Views}}</span></span>
//	</li>
//	{{end}}
//
// TestChartRowsMatchTheTemplate and FuzzChartRowsMatchTheTemplate execute
// that template with html/template and compare, so the escaping cannot
// drift from html/template's: text and quoted attributes get its HTML
// escaper (htmlescaper, attrescaper), the video's path its URL normalizer,
// and the thumbnail's URL its filter (only http, https, mailto or a
// relative URL; "#ZgotmplZ" otherwise) and normalizer.
//
// The title and the channel's title are YouTube's text, which can hold
// bidirectional controls: an unclosed U+202E (right-to-left override)
// would reverse what follows it on the line, the view count after a
// channel's title say. Each is in a <bdi> of its own, which isolates it
// both ways: nothing it holds reaches past its end, and its direction is
// its own first strong character's. The alt text needs none: it ends with
// the title, and an attribute's text is shown on its own.

// chartRow is one entry of a chart page with its text already made.
type chartRow struct {
	Head    template.HTML // the rank and the movement mark (rowHead)
	Thumb   string        // the thumbnail's URL; "" unless YouTube's (view.Thumbnail)
	VideoID string
	Title   string
	Channel string // the channel's title
	Views   string // viewsText
}

func chartRows(es []store.ChartEntry) []chartRow {
	rows := make([]chartRow, len(es))
	for i, e := range es {
		r := chartRow{Head: rowHead(e), VideoID: e.VideoID, Title: e.Title, Channel: e.ChannelTitle, Views: viewsText(e.Views)}
		if t := view.Thumbnail(e.ThumbnailURL); t != nil {
			r.Thumb = *t
		}
		rows[i] = r
	}
	return rows
}

// chartRowsHTML is the markup of rows, escaped as html/template escapes the
// template above.
func chartRowsHTML(rows []chartRow) template.HTML {
	var b strings.Builder
	b.Grow(len(rows) * 600)
	for _, r := range rows {
		b.WriteString("<li>\n")
		b.WriteString(string(r.Head))
		b.WriteString("\n")
		if r.Thumb != "" {
			b.WriteString(`<img class="thumb" src="`)
			thumb := r.Thumb
			if !safeURL(thumb) {
				thumb = "#ZgotmplZ"
			}
			escapeHTML(&b, normalizeURL(thumb))
			b.WriteString(`" alt="Thumbnail of `)
			escapeHTML(&b, r.Title)
			b.WriteString(`" width="120" height="68" loading="lazy">`)
		} else {
			b.WriteString(`<span class="thumb hide-narrow" aria-hidden="true"></span>`)
		}
		b.WriteString("\n<span><a class=\"title\" href=\"/videos/")
		escapeHTML(&b, normalizeURL(r.VideoID))
		b.WriteString(`"><bdi>`)
		escapeHTML(&b, r.Title)
		b.WriteString(`</bdi></a><br><span class="meta"><bdi>`)
		escapeHTML(&b, r.Channel)
		b.WriteString(`</bdi> · `)
		escapeHTML(&b, r.Views)
		b.WriteString("</span></span>\n</li>\n")
	}
	return template.HTML(b.String())
}

// htmlEscapes is html/template's replacement table for text and quoted
// attribute values (htmlReplacementTable): NUL becomes U+FFFD, and the five
// characters that could end an attribute or start markup, plus '+', become
// references. Every other byte, including any of a multi-byte UTF-8
// sequence, passes unchanged, as html/template passes them.
var htmlEscapes = [...]string{
	0:    "\uFFFD",
	'"':  "&#34;",
	'&':  "&amp;",
	'\'': "&#39;",
	'+':  "&#43;",
	'<':  "&lt;",
	'>':  "&gt;",
}

// escapeHTML writes s as html/template's htmlescaper and attrescaper write
// a string.
func escapeHTML(b *strings.Builder, s string) {
	written := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if int(c) >= len(htmlEscapes) || htmlEscapes[c] == "" {
			continue
		}
		b.WriteString(s[written:i])
		b.WriteString(htmlEscapes[c])
		written = i + 1
	}
	b.WriteString(s[written:])
}

// normalizeURL is html/template's urlnormalizer: every byte but the
// unreserved and reserved characters of RFC 3986 (and a '%' that starts a
// valid escape) is percent-encoded; ' and " are, so the result cannot end
// an attribute, but '&' is not (escapeHTML does that).
func normalizeURL(s string) string {
	var b strings.Builder
	written := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			continue
		case strings.IndexByte("!#$&*+,/:;=?@[]-._~", c) >= 0:
			continue
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			continue
		}
		if written == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[written:i])
		b.WriteByte('%')
		b.WriteByte(lowerHex[c>>4])
		b.WriteByte(lowerHex[c&15])
		written = i + 1
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

const lowerHex = "0123456789abcdef"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// safeURL is html/template's urlfilter's test: a relative URL, or one whose
// scheme is http, https or mailto.
func safeURL(s string) bool {
	if scheme, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(scheme, "/") {
		return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https") || strings.EqualFold(scheme, "mailto")
	}
	return true
}

// rowHead is an entry's rank and movement mark, made of constants and two
// integers only.
func rowHead(e store.ChartEntry) template.HTML {
	rank := strconv.Itoa(e.Rank)
	head := `<span class="rank" aria-label="Rank ` + rank + `">` + rank + "</span>\n"
	switch e.Movement {
	case store.MovementUp:
		n := strconv.Itoa(e.Change)
		return template.HTML(head + `<span class="move up" aria-label="up ` + n + `">▲` + n + `</span>`)
	case store.MovementDown:
		n := strconv.Itoa(-e.Change)
		return template.HTML(head + `<span class="move down" aria-label="down ` + n + `">▼` + n + `</span>`)
	case store.MovementSame:
		return template.HTML(head + `<span class="move same" aria-label="no change">=</span>`)
	}
	return template.HTML(head + `<span class="move new" aria-label="new on the chart">NEW</span>`)
}

// viewsText is a view count as the pages show it.
func viewsText(v *int64) string {
	if v == nil {
		return "views hidden"
	}
	return humanfmt.Count(*v) + " views"
}
