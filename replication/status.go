package replication

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"
)

// Status is one replica's state as `ytrend archive status` shows it.
type Status struct {
	Replica       string    `json:"replica"`        // the URL, secrets masked
	Generation    string    `json:"generation"`     // the newest term: term-<fence token>
	Position      string    `json:"position"`       // the newest TXID the replica holds
	LocalPosition string    `json:"local_position"` // the archive's TXID as the writer last saw it
	LagSeconds    float64   `json:"lag_seconds"`    // time the replica has been behind the archive
	LastSync      time.Time `json:"last_sync"`      // the last write to the replica
	LastSnapshot  time.Time `json:"last_snapshot"`  // the term's last full snapshot
	Errors        int64     `json:"errors"`         // failed replica calls during the writer's term
	LastError     string    `json:"last_error,omitempty"`
	LastErrorAt   time.Time `json:"last_error_at"`
	Streaming     bool      `json:"streaming"`  // the writer's status file is current
	UpdatedAt     time.Time `json:"updated_at"` // when the writer last wrote it
}

// ReadStatus reports each replica of the archive at path: what the replica
// holds (read from it now) and what the process streaming it last wrote
// down beside the archive (lag, errors). A replica that cannot be read
// reports the error in LastError.
func ReadStatus(ctx context.Context, path string, urls []string) []Status {
	var written []Status
	if data, err := os.ReadFile(statusPath(path)); err == nil {
		json.Unmarshal(data, &written)
	}
	out := make([]Status, 0, len(urls))
	for _, raw := range urls {
		st := Status{Replica: Name(raw)}
		for _, w := range written {
			if w.Replica == st.Replica {
				st = w
				st.Streaming = time.Since(w.UpdatedAt) < time.Minute
			}
		}
		if err := readReplica(ctx, raw, &st); err != nil {
			st.LastError, st.LastErrorAt = err.Error(), time.Now()
		}
		out = append(out, st)
	}
	return out
}

// readReplica fills in what the replica itself holds: its newest term, the
// term's position and last snapshot.
func readReplica(ctx context.Context, raw string, st *Status) error {
	ts, err := Terms(ctx, raw)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		return errors.New("empty: no term has written to this replica")
	}
	turl, err := TermURL(raw, ts[0].Token)
	if err != nil {
		return err
	}
	c, err := open(ctx, turl)
	if err != nil {
		return err
	}
	defer closeClient(c)
	p, err := termPosition(ctx, c)
	if err != nil {
		return err
	}
	st.Generation, st.Position, st.LastSnapshot = ts[0].Generation(), p.TXID.String(), p.LastSnapshot
	if st.LastSync.IsZero() {
		st.LastSync = p.At
	}
	return nil
}
