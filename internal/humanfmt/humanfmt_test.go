package humanfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
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

// jsonEscapedRef is AppendJSONEscaped one rune at a time, as it was before
// it passed over eight bytes at once.
func jsonEscapedRef(src []byte) []byte {
	var dst []byte
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		if r >= 0x7f && TerminalControl(r) {
			dst = fmt.Appendf(dst, `\u%04x`, r)
		} else {
			dst = append(dst, src[i:i+n]...)
		}
		i += n
	}
	return dst
}

// Each rune concerned is found at every offset in an eight-byte word, among
// ASCII and among text whose bytes are high (the word test's two paths),
// and its neighbours that share its lead byte stay as they are.
func TestJSONEscapedAtEveryOffset(t *testing.T) {
	runes := []string{"\x7f", "\u0080", "\u0085", "\u009b", "\u009f", "\u202a", "\u202e", "\u2066", "\u2069",
		"\u00a0", "\u00bf", "\u2013", "\u2029", "\u202f", "\u2065", "\u206a", "\u200f", "\u00ff", "ÿ", "東"}
	for _, pad := range []string{"a", "é", "東"} {
		for _, r := range runes {
			for off := range 17 {
				src := []byte(`"` + strings.Repeat(pad, off) + r + strings.Repeat(pad, 17-off) + `"`)
				want := jsonEscapedRef(src)
				if got := AppendJSONEscaped(nil, src); !bytes.Equal(got, want) {
					t.Fatalf("AppendJSONEscaped(%q) = %q, want %q", src, got, want)
				}
				got := JSONEscaped(src)
				if !bytes.Equal(got, want) {
					t.Fatalf("JSONEscaped(%q) = %q, want %q", src, got, want)
				}
				if escapes := !bytes.Equal(want, src); escapes != (IndexJSONEscape(src) == 1+off*len(pad)) {
					t.Fatalf("IndexJSONEscape(%q) = %d", src, IndexJSONEscape(src))
				}
			}
		}
	}
}

// JSONEscaped hands back its argument, not a copy, when there is nothing
// to escape: serve's answers and the log's lines cost no allocation.
func TestJSONEscapedKeepsCleanText(t *testing.T) {
	src := []byte(`{"title":"plain – ünïcode 東京 \u009b as an escape already"}`)
	if got := JSONEscaped(src); &got[0] != &src[0] || len(got) != len(src) {
		t.Errorf("JSONEscaped copied clean text: %s", got)
	}
	if n := testing.AllocsPerRun(100, func() { JSONEscaped(src) }); n != 0 {
		t.Errorf("JSONEscaped of clean text: %v allocations", n)
	}
}

func FuzzAppendJSONEscaped(f *testing.F) {
	for _, s := range []string{"", `{"a":"b"}`, "\x7f\u0080\u009b\u202e\u2069", "\xc2", "\xe2\x80", "\xff\xfe\xc2\x9b", "é東\u2013\u00a0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		want := jsonEscapedRef(src)
		if got := AppendJSONEscaped(nil, src); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSONEscaped(%q) = %q, want %q", src, got, want)
		}
		if got := JSONEscaped(src); !bytes.Equal(got, want) {
			t.Fatalf("JSONEscaped(%q) = %q, want %q", src, got, want)
		}
	})
}

// BenchmarkJSONEscaped scans an answer shaped like a chart's: 200 entries,
// their titles in several scripts, none to escape.
//
//	go test -run '^$' -bench JSONEscaped ./internal/humanfmt
func BenchmarkJSONEscaped(b *testing.B) {
	type entry struct {
		Rank                 int
		VideoID, Title, URL  string
		Channel, Description string
		Views                int64
	}
	titles := []string{"Official Music Video – Summer Tour 2026", "【MV】夏の終わりに / 東京スカイライン", "क्रिकेट: भारत बनाम ऑस्ट्रेलिया हाइलाइट्स",
		"[ENG SUB] 런닝맨 EP.712 – 레전드", "Unboxing the new phone’s camera — is it worth it?", "Résumé de la semaine : l’économie"}
	var entries []entry
	for i := range 200 {
		t := titles[i%len(titles)]
		entries = append(entries, entry{i + 1, fmt.Sprintf("vid%08d", i), t, "https://i.ytimg.com/vi/x/hqdefault.jpg",
			"Channel " + t[:7], strings.Repeat(t+" ", 3), int64(i) * 104729})
	}
	src, err := json.Marshal(entries)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if len(JSONEscaped(src)) != len(src) {
			b.Fatal("escaped clean text")
		}
	}
}

func TestTerminalLine(t *testing.T) {
	for in, want := range map[string]string{
		"/x\n200 OK: fake":   `/x\x0a200 OK: fake`,
		"a\u2028b\u2029c":    `a\u2028b\u2029c`,
		"tab\tstays":         "tab\tstays",
		"\x1b[31mred\r":      `\x1b[31mred\x0d`,
		"שלום \u200f ok":     "שלום \u200f ok",
		"bad \xff byte":      `bad \xff byte`,
		"\u202eevil\u2066":   `\u202eevil\u2066`,
		"plain /charts/US?x": "plain /charts/US?x",
	} {
		if got := TerminalLine(in); got != want {
			t.Errorf("TerminalLine(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Terminal("a\nb"); got != "a\nb" {
		t.Errorf("Terminal keeps line feeds: got %q", got)
	}
}
