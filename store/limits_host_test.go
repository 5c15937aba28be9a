package store_test

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/ytrend/ytrend/store"
)

// TestValidThumbnailHost: the host of a thumbnail is a DNS name under
// ytimg.com as YouTube writes it. Go's net/url takes "evil.com;.ytimg.com"
// for a host that ends in .ytimg.com (found by a red-team pass); it is no
// name YouTube gives, whatever a browser makes of it.
func TestValidThumbnailHost(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		// What the API gives (snippet.thumbnails.*.url).
		{"https://i.ytimg.com/vi/dQw4w9WgXcQ/default.jpg", true},
		{"https://i.ytimg.com/vi/dQw4w9WgXcQ/maxresdefault.jpg", true},
		{"https://i9.ytimg.com/vi/abc/mqdefault.jpg?sqp=CKz-&rs=AOn4CLB", true},
		{"https://i.ytimg.com/vi_webp/abc/sddefault.webp", true},
		{"https://ytimg.com/vi/abc/default.jpg", true},
		{"https://i-1.ytimg.com/vi/abc/default.jpg", true},

		{"https://evil.com;.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com,.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com&.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com=.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com!.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com$.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com(.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com*.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com+.ytimg.com/vi/abc/default.jpg", false},
		{"https://a_b.ytimg.com/vi/abc/default.jpg", false},
		{"https://i~.ytimg.com/vi/abc/default.jpg", false},
		{"https://.ytimg.com/vi/abc/default.jpg", false},
		{"https://i..ytimg.com/vi/abc/default.jpg", false},
		{"https://-i.ytimg.com/vi/abc/default.jpg", false},
		{"https://i-.ytimg.com/vi/abc/default.jpg", false},
		{"https://i.ytimg.com./vi/abc/default.jpg", false},
		{"https://I.YTIMG.COM/vi/abc/default.jpg", false},
		{"https://i.ytimg.com:/vi/abc/default.jpg", false},
		{"https://i.ytimg.com:443/vi/abc/default.jpg", false},
		{"https://user@i.ytimg.com/vi/abc/default.jpg", false},
		{"https://evil.com@i.ytimg.com/vi/abc/default.jpg", false},
		{"https://evilytimg.com/vi/abc/default.jpg", false},
		{"https://i.ytimg.com.evil.com/vi/abc/default.jpg", false},
		{"http://i.ytimg.com/vi/abc/default.jpg", false},
		{"https://" + longLabel + ".ytimg.com/vi/abc/default.jpg", false},
	} {
		if got := store.ValidThumbnail(tc.url); got != tc.want {
			t.Errorf("ValidThumbnail(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// longLabel is one byte over a DNS label's 63.
const longLabel = "a123456789012345678901234567890123456789012345678901234567890123"

// thumbnailHost is what a thumbnail's host may be, written as a pattern
// apart from the code it checks.
var thumbnailHost = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*ytimg\.com$`)

// FuzzValidThumbnail: every URL ValidThumbnail accepts is https, with no
// user info, no port, and a host that thumbnailHost matches.
func FuzzValidThumbnail(f *testing.F) {
	for _, u := range []string{
		"https://i.ytimg.com/vi/abc/hqdefault.jpg",
		"https://i9.ytimg.com/vi/abc/mqdefault.jpg?sqp=x&rs=y",
		"https://evil.com;.ytimg.com/vi/abc/default.jpg",
		"https://i.ytimg.com:/x",
		"https://u:p@i.ytimg.com/x",
		"https://i..ytimg.com/x",
	} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if !store.ValidThumbnail(u) {
			return
		}
		p, err := url.Parse(u)
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", u, err)
		}
		if p.Scheme != "https" || p.User != nil || !thumbnailHost.MatchString(p.Host) {
			t.Fatalf("accepted %q: scheme %q, user %v, host %q", u, p.Scheme, p.User, p.Host)
		}
	})
}
