package replication

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/superfly/ltx"
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

// keep are the tables whose rows a takeover keeps beside the previous
// term's. The budget's records of grants are keyed by grant id: the union
// of the standby's and the previous term's forgets none and counts none
// twice. The processes registered in this archive (instances) stay too: a
// process whose row vanished would see its own runs in flight as
// abandoned, and its sweep would mark them interrupted.
var keep = []string{"quota_grants", "quota_mirror", "instances"}

// Handover is a standby's copy of the archive, handed over by
// Follower.Stop: Path holds Position, the followed term applied up to the
// replica's newest transaction at the Stop, with the follower's markers
// removed. A takeover may adopt it instead of restoring the term from the
// replica; it writes the kept rows into it, so the file is the takeover's
// from then on, never to be followed again (Follow refuses it: ErrNotCopy).
type Handover struct {
	Path     string
	Position Position
}

// TakeoverOptions say where a takeover may find the previous term.
type TakeoverOptions struct {
	// Copy is the standby's stopped copy, adopted when it is provably the
	// whole previous term; nil: restore from the replica.
	Copy    *Handover
	Restore RestoreOptions // the restore's, when the copy is not adopted
}

// Adopted says what a takeover adopted, and how.
type Adopted struct {
	Restored
	FromCopy bool   // the standby's copy, not a restore from the replica
	Why      string // why the copy was not adopted ("" when it was, or none was offered)
}

// Takeover brings a new leader's archive up to everything the previous
// terms replicated, before the term with fence token writes. When the
// newest earlier term was streamed from this very archive file (a restart,
// or a leader that lost the lease and won it back with no term between),
// the archive already holds all of it, and more (pages stored after it
// stopped, a fetch or import run meanwhile), so nothing is done. Otherwise
// the archive's content is replaced with that term's, keeping the rows of
// keep: from the standby's stopped copy when it holds the whole term (see
// wholeTerm: no restore, the copy is already that state), else from a
// restore of the term into a file beside the archive. ok is false when
// there was nothing to adopt.
func Takeover(ctx context.Context, urls []string, token int64, db Replacer, opt TakeoverOptions) (a Adopted, ok bool, err error) {
	if own := ownTerm(db.Path()); own != 0 {
		newest, _, err := newestBefore(ctx, urls, token)
		if err != nil {
			return Adopted{}, false, err
		}
		if newest <= own {
			return Adopted{}, false, nil
		}
	}
	if opt.Copy != nil {
		if a, err = adoptCopy(ctx, urls, token, db, *opt.Copy); err == nil || ctx.Err() != nil {
			return a, err == nil, err
		}
		a.Why = err.Error()
	}
	r, ok, err := adoptRestore(ctx, urls, token, db, opt.Restore)
	a.Restored = r
	return a, ok, err
}

// replicaTerms is the terms of each replica, nil for one that cannot be
// listed; an error when none can.
func replicaTerms(ctx context.Context, urls []string) ([][]Term, error) {
	out := make([][]Term, len(urls))
	read := 0
	var errs []error
	for i, raw := range urls {
		ts, err := Terms(ctx, raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("replica %s: list terms: %w", Name(raw), err))
			continue
		}
		out[i] = ts
		read++
	}
	if read == 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// newestBefore is the newest term earlier than token across the replicas
// that can be listed, and the newest term of all.
func newestBefore(ctx context.Context, urls []string, token int64) (newest, all int64, err error) {
	byReplica, err := replicaTerms(ctx, urls)
	if err != nil {
		return 0, 0, err
	}
	for _, ts := range byReplica {
		for _, t := range ts {
			all = max(all, t.Token)
			if t.Token < token {
				newest = max(newest, t.Token)
			}
		}
	}
	return newest, all, nil
}

// adoptCopy adopts the standby's copy c when it holds the whole previous
// term; otherwise the error says why not, and the archive is untouched.
func adoptCopy(ctx context.Context, urls []string, token int64, db Replacer, c Handover) (Adopted, error) {
	newest, err := wholeTerm(ctx, urls, token, c)
	if err != nil {
		return Adopted{}, err
	}
	// The same check a restored copy passes before it is put in place: the
	// LTX files the follower applied were checksummed, but the file may
	// have been damaged beside them (while no follower held it, say).
	if err := checkCopy(ctx, c.Path); err != nil {
		return Adopted{}, fmt.Errorf("the standby's copy %s: %w", c.Path, err)
	}
	if err := continueLease(ctx, c.Path, newest); err != nil {
		return Adopted{}, fmt.Errorf("the standby's copy %s: %w", c.Path, err)
	}
	if err := db.ReplaceWith(ctx, c.Path, keep...); err != nil {
		return Adopted{}, fmt.Errorf("adopt the standby's copy of %s: %w", c.Position.Generation, err)
	}
	p := c.Position
	return Adopted{Restored: Restored{Replica: p.Replica, Generation: p.Generation, TXID: p.TXID, At: p.At}, FromCopy: true}, nil
}

// wholeTerm checks that the copy c is the whole previous term, as a
// restore would make it: it is a handed-over copy (no follower's marker);
// its term is the newest one earlier than token that holds a file, across
// the replicas that can be read (a term that began and wrote nothing is
// skipped, as a restore skips it); and its position is that term's newest
// transaction across them (one that missed the term's end holds less). It
// returns the newest term of all, which the copy's lease must continue
// past.
func wholeTerm(ctx context.Context, urls []string, token int64, c Handover) (int64, error) {
	if _, err := os.Stat(markerPath(c.Path)); !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("the standby's copy %s is still a followed copy (%s)", c.Path, markerPath(c.Path))
	}
	have, err := ltx.ParseTXID(c.Position.TXID)
	if err != nil {
		return 0, fmt.Errorf("the standby's copy's position %q: %w", c.Position.TXID, err)
	}
	byReplica, err := replicaTerms(ctx, urls)
	if err != nil {
		return 0, fmt.Errorf("cannot tell the newest term: %w", err)
	}
	var all int64
	var earlier []int64
	for _, ts := range byReplica {
		for _, t := range ts {
			all = max(all, t.Token)
			if t.Token < token && !slices.Contains(earlier, t.Token) {
				earlier = append(earlier, t.Token)
			}
		}
	}
	slices.Sort(earlier)
	for _, tok := range slices.Backward(earlier) {
		var newest ltx.TXID
		var on string
		for i, raw := range urls {
			if !slices.ContainsFunc(byReplica[i], func(t Term) bool { return t.Token == tok }) {
				continue
			}
			p, err := readTermPosition(ctx, raw, tok)
			if err != nil || p.Files == 0 {
				continue // cannot be read, or holds nothing: as a restore skips it
			}
			if on == "" || p.TXID > newest { // a replica that missed the end of the term holds less
				newest, on = p.TXID, Name(raw)
			}
		}
		if on == "" {
			continue // no file in this term
		}
		if c.Position.Term != tok {
			return 0, fmt.Errorf("the standby's copy holds %s, the newest term before this one is %s", termDir(c.Position.Term), termDir(tok))
		}
		if have != newest {
			return 0, fmt.Errorf("the standby's copy of %s is at %s, replica %s holds %s", termDir(tok), have, on, newest)
		}
		return all, nil
	}
	return 0, fmt.Errorf("no readable replica holds a term before %s", termDir(token))
}

// readTermPosition is the term token's position on the replica at raw.
func readTermPosition(ctx context.Context, raw string, token int64) (position, error) {
	turl, err := TermURL(raw, token)
	if err != nil {
		return position{}, err
	}
	client, err := open(ctx, turl)
	if err != nil {
		return position{}, err
	}
	defer closeClient(client)
	return termPosition(ctx, client)
}

// adoptRestore restores the newest term before token into a file beside
// the archive, then replaces the archive's content with it.
func adoptRestore(ctx context.Context, urls []string, token int64, db Replacer, opt RestoreOptions) (Restored, bool, error) {
	tmp := db.Path() + ".takeover"
	cleanup := func() {
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", tmp + ".tmp"} {
			os.Remove(p)
		}
	}
	cleanup() // a takeover that crashed left it
	defer cleanup()
	opt.Before = token
	r, err := Restore(ctx, urls, tmp, opt)
	if errors.Is(err, ErrEmpty) {
		return Restored{}, false, nil
	}
	if err != nil {
		return Restored{}, false, err
	}
	if err := db.ReplaceWith(ctx, tmp, keep...); err != nil {
		return Restored{}, false, fmt.Errorf("adopt %s from replica %s: %w", r.Generation, r.Replica, err)
	}
	return r, true, nil
}
