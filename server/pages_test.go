package server_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/store"
)

func TestPages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	chart, _ := e.db.Chart(ctx, "US", time.Time{}, 0)
	top := chart.Entries[0]
	word := aWord(t, e.db)

	home := e.get(t, "/")
	body := string(home.body)
	if home.code != 200 || !strings.HasPrefix(home.header.Get("Content-Type"), "text/html") {
		t.Fatalf("home: %d %v", home.code, home.header)
	}
	// The region picker lists the 14 charted regions, US selected.
	if n := strings.Count(body, "<option value="); n != 14 || !strings.Contains(body, `<option value="US" selected>`) {
		t.Fatalf("home: %d region options", n)
	}
	// 200 entries with thumbnails (alt text), movement and links.
	if n := strings.Count(body, `<img class="thumb" src="https://i.ytimg.com/vi/`); n != 200 {
		t.Fatalf("home: %d thumbnails, want 200", n)
	}
	if !strings.Contains(body, `alt="Thumbnail of `) || !strings.Contains(body, `href="/videos/`+top.VideoID+`"`) {
		t.Fatal("home: no alt text or video link")
	}
	moves := map[store.Movement]int{}
	for _, en := range chart.Entries {
		moves[en.Movement]++
	}
	if got := strings.Count(body, `class="move new"`); got != moves[store.MovementNew] {
		t.Fatalf("home: %d NEW marks, the chart has %d", got, moves[store.MovementNew])
	}
	if got := strings.Count(body, `class="move up"`) + strings.Count(body, `class="move down"`) + strings.Count(body, `class="move same"`); got != 200-moves[store.MovementNew] {
		t.Fatalf("home: %d movement marks of re-seen videos, the chart has %d", got, 200-moves[store.MovementNew])
	}
	if strings.Contains(body, "<script") {
		t.Fatal("home: a script")
	}

	// The permalink names the chart's own fetch time, so it gives this chart.
	m := regexp.MustCompile(`href="(/charts/US\?at=[^"]+)">Permalink`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("home: no permalink")
	}
	perma := e.get(t, strings.ReplaceAll(m[1], "&#43;", "+"))
	fetched := "Fetched " + chart.FetchedAt.UTC().Format("2006-01-02 15:04 UTC")
	if perma.code != 200 || !strings.Contains(string(perma.body), fetched) || strings.Count(string(perma.body), `class="move new"`) != moves[store.MovementNew] {
		t.Fatalf("permalink %s: %d, not the same chart", m[1], perma.code)
	}

	gb := e.get(t, "/?region=GB")
	if gb.code != 200 || !strings.Contains(string(gb.body), `<option value="GB" selected>`) {
		t.Fatalf("home?region=GB: %d", gb.code)
	}

	// Search: highlighted snippets, filters kept in the form.
	s := e.get(t, "/search?q="+word+"&region=US&sort=views")
	sb := string(s.body)
	if s.code != 200 || !strings.Contains(strings.ToLower(sb), "<mark>"+strings.ToLower(word)+"</mark>") {
		t.Fatalf("search: %d, no highlighted %q", s.code, word)
	}
	if !strings.Contains(sb, `<option value="views" selected>`) || !strings.Contains(sb, `<option value="US" selected>`) {
		t.Fatal("search: the filters are not kept")
	}
	if e := e.get(t, "/search"); e.code != 200 || strings.Contains(string(e.body), "No matches") {
		t.Fatalf("blank search page: %d", e.code)
	}

	// A past chart.
	at := chart.PreviousFetchedAt.UTC().Format("2006-01-02T15:04:05Z")
	past := e.get(t, "/charts/US?at="+at)
	if past.code != 200 || !strings.Contains(string(past.body), "as of "+at) {
		t.Fatalf("past chart: %d", past.code)
	}

	// A video: the SVG plots, inverted rank axis with #1 at the top.
	v := e.get(t, "/videos/"+top.VideoID)
	vb := string(v.body)
	if v.code != 200 || !strings.Contains(vb, `<svg class="plot" id="rank-plot"`) || !strings.Contains(vb, `<svg class="plot" id="views-plot"`) {
		t.Fatalf("video: %d, no plots", v.code)
	}
	if !strings.Contains(vb, `<title id="rank-plot-title">Rank over time per region`) {
		t.Fatal("video: the plot has no title for screen readers")
	}
	// The first y label is #1, drawn at the top of the plot area (y=16+4).
	if !regexp.MustCompile(`<text x="50" y="20.0" text-anchor="end">#1</text>`).MatchString(vb) {
		t.Fatalf("video: #1 is not at the top of the rank axis:\n%s", vb[strings.Index(vb, `id="rank-plot"`):][:800])
	}

	if r := e.get(t, "/runs"); r.code != 200 || strings.Count(string(r.body), "<tr><td>") != 20 {
		t.Fatalf("runs: %d, %d rows", r.code, strings.Count(string(r.body), "<tr><td>"))
	}
	q := e.get(t, "/quota")
	if q.code != 200 || strings.Count(string(q.body), "<meter ") != 2 || !strings.Contains(string(q.body), `<label for="meter-0">`) {
		t.Fatalf("quota: %d\n%s", q.code, q.body)
	}
	for _, p := range []string{"/", "/search?q=" + word, "/videos/" + top.VideoID, "/runs", "/quota", "/charts/GB"} {
		r := e.get(t, p)
		if !strings.Contains(string(r.body), `<meta name="viewport" content="width=device-width, initial-scale=1">`) {
			t.Errorf("%s: no viewport", p)
		}
		if r.code != http.StatusOK {
			t.Errorf("%s: %d", p, r.code)
		}
	}
}
