package replication

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/benbjohnson/litestream/nats"
	"github.com/superfly/ltx"
)

// A read of an object from a nats:// replica is bounded by its progress,
// not by nats.go's default timeout.
//
// nats.go's ObjectStore Get (v1.47.0, jetstream/object.go) gives a context
// without a deadline one of 5 s (jetstream.go, wrapContextWithoutDeadline,
// defaultAPITimeout), and that context bounds the whole object: its chunks'
// subscription ends at it, and every Read after it fails with
// nats.ErrTimeout. Litestream passes on the caller's context, which has no
// deadline in a restore or a follow, so a snapshot not read whole within 5 s
// of its opening (tens of MB over a slow link, or a restore that holds the
// snapshot open while it spools the changes after it) could never be read.
//
// So each object read gets a deadline of objectReadLimit, which nats.go
// keeps, and fails instead when no byte arrives for stallLimit while a Read
// waits. A Read that waits on nats.go cannot be interrupted before that
// deadline (it holds the result's lock, and only its deadline or a chunk
// wakes it): Read waits on it in a goroutine, so that a stall or the
// caller's cancellation returns at once, and an abandoned read's goroutine
// ends, and the result is closed, at the deadline.
const (
	objectReadLimit = 24 * time.Hour
	stallLimit      = time.Minute
)

// natsClient is Litestream's NATS client with object reads bounded by
// their progress.
type natsClient struct {
	*nats.ReplicaClient
	stall time.Duration
}

func (c natsClient) OpenLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, offset, size int64) (io.ReadCloser, error) {
	rctx, cancel := context.WithTimeout(ctx, objectReadLimit)
	rc, err := c.ReplicaClient.OpenLTXFile(rctx, level, minTXID, maxTXID, offset, size)
	if err != nil {
		cancel()
		return nil, err
	}
	return &progressRead{ctx: ctx, rc: rc, cancel: cancel, stall: c.stall}, nil
}

// progressRead reads rc, failing when a Read waits stall with no byte, or
// when ctx ends.
type progressRead struct {
	ctx    context.Context
	rc     io.ReadCloser
	cancel context.CancelFunc
	stall  time.Duration

	buf       []byte
	abandoned chan readResult // a read of rc still running; nil: none
	err       error
}

type readResult struct {
	n   int
	err error
}

func (r *progressRead) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if cap(r.buf) < len(p) {
		r.buf = make([]byte, len(p))
	}
	buf := r.buf[:len(p)]
	done := make(chan readResult, 1)
	go func() {
		n, err := r.rc.Read(buf)
		done <- readResult{n, err}
	}()
	t := time.NewTimer(r.stall)
	defer t.Stop()
	select {
	case res := <-done:
		return copy(p, buf[:res.n]), res.err
	case <-r.ctx.Done():
		r.err = r.ctx.Err()
	case <-t.C:
		r.err = fmt.Errorf("nats: no byte of the object for %v", r.stall)
	}
	r.abandoned, r.buf = done, nil // the running read still writes into buf
	return 0, r.err
}

func (r *progressRead) Close() error {
	r.cancel()
	if r.abandoned == nil {
		return r.rc.Close()
	}
	go func() {
		<-r.abandoned
		r.rc.Close()
	}()
	return nil
}
