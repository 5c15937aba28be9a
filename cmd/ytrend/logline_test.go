package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/internal/humanfmt"
)

// hostile is outside text as a log line may carry it: CSI as the C1
// U+009B, DEL, a right-to-left override, an isolate.
const hostile = "t \u009b31m del\x7f rlo\u202e iso\u2066 end"

// logHostile writes a line through the handler --log-format builds, with
// hostile text in the message, a value, an error, a nested group and a
// value whose only control is DEL (which slog's text handler leaves
// unquoted), and returns the line.
func logHostile(t *testing.T, format string) string {
	t.Helper()
	c := newCLI(nil, nil, nil)
	c.logFormat, c.logLevel = format, "info"
	handler, err := c.logHandler()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(handler(&buf)).With("region", "US")
	log.Info("fetched "+hostile, "title", hostile, "err", errors.New(`youtube: 400 {"message": "`+hostile+`"}`),
		slog.Group("video", "channel", hostile, slog.Group("stats", "tag", "only\x7fdel")), "del", "a\x7fb\\c", "plain", "ünïcode–東京")
	line := buf.String()
	for _, r := range line {
		if r >= 0x7f && humanfmt.TerminalControl(r) {
			t.Fatalf("--log-format %s: %U is in the line raw: %q", format, r, line)
		}
	}
	return line
}

// --log-format json writes DEL, C1 and bidi overrides as \u escapes (red
// team: slog's JSON handler wrote them raw to the terminal tailing the
// log), and the line decodes to the very strings logged.
func TestJSONLogEscapesTerminalControls(t *testing.T) {
	line := logHostile(t, "json")
	if !strings.Contains(line, `"title":"t \u009b31m del\u007f rlo\u202e iso\u2066 end"`) || strings.Contains(line, `\\u`) {
		t.Errorf("the controls are not \\u escapes, once: %s", line)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("not JSON: %v: %s", err, line)
	}
	delete(got, "time")
	want := map[string]any{"level": "INFO", "msg": "fetched " + hostile, "region": "US", "title": hostile,
		"err":   `youtube: 400 {"message": "` + hostile + `"}`,
		"video": map[string]any{"channel": hostile, "stats": map[string]any{"tag": "only\x7fdel"}},
		"del":   "a\x7fb\\c", "plain": "ünïcode–東京"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%q\nwant\n%q", got, want)
	}
}

// --log-format text quotes a value that holds DEL as slog quotes any value
// that needs it (slog wrote one whose only control was DEL unquoted; C1 and
// bidi overrides it quotes, with strconv.Quote's escapes).
func TestTextLogQuotesTerminalControls(t *testing.T) {
	line := logHostile(t, "text")
	q := strconv.Quote(hostile)
	for _, want := range []string{" msg=" + strconv.Quote("fetched "+hostile) + " ", " title=" + q + " ",
		" err=" + strconv.Quote(`youtube: 400 {"message": "`+hostile+`"}`) + " ", " video.channel=" + q + " ",
		` video.stats.tag="only\x7fdel" `, ` del="a\x7fb\\c" `, " plain=ünïcode–東京\n"} {
		if !strings.Contains(line, want) {
			t.Errorf("the line has no %s:\n%s", want, line)
		}
	}
	// Every value reads back as logged.
	for _, m := range regexp.MustCompile(`(\w+(?:\.\w+)*)=("(?:[^"\\]|\\.)*"|\S*)`).FindAllStringSubmatch(line, -1) {
		if v := m[2]; strings.HasPrefix(v, `"`) {
			if _, err := strconv.Unquote(v); err != nil {
				t.Errorf("%s=%s does not unquote: %v", m[1], v, err)
			}
		}
	}
}

// BenchmarkLogLine is an access log line through slog's handler alone and
// through logLines, as --log-format builds it: a clean line costs the scan
// and no allocation.
//
//	go test -run '^$' -bench LogLine -benchmem ./cmd/ytrend
func BenchmarkLogLine(b *testing.B) {
	for _, format := range []string{"text", "json"} {
		for _, wrapped := range []bool{false, true} {
			name := format + "/slog"
			h := slog.Handler(slog.NewTextHandler(io.Discard, nil))
			if format == "json" {
				h = slog.NewJSONHandler(io.Discard, nil)
			}
			if wrapped {
				name = format + "/logLines"
				c := newCLI(nil, nil, nil)
				c.logFormat, c.logLevel = format, "info"
				handler, err := c.logHandler()
				if err != nil {
					b.Fatal(err)
				}
				h = handler(io.Discard)
			}
			log := slog.New(h)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					log.Info("http", "request_id", "86914cc3b28e0347", "client", "127.0.0.1", "method", "GET",
						"path", "/charts/US", "route", "/charts/{region}", "code", 200, "bytes", 12465, "duration_ms", 0.024)
				}
			})
		}
	}
}
