package replication_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestNATSObjectReadEndsAtEOF: an object read from NATS to its end answers
// io.EOF to every later Read until it is closed, however late the reader
// comes back. A restore relies on it: io.Copy (spool) and the LTX decoder
// read once more to see the end.
//
// nats.go v1.41.1 to v1.46.x cancelled a Get's context as soon as the
// subscription that delivered its chunks ended (jetstream/object.go, Get:
// sub.SetClosedHandler calling cancel), and objResult.Read checks that
// context before it looks at the pipe: a reader whose last Read came after
// the subscription's goroutine ran the handler got context.Canceled for a
// file it had read whole. TestFollowNATS failed so, at random and more
// under load, with "restore: level 0 ...ltx: context canceled". Fixed in
// nats.go v1.47.0 (the context is cancelled by Close). Here the late Read
// is made certain: it waits for that goroutine to be gone.
func TestNATSObjectReadEndsAtEOF(t *testing.T) {
	ctx := context.Background()
	url := natsURL(t)
	i := strings.LastIndex(url, "/")
	nc, err := nats.Connect(url[:i])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(ctx, url[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("ltx."), 100_000) // several chunks
	if _, err := obs.PutBytes(ctx, "file.ltx", want); err != nil {
		t.Fatal(err)
	}

	// The connection's own subscriptions (replies to requests and to the
	// Put's publishes) keep theirs running: none would mean the count
	// below no longer finds them.
	before := deliveries(nc)
	if before == 0 {
		t.Fatal("no goroutine delivering to the connection found in the goroutine dump")
	}
	r, err := obs.Get(ctx, "file.ltx")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d of %d bytes: %v", len(got), len(want), err)
	}
	eventually(t, "the object's subscription ends", func() (bool, string) {
		n := deliveries(nc)
		return n <= before, fmt.Sprintf("%d goroutines delivering to the connection, %d before the read", n, before)
	})
	for range 3 {
		if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("a read after the end: %d bytes, %v; want io.EOF", n, err)
		}
	}
}

// deliveries counts the goroutines that deliver messages to nc's
// subscriptions with a callback (nats.go's waitForMsgs, one for each): one
// runs for a Get until its last chunk is delivered and its subscription
// closed.
func deliveries(nc *nats.Conn) int {
	var buf bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&buf, 2)
	// A frame reads "nats%2ego.(*Conn).waitForMsgs(0xc000252e08, 0x...)";
	// an argument the traceback is unsure of is printed with a "?".
	prefix := fmt.Sprintf(".(*Conn).waitForMsgs(%p", nc)
	return strings.Count(buf.String(), prefix+",") + strings.Count(buf.String(), prefix+"?")
}
