// Package logbuf is a bytes.Buffer that several goroutines may write while a
// test reads it: the sink for loggers and child processes under test.
package logbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent use. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
