package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stopper implements the two-stage shutdown every long command shares: the
// first SIGINT/SIGTERM closes soft (finish the page in flight, store it,
// stop); the second cancels ctx (abandon what is in flight) at once.
type stopper struct {
	ctx    context.Context
	soft   chan struct{}
	cancel context.CancelFunc
	sigs   chan os.Signal
	done   chan struct{}
}

func newStopper(parent context.Context, stderr io.Writer) *stopper {
	ctx, cancel := context.WithCancel(parent)
	s := &stopper{ctx: ctx, soft: make(chan struct{}), cancel: cancel, sigs: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-s.sigs:
			fmt.Fprintf(stderr, "ytrend: %s: finishing the page in flight, then stopping (send again to stop at once)\n", sig)
			close(s.soft)
		case <-s.done:
			return
		}
		select {
		case sig := <-s.sigs:
			fmt.Fprintf(stderr, "ytrend: second %s: stopping now\n", sig)
			cancel()
		case <-s.done:
		}
	}()
	return s
}

// Soft is closed at the first signal.
func (s *stopper) Soft() <-chan struct{} { return s.soft }

func (s *stopper) close() {
	signal.Stop(s.sigs)
	close(s.done)
	s.cancel()
}
