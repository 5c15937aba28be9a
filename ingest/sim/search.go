package sim

import (
	"cmp"
	"html"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// The search index is every video of the chart window (see world), so a
// search finds what could be trending now, not YouTube's whole catalogue.
// Queries match words and phrases anywhere in the title, tags, channel name
// and description; "a|b" matches either, "-a" excludes, "quoted phrases"
// match as a whole. The index holds videos only: type=channel or playlist
// alone finds nothing.

var searchOrders = []string{"date", "rating", "relevance", "title", "videoCount", "viewCount"}

// videoOnlyFilters require type=video, as the real API insists.
var videoOnlyFilters = []string{
	"eventType", "videoCaption", "videoCategoryId", "videoDefinition", "videoDimension",
	"videoDuration", "videoEmbeddable", "videoLicense", "videoSyndicated", "videoType",
}

type searchListJSON struct {
	Kind          string             `json:"kind"`
	Etag          string             `json:"etag"`
	NextPageToken string             `json:"nextPageToken,omitempty"`
	PrevPageToken string             `json:"prevPageToken,omitempty"`
	RegionCode    string             `json:"regionCode,omitempty"`
	PageInfo      pageInfoJSON       `json:"pageInfo"`
	Items         []searchResultJSON `json:"items"`
}

func (r *searchListJSON) etag() string { return r.Etag }

type searchResultJSON struct {
	Kind    string             `json:"kind"`
	Etag    string             `json:"etag"`
	ID      resourceIDJSON     `json:"id"`
	Snippet *searchSnippetJSON `json:"snippet,omitempty"`
}

type resourceIDJSON struct {
	Kind    string `json:"kind"`
	VideoID string `json:"videoId"`
}

type searchSnippetJSON struct {
	PublishedAt          string         `json:"publishedAt"`
	ChannelID            string         `json:"channelId"`
	Title                string         `json:"title"`
	Description          string         `json:"description"`
	Thumbnails           thumbnailsJSON `json:"thumbnails"`
	ChannelTitle         string         `json:"channelTitle"`
	LiveBroadcastContent string         `json:"liveBroadcastContent"`
	PublishTime          string         `json:"publishTime"`
}

// searchQuery is a parsed search.list request.
type searchQuery struct {
	terms         []queryTerm
	region        regions.Code
	order         string
	after, before time.Time
	channelID     string
	category      string
	duration      string // any, short, medium, long
	definition    string // any, high, standard
	eventType     string // live, completed, upcoming
	videos        bool   // type allows videos
}

// queryTerm is one word or phrase of q: any of alts must match (all must not,
// when negated).
type queryTerm struct {
	alts    []string
	negated bool
}

func (s *Server) searchList(req *apiRequest) (response, *apiError) {
	q := req.q
	parts, err := parseParts(q, []string{"id", "snippet"})
	if err != nil {
		return nil, err
	}
	maxResults, err := intParam(q, "maxResults", 5, 0, 50)
	if err != nil {
		return nil, err
	}
	sq := searchQuery{order: "relevance", videos: true, duration: "any", definition: "any"}
	if o := q.Get("order"); o != "" {
		i := slices.IndexFunc(searchOrders, func(s string) bool { return strings.EqualFold(s, o) })
		if i < 0 {
			return nil, errEnum("order", o, searchOrders)
		}
		sq.order = searchOrders[i]
	}
	typeIsVideo := false
	if ts := listParam(q, "type"); len(ts) > 0 {
		sq.videos = false
		for _, t := range ts {
			switch strings.ToLower(t) {
			case "video":
				sq.videos = true
			case "channel", "playlist":
			default:
				return nil, errEnum("type", t, []string{"channel", "playlist", "video"})
			}
		}
		typeIsVideo = len(ts) == 1 && sq.videos
	}
	for _, f := range videoOnlyFilters {
		if q.Get(f) != "" && !typeIsVideo {
			return nil, errSearchFilter()
		}
	}
	if r := q.Get("regionCode"); r != "" {
		if !regions.Valid(regions.Code(r)) {
			return nil, errInvalidRegion("search")
		}
		sq.region = regions.Code(r)
	}
	for name, dst := range map[string]*time.Time{"publishedAfter": &sq.after, "publishedBefore": &sq.before} {
		if v := q.Get(name); v != "" {
			t, perr := time.Parse(time.RFC3339Nano, v)
			if perr != nil {
				return nil, errDateTime(name, v)
			}
			*dst = t
		}
	}
	sq.channelID = q.Get("channelId")
	sq.category = q.Get("videoCategoryId")
	if v := q.Get("videoDuration"); v != "" {
		if !slices.Contains([]string{"any", "short", "medium", "long"}, v) {
			return nil, errEnum("videoDuration", v, []string{"any", "long", "medium", "short"})
		}
		sq.duration = v
	}
	if v := q.Get("videoDefinition"); v != "" {
		if !slices.Contains([]string{"any", "high", "standard"}, v) {
			return nil, errEnum("videoDefinition", v, []string{"any", "high", "standard"})
		}
		sq.definition = v
	}
	if v := q.Get("eventType"); v != "" {
		if !slices.Contains([]string{"completed", "live", "upcoming"}, v) {
			return nil, errEnum("eventType", v, []string{"completed", "live", "upcoming"})
		}
		sq.eventType = v
	}
	sq.terms = parseQuery(q.Get("q"))

	scope := strings.Join([]string{"search", q.Get("q"), sq.order, strings.Join(listParam(q, "type"), ","),
		string(sq.region), q.Get("publishedAfter"), q.Get("publishedBefore"), sq.channelID, sq.category,
		sq.duration, sq.definition, sq.eventType}, "\x00")
	tok := pageToken{epoch: s.world.epoch(req.now)}
	if raw := q.Get("pageToken"); raw != "" {
		t, terr := s.decodeToken(scope, raw)
		if terr != nil || t.epoch > tok.epoch {
			return nil, errInvalidPageToken()
		}
		tok = t
	}

	at := s.world.epochStart(tok.epoch)
	results := s.search(sq, at, tok.epoch)
	total := len(results)
	results = results[:min(len(results), maxSearch)]
	lo := min(tok.offset, len(results))
	hi := min(lo+maxResults, len(results))

	resp := &searchListJSON{
		Kind:       "youtube#searchListResponse",
		RegionCode: string(sq.region),
		PageInfo:   pageInfoJSON{TotalResults: total, ResultsPerPage: maxResults},
		Items:      make([]searchResultJSON, 0, hi-lo),
	}
	etags := []string{}
	for _, v := range results[lo:hi] {
		item := searchResultJSON{
			Kind: "youtube#searchResult",
			Etag: etagOf("search", v.id),
			ID:   resourceIDJSON{Kind: "youtube#video", VideoID: v.id},
		}
		if parts["snippet"] {
			item.Snippet = searchSnippet(v)
		}
		etags = append(etags, item.Etag)
		resp.Items = append(resp.Items, item)
	}
	if hi < len(results) && maxResults > 0 {
		resp.NextPageToken = s.encodeToken(scope, pageToken{epoch: tok.epoch, offset: hi})
	}
	if lo > 0 && maxResults > 0 {
		resp.PrevPageToken = s.encodeToken(scope, pageToken{epoch: tok.epoch, offset: max(0, lo-maxResults)})
	}
	resp.Etag = etagOf(append(etags, resp.NextPageToken, resp.PrevPageToken)...)
	req.log = append(req.log, slog.String("q", q.Get("q")), slog.String("region", string(sq.region)),
		slog.Int("results", total), slog.Int("items", len(resp.Items)))
	return resp, nil
}

// search returns the videos matching sq at time at, in the requested order.
func (s *Server) search(sq searchQuery, at time.Time, epoch int64) []*video {
	if !sq.videos {
		return nil
	}
	type hit struct {
		v                    *video
		score, views, rating float64
	}
	var hits []hit
	for _, v := range s.world.recent(sq.region, at) {
		switch {
		case !sq.after.IsZero() && !v.published.After(sq.after),
			!sq.before.IsZero() && !v.published.Before(sq.before),
			sq.channelID != "" && v.ch.id != sq.channelID,
			sq.category != "" && v.category != sq.category,
			!matchDuration(v, sq.duration),
			sq.definition == "high" && v.definition != "hd",
			sq.definition == "standard" && v.definition != "sd",
			sq.eventType == "live" && !v.live,
			sq.eventType == "upcoming",
			sq.eventType == "completed" && v.live:
			continue
		}
		m, ok := matchScore(v, sq.terms)
		if !ok {
			continue
		}
		views, likes, _ := v.stats(at)
		h := hit{v: v, views: float64(views)}
		if !v.hideLikes && views > 0 {
			h.rating = float64(likes) / float64(views)
		}
		h.score = m * math.Log10(h.views+10) * s.world.noise(v, sq.region, epoch)
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b hit) int {
		var c int
		switch sq.order {
		case "date":
			c = b.v.published.Compare(a.v.published)
		case "rating":
			c = cmp.Compare(b.rating, a.rating)
		case "title":
			c = strings.Compare(strings.ToLower(a.v.title), strings.ToLower(b.v.title))
		case "viewCount":
			c = cmp.Compare(b.views, a.views)
		default: // relevance, videoCount
			c = cmp.Compare(b.score, a.score)
		}
		if c != 0 {
			return c
		}
		return strings.Compare(a.v.id, b.v.id)
	})
	out := make([]*video, len(hits))
	for i, h := range hits {
		out[i] = h.v
	}
	return out
}

func matchDuration(v *video, d string) bool {
	switch d {
	case "short":
		return v.seconds > 0 && v.seconds < 4*60
	case "medium":
		return v.seconds >= 4*60 && v.seconds <= 20*60
	case "long":
		return v.seconds > 20*60
	}
	return true
}

// matchScore reports whether v matches every term, and how well: title
// matches weigh most.
func matchScore(v *video, terms []queryTerm) (float64, bool) {
	score := 1.0
	title := normalizeText(v.title)
	for _, t := range terms {
		found, inTitle := false, false
		for _, a := range t.alts {
			if strings.Contains(v.searchText, a) {
				found = true
				inTitle = inTitle || strings.Contains(title, a)
			}
		}
		if found == t.negated {
			return 0, false
		}
		if found {
			score++
			if inTitle {
				score += 2
			}
		}
	}
	return score, true
}

// parseQuery splits q into terms: words, "quoted phrases", a|b
// alternatives, -excluded words.
func parseQuery(q string) []queryTerm {
	var terms []queryTerm
	q = normalizeText(q)
	for len(q) > 0 {
		q = strings.TrimLeft(q, " \t\n")
		if q == "" {
			break
		}
		negated := false
		if q[0] == '-' && len(q) > 1 {
			negated, q = true, q[1:]
		}
		var word string
		if q[0] == '"' {
			end := strings.IndexByte(q[1:], '"')
			if end < 0 {
				word, q = q[1:], ""
			} else {
				word, q = q[1:1+end], q[2+end:]
			}
		} else {
			end := strings.IndexAny(q, " \t\n")
			if end < 0 {
				end = len(q)
			}
			word, q = q[:end], q[end:]
		}
		var alts []string
		for _, a := range strings.Split(word, "|") {
			if a = strings.TrimSpace(a); a != "" {
				alts = append(alts, a)
			}
		}
		if len(alts) > 0 {
			terms = append(terms, queryTerm{alts: alts, negated: negated})
		}
	}
	return terms
}

// searchSnippet is the short snippet search.list returns. As the real API
// does, it HTML-escapes title and description (Rock &amp; Roll, don&#39;t)
// and cuts the description short on one line.
func searchSnippet(v *video) *searchSnippetJSON {
	desc := strings.Join(strings.Fields(v.description), " ")
	if r := []rune(desc); len(r) > 160 {
		desc = string(r[:157]) + "..."
	}
	live := "none"
	if v.live {
		live = "live"
	}
	published := v.published.Format(time.RFC3339)
	return &searchSnippetJSON{
		PublishedAt:          published,
		ChannelID:            v.ch.id,
		Title:                htmlEscape(v.title),
		Description:          htmlEscape(desc),
		Thumbnails:           thumbnails(v, 3),
		ChannelTitle:         htmlEscape(v.ch.title),
		LiveBroadcastContent: live,
		PublishTime:          published,
	}
}

// htmlEscape escapes as search.list does: &#39; for an apostrophe and
// &quot; for a double quote.
func htmlEscape(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "&#34;", "&quot;")
}
