package replication

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/benbjohnson/litestream/file"
	"github.com/superfly/ltx"
)

// stuckLister is a real file replica whose listing never answers until its
// context ends, as nats.go's List did when the request behind its watcher
// was lost.
type stuckLister struct {
	litestream.ReplicaClient
	listed chan context.Context
}

func (c *stuckLister) LTXFiles(ctx context.Context, _ int, _ ltx.TXID, _ bool) (ltx.FileIterator, error) {
	c.listed <- ctx
	<-ctx.Done()
	return nil, ctx.Err()
}

// A listing that never answers ends with an error Litestream retries,
// after listTimeout, and a listing that answers keeps its context until
// its iterator is closed.
func TestListingThatNeverAnswersEnds(t *testing.T) {
	defer func(d time.Duration) { listTimeout = d }(listTimeout)
	listTimeout = 50 * time.Millisecond

	stuck := &stuckLister{ReplicaClient: file.NewReplicaClient(t.TempDir()), listed: make(chan context.Context, 1)}
	c := &observed{ReplicaClient: stuck, r: &streamed{name: "stuck"}}
	done := make(chan error, 1)
	go func() {
		_, err := c.LTXFiles(context.Background(), 0, 0, false)
		done <- err
	}()
	ctx := <-stuck.listed
	if _, ok := ctx.Deadline(); !ok {
		t.Fatal("the listing's context has no deadline")
	}
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a listing that never answers returned %v; want DeadlineExceeded", err)
	}
	if c.r.errors != 1 {
		t.Errorf("errors counted: %d, want 1", c.r.errors)
	}

	// A real listing: its context lives until Close, and ends there.
	listTimeout = time.Hour
	rec := &recordingLister{ReplicaClient: file.NewReplicaClient(t.TempDir())}
	real := &observed{ReplicaClient: rec, r: &streamed{name: "file"}}
	itr, err := real.LTXFiles(context.Background(), 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	for itr.Next() {
	}
	if err := rec.ctx.Err(); err != nil {
		t.Fatalf("the listing's context ended before Close: %v", err)
	}
	if err := itr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("the listing's context after Close: %v; want Canceled", err)
	}
}

// recordingLister is a real file replica that keeps its last listing's
// context.
type recordingLister struct {
	litestream.ReplicaClient
	ctx context.Context
}

func (c *recordingLister) LTXFiles(ctx context.Context, level int, seek ltx.TXID, useMetadata bool) (ltx.FileIterator, error) {
	c.ctx = ctx
	return c.ReplicaClient.LTXFiles(ctx, level, seek, useMetadata)
}
