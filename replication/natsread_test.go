package replication_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/testkit/wait"
)

// natsDefaultTimeout is nats.go's jetstream defaultAPITimeout (v1.47.0,
// jetstream/jetstream.go), which its ObjectStore Get gives the whole read of
// an object when the caller's context has no deadline.
const natsDefaultTimeout = 5 * time.Second

// TestNATSObjectReadOutlastsNATSDefaultTimeout: a large LTX file read from
// a nats:// replica by a reader slower than nats.go's default timeout (a
// restore holds the snapshot's stream open while it spools the changes
// after it, then merges them page by page) reads whole. Before, the read
// failed with "nats: timeout" once 5 s had passed since the object was
// opened, whatever the progress: a restore of a big snapshot over NATS could
// never finish.
func TestNATSObjectReadOutlastsNATSDefaultTimeout(t *testing.T) {
	ctx := context.Background()
	url := natsURL(t)
	c, err := replication.OpenTerm(ctx, url, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replication.CloseClient(c) })

	want := putBigFile(t, c)

	opened := time.Now()
	rc, err := c.OpenLTXFile(ctx, 0, 1, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	// The reader takes a MiB at a time, paced so that the whole read spans
	// 7 s: no wait between two reads comes near 5 s, the read as a whole
	// outlasts it.
	const span = natsDefaultTimeout + 2*time.Second
	got := make([]byte, 0, len(want))
	buf := make([]byte, 1<<20)
	for i := 0; ; i++ {
		due := opened.Add(span * time.Duration(i) / time.Duration(len(want)>>20))
		wait.For(t, "the reader's next turn", time.Minute, func() bool { return !time.Now().Before(due) })
		n, err := io.ReadFull(rc, buf)
		got = append(got, buf[:n]...)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			t.Fatalf("read %d of %d bytes in %v, then: %v", len(got), len(want), time.Since(opened).Round(time.Millisecond), err)
		}
	}
	if elapsed := time.Since(opened); elapsed <= natsDefaultTimeout {
		t.Fatalf("the read took %v, not past nats.go's default timeout: it proves nothing", elapsed)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
}

// putBigFile writes a snapshot of 40 MiB of pages that LZ4 cannot shrink
// as the LTX file of TXID 1 at level 0 of c, and returns its bytes.
func putBigFile(tb testing.TB, c litestream.ReplicaClient) []byte {
	tb.Helper()
	ctx := context.Background()
	const pageSize, pages = 4096, 10240
	var file bytes.Buffer
	enc, err := ltx.NewEncoder(&file)
	if err != nil {
		tb.Fatal(err)
	}
	if err := enc.EncodeHeader(ltx.Header{Version: ltx.Version, Flags: ltx.HeaderFlagNoChecksum, PageSize: pageSize, Commit: pages,
		MinTXID: 1, MaxTXID: 1, Timestamp: time.Now().UnixMilli()}); err != nil {
		tb.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{1})
	page := make([]byte, pageSize)
	for pgno := uint32(1); pgno <= pages; pgno++ {
		rng.Read(page)
		if err := enc.EncodePage(ltx.PageHeader{Pgno: pgno}, page); err != nil {
			tb.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		tb.Fatal(err)
	}
	want := file.Bytes()
	if len(want) < 40<<20 {
		tb.Fatalf("the file is %d bytes, want at least 40 MiB", len(want))
	}
	if _, err := c.WriteLTXFile(ctx, 0, 1, 1, bytes.NewReader(want)); err != nil {
		tb.Fatal(err)
	}

	return want
}

// TestNATSObjectReadFailsWhenNoByteComes: a read of an object that stops
// receiving (the link to NATS stalls) fails once a Read has waited the
// stall limit with no byte, saying so.
func TestNATSObjectReadFailsWhenNoByteComes(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(natsURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr
	c, err := replication.OpenTerm(ctx, u.String(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replication.CloseClient(c) })
	want := putBigFile(t, c)
	c = replication.WithStall(c, 2*time.Second)

	rc, err := c.OpenLTXFile(ctx, 0, 1, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	buf := make([]byte, 1<<20)
	if n, err := io.ReadFull(rc, buf); err != nil {
		t.Fatalf("the first MiB: %d bytes, %v", n, err)
	}
	p.hold.Lock()
	defer p.hold.Unlock()
	// What the client already received is read; then nothing comes.
	got := len(buf)
	for {
		n, err := rc.Read(buf)
		got += n
		if err != nil {
			if !strings.Contains(err.Error(), "no byte of the object for 2s") {
				t.Fatalf("read %d of %d bytes, then: %v; want the stall reported", got, len(want), err)
			}
			break
		}
		if got >= len(want) {
			t.Fatalf("read the whole object (%d bytes) through a proxy that held it", got)
		}
	}
	if n, err2 := rc.Read(buf); n != 0 || err2 == nil {
		t.Errorf("a read after the stall: %d bytes, %v; want the error again", n, err2)
	}
}
