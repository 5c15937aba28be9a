package view_test

import (
	"strings"
	"testing"

	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/view"
)

// The pages and the API show why a run failed, never where from: the
// reason is one of a fixed list, whatever the error's text carried (a
// proxy's error page, a certificate's host names, a URL with a user name).
func TestRunReason(t *testing.T) {
	failed := func(e string) store.Run { return store.Run{Status: store.StatusFailed, Error: e} }
	for _, tc := range []struct {
		run  store.Run
		want string
	}{
		{failed(`chart page 1: videos.list failed after 4 attempts (HTTP 502): googleapi: got HTTP response code 502 with body: <html><body>ERROR The requested URL could not be retrieved. Generated Tue by squid01.corp.internal (squid/4.10) admin alice.smith@corp.example: connection refused</body></html>`), "upstream HTTP 502"},
		{failed(`chart page 1: videos.list failed after 4 attempts (connection failed): Get "https://localhost:18443/youtube/v3/videos?key=REDACTED": tls: failed to verify certificate: x509: certificate is valid for proxy.corp.internal, vault.alice-laptop.lan, not localhost`), view.ReasonTLSCert},
		{failed(`Get "https://alice:s3cret@proxy.corp.internal:3128/youtube/v3/videos?key=x": dial tcp 10.1.2.3:3128: connect: connection refused`), view.ReasonRefused},
		{failed(`fetch US page 2: Get "https://www.googleapis.com/youtube/v3/videos": context deadline exceeded`), view.ReasonTimeout},
		{failed(`videos.list failed after 4 attempts (connection failed): Get "https://www.googleapis.com/youtube/v3/videos": dial tcp: lookup www.googleapis.com on 10.0.0.2:53: no such host`), view.ReasonDNS},
		{failed(`videos.list rejected (keyInvalid): googleapi: Error 400: API key not valid. Please pass a valid API key., keyInvalid`), view.ReasonAPIKey},
		{failed(`videos.list rejected (malformed response): invalid character '<' looking for beginning of value`), view.ReasonMalformed},
		{failed(`videos.list failed after 4 attempts (connection failed): read tcp 10.0.0.5:40000->142.250.0.1:443: read: connection reset by peer`), view.ReasonConnection},
		{failed(`open /home/alice/ytrend/ytrend.db: permission denied`), view.ReasonArchive},
		{failed(`upstream said see https://bob@internal.example/x`), view.ReasonOther},
		{store.Run{Status: store.StatusStoppedQuota, RefusedBy: "upstream", Error: "YouTube answered quotaExceeded"}, view.ReasonQuotaExceeded},
		{store.Run{Status: store.StatusStoppedQuota, RefusedBy: "daily", Error: "budget refused videos.list"}, view.ReasonBudget},
		{store.Run{Status: store.StatusFenced, Error: "quota: fenced: not the current leader (holder db01.corp:4242)"}, view.ReasonFenced},
		{store.Run{Status: store.StatusInterrupted, Error: "stopped by shutdown"}, view.ReasonInterrupted},
		{store.Run{Status: store.StatusOK}, ""},
	} {
		got := view.RunReason(tc.run)
		if got != tc.want {
			t.Errorf("%s %q:\n got %q\nwant %q", tc.run.Status, tc.run.Error, got, tc.want)
		}
		// Whatever the class, no word of the error's own text beyond the
		// fixed list gets through.
		for _, secret := range []string{"corp", "alice", "squid", "bob", "internal", "10.", "googleapis"} {
			if strings.Contains(got, secret) {
				t.Errorf("%q publishes %q", got, secret)
			}
		}
	}
}
