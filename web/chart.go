package web

import (
	"html/template"
	"strconv"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// chartRow is one entry of a chart page with its text already made: the
// template's loop runs 200 times a page, and each action in it is a
// reflective call of html/template's escapers (two or three for a URL),
// which made two thirds of a chart page's CPU; a function called there
// (and a value that is not a string, which the escapers format with fmt)
// costs more. So the loop has as few actions as the markup allows, and
// calls no function. Every text from the archive (titles, ids, the
// thumbnail's URL) is still escaped by html/template for where it stands;
// Head is markup made of constants and numbers only.
type chartRow struct {
	Head    template.HTML // the rank and the movement mark (rowHead)
	Thumb   string        // the thumbnail's URL; "" unless YouTube's (view.Thumbnail)
	VideoID string
	Title   string
	Meta    string // the channel's title and the views
}

func chartRows(es []store.ChartEntry) []chartRow {
	rows := make([]chartRow, len(es))
	for i, e := range es {
		r := chartRow{Head: rowHead(e), VideoID: e.VideoID, Title: e.Title, Meta: e.ChannelTitle + " · " + viewsText(e.Views)}
		if t := view.Thumbnail(e.ThumbnailURL); t != nil {
			r.Thumb = *t
		}
		rows[i] = r
	}
	return rows
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
