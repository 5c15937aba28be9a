package daemon

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Signals is the one shutdown of every long-running command (run, fetch,
// simulate, serve, import, migrate), in two stages built on
// signal.NotifyContext:
//
//   - the first SIGINT or SIGTERM ends Soft: start nothing new, let what is
//     in flight finish and be stored;
//   - the second ends Hard: abandon what is in flight now.
//
// Hard also ends when the command's own context does, and when Close is
// called. A command passes Hard as the context of its work and watches Soft
// (or hands Soft.Done() on as a stop channel); the daemon maps Soft onto
// its Stop and Hard onto its StopAndCancel (see Run).
type Signals struct {
	Soft  context.Context
	Hard  context.Context
	close func()
}

// Close stops listening for signals and ends both stages.
func (s *Signals) Close() { s.close() }

var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// OnSignals starts listening. say, if not nil, is told what each stage means
// for the user ("finishing the page in flight ..."): it receives the signal's
// description and which stage it began.
func OnSignals(parent context.Context, say func(sig string, hard bool)) *Signals {
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
		// Register the second stage before anything else, and before
		// releasing the first: a signal in between would otherwise fall
		// through to the default action (exit), or sit in the first stage's
		// channel and be dropped with it.
		second, stopSecond := signal.NotifyContext(hard, shutdownSignals...)
		defer stopSecond()
		stopSoft()
		if say != nil {
			say(signalName(soft), false)
		}
		select {
		case <-second.Done():
			if hard.Err() == nil && say != nil {
				say(signalName(second), true)
			}
			cancelHard()
		case <-done:
		}
	}()
	return &Signals{Soft: soft, Hard: hard, close: func() {
		close(done)
		<-finished
		stopSoft()
		cancelHard()
	}}
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
