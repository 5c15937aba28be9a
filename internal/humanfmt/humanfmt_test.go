package humanfmt

import "testing"

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
