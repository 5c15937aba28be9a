//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ytrend/ytrend/ingest/sim"
)

// A file that stalls (a FIFO whose writer stops, a hung network mount)
// holds the import in a read, where it never looks at a stop: found
// red-teaming the import of several files, neither Ctrl-C nor the second
// one ("stopping now") ended it. The first signal must end the import,
// with exit 1 and the archive left as it was.
func TestImportOfAStalledFileStopsOnSignal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sim.Config{})
	const header = "video_id,title,publishedAt,channelId,channelTitle,categoryId,trending_date,tags,view_count,likes,dislikes,comment_count,thumbnail_link,comments_disabled,ratings_disabled,description\n"
	row := func(id, day string) string {
		return id + ",Title,2020-08-11T19:20:14Z,UC1,Channel,22," + day + "T00:00:00Z,[None],10,1,0,1,,False,False,text\n"
	}
	w.write("US_youtube_trending_data.csv", header+row("aaaaaaaaaaa", "2020-08-12")+row("bbbbbbbbbbb", "2020-08-13"))
	fifo := filepath.Join(w.dir, "JP_youtube_trending_data.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	// Opened read-write, the FIFO neither blocks this open nor ever ends
	// for the reader: the writer stays, silent.
	pipe, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pipe.Close() })
	// drained waits until the import has read every byte the FIFO holds
	// (TIOCINQ: the bytes unread).
	drained := func(what string) {
		t.Helper()
		waitFor(t, what, 30*time.Second, func() bool {
			n, err := unix.IoctlGetInt(int(pipe.Fd()), unix.TIOCINQ)
			return err == nil && n == 0
		})
	}
	if _, err := pipe.WriteString(header); err != nil {
		t.Fatal(err)
	}
	cmd, logs := w.start("import", "US_youtube_trending_data.csv", "JP_youtube_trending_data.csv")
	drained("the import to read the FIFO's header")
	// The row is read once the import has begun (and listens for signals):
	// then it waits in a read for the row that would tell whether 08-11
	// goes on.
	if _, err := pipe.WriteString(row("ccccccccccc", "2020-08-11")); err != nil {
		t.Fatal(err)
	}
	drained("the import to read the FIFO's row")
	cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "the first signal's notice", 10*time.Second, func() bool { return strings.Contains(logs.String(), "interrupt:") })
	code, _ := exitCode(t, cmd, 30*time.Second)
	if code != 1 {
		t.Errorf("exit %d after the signal, want 1; stderr:\n%s", code, logs)
	}
	if !strings.Contains(logs.String(), "stopped") {
		t.Errorf("stderr does not say the import stopped:\n%s", logs)
	}
}
