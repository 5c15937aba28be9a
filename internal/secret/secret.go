// Package secret keeps ytrend's secrets out of every log line, error and
// row: the YouTube API key, and passwords inside Redis URLs.
//
// The key decision: a secret is a type, Value, that never formats its
// content (fmt, slog, JSON all print [REDACTED]); code that must send it
// calls Reveal, so every use is visible. And because an upstream reply can
// echo the request URL, Redact removes the value in every encoding it can
// travel in (as is, query-escaped, path-escaped, upper or lower hex), not
// just the one that happened to be sent.
package secret

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Mask is what a secret prints as.
const Mask = "REDACTED"

// Value is a secret. The zero Value is empty.
type Value struct{ s string }

// New wraps s.
func New(s string) Value { return Value{s: s} }

// Reveal returns the secret itself, for the one place that must send it.
func (v Value) Reveal() string { return v.s }

// IsZero reports whether v is empty.
func (v Value) IsZero() bool { return v.s == "" }

func (Value) String() string                 { return Mask }
func (Value) GoString() string               { return Mask }
func (Value) Format(f fmt.State, _ rune)     { io.WriteString(f, Mask) }
func (Value) MarshalJSON() ([]byte, error)   { return []byte(`"` + Mask + `"`), nil }
func (Value) MarshalText() ([]byte, error)   { return []byte(Mask), nil }
func (Value) LogValue() slog.Value           { return slog.StringValue(Mask) }
func (v Value) encodings() []string          { return encodings(v.s) }
func (v Value) containsAny(text string) bool { return anyOf(text, v.encodings()) }
func anyOf(text string, subs []string) bool {
	for _, s := range subs {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// encodings are the forms s can take in a URL or a text quoting one.
func encodings(s string) []string {
	if s == "" {
		return nil
	}
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	for _, f := range forms[1:] {
		forms = append(forms, lowerHex(f))
	}
	// Longest first, so a longer form is not half-replaced by a shorter one.
	out := forms[:0]
	seen := map[string]bool{}
	for _, f := range forms {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if len(out[j]) > len(out[i]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// lowerHex rewrites %2B as %2b: both decode the same.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// Redact replaces every encoding of v in text with Mask.
func (v Value) Redact(text string) string {
	for _, f := range v.encodings() {
		text = strings.ReplaceAll(text, f, Mask)
	}
	return text
}

// RedactErr returns err with every encoding of v removed from its text; the
// chain (errors.Is, errors.As) is kept. A URL inside a *url.Error is
// redacted too, key= parameters included.
func (v Value) RedactErr(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = URL(ue.URL)
	}
	msg := err.Error()
	if !v.containsAny(msg) {
		return err
	}
	return &redacted{msg: v.Redact(msg), err: err}
}

type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// URL hides what a URL may carry: the password of its userinfo and the
// values of secret-like query parameters (key, api_key, access_token, an
// S3 URL's sseCustomerKey, a secret, a signature...).
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Scrub(raw)
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if q := u.Query(); len(q) > 0 {
		changed := false
		for k := range q {
			if keyParamName(k) {
				q.Set(k, Mask)
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	// Scrub too: a URL without a host ("rediss//u:p@h", a mistyped
	// scheme) parses as a path, whose "user:password@" Go does not see.
	return Scrub(strings.Replace(u.String(), ":xxxxx@", ":"+Mask+"@", 1))
}

// keyParamName reports whether a query parameter may hold a secret: its
// name, lowercased without '-' and '_', holds a word secrets go by. A
// parameter that only names a key (sseKmsKeyId) is masked too: showing
// less than the URL holds costs nothing, showing a secret cannot be undone.
func keyParamName(k string) bool {
	n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(k))
	for _, w := range []string{"key", "secret", "token", "password", "passwd", "credential", "signature", "sig"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Patterns of secrets in a text whose secrets are not known: a URL's key=
// parameter, a Google API key, a password in any URL's user information.
var (
	keyParam  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(key|api_?key|access_token)=[^&\s"'<>]+`) })
	googleKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`) })
	// Any scheme's userinfo, and a mistyped scheme's ("rediss//u:p@h"); a
	// password may hold an unescaped "/", so it runs to the last "@".
	userPass = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(//[^:/@\s]*:)[^\s]*@`) })
)

// Scrub removes what looks like a secret from text, for text that is
// stored or shown without knowing which secrets it might hold (an error
// recorded with a run). It is the last line of defence, not the first:
// code that knows a secret uses Value.Redact.
func Scrub(text string) string {
	text = keyParam().ReplaceAllString(text, "${1}="+Mask)
	text = googleKey().ReplaceAllString(text, Mask)
	return userPass().ReplaceAllString(text, "${1}"+Mask+"@")
}
