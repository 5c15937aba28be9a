package web

import (
	"html/template"
	"strconv"

	"github.com/ytrend/ytrend/internal/humanfmt"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// chartRow is one entry of a chart page with its text already made: the
// template's loop runs 200 times a page, and every function it calls there
// (and every value that is not a string, which the escapers format with
// fmt) costs a reflective call. The escaping stays html/template's: each
// field is plain text that the template escapes for where it is used,
// except Move, which holds no text from the archive.
type chartRow struct {
	Rank         string
	Move         template.HTML // the movement mark (movementHTML)
	Thumb        string        // the thumbnail's URL; "" unless YouTube's (view.Thumbnail)
	VideoID      string
	Title        string
	ChannelTitle string
	Views        string // viewsText
}

func chartRows(es []store.ChartEntry) []chartRow {
	rows := make([]chartRow, len(es))
	for i, e := range es {
		r := chartRow{Rank: strconv.Itoa(e.Rank), Move: movementHTML(e), VideoID: e.VideoID, Title: e.Title,
			ChannelTitle: e.ChannelTitle, Views: viewsText(e.Views)}
		if t := view.Thumbnail(e.ThumbnailURL); t != nil {
			r.Thumb = *t
		}
		rows[i] = r
	}
	return rows
}

// movementHTML is an entry's movement mark: a class, a label and a short
// text made of constants and the rank change only.
func movementHTML(e store.ChartEntry) template.HTML {
	switch e.Movement {
	case store.MovementUp:
		n := strconv.Itoa(e.Change)
		return template.HTML(`<span class="move up" aria-label="up ` + n + `">▲` + n + `</span>`)
	case store.MovementDown:
		n := strconv.Itoa(-e.Change)
		return template.HTML(`<span class="move down" aria-label="down ` + n + `">▼` + n + `</span>`)
	case store.MovementSame:
		return `<span class="move same" aria-label="no change">=</span>`
	}
	return `<span class="move new" aria-label="new on the chart">NEW</span>`
}

// viewsText is a view count as the pages show it.
func viewsText(v *int64) string {
	if v == nil {
		return "views hidden"
	}
	return humanfmt.Count(*v) + " views"
}
