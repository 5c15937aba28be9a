package humanfmt

import (
	"encoding/json"
	"testing"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0K", 1234: "1.2K", 1_234_567: "1.2M", 2_500_000_000: "2.5B"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"plain – ünïcode\ttab\nline":                  "plain – ünïcode\ttab\nline",
		"\x1b[2J\x1b]0;pwned\x07":                     `\x1b[2J\x1b]0;pwned\x07`,
		"a\rb\bc\x7f":                                 `a\x0db\x08c\x7f`,
		"csi \u009b31m, raw byte \x9b31m, nel \u0085": `csi \u009b31m, raw byte \x9b31m, nel \u0085`,
		"rlo \u202egnp.exe, isolate \u2066x\u2069":    `rlo \u202egnp.exe, isolate \u2066x\u2069`,
		"שלום \u200fmarks\u200e stay":                 "שלום \u200fmarks\u200e stay",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListed(t *testing.T) {
	for in, want := range map[string]string{
		"Music":           "Music",
		"Música y baile":  "Música y baile",
		"":                `""`,
		"Music ":          `"Music "`,
		"Film, Animation": `"Film, Animation"`,
		"Cat\n   1\tNEW":  `"Cat\n   1\tNEW"`,
		"Cat\x1b]0;x\x07": `"Cat\x1b]0;x\a"`,
		`say "hi"`:        `"say \"hi\""`,
	} {
		if got := Listed(in); got != want {
			t.Errorf("Listed(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestAppendJSONEscaped(t *testing.T) {
	plain := `{"title": "plain – ünïcode 東京 \u001b already escaped", "n": 1}`
	if got := string(AppendJSONEscaped(nil, []byte(plain))); got != plain {
		t.Errorf("plain JSON changed: %s", got)
	}
	title := "csi \u009b31m del\x7f rlo\u202e isolate\u2066 rlm\u200f end"
	b, err := json.Marshal(map[string]string{"title": title})
	if err != nil {
		t.Fatal(err)
	}
	got := AppendJSONEscaped([]byte("x"), b)
	if want := `x{"title":"csi \u009b31m del\u007f rlo\u202e isolate\u2066 rlm` + "\u200f" + ` end"}`; string(got) != want {
		t.Errorf("escaped %s, want %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal(got[1:], &back); err != nil || back["title"] != title {
		t.Errorf("decoded %q (%v), want %q", back["title"], err, title)
	}
}
