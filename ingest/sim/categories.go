package sim

import (
	"log/slog"
	"slices"

	"github.com/ytrend/ytrend/regions"
)

// youtubeChannel is the channel videoCategories.list names as each
// category's owner: YouTube's own.
const youtubeChannel = "UCBR8-60-B28hp2BmDPdntcQ"

// categories are the video categories as videoCategories.list answers for
// regionCode=US with no hl, in its order (a response recorded in 2023-24):
// the assignable ones a video can carry, then the "YouTube Movies" genres
// that only charts and searches use. The simulator answers every region
// with this list, in English whatever hl asks.
var categories = []struct {
	id, title  string
	assignable bool
}{
	{"1", "Film & Animation", true},
	{"2", "Autos & Vehicles", true},
	{"10", "Music", true},
	{"15", "Pets & Animals", true},
	{"17", "Sports", true},
	{"18", "Short Movies", false},
	{"19", "Travel & Events", true},
	{"20", "Gaming", true},
	{"21", "Videoblogging", false},
	{"22", "People & Blogs", true},
	{"23", "Comedy", true},
	{"24", "Entertainment", true},
	{"25", "News & Politics", true},
	{"26", "Howto & Style", true},
	{"27", "Education", true},
	{"28", "Science & Technology", true},
	{"29", "Nonprofits & Activism", true},
	{"30", "Movies", false},
	{"31", "Anime/Animation", false},
	{"32", "Action/Adventure", false},
	{"33", "Classics", false},
	{"34", "Comedy", false},
	{"35", "Documentary", false},
	{"36", "Drama", false},
	{"37", "Family", false},
	{"38", "Foreign", false},
	{"39", "Horror", false},
	{"40", "Sci-Fi/Fantasy", false},
	{"41", "Thriller", false},
	{"42", "Shorts", false},
	{"43", "Shows", false},
	{"44", "Trailers", false},
}

// A real answer has no pageInfo and no page tokens: the list is short.
type videoCategoryListJSON struct {
	Kind  string              `json:"kind"`
	Etag  string              `json:"etag"`
	Items []videoCategoryJSON `json:"items"`
}

func (r *videoCategoryListJSON) etag() string { return r.Etag }

type videoCategoryJSON struct {
	Kind    string                    `json:"kind"`
	Etag    string                    `json:"etag"`
	ID      string                    `json:"id"`
	Snippet *videoCategorySnippetJSON `json:"snippet,omitempty"`
}

type videoCategorySnippetJSON struct {
	Title      string `json:"title"`
	Assignable bool   `json:"assignable"`
	ChannelID  string `json:"channelId"`
}

// videoCategoriesList answers videoCategories.list: part=snippet (the only
// part the resource has), and exactly one of regionCode or id (comma
// separated; unknown ids are left out, as videos.list leaves out unknown
// videos).
func (s *Server) videoCategoriesList(req *apiRequest) (response, *apiError) {
	if _, err := parseParts(req.q, []string{"snippet"}); err != nil {
		return nil, err
	}
	var filters []string
	for _, f := range []string{"id", "regionCode"} {
		if req.q.Has(f) {
			filters = append(filters, f)
		}
	}
	switch len(filters) {
	case 0:
		return nil, errNoFilterOf("id", "regionCode")
	case 2:
		return nil, errIncompatible(filters...)
	}
	var ids []string
	region := req.q.Get("regionCode")
	if filters[0] == "regionCode" {
		if !regions.Valid(regions.Code(region)) {
			return nil, errInvalidRegion("videoCategories")
		}
	} else {
		ids = listParam(req.q, "id")
	}
	resp := &videoCategoryListJSON{Kind: "youtube#videoCategoryListResponse", Items: []videoCategoryJSON{}}
	etags := []string{}
	for _, c := range categories {
		if ids != nil && !slices.Contains(ids, c.id) {
			continue
		}
		item := videoCategoryJSON{Kind: "youtube#videoCategory", Etag: etagOf("videoCategory", c.id, c.title), ID: c.id,
			Snippet: &videoCategorySnippetJSON{Title: c.title, Assignable: c.assignable, ChannelID: youtubeChannel}}
		etags = append(etags, item.Etag)
		resp.Items = append(resp.Items, item)
	}
	resp.Etag = etagOf(etags...)
	req.log = append(req.log, slog.String("region", region), slog.Int("items", len(resp.Items)))
	return resp, nil
}
