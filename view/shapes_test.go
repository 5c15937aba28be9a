package view_test

import (
	"testing"

	"github.com/ytrend/ytrend/view"
)

// The pages and the API show why a run failed, never where from: no URL,
// no user name, no internal host.
func TestPublicError(t *testing.T) {
	for in, want := range map[string]string{
		`Get "https://alice:s3cret@proxy.corp.internal:3128/youtube/v3/videos?key=x": dial tcp 10.1.2.3:3128: connect: connection refused`: "connection refused",
		`fetch US page 2: Get "https://www.googleapis.com/youtube/v3/videos": context deadline exceeded`:                                   "context deadline exceeded",
		`googleapi: Error 403: The request cannot be completed because you have exceeded your quota., quotaExceeded`:                       "The request cannot be completed because you have exceeded your quota., quotaExceeded",
		`open /home/alice/ytrend/ytrend.db: permission denied`:                                                                             "permission denied",
		`upstream said see https://bob@internal.example/x`:                                                                                 "upstream said see …",
		`lookup db.corp.internal:5432 failed`:                                                                                              "lookup … failed",
		``:                                                                                                                                 ``,
	} {
		if got := view.PublicError(in); got != want {
			t.Errorf("%s:\n got %q\nwant %q", in, got, want)
		}
	}
}
