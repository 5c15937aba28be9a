package config_test

import (
	"testing"

	"github.com/ytrend/ytrend/config"
)

// Origins that can never match are refused at start (found by a red-team
// pass). A
// wildcard subdomain is matched literally (no browser sends "*.example"),
// and a browser sends an IDN host in punycode (https://xn--bcher-kva.example),
// never as Unicode: both silently refuse every request.
func TestCORSOriginsWildcardsAndUnicodeNeverMatch(t *testing.T) {
	for _, o := range []string{"https://*.charts.example", "https://bücher.example"} {
		c, err := config.Parse("t.yaml", []byte("serve:\n  cors_origins: [\""+o+"\"]\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil {
			t.Errorf("%s accepted", o)
		}
	}
}
