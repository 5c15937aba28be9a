package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// stop is the one shutdown of every long-running command (run, fetch,
// simulate, serve), in two stages built on signal.NotifyContext:
//
//   - the first SIGINT or SIGTERM ends Soft: start nothing new, let what is
//     in flight finish and be stored;
//   - the second ends Hard: abandon what is in flight now.
//
// Hard also ends when the command's own context does, and when close is
// called. A command passes Hard as the context of its work and watches Soft
// (or hands Soft.Done() on as a stop channel).
type stop struct {
	Soft  context.Context
	Hard  context.Context
	close func()
}

var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// newStop starts listening. say, if not nil, is told what each stage means
// for the user ("finishing the page in flight ..."): it receives the signal's
// description and which stage it began.
func newStop(parent context.Context, say func(sig string, hard bool)) *stop {
	soft, stopSoft := signal.NotifyContext(parent, shutdownSignals...)
	hard, cancelHard := context.WithCancel(parent)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-soft.Done():
		case <-done:
			return
		}
		if parent.Err() != nil {
			return // not a signal: Hard has ended with the parent
		}
		if say != nil {
			say(signalName(soft), false)
		}
		// Register the second stage before releasing the first, so that no
		// signal in between falls through to the default action (exit).
		second, stopSecond := signal.NotifyContext(hard, shutdownSignals...)
		defer stopSecond()
		stopSoft()
		select {
		case <-second.Done():
			if hard.Err() == nil && say != nil {
				say(signalName(second), true)
			}
			cancelHard()
		case <-done:
		}
	}()
	return &stop{Soft: soft, Hard: hard, close: func() {
		close(done)
		<-finished
		stopSoft()
		cancelHard()
	}}
}

// tellUser prints, for a command a person runs in a terminal, what each
// stage of the stop does: the first, "<what>, then stopping".
func tellUser(w io.Writer, what string) func(string, bool) {
	return func(sig string, hard bool) {
		if hard {
			fmt.Fprintf(w, "ytrend: second %s: stopping now\n", sig)
			return
		}
		fmt.Fprintf(w, "ytrend: %s: %s, then stopping (send again to stop at once)\n", sig, what)
	}
}

// signalName is what a NotifyContext's cause says, e.g. "interrupt".
func signalName(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil {
		if sig, ok := strings.CutSuffix(cause.Error(), " signal received"); ok && sig != "" {
			return sig
		}
	}
	return "signal"
}
