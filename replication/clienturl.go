package replication

import (
	"net/url"
	"strings"

	"github.com/benbjohnson/litestream"
	"github.com/benbjohnson/litestream/nats"
	"github.com/benbjohnson/litestream/s3"
)

// newClient is Litestream's client for a replica URL, a term's included.
//
// Litestream reads a nats:// URL's whole path as the object store's bucket
// (nats://host:4222/bucket) and has no URL form for a path inside it, so a
// term's URL (nats://host:4222/bucket/term-<token>) would name a bucket that
// does not exist: the first path element is the bucket, the rest goes to
// the client's Path, where Litestream's other clients put a URL's path.
//
// Litestream's s3 client takes its keys from the environment only and
// ignores a URL's user info; an s3://KEY:SECRET@bucket/path URL gives them
// here (the URL's keys win over the environment's, as the more specific).
//
// A nats:// client's object reads are bounded by their progress (natsClient).
func newClient(rawURL string) (litestream.ReplicaClient, error) {
	u, err := url.Parse(rawURL)
	if err == nil && u.Scheme == "s3" && u.User != nil {
		c, err := litestream.NewReplicaClientFromURL(rawURL)
		if err != nil {
			return nil, err
		}
		if sc, ok := c.(*s3.ReplicaClient); ok {
			if secretKey, ok := u.User.Password(); ok {
				sc.AccessKeyID, sc.SecretAccessKey = u.User.Username(), secretKey
			}
		}
		return c, nil
	}
	if err != nil || u.Scheme != "nats" {
		return litestream.NewReplicaClientFromURL(rawURL)
	}
	bucket, sub, _ := strings.Cut(strings.Trim(u.Path, "/"), "/")
	u.Path = "/" + bucket
	c, err := litestream.NewReplicaClientFromURL(u.String())
	if err != nil {
		return nil, err
	}
	nc, ok := c.(*nats.ReplicaClient)
	if !ok {
		return c, nil
	}
	nc.Path = sub
	return natsClient{ReplicaClient: nc, stall: stallLimit}, nil
}
