package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ytrend/ytrend/store"
)

// openPTY opens a pseudo-terminal: what a program writes to tty reads back
// from pty, and tty is a terminal to the program as a real one would be.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no pseudo-terminal under CI: %v", err)
		}
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { pty.Close() })
	if err := unix.IoctlSetPointerInt(int(pty.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(pty.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	if tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0); err != nil {
		t.Fatal(err)
	}
	return pty, tty
}

// On a terminal, search shows its matches in bold, with the terminal's own
// bold on and off, while control characters in the archive's text still
// print as visible escapes. Both went through one escaping, which printed
// every highlight as the text "\x1b[1m"; then a bold on spelled by the
// archive's text reached the terminal as a mark (red team).
func TestSearchOnATerminalHighlightsInBold(t *testing.T) {
	t.Parallel()
	w := escapeWorld(t)
	s := w.searchOnATerminal(t, "TERM=xterm")
	if !strings.Contains(s, boldOn+"escape"+boldOff) {
		t.Errorf("the match is not in bold on a terminal: %q", s)
	}
	if !strings.Contains(s, `\x1b]0;pwned\x07`) {
		t.Errorf("the title's control characters are not shown as escapes: %q", s)
	}
	if !strings.Contains(s, `\x1b[1m title`) {
		t.Errorf("the title's own bold on is not shown as an escape: %q", s)
	}
	// Once for the match in the snippet, and no more: the title's own
	// ESC[1m would leave the terminal in bold.
	if on, off := strings.Count(s, boldOn), strings.Count(s, boldOff); on != 1 || off != 1 {
		t.Errorf("bold on %d times and off %d times, want once each: %q", on, off, s)
	}
	if rest := strings.NewReplacer(boldOn, "", boldOff, "").Replace(s); strings.ContainsAny(rest, "\x1b\x07") {
		t.Errorf("a control character other than bold on and off reached the terminal: %q", s)
	}
}

// NO_COLOR (no-color.org) and a dumb terminal turn bold off; the matches
// are then in brackets, as in a pipe.
func TestSearchOnATerminalWithoutStyle(t *testing.T) {
	t.Parallel()
	w := escapeWorld(t)
	for _, env := range [][]string{{"NO_COLOR=1", "TERM=xterm"}, {"TERM=dumb"}} {
		s := w.searchOnATerminal(t, env...)
		if strings.Contains(s, boldOn) || strings.Contains(s, boldOff) {
			t.Errorf("%v: bold on the terminal: %q", env, s)
		}
		if !strings.Contains(s, "[escape]") {
			t.Errorf("%v: the match is not in brackets: %q", env, s)
		}
	}
}

// escapeWorld is a world whose archive holds one video, its title with an
// escape sequence that would set the terminal's window title and one that
// would turn bold on for good.
func escapeWorld(t *testing.T) *world {
	t.Helper()
	return worldWithVideo(t, store.Video{
		ID: "escape00001", Title: "escape \x1b]0;pwned\x07 \x1b[1m title", ChannelTitle: "Chan", CategoryID: "22",
	})
}

// searchOnATerminal runs ytrend with its output on a pseudo-terminal and
// returns what the terminal received. Leading NAME=value arguments are
// set in its environment; without other arguments it runs search escape.
func (w *world) searchOnATerminal(t *testing.T, args ...string) string {
	t.Helper()
	var env []string
	for len(args) > 0 && strings.Contains(args[0], "=") {
		env, args = append(env, args[0]), args[1:]
	}
	if len(args) == 0 {
		args = []string{"search", "escape"}
	}
	pty, tty := openPTY(t)
	cmd := w.command(args...)
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = tty, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; reads end (EIO) once it exits
	out, _ := io.ReadAll(pty)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ytrend %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// /dev/null is a character device but not a terminal: output sent there
// (or to a file, or a pipe) gets no bold.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Errorf("%s taken for a terminal", os.DevNull)
	}
	_, tty := openPTY(t)
	defer tty.Close()
	if !isTerminal(tty) {
		t.Errorf("a pseudo-terminal not taken for one")
	}
}
