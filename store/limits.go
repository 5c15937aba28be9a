package store

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// What YouTube itself would never send. The API's videos.list keeps to
// these limits, so a value beyond them came from a file someone edited: the
// importer cuts it (and says so), the repair cuts what older imports stored,
// and the read model never shows a thumbnail that is not YouTube's.
const (
	// MaxTitleChars is YouTube's limit on a title, in characters.
	MaxTitleChars = 100
	// MaxDescriptionBytes is YouTube's limit on a description, in bytes.
	MaxDescriptionBytes = 5000
	// MaxTagsChars is YouTube's limit on a video's tags, in characters in
	// all (a comma between two tags counts, as YouTube counts it).
	MaxTagsChars = 500
)

// EarliestSighting is the earliest chart time the archive accepts: YouTube
// opened in 2005, so a trending_date before it is an error in the file.
var EarliestSighting = time.Date(2005, 1, 1, 0, 0, 0, 0, time.UTC)

// LatestSighting is the latest chart time the archive accepts at now: a day
// ahead, for the time zones of the datasets' trending_date. A sighting from
// the future would be every video's newest for good (the merge keeps the
// newest metadata), so it is refused, never stored.
func LatestSighting(now time.Time) time.Time { return now.Add(24 * time.Hour) }

// CutTitle cuts a title to MaxTitleChars characters; cut says it did.
func CutTitle(s string) (out string, cut bool) {
	if utf8.RuneCountInString(s) <= MaxTitleChars {
		return s, false
	}
	n := 0
	for i := range s {
		if n == MaxTitleChars {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// CutDescription cuts a description to MaxDescriptionBytes bytes, at a
// character boundary.
func CutDescription(s string) (out string, cut bool) {
	if len(s) <= MaxDescriptionBytes {
		return s, false
	}
	i := MaxDescriptionBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// CutTags keeps the tags, whole and in order, that fit in MaxTagsChars.
func CutTags(tags []string) (out []string, cut bool) {
	n := 0
	for i, t := range tags {
		n += utf8.RuneCountInString(t)
		if i > 0 {
			n++ // the comma between two tags
		}
		if n > MaxTagsChars {
			return tags[:i], true
		}
	}
	return tags, false
}

// ValidThumbnail reports whether u may be shown as a video's thumbnail: an
// https URL on ytimg.com (i.ytimg.com, i9.ytimg.com, ...), which is where
// the API's thumbnails are. Anything else (a relative URL, which a page's
// img-src would send to this server; javascript:, data:, another host) is
// not a thumbnail YouTube gave. The host is a DNS name as YouTube writes it
// (lower-case letters, digits and hyphens in non-empty labels): Go's
// net/url accepts a host such as "evil.com;.ytimg.com", which ends in
// .ytimg.com but is no name YouTube gives, and which another URL parser may
// read otherwise.
func ValidThumbnail(u string) bool {
	// Characters a URL YouTube gives never holds, and that could end an
	// HTML attribute for a consumer that builds <img src="..."> from it.
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c >= 0x7f || strings.IndexByte("\"'<>\\`", c) >= 0 {
			return false
		}
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "https" || p.User != nil || p.Port() != "" || p.Opaque != "" {
		return false
	}
	// Host, not Hostname: "i.ytimg.com:" has an empty port, which Port
	// does not report.
	h := p.Host
	return dnsName(h) && (h == "ytimg.com" || strings.HasSuffix(h, ".ytimg.com"))
}

// dnsName reports whether h is a host name in lower case: labels of
// letters, digits and hyphens, none empty, none beginning or ending with a
// hyphen, at most 63 bytes each (RFC 1123), and no trailing dot.
func dnsName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
