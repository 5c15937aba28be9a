package secret

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

const key = "sec ret+KEY/9%x"

func TestValueNeverFormats(t *testing.T) {
	v := New(key)
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "key", v)
	j, _ := json.Marshal(struct{ K Value }{v})
	for _, s := range []string{fmt.Sprint(v), fmt.Sprintf("%v %+v %#v %s %q %x", v, v, v, v, v, v), b.String(), string(j)} {
		if strings.Contains(s, "ret") || !strings.Contains(s, Mask) {
			t.Errorf("formatted as %q", s)
		}
	}
	if v.Reveal() != key {
		t.Error("Reveal lost the value")
	}
}

// TestRedactEveryEncoding: the key as sent, query-escaped (the audit's
// key=sec+ret%2BKEY%2F9 leak), path-escaped, and in lower-case hex.
func TestRedactEveryEncoding(t *testing.T) {
	v := New(key)
	q := url.QueryEscape(key)
	text := "plain " + key + " query key=" + q + " path /" + url.PathEscape(key) + " lower " + strings.ToLower(q[:4]) + q[4:]
	text += " lowerhex " + lowerHex(q)
	got := v.Redact(text)
	for _, leak := range []string{"ret+KEY", "ret%2BKEY", "ret%2bKEY", "KEY%2F9", "KEY%2f9", "KEY/9"} {
		if strings.Contains(got, leak) {
			t.Errorf("Redact left %q in %q", leak, got)
		}
	}
	err := fmt.Errorf("upstream said: GET /youtube/v3/videos?key=%s failed: %w", q, errors.ErrUnsupported)
	rerr := v.RedactErr(err)
	if strings.Contains(rerr.Error(), "ret") || !errors.Is(rerr, errors.ErrUnsupported) {
		t.Errorf("RedactErr = %q (chain kept: %v)", rerr, errors.Is(rerr, errors.ErrUnsupported))
	}
}

func TestURLAndScrub(t *testing.T) {
	for in, want := range map[string]string{
		"redis://app:pw@h:6379/0":                   "redis://app:" + Mask + "@h:6379/0",
		"http://x/v3/videos?part=id&key=AIzaSecret": "http://x/v3/videos?key=" + url.QueryEscape(Mask) + "&part=id",
	} {
		if got := URL(in); got != want && strings.Contains(got, "pw@") || strings.Contains(got, "AIzaSecret") {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
	// Parameters that hold secrets under other names: an S3 URL's
	// server-side encryption key (both of Litestream's spellings), a
	// secret, a token, a signed URL's signature. Those that don't stay.
	for _, name := range []string{"sseCustomerKey", "sse-customer-key", "secret_access_key", "X-Amz-Signature",
		"sig", "session_token", "Password"} {
		got := URL("s3://bucket/p?endpoint=http%3A%2F%2Fh%3A9000&region=auto&" + name + "=s3cr3tvalue")
		if strings.Contains(got, "s3cr3tvalue") || !strings.Contains(got, "region=auto") || !strings.Contains(got, "endpoint=") {
			t.Errorf("URL with %s = %q: want the value masked, the other parameters kept", name, got)
		}
	}
	// Any scheme's password, a mistyped scheme's, and one holding a "/".
	s := Scrub("GET https://x/?key=abc def AIza" + strings.Repeat("a", 35) + " redis://u:hunter2@h:1 ftp://v:swordfish@x " +
		`"rediss//w:tr0ub4dor@h" redis://z:zq9x/y7@h:1/0`)
	for _, leak := range []string{"abc", "AIzaaaa", "hunter2", "swordfish", "tr0ub4dor", "zq9x", "y7"} {
		if strings.Contains(s, leak) {
			t.Errorf("Scrub left %q: %q", leak, s)
		}
	}
}
