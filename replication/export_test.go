package replication

import (
	"context"
	"log/slog"
	"time"

	"github.com/benbjohnson/litestream"
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

// RestoreTermCopy restores the latest state of term token of a replica into
// a new file at path the way Restore does, before any change of its own
// (no lease continued).
func RestoreTermCopy(ctx context.Context, rawURL string, token int64, path string) error {
	turl, err := TermURL(rawURL, token)
	if err != nil {
		return err
	}
	c, err := open(ctx, turl)
	if err != nil {
		return err
	}
	defer closeClient(c)
	log := slog.New(slog.DiscardHandler)
	infos, err := litestream.CalcRestorePlan(ctx, c, 0, time.Time{}, log)
	if err != nil {
		return err
	}
	return restoreCopy(ctx, c, path, infos, log)
}

// Compact compacts the term's files into level now, as Litestream's
// compaction monitor does at level's interval.
func (s *Stream) Compact(ctx context.Context, level int) error {
	for _, r := range s.replicas {
		if _, err := r.db.Compact(ctx, level); err != nil {
			return err
		}
	}
	return nil
}

// OpenTerm is a Litestream client of a term of a replica.
func OpenTerm(ctx context.Context, rawURL string, token int64) (litestream.ReplicaClient, error) {
	turl, err := TermURL(rawURL, token)
	if err != nil {
		return nil, err
	}
	return open(ctx, turl)
}

// CloseClient closes a client OpenTerm made.
func CloseClient(c litestream.ReplicaClient) { closeClient(c) }

// WithStall is c with object reads failing after d without a byte.
func WithStall(c litestream.ReplicaClient, d time.Duration) litestream.ReplicaClient {
	if nc, ok := c.(natsClient); ok {
		nc.stall = d
		return nc
	}
	return c
}
