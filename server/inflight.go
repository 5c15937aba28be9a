package server

import (
	"context"
	"sync"
	"time"
)

// inflight bounds the requests one client has in flight, beside the rate
// limit: a rate admits a client's requests over a window, but a few heavy
// ones at once (a search over every region, sorted by views) could hold
// every connection of the archive's pools. Past the bound a request waits
// briefly for one of the client's own to finish, then is refused with 429.
//
// A client's entry lives only while it has a request in flight or waiting,
// so the map is as large as the requests being served.
type inflight struct {
	limit int
	wait  time.Duration

	mu      sync.Mutex
	clients map[string]*clientSlots
}

type clientSlots struct {
	sem   chan struct{}
	users int // in flight or waiting
}

func newInflight(limit int, wait time.Duration) *inflight {
	return &inflight{limit: limit, wait: wait, clients: map[string]*clientSlots{}}
}

// acquire takes one of client's slots, waiting up to the configured wait;
// done gives it back. ok is false when none freed up in time.
func (f *inflight) acquire(ctx context.Context, client string) (done func(), ok bool) {
	f.mu.Lock()
	c := f.clients[client]
	if c == nil {
		c = &clientSlots{sem: make(chan struct{}, f.limit)}
		f.clients[client] = c
	}
	c.users++
	f.mu.Unlock()
	leave := func() {
		f.mu.Lock()
		if c.users--; c.users == 0 {
			delete(f.clients, client)
		}
		f.mu.Unlock()
	}
	select {
	case c.sem <- struct{}{}:
		return func() { <-c.sem; leave() }, true
	default:
	}
	t := time.NewTimer(f.wait)
	defer t.Stop()
	select {
	case c.sem <- struct{}{}:
		return func() { <-c.sem; leave() }, true
	case <-t.C:
	case <-ctx.Done():
	}
	leave()
	return nil, false
}
