package daemon

import (
	"context"
	"sync"

	"github.com/ytrend/ytrend/replication"
)

// handover passes a standby's copy to the takeover of the same term, and
// back. When this process begins a term, the standby stops following
// (Follower.Stop: everything replicated applied), then gives the copy, or
// "no copy" at once when it was not following; the replicator's takeover
// takes it for that term's fence token, and adopts it rather than
// restoring the previous term when it provably holds all of it
// (replication.Takeover). Before following again, the standby reclaims
// the file: a copy nobody took is withdrawn, one being adopted is waited
// for.
//
// Keyed by the token: a copy given for a term that ended is never adopted
// for the next. Every wait ends with its caller's context (the term's end,
// the daemon's close).
type handover struct {
	mu     sync.Mutex
	token  int64                 // the term the copy was given for
	copy   *replication.Handover // nil: no copy for token (or taken)
	why    string                // why there is none
	inUse  chan struct{}         // non-nil while a takeover adopts the copy; closed when done
	change chan struct{}         // closed when any of the above changes
}

func newHandover() *handover { return &handover{change: make(chan struct{})} }

// changed needs h.mu.
func (h *handover) changed() {
	close(h.change)
	h.change = make(chan struct{})
}

// give hands the copy over for the term token; c nil: none, for why.
func (h *handover) give(token int64, c *replication.Handover, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.token, h.copy, h.why = token, c, why
	h.changed()
}

// take waits for what the standby gives for the term token. With a copy,
// release must be called once the takeover no longer reads or writes it.
// ok is false when ctx ended first.
func (h *handover) take(ctx context.Context, token int64) (c *replication.Handover, why string, release func(), ok bool) {
	for {
		h.mu.Lock()
		if h.token == token {
			c, why = h.copy, h.why
			h.copy = nil
			release = func() {}
			if c != nil {
				done := make(chan struct{})
				h.inUse = done
				release = func() {
					h.mu.Lock()
					defer h.mu.Unlock()
					close(done)
					h.inUse = nil
					h.changed()
				}
			}
			h.mu.Unlock()
			return c, why, release, true
		}
		change := h.change
		h.mu.Unlock()
		select {
		case <-change:
		case <-ctx.Done():
			return nil, "", nil, false
		}
	}
}

// reclaim gives the copy back to the standby: one not taken is withdrawn,
// one in use is waited for. false when ctx ended first.
func (h *handover) reclaim(ctx context.Context) bool {
	for {
		h.mu.Lock()
		h.copy, h.why = nil, "withdrawn: the standby follows again"
		inUse := h.inUse
		h.mu.Unlock()
		if inUse == nil {
			return true
		}
		select {
		case <-inUse:
		case <-ctx.Done():
			return false
		}
	}
}
