package replication

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// termPath is the file naming the last term streamed from the archive at
// path.
func termPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"-replicas", "term")
}

// ownTerm is the last term streamed from the archive at path, 0 if none.
func ownTerm(path string) int64 {
	data, err := os.ReadFile(termPath(path))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n
}

// Replacer is the archive a takeover copies the previous terms into
// (*store.DB).
type Replacer interface {
	Path() string
	ReplaceWith(ctx context.Context, src string, keep ...string) error
}

// Takeover brings a new leader's archive up to everything the previous
// terms replicated, before the term with fence token writes: it restores
// the newest earlier term into a file beside the archive and replaces the
// archive's content with it. When the newest earlier term was streamed from
// this very archive file (a restart, or a leader that lost the lease and
// won it back with no term between), the archive already holds all of it,
// and more (pages stored after it stopped, a fetch or import run meanwhile),
// so nothing is done. ok is false when there was nothing to adopt.
func Takeover(ctx context.Context, urls []string, token int64, db Replacer, opt RestoreOptions) (r Restored, ok bool, err error) {
	if own := ownTerm(db.Path()); own != 0 {
		newest, read := int64(0), 0
		var errs []error
		for _, raw := range urls {
			ts, err := Terms(ctx, raw)
			if err != nil {
				errs = append(errs, fmt.Errorf("replica %s: list terms: %w", Name(raw), err))
				continue
			}
			read++
			for _, t := range ts {
				if t.Token < token && t.Token > newest {
					newest = t.Token
				}
			}
		}
		if read == 0 {
			return Restored{}, false, errors.Join(errs...)
		}
		if newest <= own {
			return Restored{}, false, nil
		}
	}
	tmp := db.Path() + ".takeover"
	cleanup := func() {
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", tmp + ".tmp"} {
			os.Remove(p)
		}
	}
	cleanup() // a takeover that crashed left it
	defer cleanup()
	opt.Before = token
	r, err = Restore(ctx, urls, tmp, opt)
	if errors.Is(err, ErrEmpty) {
		return Restored{}, false, nil
	}
	if err != nil {
		return Restored{}, false, err
	}
	// The budget's records of grants are keyed by grant id: the union of the
	// standby's and the previous term's forgets none and counts none twice.
	// The processes registered in this archive (instances) stay too: a
	// process whose row vanished would see its own runs in flight as
	// abandoned, and its sweep would mark them interrupted.
	if err := db.ReplaceWith(ctx, tmp, "quota_grants", "quota_mirror", "instances"); err != nil {
		return Restored{}, false, fmt.Errorf("adopt %s from replica %s: %w", r.Generation, r.Replica, err)
	}
	return r, true, nil
}
