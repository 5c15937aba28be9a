package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"google.golang.org/api/youtube/v3"

	"github.com/ytrend/ytrend/regions"
)

var isoDurationRE = regexp.MustCompile(`^(P0D|PT(\d+H)?(\d+M)?(\d+S)?)$`)

// A region's chart is four pages of 50 distinct videos, then no more; each
// page is one unit.
func TestChartFourPagesWithGoClient(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	pages := fetchChart(t, client(t, hs, testKey), "US")
	if len(pages) != 4 {
		t.Fatalf("got %d pages, want 4", len(pages))
	}
	seen := map[string]bool{}
	for i, p := range pages {
		if p.Kind != "youtube#videoListResponse" || len(p.Etag) != 27 {
			t.Errorf("page %d: kind %q etag %q", i+1, p.Kind, p.Etag)
		}
		if p.PageInfo == nil || p.PageInfo.TotalResults != 200 || p.PageInfo.ResultsPerPage != 50 {
			t.Errorf("page %d: pageInfo %+v, want 200 total, 50 per page", i+1, p.PageInfo)
		}
		if len(p.Items) != 50 {
			t.Errorf("page %d: %d items, want 50", i+1, len(p.Items))
		}
		if (i == 0) != (p.PrevPageToken == "") {
			t.Errorf("page %d: prevPageToken %q", i+1, p.PrevPageToken)
		}
		if (i == 3) != (p.NextPageToken == "") {
			t.Errorf("page %d: nextPageToken %q", i+1, p.NextPageToken)
		}
		for _, v := range p.Items {
			if seen[v.Id] {
				t.Errorf("video %s on two pages", v.Id)
			}
			seen[v.Id] = true
		}
	}
	want, _ := s.Chart("US", "0", t0)
	var got []string
	for _, p := range pages {
		for _, v := range p.Items {
			got = append(got, v.Id)
		}
	}
	if !slices.Equal(got, want) {
		t.Error("the pages do not add up to the chart, in order")
	}
	u := s.Usage(testKey)
	if u.Charged != 4 || u.Requests != 4 || u.Calls["videos.list"] != 4 || s.TotalCharged() != 4 {
		t.Errorf("usage %+v, total %d: want 4 units for 4 pages", u, s.TotalCharged())
	}
}

// Every field a fetch stores is present, well-formed and plausible, and the
// optional ones are sometimes absent, as on the real API.
func TestVideoResourceFields(t *testing.T) {
	_, hs, _ := newTestServer(t, Config{})
	var items []*youtube.Video
	for _, p := range fetchChart(t, client(t, hs, testKey), "GB") {
		items = append(items, p.Items...)
	}
	var maxres, noTags, noDefaultLang int
	for _, v := range items {
		if v.Kind != "youtube#video" || len(v.Id) != 11 || len(v.Etag) != 27 {
			t.Errorf("video %q: kind %q etag %q", v.Id, v.Kind, v.Etag)
		}
		sn, cd, st := v.Snippet, v.ContentDetails, v.Statistics
		if sn == nil || cd == nil || st == nil {
			t.Fatalf("video %s lacks a requested part", v.Id)
		}
		if _, err := time.Parse(time.RFC3339, sn.PublishedAt); err != nil {
			t.Errorf("%s publishedAt %q: %v", v.Id, sn.PublishedAt, err)
		}
		if !strings.HasPrefix(sn.ChannelId, "UC") || len(sn.ChannelId) != 24 || sn.ChannelTitle == "" || sn.Title == "" {
			t.Errorf("%s snippet %+v", v.Id, sn)
		}
		if sn.CategoryId == "" || sn.LiveBroadcastContent == "" || sn.Localized == nil || sn.Localized.Title != sn.Title {
			t.Errorf("%s snippet %+v", v.Id, sn)
		}
		th := sn.Thumbnails
		if th == nil || th.Default == nil || th.Medium == nil || th.High == nil || th.Default.Width != 120 || th.High.Height != 360 {
			t.Errorf("%s thumbnails %+v", v.Id, th)
		} else if th.Maxres != nil {
			maxres++
		}
		if len(sn.Tags) == 0 {
			noTags++
		}
		if sn.DefaultLanguage == "" {
			noDefaultLang++
		}
		if !isoDurationRE.MatchString(cd.Duration) || cd.Duration == "PT" {
			t.Errorf("%s duration %q is not ISO 8601", v.Id, cd.Duration)
		}
		if cd.Caption != "true" && cd.Caption != "false" || cd.Definition == "" || cd.Dimension != "2d" {
			t.Errorf("%s contentDetails %+v", v.Id, cd)
		}
		if st.ViewCount < 100 || st.ViewCount > 2e8 || st.LikeCount > st.ViewCount || st.CommentCount > st.ViewCount {
			t.Errorf("%s statistics %+v", v.Id, st)
		}
	}
	for name, n := range map[string]int{"maxres thumbnails": maxres, "no tags": noTags, "no defaultLanguage": noDefaultLang} {
		if n == 0 || n == len(items) {
			t.Errorf("%s: %d of %d videos; want some, not all", name, n, len(items))
		}
	}
}

// Hidden counts are absent from the JSON, not "0", which the typed client
// cannot show.
func TestHiddenCountsAreAbsent(t *testing.T) {
	_, hs, _ := newTestServer(t, Config{})
	var likesHidden, commentsHidden, total int
	for _, region := range []string{"US", "DE", "IN", "JP"} {
		token := ""
		for page := 0; page < 4; page++ {
			q := chartQuery(region, 50, "part", "statistics", "pageToken", token)
			code, body, _ := get(t, hs, "/youtube/v3/videos", q)
			if code != http.StatusOK {
				t.Fatalf("%s: HTTP %d %s", region, code, body)
			}
			var resp struct {
				NextPageToken string
				Items         []struct {
					Statistics map[string]string
				}
			}
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatal(err)
			}
			for _, it := range resp.Items {
				total++
				st := it.Statistics
				if _, ok := st["viewCount"]; !ok || st["favoriteCount"] != "0" {
					t.Errorf("statistics %v", st)
				}
				if _, ok := st["likeCount"]; !ok {
					likesHidden++
				}
				if _, ok := st["commentCount"]; !ok {
					commentsHidden++
				}
				for k, v := range st {
					if v == "" || strings.TrimLeft(v, "0123456789") != "" {
						t.Errorf("%s = %q is not a decimal string", k, v)
					}
				}
			}
			token = resp.NextPageToken
		}
	}
	if likesHidden == 0 || commentsHidden == 0 || likesHidden > total/4 || commentsHidden > total/4 {
		t.Errorf("of %d videos, %d hide likes and %d comments; want a few of each", total, likesHidden, commentsHidden)
	}
}

// part may be repeated or comma-joined; only the parts asked for come back.
func TestParts(t *testing.T) {
	_, hs, _ := newTestServer(t, Config{})
	repeated := chartQuery("FR", 3)
	repeated["part"] = []string{"snippet", "statistics"}
	joined := chartQuery("FR", 3, "part", "snippet, statistics")
	_, a, _ := get(t, hs, "/youtube/v3/videos", repeated)
	_, b, _ := get(t, hs, "/youtube/v3/videos", joined)
	if !bytes.Equal(a, b) {
		t.Errorf("repeated and comma-joined part differ:\n%s\n%s", a, b)
	}
	if !bytes.Contains(a, []byte(`"statistics"`)) || bytes.Contains(a, []byte(`"contentDetails"`)) {
		t.Errorf("part=snippet,statistics answered %s", a)
	}
	_, idOnly, _ := get(t, hs, "/youtube/v3/videos", chartQuery("FR", 2, "part", "id"))
	if bytes.Contains(idOnly, []byte(`"snippet"`)) || !bytes.Contains(idOnly, []byte(`"id"`)) {
		t.Errorf("part=id answered %s", idOnly)
	}
}

// The same video trends in several regions, channels recur across regions,
// and each region's titles are in its languages.
func TestRegionsShareVideosAndSpeakTheirLanguages(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	svc := client(t, hs, testKey)
	inRegions := map[string]int{}
	channelRegions := map[string]map[string]bool{}
	script := func(title string, tables ...*unicode.RangeTable) bool {
		return strings.IndexFunc(title, func(r rune) bool { return unicode.In(r, tables...) }) >= 0
	}
	for _, region := range regions.Default() {
		r := string(region)
		langs := map[string]int{}
		var devanagari, japanese, n int
		for _, p := range fetchChart(t, svc, r) {
			for _, v := range p.Items {
				n++
				inRegions[v.Id]++
				if channelRegions[v.Snippet.ChannelId] == nil {
					channelRegions[v.Snippet.ChannelId] = map[string]bool{}
				}
				channelRegions[v.Snippet.ChannelId][r] = true
				langs[strings.SplitN(v.Snippet.DefaultAudioLanguage, "-", 2)[0]]++
				if script(v.Snippet.Title, unicode.Devanagari) {
					devanagari++
				}
				if script(v.Snippet.Title, unicode.Hiragana, unicode.Katakana, unicode.Han) {
					japanese++
				}
			}
		}
		if n != 200 {
			t.Errorf("%s: %d videos, want 200", r, n)
		}
		switch r {
		case "IN":
			if devanagari < 60 || langs["en"] < 20 {
				t.Errorf("IN: %d titles in Devanagari, %d English audio; want Hindi first, some English", devanagari, langs["en"])
			}
		case "CA":
			if langs["fr"] == 0 || langs["en"] < 100 {
				t.Errorf("CA: audio languages %v; want English and some French", langs)
			}
		case "DE", "FR", "BR":
			want := map[string]string{"DE": "de", "FR": "fr", "BR": "pt"}[r]
			if langs[want] < 80 {
				t.Errorf("%s: audio languages %v; want mostly %s", r, langs, want)
			}
		default:
			if langs["en"] < 150 || devanagari+japanese > 0 {
				t.Errorf("%s: audio languages %v, %d Devanagari, %d Japanese titles", r, langs, devanagari, japanese)
			}
		}
	}
	var in3, channels3 int
	for _, n := range inRegions {
		if n >= 3 {
			in3++
		}
	}
	for _, rs := range channelRegions {
		if len(rs) >= 3 {
			channels3++
		}
	}
	if in3 < 20 || channels3 < 10 {
		t.Errorf("%d videos trend in 3+ default regions, %d channels chart in 3+; want many of both", in3, channels3)
	}
	// Japan is not a default region: check its titles too.
	jp, _ := s.Chart("JP", "0", t0)
	var japanese int
	for _, id := range jp {
		if v := s.world.lookup(id, t0); v != nil && script(v.title, unicode.Hiragana, unicode.Katakana, unicode.Han) {
			japanese++
		}
	}
	if japanese < 80 {
		t.Errorf("JP: %d of 200 titles in Japanese", japanese)
	}
}

// Every region YouTube lists has a full chart.
func TestEveryRegionHasAFullChart(t *testing.T) {
	s, _, _ := newTestServer(t, Config{})
	for _, at := range []time.Time{t0, t0.Add(-9*time.Hour - 17*time.Minute)} {
		for _, r := range regions.All() {
			if ids, _ := s.Chart(r, "0", at); len(ids) != chartSize {
				t.Errorf("%s at %v: %d videos", r, at, len(ids))
			}
		}
	}
	if ids, err := s.Chart("US", "10", t0); err != nil || len(ids) == 0 || len(ids) > chartSize {
		t.Errorf("US music chart: %d videos, %v", len(ids), err)
	}
	if _, err := s.Chart("US", "29", t0); err == nil {
		t.Error("category 29 has a chart")
	}
}

// Page tokens pin a fetch to the chart of its first page: pages 2-4 fetched
// hours later, after the chart churned, still neither repeat nor skip.
func TestPageTokensSurviveChurn(t *testing.T) {
	s, hs, clock := newTestServer(t, Config{})
	svc := client(t, hs, testKey)
	first, err := svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("DE").MaxResults(50).Do()
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, v := range first.Items {
		ids = append(ids, v.Id)
	}
	clock.Advance(3*time.Hour + 10*time.Minute)
	token := first.NextPageToken
	for token != "" {
		p, err := svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("DE").MaxResults(50).PageToken(token).Do()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range p.Items {
			ids = append(ids, v.Id)
		}
		token = p.NextPageToken
	}
	then, _ := s.Chart("DE", "0", t0)
	now, _ := s.Chart("DE", "0", clock.Now())
	if !slices.Equal(ids, then) {
		t.Error("a fetch spanning a churn does not return the chart it started on")
	}
	if slices.Equal(then, now) {
		t.Error("the chart did not churn in three hours")
	}
}

// Charts are a function of seed and time: equal for equal seeds, different
// for different ones; an hour later the same videos mostly remain, reordered.
func TestChartsAreDeterministicAndChurn(t *testing.T) {
	a, _, _ := newTestServer(t, Config{Seed: 42})
	b, _, _ := newTestServer(t, Config{Seed: 42})
	c, _, _ := newTestServer(t, Config{Seed: 43})
	ca, _ := a.Chart("BR", "0", t0)
	cb, _ := b.Chart("BR", "0", t0)
	cc, _ := c.Chart("BR", "0", t0)
	if !slices.Equal(ca, cb) {
		t.Error("same seed, same time, different charts")
	}
	if slices.Equal(ca, cc) {
		t.Error("different seeds, same chart")
	}
	later, _ := a.Chart("BR", "0", t0.Add(time.Hour))
	same, moved := 0, 0
	for i, id := range ca {
		if j := slices.Index(later, id); j >= 0 {
			same++
			if j != i {
				moved++
			}
		}
	}
	if same < 150 || moved < 100 {
		t.Errorf("an hour later %d of 200 videos remain and %d moved; want most to remain and most to move", same, moved)
	}
	nextDay, _ := a.Chart("BR", "0", t0.Add(24*time.Hour))
	fresh := 0
	for _, id := range nextDay {
		if v := a.world.lookup(id, t0.Add(24*time.Hour)); v != nil && v.published.After(t0) {
			fresh++
		}
	}
	if fresh < 40 {
		t.Errorf("a day later only %d of 200 videos are new", fresh)
	}
}

// videos.list?id= returns the known videos in the order asked, skipping
// unknown IDs and repeats, for one unit.
func TestVideosByID(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	chart, _ := s.Chart("IN", "0", t0)
	ask := []string{chart[5], "dQw4w9WgXcQ", chart[0], chart[5], "not-an-id", chart[199]}
	resp, err := client(t, hs, testKey).Videos.List([]string{"snippet", "statistics"}).Id(ask...).Do()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range resp.Items {
		got = append(got, v.Id)
	}
	if want := []string{chart[5], chart[0], chart[199]}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if resp.PageInfo.TotalResults != 3 || resp.NextPageToken != "" {
		t.Errorf("pageInfo %+v next %q", resp.PageInfo, resp.NextPageToken)
	}
	if u := s.Usage(testKey); u.Charged != 1 {
		t.Errorf("charged %d, want 1", u.Charged)
	}
	// A video published after now is not there yet.
	future := s.world.encodeID(uint64(uint16(dayNumber(t0)+1))<<48 | uint64(cohortEN)<<44)
	if v := s.world.lookup(future, t0); v != nil {
		t.Errorf("lookup of tomorrow's video %s found it", future)
	}
}

// An unchanged page can be revalidated with its etag: 304, still charged.
func TestIfNoneMatch(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	q := chartQuery("AU", 10)
	code, body, _ := get(t, hs, "/youtube/v3/videos", q)
	var resp struct{ Etag string }
	if err := json.Unmarshal(body, &resp); err != nil || code != 200 {
		t.Fatalf("HTTP %d %v", code, err)
	}
	code, body, _ = get(t, hs, "/youtube/v3/videos", q, "If-None-Match", `"`+resp.Etag+`"`)
	if code != http.StatusNotModified || len(body) != 0 {
		t.Errorf("If-None-Match with the etag: HTTP %d %q, want 304 and no body", code, body)
	}
	if u := s.Usage(testKey); u.Charged != 2 {
		t.Errorf("charged %d, want 2", u.Charged)
	}
}

// Without prettyPrint=false the JSON is indented, as Google's default.
func TestPrettyPrint(t *testing.T) {
	_, hs, _ := newTestServer(t, Config{})
	q := chartQuery("CA", 1)
	q.Del("prettyPrint")
	_, pretty, _ := get(t, hs, "/youtube/v3/videos", q)
	_, compact, _ := get(t, hs, "/youtube/v3/videos", chartQuery("CA", 1))
	if !bytes.HasPrefix(pretty, []byte("{\n  \"kind\": \"youtube#videoListResponse\",\n")) {
		t.Errorf("default answer is not indented: %.80s", pretty)
	}
	if !bytes.HasPrefix(compact, []byte(`{"kind":"youtube#videoListResponse","etag":`)) {
		t.Errorf("prettyPrint=false answer: %.80s", compact)
	}
	var a, b any
	if json.Unmarshal(pretty, &a) != nil || json.Unmarshal(compact, &b) != nil {
		t.Fatal("invalid JSON")
	}
}

func TestI18nRegions(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	resp, err := client(t, hs, testKey).I18nRegions.List([]string{"snippet"}).Hl("en_US").Do()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Kind != "youtube#i18nRegionListResponse" || len(resp.Items) != len(regions.All()) {
		t.Fatalf("kind %q, %d items", resp.Kind, len(resp.Items))
	}
	names := map[string]string{}
	for i, it := range resp.Items {
		if it.Kind != "youtube#i18nRegion" || it.Snippet == nil || it.Id != it.Snippet.Gl {
			t.Errorf("item %+v", it)
		}
		if i > 0 && resp.Items[i-1].Snippet.Name > it.Snippet.Name {
			t.Errorf("not sorted by name at %s", it.Snippet.Name)
		}
		names[it.Id] = it.Snippet.Name
	}
	if names["US"] != "United States" || names["GB"] != "United Kingdom" || names["IN"] != "India" {
		t.Errorf("names %v", names)
	}
	if u := s.Usage(testKey); u.Charged != 1 || u.Calls["i18nRegions.list"] != 1 {
		t.Errorf("usage %+v", u)
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	s, hs, _ := newTestServer(t, Config{})
	code, body, _ := get(t, hs, "/youtube/v3/channels", url.Values{"part": {"snippet"}, "key": {testKey}})
	if e := errorJSON(t, body); code != http.StatusNotFound || e.Errors[0].Reason != "notFound" {
		t.Errorf("unknown method: HTTP %d %s", code, body)
	}
	resp, err := hs.Client().Post(hs.URL+"/youtube/v3/videos?part=snippet&key="+testKey, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST videos: HTTP %d", resp.StatusCode)
	}
	if n := s.TotalRequests(); n != 0 || s.TotalCharged() != 0 {
		t.Errorf("%d requests counted, %d units charged for calls that are no API method", n, s.TotalCharged())
	}
}
