package daemon

import (
	"context"
	"testing"

	"github.com/ytrend/ytrend/replication"
)

// TestHandover: a takeover gets the copy given for its own term only, and
// "no copy" with the standby's reason; a wait ends with its context (the
// term's end, the daemon's close); the standby gets the file back only
// once the takeover released it, and a copy nobody took is withdrawn.
// No wait here depends on timing: an ended context is ended from the start.
func TestHandover(t *testing.T) {
	h := newHandover()
	ended, cancel := context.WithCancel(context.Background())
	cancel() // a term that ended, a daemon that closes
	c := &replication.Handover{Path: "x.db.standby", Position: replication.Position{Term: 4, TXID: "0000000000000009"}}

	// A copy given for term 5 is not term 6's: term 6's wait ends with it.
	h.give(5, c, "")
	if _, _, _, ok := h.take(ended, 6); ok {
		t.Fatal("term 6 took term 5's copy")
	}

	// Given after the wait began: taken; the standby's reclaim waits for
	// the release.
	got := make(chan *replication.Handover)
	var release func()
	go func() {
		copy, _, rel, ok := h.take(context.Background(), 7)
		if !ok {
			t.Error("term 7's take ended without the copy")
		}
		release = rel
		got <- copy
	}()
	h.give(7, c, "")
	if copy := <-got; copy != c {
		t.Fatalf("term 7 took %v, want the copy given", copy)
	}
	if h.reclaim(ended) {
		t.Fatal("the standby reclaimed the copy while the takeover adopts it")
	}
	reclaimed := make(chan bool)
	go func() { reclaimed <- h.reclaim(context.Background()) }()
	release()
	if !<-reclaimed {
		t.Fatal("reclaim failed after the release")
	}

	// Not following: "no copy" at once, with why. A copy not taken before
	// the standby follows again is withdrawn.
	h.give(9, nil, "the standby was not following")
	if copy, why, _, ok := h.take(context.Background(), 9); !ok || copy != nil || why != "the standby was not following" {
		t.Errorf("term 9: %v %q %v; want no copy, and why", copy, why, ok)
	}
	h.give(10, c, "")
	if !h.reclaim(context.Background()) {
		t.Fatal("reclaim of an untaken copy failed")
	}
	if copy, _, _, ok := h.take(context.Background(), 10); !ok || copy != nil {
		t.Errorf("term 10 took %v after the standby withdrew it", copy)
	}
}
