package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ytrend/ytrend/ingest/sim"
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
// every highlight as the text "\x1b[1m".
func TestSearchOnATerminalHighlightsInBold(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	db := w.openDB()
	at := time.Date(2020, 8, 12, 0, 0, 0, 0, time.UTC)
	_, err := db.ImportChart(context.Background(), store.ImportedChart{Region: "US", Pages: []store.Page{{
		FetchedAt: at, FirstRank: 1, Videos: []store.Video{{
			ID: "escape00001", Title: "escape \x1b]0;pwned\x07 title", ChannelTitle: "Chan", CategoryID: "22",
			PublishedAt: at.Add(-time.Hour),
		}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	pty, tty := openPTY(t)
	cmd := w.command("search", "escape")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = tty, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; reads end (EIO) once it exits
	out, _ := io.ReadAll(pty)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ytrend search: %v\n%s", err, stderr.String())
	}
	s := string(out)
	if !strings.Contains(s, boldOn+"escape"+boldOff) {
		t.Errorf("the match is not in bold on a terminal: %q", s)
	}
	if !strings.Contains(s, `\x1b]0;pwned\x07`) {
		t.Errorf("the title's control characters are not shown as escapes: %q", s)
	}
	if rest := strings.NewReplacer(boldOn, "", boldOff, "").Replace(s); strings.ContainsAny(rest, "\x1b\x07") {
		t.Errorf("a control character other than bold on and off reached the terminal: %q", s)
	}
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
