package store

import (
	"database/sql"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ytrend/ytrend/search"
)

// videoRow is a Video prepared for the database: normalized text, hashes
// that tell a re-seen video with the same text from a changed one, and —
// computed only for videos whose text is new to the archive — the derived
// search columns.
type videoRow struct {
	v        Video
	tags     string // one per line
	textHash int64
	metaHash int64
	rank     int // chart rank; 0 on search pages

	derived bool
	grams   sql.NullString
	docLen  int
	terms   search.Terms
}

// clean makes text storable: valid UTF-8, no NUL.
func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

func prepareVideo(v Video, rank int) videoRow {
	v.ID = strings.TrimSpace(clean(v.ID))
	v.Title, v.Description = clean(v.Title), clean(v.Description)
	v.ChannelID, v.ChannelTitle = clean(v.ChannelID), clean(v.ChannelTitle)
	v.CategoryID, v.DefaultLanguage, v.ThumbnailURL = clean(v.CategoryID), clean(v.DefaultLanguage), clean(v.ThumbnailURL)
	// Tags are stored one per line: a tag cannot hold a line break.
	var tags []string
	for _, t := range v.Tags {
		t = strings.TrimSpace(strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == '\t' {
				return ' '
			}
			return r
		}, clean(t)))
		if t != "" {
			tags = append(tags, t)
		}
	}
	v.Tags = tags
	r := videoRow{v: v, tags: strings.Join(tags, "\n"), rank: rank}
	// FNV-1a over the fields, each followed by a NUL (which clean removed
	// from the fields themselves).
	h := uint64(14695981039346656037)
	field := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h *= 1099511628211 // the NUL separator: h ^= 0, then multiply
	}
	// The channel id is indexed too, as the channel facet.
	for _, s := range []string{v.Title, r.tags, v.ChannelTitle, v.Description, v.ChannelID} {
		field(s)
	}
	r.textHash = int64(h)
	for _, s := range []string{v.CategoryID, strconv.FormatInt(v.PublishedAt.Unix(), 10),
		strconv.FormatInt(int64(v.Duration/time.Second), 10), v.DefaultLanguage, v.ThumbnailURL} {
		field(s)
	}
	r.metaHash = int64(h)
	return r
}

// derive computes the columns search needs from the text: the CJK/Thai
// bigrams of every column, the term blob and the document length.
func (r *videoRow) derive() {
	if r.derived {
		return
	}
	r.derived = true
	g := search.GramsOf(r.v.Title, r.tags, r.v.ChannelTitle, r.v.Description)
	if s := g.Indexed(); s != "" {
		r.grams = sql.NullString{String: s, Valid: true}
	}
	r.terms, r.docLen = search.BuildTerms(r.v.Title, r.tags, r.v.ChannelTitle, r.v.Description, g)
}

type existingVideo struct {
	id       int64
	textHash int64
	metaHash int64
	docLen   int64
	lastSeen int64
	bestRank int64 // 0: never charted
	inRegion bool
}
