package replication

import (
	"context"
	"time"
)

// MarkTerm records a term in a replica's term index with nothing in it
// yet: a leader that died between starting its term and its first sync.
func MarkTerm(ctx context.Context, rawURL string, token int64) error {
	c, err := open(ctx, rawURL)
	if err != nil {
		return err
	}
	defer closeClient(c)
	return markTerm(ctx, c, token, time.Now())
}
