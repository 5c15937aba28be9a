package sim

import (
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// chartCategories are the videoCategoryId values that have a mostPopular
// chart: "0" (all) and the assignable categories. Others (29, the
// non-assignable 18, 21, 30-44, or nonsense) answer videoChartNotFound.
var chartCategories = map[string]bool{
	"0": true, "1": true, "2": true, "10": true, "15": true, "17": true, "19": true, "20": true,
	"22": true, "23": true, "24": true, "25": true, "26": true, "27": true, "28": true,
}

// videoParts are the parts of a video resource the simulator models. The real
// API knows more (status, player, topicDetails, ...); asking for those here
// is answered unknownPart so a client never silently gets less than it asked.
var videoParts = []string{"id", "snippet", "contentDetails", "statistics"}

type pageInfoJSON struct {
	TotalResults   int `json:"totalResults"`
	ResultsPerPage int `json:"resultsPerPage"`
}

type videoListJSON struct {
	Kind          string       `json:"kind"`
	Etag          string       `json:"etag"`
	Items         []videoJSON  `json:"items"`
	NextPageToken string       `json:"nextPageToken,omitempty"`
	PrevPageToken string       `json:"prevPageToken,omitempty"`
	PageInfo      pageInfoJSON `json:"pageInfo"`
}

func (r *videoListJSON) etag() string { return r.Etag }

type videoJSON struct {
	Kind           string              `json:"kind"`
	Etag           string              `json:"etag"`
	ID             string              `json:"id"`
	Snippet        *videoSnippetJSON   `json:"snippet,omitempty"`
	ContentDetails *contentDetailsJSON `json:"contentDetails,omitempty"`
	Statistics     *statisticsJSON     `json:"statistics,omitempty"`
}

type videoSnippetJSON struct {
	PublishedAt          string         `json:"publishedAt"`
	ChannelID            string         `json:"channelId"`
	Title                string         `json:"title"`
	Description          string         `json:"description"`
	Thumbnails           thumbnailsJSON `json:"thumbnails"`
	ChannelTitle         string         `json:"channelTitle"`
	Tags                 []string       `json:"tags,omitempty"`
	CategoryID           string         `json:"categoryId"`
	LiveBroadcastContent string         `json:"liveBroadcastContent"`
	DefaultLanguage      string         `json:"defaultLanguage,omitempty"`
	Localized            localizedJSON  `json:"localized"`
	DefaultAudioLanguage string         `json:"defaultAudioLanguage,omitempty"`
}

type localizedJSON struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

type thumbnailJSON struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

type thumbnailsJSON struct {
	Default  *thumbnailJSON `json:"default,omitempty"`
	Medium   *thumbnailJSON `json:"medium,omitempty"`
	High     *thumbnailJSON `json:"high,omitempty"`
	Standard *thumbnailJSON `json:"standard,omitempty"`
	Maxres   *thumbnailJSON `json:"maxres,omitempty"`
}

type contentDetailsJSON struct {
	Duration          string                 `json:"duration"`
	Dimension         string                 `json:"dimension"`
	Definition        string                 `json:"definition"`
	Caption           string                 `json:"caption"`
	LicensedContent   bool                   `json:"licensedContent"`
	RegionRestriction *regionRestrictionJSON `json:"regionRestriction,omitempty"`
	ContentRating     struct{}               `json:"contentRating"`
	Projection        string                 `json:"projection"`
}

type regionRestrictionJSON struct {
	Blocked []string `json:"blocked"`
}

// statisticsJSON holds counts as decimal strings; a hidden count is absent,
// never "0".
type statisticsJSON struct {
	ViewCount     string `json:"viewCount"`
	LikeCount     string `json:"likeCount,omitempty"`
	FavoriteCount string `json:"favoriteCount"`
	CommentCount  string `json:"commentCount,omitempty"`
}

func (s *Server) videosList(req *apiRequest) (response, *apiError) {
	q := req.q
	parts, err := parseParts(q, videoParts)
	if err != nil {
		return nil, err
	}
	var filters []string
	for _, f := range []string{"chart", "id", "myRating"} {
		if len(listParam(q, f)) > 0 {
			filters = append(filters, f)
		}
	}
	switch {
	case len(filters) == 0:
		return nil, errNoFilter()
	case len(filters) > 1:
		return nil, errIncompatible(filters...)
	case filters[0] == "myRating":
		return nil, errNeedsAuth("myRating")
	case filters[0] == "id":
		return s.videosByID(req, parts)
	}

	if c := q.Get("chart"); c != "mostPopular" {
		return nil, errEnum("chart", c, []string{"chartUnspecified", "mostPopular"})
	}
	maxResults, err := intParam(q, "maxResults", 5, 1, 50)
	if err != nil {
		return nil, err
	}
	region := regions.Code(q.Get("regionCode"))
	if region == "" {
		region = "US" // the API's default chart region
	}
	if !regions.Valid(region) {
		return nil, errInvalidRegion("videos")
	}
	category := q.Get("videoCategoryId")
	if category == "" {
		category = "0"
	}
	if !chartCategories[category] {
		return nil, errChartNotFound()
	}

	scope := "videos\x00" + string(region) + "\x00" + category
	tok := pageToken{epoch: s.world.epoch(req.now)}
	if raw := q.Get("pageToken"); raw != "" {
		t, terr := s.decodeToken(scope, raw)
		if terr != nil || t.epoch > tok.epoch {
			return nil, errInvalidPageToken()
		}
		tok = t
	}
	chart := s.world.chart(region, category, tok.epoch)
	lo := min(tok.offset, len(chart))
	hi := min(lo+maxResults, len(chart))

	resp := &videoListJSON{
		Kind:     "youtube#videoListResponse",
		Items:    make([]videoJSON, 0, hi-lo),
		PageInfo: pageInfoJSON{TotalResults: len(chart), ResultsPerPage: maxResults},
	}
	statsAt := req.now.Truncate(time.Minute)
	for _, v := range chart[lo:hi] {
		resp.Items = append(resp.Items, videoItem(v, parts, statsAt))
	}
	if hi < len(chart) {
		resp.NextPageToken = s.encodeToken(scope, pageToken{epoch: tok.epoch, offset: hi})
	}
	if lo > 0 {
		resp.PrevPageToken = s.encodeToken(scope, pageToken{epoch: tok.epoch, offset: max(0, lo-maxResults)})
	}
	resp.Etag = listEtag(resp.Items, resp.NextPageToken, resp.PrevPageToken)
	req.log = append(req.log,
		slog.String("region", string(region)), slog.Int("page", lo/maxResults+1), slog.Int("items", len(resp.Items)), slog.Int64("epoch", tok.epoch))
	return resp, nil
}

// videosByID answers videos.list?id=a,b,c: the known videos in the order
// asked, unknown IDs silently left out. maxResults and pageToken do not
// apply to id.
func (s *Server) videosByID(req *apiRequest, parts map[string]bool) (response, *apiError) {
	ids := listParam(req.q, "id")
	if len(ids) > 50 {
		return nil, errTooManyIDs()
	}
	resp := &videoListJSON{Kind: "youtube#videoListResponse", Items: []videoJSON{}}
	statsAt := req.now.Truncate(time.Minute)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if v := s.world.lookup(id, req.now); v != nil {
			resp.Items = append(resp.Items, videoItem(v, parts, statsAt))
		}
	}
	resp.PageInfo = pageInfoJSON{TotalResults: len(resp.Items), ResultsPerPage: len(resp.Items)}
	resp.Etag = listEtag(resp.Items, "", "")
	req.log = append(req.log, slog.Int("ids", len(ids)), slog.Int("items", len(resp.Items)))
	return resp, nil
}

func listEtag(items []videoJSON, next, prev string) string {
	parts := make([]string, 0, len(items)+2)
	for _, it := range items {
		parts = append(parts, it.Etag)
	}
	return etagOf(append(parts, next, prev)...)
}

// videoItem renders v with the requested parts, its statistics as of at.
func videoItem(v *video, parts map[string]bool, at time.Time) videoJSON {
	item := videoJSON{Kind: "youtube#video", ID: v.id}
	etagParts := []string{v.id}
	if parts["snippet"] {
		sn := &videoSnippetJSON{
			PublishedAt:          v.published.Format(time.RFC3339),
			ChannelID:            v.ch.id,
			Title:                v.title,
			Description:          v.description,
			Thumbnails:           thumbnails(v, v.thumbs),
			ChannelTitle:         v.ch.title,
			Tags:                 v.tags,
			CategoryID:           v.category,
			LiveBroadcastContent: "none",
			DefaultLanguage:      v.defaultLanguage,
			Localized:            localizedJSON{Title: v.title, Description: v.description},
			DefaultAudioLanguage: v.audioLanguage,
		}
		if v.live {
			sn.LiveBroadcastContent = "live"
		}
		item.Snippet = sn
		etagParts = append(etagParts, "snippet")
	}
	if parts["contentDetails"] {
		cd := &contentDetailsJSON{
			Duration:        isoDuration(v.seconds),
			Dimension:       "2d",
			Definition:      v.definition,
			Caption:         strconv.FormatBool(v.caption),
			LicensedContent: v.licensed,
			Projection:      "rectangular",
		}
		if len(v.blocked) > 0 {
			cd.RegionRestriction = &regionRestrictionJSON{Blocked: v.blocked}
		}
		item.ContentDetails = cd
		etagParts = append(etagParts, "contentDetails")
	}
	if parts["statistics"] {
		views, likes, comments := v.stats(at)
		st := &statisticsJSON{ViewCount: strconv.FormatUint(views, 10), FavoriteCount: "0"}
		if !v.hideLikes {
			st.LikeCount = strconv.FormatUint(likes, 10)
		}
		if !v.hideComment {
			st.CommentCount = strconv.FormatUint(comments, 10)
		}
		item.Statistics = st
		etagParts = append(etagParts, st.ViewCount, st.LikeCount, st.CommentCount)
	}
	item.Etag = etagOf(etagParts...)
	return item
}

// thumbnails lists the first n of default, medium, high, standard, maxres.
func thumbnails(v *video, n int) thumbnailsJSON {
	th := func(file string, w, h int) *thumbnailJSON {
		return &thumbnailJSON{URL: "https://i.ytimg.com/vi/" + v.id + "/" + file, Width: w, Height: h}
	}
	t := thumbnailsJSON{
		Default: th("default.jpg", 120, 90),
		Medium:  th("mqdefault.jpg", 320, 180),
		High:    th("hqdefault.jpg", 480, 360),
	}
	if n >= 4 {
		t.Standard = th("sddefault.jpg", 640, 480)
	}
	if n >= 5 {
		t.Maxres = th("maxresdefault.jpg", 1280, 720)
	}
	return t
}

// parseParts reads part, given repeated (part=a&part=b) or comma-joined
// (part=a,b), as the real API accepts both.
func parseParts(q url.Values, allowed []string) (map[string]bool, *apiError) {
	ps := listParam(q, "part")
	if len(ps) == 0 {
		return nil, errRequired("part")
	}
	parts := map[string]bool{}
	for _, p := range ps {
		if !slices.Contains(allowed, p) {
			return nil, errUnknownPart(p)
		}
		parts[p] = true
	}
	return parts, nil
}

// listParam returns every value of name, each split at commas, trimmed,
// empty pieces dropped.
func listParam(q url.Values, name string) []string {
	var out []string
	for _, v := range q[name] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// intParam reads an integer parameter, def when absent, answering the
// front end's range error when it is not an integer within lo..hi.
func intParam(q url.Values, name string, def, lo, hi int) (int, *apiError) {
	raw := q.Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, errRange(name, raw, lo, hi)
	}
	return n, nil
}
