package daemon

import (
	"context"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The first signal ends Soft only; the second ends Hard; each stage is told
// once, with the signal's name.
func TestStopTwoStages(t *testing.T) {
	var mu sync.Mutex
	var said []string
	st := OnSignals(context.Background(), func(sig string, hard bool) {
		mu.Lock()
		defer mu.Unlock()
		said = append(said, sig+map[bool]string{false: " soft", true: " hard"}[hard])
	})
	defer st.Close()

	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitDone(t, st.Soft, "soft stage after the first signal")
	// The second stage registers before the first lets go; wait for the
	// message that follows its registration before signalling again.
	waitSaid(t, &mu, &said, 1)
	if st.Hard.Err() != nil {
		t.Fatal("hard stage ended at the first signal")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitDone(t, st.Hard, "hard stage after the second signal")
	waitSaid(t, &mu, &said, 2)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"interrupt soft", "terminated hard"}; !slices.Equal(said, want) {
		t.Errorf("told %q, want %q", said, want)
	}
}

// A parent that ends is not a signal: both stages end, and nobody is told.
func TestStopFollowsParent(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	told := make(chan string, 2)
	st := OnSignals(parent, func(sig string, hard bool) { told <- sig })
	cancel()
	waitDone(t, st.Soft, "soft stage after the parent ended")
	waitDone(t, st.Hard, "hard stage after the parent ended")
	st.Close()
	select {
	case s := <-told:
		t.Errorf("told %q for a parent's end", s)
	default:
	}
}

// close releases everything even when no signal came.
func TestStopClose(t *testing.T) {
	st := OnSignals(context.Background(), nil)
	st.Close()
	if st.Hard.Err() == nil || st.Soft.Err() == nil {
		t.Errorf("after close: soft %v, hard %v; want both ended", st.Soft.Err(), st.Hard.Err())
	}
}

func waitDone(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
	}
}

func waitSaid(t *testing.T, mu *sync.Mutex, said *[]string, n int) {
	t.Helper()
	for range 1000 {
		mu.Lock()
		got := len(*said)
		mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("stage %d never told", n)
}
