package ratelimit

import (
	"context"
	"sync"
	"time"
)

// DefaultMaxClients bounds the in-memory limiter: at 48 bytes of state plus
// the key and map overhead per client, about 20 MB.
const DefaultMaxClients = 100_000

// Memory is the in-memory limiter of one process. Clients idle for two
// windows hold no information (both buckets would be empty) and are evicted;
// past MaxClients active clients, the least recently seen half-window's worth
// is not tracked: the oldest entries are dropped to make room, so memory
// stays bounded whatever the number of addresses.
type Memory struct {
	limit Limit
	max   int
	now   func() time.Time

	mu      sync.Mutex
	clients map[string]*memEntry
	sweepAt int64 // bucket index of the last sweep
	evicted int64
}

type memEntry struct {
	s        state
	lastSeen int64 // ms
}

// MemoryOption configures NewMemory.
type MemoryOption func(*Memory)

// WithMaxClients bounds the clients tracked at once (default DefaultMaxClients).
func WithMaxClients(n int) MemoryOption { return func(m *Memory) { m.max = max(1, n) } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) MemoryOption { return func(m *Memory) { m.now = now } }

// NewMemory returns an in-memory limiter for l (which must Validate).
func NewMemory(l Limit, opts ...MemoryOption) *Memory {
	m := &Memory{limit: l, max: DefaultMaxClients, now: time.Now, clients: map[string]*memEntry{}}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Limit is the limit every client gets.
func (m *Memory) Limit() Limit { return m.limit }

// Allow decides one request of client.
func (m *Memory) Allow(_ context.Context, client string) (Decision, error) {
	now := m.now().UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	e, ok := m.clients[client]
	if !ok {
		if len(m.clients) >= m.max {
			m.evictOldest(now)
		}
		e = &memEntry{s: state{bucket: now / m.limit.Window.Milliseconds()}}
		m.clients[client] = e
	}
	var d Decision
	e.s, d = decide(e.s, now, m.limit)
	e.lastSeen = now
	return d, nil
}

// sweep drops, once per window, every client whose buckets are both empty
// by now (last seen two windows ago or more).
func (m *Memory) sweep(now int64) {
	win := m.limit.Window.Milliseconds()
	idx := now / win
	if idx == m.sweepAt {
		return
	}
	m.sweepAt = idx
	for k, e := range m.clients {
		if e.s.bucket < idx-1 {
			delete(m.clients, k)
		}
	}
}

// evictOldest makes room when the table is full of active clients: it drops
// the eighth seen longest ago, so that the O(n) scan is paid rarely.
func (m *Memory) evictOldest(now int64) {
	target := max(1, m.max/8)
	cutoff := now
	// Find a cutoff time by sampling: Go's map order is random.
	n := 0
	for _, e := range m.clients {
		cutoff = min(cutoff, e.lastSeen)
		if n++; n >= 64 {
			break
		}
	}
	for k, e := range m.clients {
		if len(m.clients) <= m.max-target {
			break
		}
		if e.lastSeen <= cutoff+m.limit.Window.Milliseconds()/2 {
			delete(m.clients, k)
			m.evicted++
		}
	}
	for k := range m.clients { // still full: anything goes
		if len(m.clients) < m.max {
			break
		}
		delete(m.clients, k)
		m.evicted++
	}
}

// Len is the number of clients tracked (tests, metrics).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.clients)
}
