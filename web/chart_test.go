package web

import (
	"bytes"
	"html/template"
	"testing"
	"unicode/utf8"
)

// rowTemplate is the chart's entries as the page's template made them
// before chartRowsHTML: the oracle chartRowsHTML's escaping is held to.
var rowTemplate = template.Must(template.New("rows").Parse(`{{range .}}<li>
{{.Head}}
{{if .Thumb}}<img class="thumb" src="{{.Thumb}}" alt="Thumbnail of {{.Title}}" width="120" height="68" loading="lazy">{{else}}<span class="thumb hide-narrow" aria-hidden="true"></span>{{end}}
<span><a class="title" href="/videos/{{.VideoID}}"><bdi>{{.Title}}</bdi></a><br><span class="meta"><bdi>{{.Channel}}</bdi> · {{.Views}}</span></span>
</li>
{{end}}`))

func templateRows(t testing.TB, rows []chartRow) string {
	var b bytes.Buffer
	if err := rowTemplate.Execute(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hostile are texts an archive can hold (an import takes titles, ids and
// URLs as they come): markup, quotes, entities, URL escapes valid and not,
// other schemes, NUL, invalid UTF-8, the noncharacters html/template
// treats specially in unquoted attributes, and bidirectional controls
// (an unclosed right-to-left override, isolates, embeddings, marks).
var hostile = []string{
	"", "plain", `<script>alert(1)</script>`, `"onload="x`, `'; x='`, "a&b&amp;c", "1+1=2",
	"%41%zz%4", "%", "%%", "%4", "a b\tc\nd", "dQw4w9WgXcQ", "-_.~!#$&*+,/:;=?@[]", "(x)",
	"javascript:alert(1)", "JavaScript:x", "HTTPS://i.ytimg.com/vi/x/default.jpg", "mailto:a@b", "data:text/html,x",
	"/relative:colon", "//host/path", "vbscript:x", "\x00nul\x00", "\xff\xfe invalid", "日本語のタイトル ♥",
	"\ufdd0\uffff", "\u2028\u2029", "`backtick`", "&#34;", "a\\b",
	"evil\u202Eabc", "\u202B\u202Aemb\u202C", "\u2067rli\u2069\u2069pdi \u2066", "\u200F\u061Cmark\u200E", "עברית 123",
}

func TestChartRowsMatchTheTemplate(t *testing.T) {
	var rows []chartRow
	for i, s := range hostile {
		h := hostile[(i+3)%len(hostile)]
		rows = append(rows,
			chartRow{Head: template.HTML(`<span class="rank">1</span>`), Thumb: s, VideoID: h, Title: s, Channel: h, Views: s},
			chartRow{Head: "", Thumb: "", VideoID: s, Title: h, Channel: s, Views: h},
			chartRow{Thumb: "https://i.ytimg.com/vi/" + s + "/mqdefault.jpg", VideoID: s, Title: s + h, Channel: h, Views: "1.2M views"})
	}
	want := templateRows(t, rows)
	if got := string(chartRowsHTML(rows)); got != want {
		t.Fatalf("chartRowsHTML differs from html/template:\n got %q\nwant %q", got, want)
	}
	if got := string(chartRowsHTML(nil)); got != templateRows(t, nil) {
		t.Fatalf("no rows: got %q", got)
	}
}

// FuzzChartRowsMatchTheTemplate holds chartRowsHTML to html/template's
// output for any texts. Its seeds run with every go test.
func FuzzChartRowsMatchTheTemplate(f *testing.F) {
	for i, s := range hostile {
		f.Add(s, hostile[(i+1)%len(hostile)], hostile[(i+2)%len(hostile)])
	}
	f.Fuzz(func(t *testing.T, thumb, id, title string) {
		rows := []chartRow{{Head: "<b>1</b>", Thumb: thumb, VideoID: id, Title: title, Channel: thumb + id, Views: id}}
		want := templateRows(t, rows)
		if got := string(chartRowsHTML(rows)); got != want {
			t.Fatalf("thumb %q id %q title %q (valid UTF-8: %v):\n got %q\nwant %q",
				thumb, id, title, utf8.ValidString(title), got, want)
		}
	})
}
