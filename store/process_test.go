package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ytrend/ytrend/store"
)

// These tests run real child processes: the test binary re-executed with an
// environment variable that makes the test function play the child's part.
const (
	envCrashChild  = "YTREND_STORE_TEST_CRASH_DB"
	envReaderChild = "YTREND_STORE_TEST_READER_DB"
	envWriterChild = "YTREND_STORE_TEST_WRITER_DB"
)

// child starts this test binary running only test, as a child with env set.
func child(t *testing.T, test, env, path string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out
}

// crashPage is page p of the crash test: 50 videos whose titles hold the
// word crashpageP.
func crashPage(run int64, p int) store.Page {
	vs := make([]store.Video, 50)
	for i := range vs {
		vs[i] = store.Video{ID: fmt.Sprintf("p%dv%d", p, i), Title: fmt.Sprintf("crashpage%d video %d", p, i),
			Description: strings.Repeat(fmt.Sprintf("filler%d ", i), 40), ChannelID: "c", ChannelTitle: "Crash TV", Views: i64(int64(i))}
	}
	return store.Page{RunID: run, Region: "US", FetchedAt: t0.Add(time.Duration(p) * time.Minute), Kind: store.PageChart,
		FirstRank: 1 + 50*p, Videos: vs, Units: int64(p + 1)}
}

// A writer killed with SIGKILL in the middle of a page transaction loses
// that page, all of it, and nothing else: the file and the index pass their
// integrity checks, the three whole pages are there, the fourth is not.
func TestKillDuringPageTransaction(t *testing.T) {
	if path := os.Getenv(envCrashChild); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd, out := child(t, "TestKillDuringPageTransaction", envCrashChild, path)
	inTx := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "IN-PAGE-TX" {
				inTx <- nil
				io.Copy(io.Discard, out)
				return
			}
			t.Logf("child: %s", sc.Text())
		}
		inTx <- errors.New("child exited before its page transaction")
	}()
	select {
	case err := <-inTx:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("child never reached its page transaction")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}

	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ftsIntegrity(t, db)
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Videos != 150 || c.Snapshots != 150 {
		t.Errorf("after the crash: %d videos, %d snapshots, want 150 and 150", c.Videos, c.Snapshots)
	}
	for i := 0; i < 50; i++ {
		if _, _, err := db.Video(ctx, fmt.Sprintf("p2v%d", i)); err != nil {
			t.Errorf("last whole page, video %d: %v", i, err)
		}
		if _, _, err := db.Video(ctx, fmt.Sprintf("p3v%d", i)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("half page, video %d: %v, want ErrNotFound", i, err)
		}
	}
	for p, want := range []int{50, 50, 50, 0} {
		hits, err := db.Search(ctx, store.Query{Text: fmt.Sprintf("crashpage%d", p), Limit: 100})
		if err != nil || len(hits) != want {
			t.Errorf("search page %d: %d hits, %v; want %d", p, len(hits), err, want)
		}
	}
	runs, _ := db.Runs(ctx, store.RunFilter{})
	if len(runs) != 1 || runs[0].Pages != 3 || runs[0].Videos != 150 || runs[0].Units != 3 || runs[0].Status != store.StatusRunning {
		t.Fatalf("run after the crash: %+v", runs)
	}
	// The crashed process's run is recognised as dead.
	if n, err := db.MarkInterrupted(ctx, t0.Add(time.Hour)); n != 1 || err != nil {
		t.Errorf("MarkInterrupted: %d, %v", n, err)
	}
	// And the archive takes new pages.
	run := startRun(t, db, "US", t0.Add(time.Hour))
	if res := savePage(t, db, crashPage(run, 3)); res.New != 50 {
		t.Errorf("saving the lost page again: %+v", res)
	}
	ftsIntegrity(t, db)
}

func crashChild(path string) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Println("child error:", err)
		os.Exit(2)
	}
	var crash atomic.Bool // armed for page 3
	db, err := store.Open(ctx, path, store.WithPageTxHook(func() {
		if crash.Load() {
			fmt.Println("IN-PAGE-TX")
			time.Sleep(time.Hour) // until the parent's SIGKILL
		}
	}))
	if err != nil {
		fail(err)
	}
	// A tiny page cache makes SQLite spill the open transaction's pages into
	// the WAL before commit, so the crash leaves uncommitted frames behind.
	if _, err := db.Writer().ExecContext(ctx, `PRAGMA cache_size = 10`); err != nil {
		fail(err)
	}
	run, err := db.StartRun(ctx, "US", store.TriggerSchedule, t0)
	if err != nil {
		fail(err)
	}
	for p := 0; p < 3; p++ {
		if _, err := db.SavePage(ctx, crashPage(run, p)); err != nil {
			fail(err)
		}
	}
	crash.Store(true)
	db.SavePage(ctx, crashPage(run, 3))
	fail(errors.New("page 3 was committed"))
}

// Reader processes searching while other processes write pages see no
// error (no SQLITE_BUSY, no half-written page), and writers in two processes
// at once both get through.
func TestConcurrentProcesses(t *testing.T) {
	if path := os.Getenv(envReaderChild); path != "" {
		readerChild(path)
		return
	}
	if path := os.Getenv(envWriterChild); path != "" {
		writerChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	saveChart(t, db, "US", t0, 1, concurrentPage(0, "US")...)

	type proc struct {
		name  string
		cmd   *exec.Cmd
		ready chan struct{}
		out   chan string
	}
	start := func(name, env string) proc {
		cmd, out := child(t, "TestConcurrentProcesses", env, path)
		p := proc{name, cmd, make(chan struct{}), make(chan string, 1)}
		go func() {
			var b strings.Builder
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "READY" {
					close(p.ready)
				}
				b.WriteString(sc.Text() + "\n")
			}
			p.out <- b.String()
		}()
		return p
	}
	readers := []proc{start("reader 1", envReaderChild), start("reader 2", envReaderChild)}
	for _, r := range readers { // searching already, before any write
		select {
		case <-r.ready:
		case <-time.After(time.Minute):
			t.Fatalf("%s never got ready", r.name)
		}
	}
	writer := start("writer", envWriterChild)

	// This process writes US pages while the child writes DE pages.
	run := startRun(t, db, "US", t0)
	for p := 1; p <= pagesPerWriter; p++ {
		savePage(t, db, store.Page{RunID: run, Region: "US", FetchedAt: t0.Add(time.Duration(p) * time.Minute),
			Kind: store.PageChart, FirstRank: 1 + 10*p, Videos: concurrentPage(p, "US")})
		time.Sleep(5 * time.Millisecond) // a fetch's pace, roughly: let the readers interleave
	}
	// Read a child's output to the end before Wait, which closes the pipe.
	if out := <-writer.out; writer.cmd.Wait() != nil || !strings.Contains(out, "WRITER-OK") {
		t.Fatalf("writer child failed:\n%s", out)
	}
	if err := os.WriteFile(path+".stop", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range readers {
		out := <-r.out
		if err := r.cmd.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", r.name, err, out)
			continue
		}
		var searches, states, maxVideos int
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "READER-OK") {
				fmt.Sscanf(line, "READER-OK searches=%d states=%d max_videos=%d", &searches, &states, &maxVideos)
			}
		}
		// It searched while the archive changed under it, and at the end
		// saw everything.
		if states < 3 || maxVideos != 10*(1+2*pagesPerWriter) {
			t.Errorf("%s: %d searches saw %d archive states, at most %d videos\n%s", r.name, searches, states, maxVideos, out)
		}
		t.Logf("%s: %d searches saw %d archive states, up to %d videos", r.name, searches, states, maxVideos)
	}
	c, _ := db.Counts(context.Background())
	if want := int64(10 * (1 + 2*pagesPerWriter)); c.Videos != want {
		t.Errorf("%d videos, want %d", c.Videos, want)
	}
	ftsIntegrity(t, db)
}

const pagesPerWriter = 20 // 10 + 2*20*10 = 410 videos: all fit in one 500-hit search

func concurrentPage(p int, region string) []store.Video {
	vs := make([]store.Video, 10)
	for i := range vs {
		vs[i] = store.Video{ID: fmt.Sprintf("%s-%d-%d", region, p, i), Title: fmt.Sprintf("concurrent %s page %d", region, p),
			Description: "shared archive", ChannelID: "c" + region, ChannelTitle: "Channel " + region}
	}
	return vs
}

func writerChild(path string) {
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err == nil {
		var run int64
		run, err = db.StartRun(ctx, "DE", store.TriggerCLI, t0)
		for p := 1; err == nil && p <= pagesPerWriter; p++ {
			_, err = db.SavePage(ctx, store.Page{RunID: run, Region: "DE", FetchedAt: t0.Add(time.Duration(p) * time.Minute),
				Kind: store.PageChart, FirstRank: 1 + 10*p, Videos: concurrentPage(p, "DE")})
			time.Sleep(5 * time.Millisecond)
		}
		if err == nil {
			err = db.FinishRun(ctx, run, store.RunEnd{Status: store.StatusOK, At: t0.Add(time.Hour)})
		}
	}
	if err != nil {
		fmt.Println("WRITER-ERROR", err)
		os.Exit(1)
	}
	fmt.Println("WRITER-OK")
}

func readerChild(path string) {
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		fmt.Println("READER-ERROR", err)
		os.Exit(1)
	}
	searches, maxVideos := 0, 0
	states := map[int]bool{}
	for last := false; ; {
		if _, err := os.Stat(path + ".stop"); err == nil {
			last = true // one more round after the writers are done
		}
		hits, err := db.Search(ctx, store.Query{Text: "concurrent page", Limit: 500})
		if err == nil {
			_, err = db.Counts(ctx)
		}
		if err == nil {
			_, err = db.Runs(ctx, store.RunFilter{})
		}
		if err == nil && len(hits) > 0 {
			_, _, err = db.Video(ctx, hits[0].VideoID)
		}
		if err != nil {
			fmt.Println("READER-ERROR", err)
			os.Exit(1)
		}
		// Every page is whole: hits come in tens per (region, page).
		groups := map[string]int{}
		for _, h := range hits {
			groups[h.Title]++
		}
		for title, n := range groups {
			if n != 10 {
				fmt.Printf("READER-ERROR page %q has %d of its 10 videos\n", title, n)
				os.Exit(1)
			}
		}
		searches++
		if searches == 1 {
			fmt.Println("READY")
		}
		states[len(hits)] = true
		maxVideos = max(maxVideos, len(hits))
		if last {
			break
		}
	}
	fmt.Printf("READER-OK searches=%d states=%d max_videos=%d\n", searches, len(states), maxVideos)
}
