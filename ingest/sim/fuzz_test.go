package sim

import (
	"encoding/json"
	"testing"
)

func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"", "none", "5xx=0.1,ratelimit=0.05,latency=200ms,malformed=0.02,drop=0.01", "503=10%", "drop=1", "x=", "=,="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fs, err := ParseFaults(spec)
		if err != nil {
			return
		}
		if err := fs.Validate(); err != nil {
			t.Fatalf("ParseFaults(%q) returned invalid faults: %v", spec, err)
		}
		back, err := ParseFaults(fs.String())
		if err != nil || back != fs {
			t.Fatalf("%q: String %q does not round-trip: %+v %v", spec, fs.String(), back, err)
		}
		b, _ := json.Marshal(fs)
		var fromJSON Faults
		if err := json.Unmarshal(b, &fromJSON); err != nil || fromJSON != fs {
			t.Fatalf("%q: JSON %s does not round-trip: %v", spec, b, err)
		}
	})
}

func FuzzPageToken(f *testing.F) {
	s, err := New(Config{Keys: []string{"k"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(s.encodeToken("videos\x00US\x000", pageToken{epoch: 493000, offset: 50}), int64(493000), 50)
	f.Add("CAUQAA", int64(0), 0)
	f.Fuzz(func(t *testing.T, raw string, epoch int64, offset int) {
		if tok, err := s.decodeToken("videos\x00US\x000", raw); err == nil && (tok.offset < 0 || tok.offset > maxSearch) {
			t.Fatalf("decoded %q to %+v", raw, tok)
		}
		if offset < 0 || offset > maxSearch {
			return
		}
		want := pageToken{epoch: epoch, offset: offset}
		got, err := s.decodeToken("scope", s.encodeToken("scope", want))
		if err != nil || got != want {
			t.Fatalf("round trip of %+v: %+v, %v", want, got, err)
		}
		if _, err := s.decodeToken("other scope", s.encodeToken("scope", want)); err == nil {
			t.Fatalf("token for one scope accepted for another")
		}
	})
}
