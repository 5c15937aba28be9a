package replication

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"sort"
	"time"

	"github.com/benbjohnson/litestream"
	_ "github.com/benbjohnson/litestream/file" // file:// replicas
	_ "github.com/benbjohnson/litestream/nats" // nats:// replicas
	_ "github.com/benbjohnson/litestream/s3"   // s3:// replicas
	_ "github.com/benbjohnson/litestream/sftp" // sftp:// replicas
	"github.com/superfly/ltx"

	"github.com/ytrend/ytrend/internal/secret"
)

// Name is how a replica URL is shown: a password and key-like parameters
// masked. Credentials come from the environment (AWS_ACCESS_KEY_ID, ...),
// but a URL may still carry one.
func Name(rawURL string) string { return secret.URL(rawURL) }

// termDir is the path element of a term below a replica URL. Zero-padded so
// that a listing sorts terms in order.
func termDir(token int64) string { return fmt.Sprintf("term-%019d", token) }

// TermURL is the replica location of the term with the given fence token.
func TermURL(rawURL string, token int64) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("replica %s: %w", Name(rawURL), err)
	}
	u.Path = path.Join("/", u.Path, termDir(token))
	if u.Scheme == "file" {
		u.Host = ""
	}
	return u.String(), nil
}

// open returns Litestream's client for a URL, initialised. The caller
// closes it (closeClient): a nats:// client holds a connection from Init on.
// A failed Init may have connected too (NATS reached, the bucket missing),
// so a client that fails here is closed here.
func open(ctx context.Context, rawURL string) (litestream.ReplicaClient, error) {
	c, err := newClient(rawURL)
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", Name(rawURL), err)
	}
	if err := c.Init(ctx); err != nil {
		closeClient(c)
		return nil, fmt.Errorf("replica %s: %w", Name(rawURL), err)
	}
	return c, nil
}

// closeClient closes a client that holds a connection (nats://). Litestream
// never closes a client it is given, not even when its Replica or Store is
// closed: every client this package makes is closed by the code that made it.
func closeClient(c litestream.ReplicaClient) {
	if cl, ok := c.(io.Closer); ok {
		cl.Close()
	}
}

// indexLevel is the level of the term index's markers at the replica's
// root; terms' own files live below term-<token>/, never at the root.
const indexLevel = 0

// Term is one term found in a replica's term index.
type Term struct {
	Token   int64     `json:"token"`
	Started time.Time `json:"started"`
}

// Generation is the term's name in the replica, as status shows it.
func (t Term) Generation() string { return termDir(t.Token) }

// markTerm adds a term to the replica's term index: an LTX file whose TXID
// is the token and whose timestamp is the term's start. It holds no page of
// the archive; it is only listed.
func markTerm(ctx context.Context, c litestream.ReplicaClient, token int64, at time.Time) error {
	var buf bytes.Buffer
	enc, err := ltx.NewEncoder(&buf)
	if err != nil {
		return err
	}
	txid := ltx.TXID(token)
	if err := enc.EncodeHeader(ltx.Header{Version: ltx.Version, Flags: ltx.HeaderFlagNoChecksum, PageSize: 512, Commit: 1,
		MinTXID: txid, MaxTXID: txid, Timestamp: at.UnixMilli()}); err != nil {
		return err
	}
	if err := enc.EncodePage(ltx.PageHeader{Pgno: 1}, make([]byte, 512)); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = c.WriteLTXFile(ctx, indexLevel, txid, txid, &buf)
	return err
}

// Terms lists a replica's terms, newest first.
func Terms(ctx context.Context, rawURL string) ([]Term, error) {
	c, err := open(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	defer closeClient(c)
	return terms(ctx, c)
}

func terms(ctx context.Context, c litestream.ReplicaClient) ([]Term, error) {
	itr, err := c.LTXFiles(ctx, indexLevel, 0, true)
	if err != nil {
		return nil, err
	}
	defer itr.Close()
	var out []Term
	for itr.Next() {
		fi := itr.Item()
		out = append(out, Term{Token: int64(fi.MinTXID), Started: fi.CreatedAt})
	}
	if err := itr.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Token > out[j].Token })
	return out, nil
}

// position is the newest state a term's replica holds.
type position struct {
	TXID         ltx.TXID
	At           time.Time // when that transaction was written
	LastSnapshot time.Time // zero: none
	Files        int
	Bytes        int64
}

// termPosition reads a term's replica: its newest TXID across levels and
// its last snapshot.
func termPosition(ctx context.Context, c litestream.ReplicaClient) (position, error) {
	var p position
	for level := 0; level <= litestream.SnapshotLevel; level++ {
		itr, err := c.LTXFiles(ctx, level, 0, false)
		if err != nil {
			return p, err
		}
		for itr.Next() {
			fi := itr.Item()
			p.Files++
			p.Bytes += fi.Size
			if fi.MaxTXID > p.TXID || (fi.MaxTXID == p.TXID && fi.CreatedAt.After(p.At)) {
				p.TXID, p.At = fi.MaxTXID, fi.CreatedAt
			}
			if level == litestream.SnapshotLevel && fi.CreatedAt.After(p.LastSnapshot) {
				p.LastSnapshot = fi.CreatedAt
			}
		}
		err = itr.Err()
		itr.Close()
		if err != nil {
			return p, err
		}
	}
	return p, nil
}
