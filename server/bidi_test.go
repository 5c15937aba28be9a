package server_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/ytrend/ytrend/server"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// TestPagesIsolateYouTubeText: a title, a channel's title or a
// description from YouTube can hold an unclosed U+202E (right-to-left
// override), which reverses whatever follows it on its line: a channel
// "evil\u202Eabc" showed its view count, and the rest of the line, reversed.
// Every such text on the chart, search and video pages is the only content
// of an element that isolates it (<bdi>, or dir="auto" on an element of its
// own), and that element holds nothing else: it closes before the next
// content. The <title>, plain text where no markup isolates, shows the
// title without its bidirectional controls.
func TestPagesIsolateYouTubeText(t *testing.T) {
	const (
		channel = "evil\u202Eabc"
		title   = "Title \u202Eevil \u2067open"
		desc    = "about \u202Eevil words"
	)
	db, _ := archivetest.Open(t)
	views := int64(1234567)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	archivetest.SaveChart(t, db, "US", at, 1,
		store.Video{ID: "bidi0000001", Title: title, ChannelID: "UCevil", ChannelTitle: channel, CategoryID: "10",
			PublishedAt: at.Add(-time.Hour), Views: &views, Description: desc,
			ThumbnailURL: "https://i.ytimg.com/vi/bidi0000001/mqdefault.jpg"},
		store.Video{ID: "plain000002", Title: "Plain", ChannelID: "UCplain", ChannelTitle: "Plain channel", CategoryID: "10",
			PublishedAt: at.Add(-time.Hour), Views: &views})
	s, err := server.New(server.Config{NoCache: true}, server.Deps{Archive: db})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	for _, tc := range []struct {
		path     string
		isolated []string // the texts, each alone in its isolating element (the snippet's <mark>s aside)
		title    string   // the <title>
	}{
		{"/charts/US", []string{title, channel}, "United States trending chart · ytrend"},
		{"/search?q=" + url.QueryEscape("evil"), []string{title, channel, desc}, "Search: evil · ytrend"},
		// The searched words are the visitor's, and a link can carry them.
		{"/search?q=" + url.QueryEscape("evil\u202E"), []string{"evil\u202E", title, channel, desc}, "Search: evil · ytrend"},
		{"/videos/bidi0000001", []string{title, channel, desc}, "Title evil open · ytrend"},
	} {
		res, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", tc.path, res.StatusCode, err)
		}
		found := map[string]int{}
		for n := range doc.Descendants() {
			switch {
			case n.Type == html.ElementNode && n.Data == "title" && n.Parent.Data == "head":
				if got := textOf(n); got != tc.title {
					t.Errorf("GET %s: <title> %q, want %q", tc.path, got, tc.title)
				}
			case n.Type == html.TextNode && strings.ContainsAny(n.Data, "\u202E\u2067") && n.Parent.Data != "title":
				// Each text with a control, alone in the nearest
				// element that isolates: the isolate closes before the
				// content after it (the views, the next field).
				iso := isolating(n)
				if iso == nil {
					t.Errorf("GET %s: %q is in no <bdi> or dir=auto element (in <%s>)", tc.path, n.Data, n.Parent.Data)
					continue
				}
				found[textOf(iso)]++
			}
		}
		for _, want := range tc.isolated {
			if found[want] == 0 {
				t.Errorf("GET %s: no isolating element holds exactly %q; isolated: %q", tc.path, want, slices.Collect(maps.Keys(found)))
			}
		}
		for got := range found {
			if !slices.Contains(tc.isolated, got) {
				t.Errorf("GET %s: a control is isolated with more than its own text: %q", tc.path, got)
			}
		}
	}
}

// isolating is n's nearest element ancestor that isolates its content's
// direction: a <bdi>, or an element with dir="auto".
func isolating(n *html.Node) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type != html.ElementNode {
			continue
		}
		if p.Data == "bdi" {
			return p
		}
		for _, a := range p.Attr {
			if a.Key == "dir" && a.Val == "auto" {
				return p
			}
		}
	}
	return nil
}

// textOf is the text n holds, its descendants' included.
func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}
