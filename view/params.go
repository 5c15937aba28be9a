package view

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Bounds on what a client may ask. A search's cost grows with its regions
// and with how deep its page is (the page at offset 180 ranks 200 results),
// so both are bounded per request.
const (
	MaxQueryLen   = 200 // runes of q
	MaxChannelLen = 100
	MaxRegions    = 10
	DefaultLimit  = 20
	MaxLimit      = 100
	// MaxDepth is how many results of a search its pages reach (the
	// store ranks up to store.MaxLimit, for the CLI).
	MaxDepth = 200
)

// BadRequest is a client error; its message is safe to show.
type BadRequest struct{ msg string }

func (e *BadRequest) Error() string { return e.msg }

func bad(format string, args ...any) error { return &BadRequest{fmt.Sprintf(format, args...)} }

// Search is a parsed search request: the store query, and where in its
// results the page starts.
type Search struct {
	Query  store.Query
	Offset int
	Limit  int
}

// ParseSearch reads /search's parameters (q, region, since, channel, sort,
// limit, cursor), shared by the API and the search page. q may be empty only
// when allowEmpty (the page's blank form).
func ParseSearch(v url.Values, now time.Time, allowEmpty bool) (Search, error) {
	s := Search{Limit: DefaultLimit, Query: store.Query{Sort: store.SortRelevance}}
	q := strings.TrimSpace(v.Get("q"))
	if !utf8.ValidString(q) {
		return s, bad("q: not valid UTF-8")
	}
	if n := utf8.RuneCountInString(q); n > MaxQueryLen {
		return s, bad("q: %d characters; at most %d", n, MaxQueryLen)
	}
	if q == "" && !allowEmpty {
		return s, bad("q: required; give the words to search for")
	}
	s.Query.Text = q
	var codes []regions.Code
	for _, raw := range v["region"] {
		for _, part := range strings.Split(raw, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			code, err := regions.Parse(part)
			if err != nil {
				return s, bad("region: %v", err)
			}
			if !slices.Contains(codes, code) {
				codes = append(codes, code)
			}
			if len(codes) > MaxRegions {
				return s, bad("region: more than %d regions", MaxRegions)
			}
		}
	}
	// A set: US,DE and DE,US are one search (and one cache key, CacheKey).
	slices.Sort(codes)
	s.Query.Regions = codes
	if since := strings.TrimSpace(v.Get("since")); since != "" {
		t, err := parseTime("since", since, now, false)
		if err != nil {
			return s, err
		}
		s.Query.Since = t
	}
	if ch := strings.TrimSpace(v.Get("channel")); ch != "" {
		if !utf8.ValidString(ch) || utf8.RuneCountInString(ch) > MaxChannelLen {
			return s, bad("channel: at most %d characters of UTF-8", MaxChannelLen)
		}
		s.Query.Channel = ch
	}
	switch sort := v.Get("sort"); sort {
	case "":
	case "relevance", "recent", "views":
		s.Query.Sort = store.SortOrder(sort)
	default:
		return s, bad("sort %q: allowed relevance, recent, views", clip(sort))
	}
	var err error
	if s.Limit, err = parseLimit(v.Get("limit")); err != nil {
		return s, err
	}
	if c := v.Get("cursor"); c != "" {
		off, err := decodeCursor(c, "o")
		if err != nil {
			return s, err
		}
		if off+int64(s.Limit) > MaxDepth {
			return s, bad("cursor: past the last page (a search pages through its first %d results)", MaxDepth)
		}
		s.Offset = int(off)
	}
	// One more than the page: its presence says there is a next page.
	s.Query.Limit = min(MaxDepth, s.Offset+s.Limit+1)
	return s, nil
}

func parseLimit(s string) (int, error) {
	if s == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit || strconv.Itoa(n) != s {
		// One spelling per number (no 077, +7): every other would be a new
		// key for the response cache, for the same answer.
		return 0, bad("limit %q: allowed 1-%d", clip(s), MaxLimit)
	}
	return n, nil
}

// A cursor is opaque to clients: base64url of "<kind>:<n>".
func encodeCursor(kind string, n int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(n, 10)))
}

func decodeCursor(c, kind string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), kind+":"); ok {
			// Only the spelling encodeCursor gives: a forged o:0100 or o:+100
			// would be the same page under another cache key.
			if n, err := strconv.ParseInt(rest, 10, 64); err == nil && n >= 0 && encodeCursor(kind, n) == c {
				return n, nil
			}
		}
	}
	return 0, bad("cursor: not a cursor this endpoint gave out")
}

// parseTime reads a time parameter: RFC 3339, 2006-01-02T15:04 (UTC), a
// date (its start, or with endOfDay its end, UTC), or a duration ago (7d).
func parseTime(name, s string, now time.Time, endOfDay bool) (time.Time, error) {
	if t, ok := config.ParseWhen(s, now, endOfDay); ok {
		return t, nil
	}
	return time.Time{}, bad("%s %q: want an RFC 3339 time (2026-03-01T12:00:00Z), a date (2026-03-01) or a duration ago (7d)", name, clip(s))
}

// ParseAt reads a chart's ?at= (zero: now).
func ParseAt(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return parseTime("at", s, now, true)
}

// ParseRegion reads a region path segment.
func ParseRegion(s string) (regions.Code, error) {
	code, err := regions.Parse(s)
	if err != nil {
		return "", bad("region: %v", err)
	}
	return code, nil
}

var videoID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// ParseVideoID checks a video id's shape (YouTube's are 11 characters of
// base64url; imported datasets hold the same).
func ParseVideoID(s string) (string, error) {
	if !videoID().MatchString(s) {
		return "", bad("video id %q: want letters, digits, - and _ (YouTube ids are 11 characters)", clip(s))
	}
	return s, nil
}

// clip keeps echoed input short and valid.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}

// IsBadRequest reports a client error from this package's parsers.
func IsBadRequest(err error) bool {
	var b *BadRequest
	return errors.As(err, &b)
}

// The query parameters each request takes (the pages' and the API's
// alike). Any other is refused with 400, not ignored: it would change
// nothing in the answer but the response cache's key, so a client could
// make every request a miss with ?x=1, ?x=2, ...
var (
	SearchParams = []string{"q", "region*", "since", "channel", "sort", "limit", "cursor"} // *: may repeat
	ChartParams  = []string{"at", "limit"}
	HomeParams   = []string{"region", "at"}
	RunsParams   = []string{"region", "status", "limit", "cursor"}
)

// CheckParams refuses a parameter that is not one of allowed, and one
// given twice unless allowed names it with a trailing * (a list, such as a
// search's regions): which of ?sort=views&sort=recent wins is no client's
// business, and each spelling would be a cache key.
func CheckParams(v url.Values, allowed ...string) error {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = strings.TrimSuffix(a, "*")
	}
	for k, vals := range v {
		i := slices.Index(names, k)
		if i < 0 {
			if len(allowed) == 0 {
				return bad("parameter %q: this takes no parameters", clip(k))
			}
			return bad("parameter %q: unknown; allowed %s", clip(k), strings.Join(names, ", "))
		}
		if len(vals) > 1 && !strings.HasSuffix(allowed[i], "*") {
			return bad("parameter %q: given %d times; give it once", clip(k), len(vals))
		}
	}
	return nil
}

// CacheKey is the canonical form of a request's parameters: two queries
// with the same key get the same answer. Parameters are sorted, a value
// given empty is dropped (every parser here takes "" as absent, as an HTML
// form sends it), and regions are one sorted set, upper case, as
// ParseSearch reads them. The response cache keys on it, so that a trailing
// &, an empty parameter or another order cannot make a request miss.
func CacheKey(v url.Values) string {
	out := url.Values{}
	for k, vals := range v {
		for _, val := range vals {
			if k == "region" {
				for _, part := range strings.Split(val, ",") {
					if p := strings.ToUpper(strings.TrimSpace(part)); p != "" && !slices.Contains(out[k], p) {
						out[k] = append(out[k], p)
					}
				}
				continue
			}
			if val != "" {
				out[k] = append(out[k], val)
			}
		}
	}
	slices.Sort(out["region"])
	return out.Encode() // sorted by key
}
