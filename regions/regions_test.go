package regions

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Code
	}{
		{"US", "US"},
		{"us", "US"},
		{"  gb\t", "GB"},
		{"De", "DE"},
		{"in", "IN"},
		{"JP", "JP"},
		{"SV", "SV"}, // El Salvador, although "sv" is also Swedish
		{"BD", "BD"},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for _, tc := range []struct {
		in, msg string
	}{
		{"", `empty region code; want an ISO 3166-1 alpha-2 code such as "US"`},
		{"   ", `empty region code; want an ISO 3166-1 alpha-2 code such as "US"`},
		{"UK", `"UK" is not a region code; did you mean "GB"?`},
		{"uk", `"uk" is not a region code; did you mean "GB"?`},
		{" UK ", `"UK" is not a region code; did you mean "GB"?`},
		{"EN", `"EN" is not a region code; did you mean "GB"?`},
		{"England", `"England" is not a region code; did you mean "GB"?`},
		{"USA", `"USA" is not a region code; did you mean "US"?`},
		{"usa", `"usa" is not a region code; did you mean "US"?`},
		{"U.S.", `"U.S." is not a region code; did you mean "US"?`},
		{"United States", `"United States" is not a region code; did you mean "US"?`},
		{"Germany", `"Germany" is not a region code; did you mean "DE"?`},
		{"deutschland", `"deutschland" is not a region code; did you mean "DE"?`},
		{"Deutschlnd", `"Deutschlnd" is not a region code; did you mean "DE"?`},
		{"GER", `"GER" is not a region code; did you mean "DE"?`},
		{"DEU", `"DEU" is not a region code; did you mean "DE"?`},
		{"Österreich", `"Österreich" is not a region code; did you mean "AT"?`},
		{"osterreich", `"osterreich" is not a region code; did you mean "AT"?`},
		{"Frnace", `"Frnace" is not a region code; did you mean "FR"?`},
		{"Brasil", `"Brasil" is not a region code; did you mean "BR"?`},
		{"भारत", `"भारत" is not a region code; did you mean "IN"?`},
		{"日本", `"日本" is not a region code; did you mean "JP"?`},
		{"JA", `"JA" is not a region code; did you mean "JP"?`},
		{"Korea", `"Korea" is not a region code; did you mean "KR"?`},
		{"Turkey", `"Turkey" is not a region code; did you mean "TR"?`},
		{"SU", `"SU" is not a region code; did you mean "US"?`}, // swapped letters
		{"DEE", `"DEE" is not a region code; did you mean "DE" or "EE"?`},
		{"UZ", `"UZ" is not a region code; did you mean "US", "AZ" or "CZ"?`}, // defaults first
		{"QQ", `"QQ" is not a region code; did you mean "IQ" or "QA"?`},
		{"XX", `"XX" is not a region code; did you mean "MX"?`},
		{"XXXX", `"XXXX" is not a region code YouTube accepts; want an ISO 3166-1 alpha-2 code such as "US"`},
		{"12", `"12" is not a region code YouTube accepts; want an ISO 3166-1 alpha-2 code such as "US"`},
		{"Atlantis", `"Atlantis" is not a region code YouTube accepts; want an ISO 3166-1 alpha-2 code such as "US"`},
		{"CN", `"CN" is China, which YouTube does not list as a content region`},
		{"kp", `"kp" is North Korea, which YouTube does not list as a content region`},
		{"IN-", `"IN-" is not a region code; did you mean "IN"?`},
	} {
		got, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = %q, want an error", tc.in, got)
			continue
		}
		if !errors.Is(err, ErrUnknown) {
			t.Errorf("Parse(%q) error %v does not wrap ErrUnknown", tc.in, err)
		}
		if err.Error() != tc.msg {
			t.Errorf("Parse(%q) error\n got  %s\n want %s", tc.in, err, tc.msg)
		}
		if got != "" {
			t.Errorf("Parse(%q) returned %q with its error", tc.in, got)
		}
	}
}

func TestMustParse(t *testing.T) {
	if got := MustParse("fr"); got != "FR" {
		t.Errorf(`MustParse("fr") = %q`, got)
	}
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), `did you mean "GB"`) {
			t.Errorf(`MustParse("UK") panicked with %v, want the Parse message`, r)
		}
	}()
	MustParse("UK")
}

func TestEmbeddedList(t *testing.T) {
	// The aliases too: the package indexes them only for a suggestion.
	if _, err := parseTable(regionsTSV); err != nil {
		t.Fatalf("regions.tsv: %v", err)
	}
	all := All()
	if n := len(all); n != 109 {
		t.Errorf("All() has %d regions, want the 109 of regions.tsv", n)
	}
	if !slices.IsSorted(all) {
		t.Errorf("All() is not sorted: %v", all)
	}
	for i, c := range all {
		if i > 0 && all[i-1] == c {
			t.Errorf("%s listed twice", c)
		}
		if !Valid(c) {
			t.Errorf("All() lists %s but Valid says no", c)
		}
		if c.Name() == "" || c.Name() == string(c) {
			t.Errorf("%s has no name", c)
		}
		if got, err := Parse(strings.ToLower(string(c))); err != nil || got != c {
			t.Errorf("Parse(lower %s) = %q, %v", c, got, err)
		}
	}
	for code, name := range map[Code]string{
		"US": "United States", "GB": "United Kingdom", "DE": "Germany", "IN": "India",
		"JP": "Japan", "BR": "Brazil", "KR": "South Korea", "CZ": "Czechia",
	} {
		if got := code.Name(); got != name {
			t.Errorf("%s.Name() = %q, want %q", code, got, name)
		}
	}
	// Mutating the returned slice must not touch the package's copy.
	all[0] = "ZZ"
	if All()[0] == "ZZ" {
		t.Error("All() returned the package's own slice")
	}
}

func TestNotRegions(t *testing.T) {
	for _, c := range []Code{"", "us", "UK", "CN", "XX", "USA", " US"} {
		if Valid(c) {
			t.Errorf("Valid(%q) = true", c)
		}
	}
	if got := Code("XX").Name(); got != "XX" {
		t.Errorf(`Code("XX").Name() = %q, want the code itself`, got)
	}
	if got := Code("US").String(); got != "US" {
		t.Errorf("String() = %q", got)
	}
}

func TestDefault(t *testing.T) {
	want := []Code{"US", "GB", "DE", "FR", "IN", "BR", "AU", "CA"}
	got := Default()
	if !slices.Equal(got, want) {
		t.Fatalf("Default() = %v, want %v", got, want)
	}
	for _, c := range got {
		if !Valid(c) {
			t.Errorf("default region %s is not valid", c)
		}
	}
	got[0] = "ZZ"
	if Default()[0] != "US" {
		t.Error("Default() returned the package's own slice")
	}
}

func TestParseTableRejects(t *testing.T) {
	const header = "code\talpha3\tname\taliases\n"
	for name, src := range map[string]string{
		"no header":     "US\tUSA\tUnited States\t\n",
		"bad header":    "cc\talpha3\tname\taliases\n",
		"three fields":  header + "US\tUSA\tUnited States\n",
		"lower code":    header + "us\tUSA\tUnited States\t\n",
		"long code":     header + "USA\tUSA\tUnited States\t\n",
		"bad alpha3":    header + "US\tUS\tUnited States\t\n",
		"no name":       header + "US\tUSA\t\t\n",
		"duplicate":     header + "US\tUSA\tUnited States\t\nUS\tUSA\tAmerica\t\n",
		"alias is code": header + "US\tUSA\tUnited States\tGB\nGB\tGBR\tUnited Kingdom\t\n",
		"alias clash":   header + "US\tUSA\tUnited States\tUnion\nGB\tGBR\tUnited Kingdom\tunion\n",
	} {
		if _, err := parseTable(src); err == nil {
			t.Errorf("%s: parseTable accepted\n%s", name, src)
		}
	}
	if _, err := parseTable("# comment\n" + header + "US\tUSA\tUnited States\tAmerica\n"); err != nil {
		t.Errorf("minimal table: %v", err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"us", "us", 0}, {"us", "su", 1}, {"frnace", "france", 1},
		{"uk", "gb", 2}, {"deutschlnd", "deutschland", 1}, {"", "abc", 3}, {"日本", "日", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"US", "uk", " Germany ", "", "日本", "U.S.", "Frnace", "\xff", "DEE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrUnknown) {
				t.Fatalf("Parse(%q): %v does not wrap ErrUnknown", s, err)
			}
			if c != "" {
				t.Fatalf("Parse(%q) returned %q with its error", s, c)
			}
			var pe *parseError
			if errors.As(err, &pe) {
				for _, sug := range pe.suggest {
					if !Valid(sug) {
						t.Fatalf("Parse(%q) suggests %q, which is not valid", s, sug)
					}
				}
			}
			return
		}
		if !Valid(c) || !strings.EqualFold(strings.TrimSpace(s), string(c)) {
			t.Fatalf("Parse(%q) = %q", s, c)
		}
	})
}
