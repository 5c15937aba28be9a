package store_test

import (
	"testing"

	"github.com/ytrend/ytrend/store"
)

// TestValidThumbnailRefusesMarkup: a URL on ytimg.com that carries a quote,
// a bracket or a space (found by a red-team pass: the API returned it as
// is) is no thumbnail YouTube gave.
func TestValidThumbnailRefusesMarkup(t *testing.T) {
	for u, want := range map[string]bool{
		"https://i.ytimg.com/vi/abc/hqdefault.jpg":             true,
		"https://i9.ytimg.com/vi/abc/mqdefault.jpg?sqp=x&rs=y": true,
		`https://i.ytimg.com/vi/x/a.jpg" onerror="alert(1)`:    false,
		"https://i.ytimg.com/vi/x/a.jpg?x=<script>":            false,
		"https://i.ytimg.com/vi/x/a b.jpg":                     false,
		"https://i.ytimg.com/vi/x/a.jpg'":                      false,
		"https://i.ytimg.com/vi/x/\\a.jpg":                     false,
		"https://i.ytimg.com/vi/x/a.jpg`":                      false,
		"https://i.ytimg.com/vi/x/\u00e9.jpg":                  false,
	} {
		if got := store.ValidThumbnail(u); got != want {
			t.Errorf("ValidThumbnail(%q) = %v, want %v", u, got, want)
		}
	}
}
