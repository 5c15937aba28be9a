package replication

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
	"golang.org/x/sys/unix"
)

var (
	// ErrEmpty: no term of the replica holds the wanted state (nothing was
	// ever replicated, or not before the time asked for).
	ErrEmpty = errors.New("replica: no replicated state")
	// ErrExists: the output file exists and holds data; a restore never
	// overwrites an archive.
	ErrExists = errors.New("replica: output file exists")
	// ErrTermTaken: the replica already holds a term with this fence token,
	// written from another archive; the term is not streamed.
	ErrTermTaken = errors.New("replica: another archive already wrote this term")
	// ErrDamaged: a restored copy failed SQLite's integrity check; it is
	// not put in place.
	ErrDamaged = errors.New("replica: the restored copy failed its integrity check")
)

// RestoreOptions select what a restore reads.
type RestoreOptions struct {
	At     time.Time // zero: the latest replicated state
	Before int64     // non-zero: only terms with a smaller fence token (a takeover's previous terms)
	// UpToDamage: when an LTX file after the term's snapshot cannot be read
	// whole (torn, truncated, failing its checksum), restore the term up to
	// the transaction before it, logged as an error with what is lost,
	// instead of failing. A takeover and restore-on-start set it: the term
	// up to the damage is worth more than no term at all. `archive
	// restore` does not: asked for the latest state, it says the replica
	// cannot give it.
	UpToDamage bool
	Logger     *slog.Logger
}

// Restored says where a restore came from.
type Restored struct {
	Replica    string    `json:"replica"`
	Generation string    `json:"generation"`
	TXID       string    `json:"txid"`
	At         time.Time `json:"at"` // when that transaction was replicated
}

// Restore writes the archive's replicated state into out, a file that must
// not exist (or be empty): from the first replica that has it, the newest
// term holding the latest state, or the state at opt.At. A replica that is
// missing, empty or damaged is an error naming it and the term; out is
// then left as it was (Litestream builds the copy beside it and renames it
// only once complete and checked).
func Restore(ctx context.Context, urls []string, out string, opt RestoreOptions) (Restored, error) {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	// A log left beside the output (the archive deleted after a crash, its
	// -wal or -journal not) would be replayed over the restored file by the
	// next SQLite to open it: the restore would hand back another archive's
	// last transactions and destroy the log. Refused, the log untouched.
	for _, side := range []string{out + "-wal", out + "-journal"} {
		if fi, err := os.Stat(side); err == nil && fi.Size() > 0 {
			return Restored{}, fmt.Errorf("%w: %s (%d bytes), a log of another archive that SQLite would replay over the restored one; restore into a new file, or move it away", ErrExists, side, fi.Size())
		}
	}
	if fi, err := os.Stat(out); err == nil && fi.Size() > 0 {
		return Restored{}, fmt.Errorf("%w: %s (%d bytes); restore into a new file", ErrExists, out, fi.Size())
	} else if err == nil {
		if err := os.Remove(out); err != nil {
			return Restored{}, err
		}
	}
	var errs []error
	for _, raw := range newestFirst(ctx, urls, opt) {
		r, err := restoreFrom(ctx, raw, out, opt)
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	return Restored{}, errors.Join(errs...)
}

// newestFirst orders the replicas by the newest term each holds that the
// restore may read, newest first (in configured order among equals): a
// replica that was down during the last term must not win over one that
// has it. One that cannot be listed goes last, where its error is reported
// if no other has the state.
func newestFirst(ctx context.Context, urls []string, opt RestoreOptions) []string {
	if len(urls) < 2 {
		return urls
	}
	newest := make(map[string]int64, len(urls))
	for _, raw := range urls {
		newest[raw] = -1
		ts, err := Terms(ctx, raw)
		if err != nil {
			continue
		}
		for _, t := range ts {
			if (opt.Before == 0 || t.Token < opt.Before) && (opt.At.IsZero() || !t.Started.After(opt.At)) {
				newest[raw] = max(newest[raw], t.Token)
			}
		}
	}
	out := slices.Clone(urls)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(newest[b], newest[a]) })
	return out
}

func restoreFrom(ctx context.Context, raw, out string, opt RestoreOptions) (Restored, error) {
	ts, err := Terms(ctx, raw)
	if err != nil {
		return Restored{}, fmt.Errorf("replica %s: list terms: %w", Name(raw), err)
	}
	var tried []string
	for _, t := range ts {
		if opt.Before != 0 && t.Token >= opt.Before {
			continue
		}
		if !opt.At.IsZero() && t.Started.After(opt.At) {
			continue
		}
		r, err := restoreTerm(ctx, raw, t, out, ts[0].Token, opt)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, ErrEmpty) {
			return Restored{}, err
		}
		tried = append(tried, t.Generation())
	}
	what := "the latest state"
	if !opt.At.IsZero() {
		what = "the state at " + opt.At.UTC().Format(time.RFC3339)
	}
	if len(tried) == 0 {
		return Restored{}, fmt.Errorf("%w: replica %s has no term holding %s", ErrEmpty, Name(raw), what)
	}
	return Restored{}, fmt.Errorf("%w: replica %s: no term holds %s (tried %v)", ErrEmpty, Name(raw), what, tried)
}

// restoreTerm restores term t into out, through a copy beside it that
// becomes out only once complete and checked: a restore that fails or is
// interrupted leaves nothing at out (and removes its copy). newest is the
// newest term the replica holds (continueLease).
func restoreTerm(ctx context.Context, raw string, t Term, out string, newest int64, opt RestoreOptions) (Restored, error) {
	where := fmt.Sprintf("replica %s generation %s", Name(raw), t.Generation())
	turl, err := TermURL(raw, t.Token)
	if err != nil {
		return Restored{}, err
	}
	client, err := open(ctx, turl)
	if err != nil {
		return Restored{}, fmt.Errorf("%s: %w", where, err)
	}
	defer closeClient(client)
	p, err := termPosition(ctx, client)
	if err != nil {
		return Restored{}, fmt.Errorf("%s: %w", where, err)
	}
	if p.Files == 0 {
		return Restored{}, fmt.Errorf("%w: %s holds no file", ErrEmpty, where)
	}
	log := opt.Logger.With("replica", Name(raw), "generation", t.Generation())
	client.SetLogger(log)
	tmp := out + ".restoring"
	// One restore into out at a time: each removes the copy a crashed
	// restore left, which would be another's copy in the making.
	lock, err := lockRestore(tmp)
	if err != nil {
		return Restored{}, err
	}
	defer lock()
	removeCopy(tmp) // left by a restore that crashed
	defer removeCopy(tmp)
	infos, err := litestream.CalcRestorePlan(ctx, client, 0, opt.At, log)
	if errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) {
		return Restored{}, fmt.Errorf("%w: %s: %v", ErrEmpty, where, err)
	} else if err != nil {
		return Restored{}, fmt.Errorf("%s: %w", where, err)
	}
	err = restoreCopy(ctx, client, tmp, infos, log)
	var damaged *damagedFileError
	upTo := ltx.TXID(0)
	if err != nil && opt.UpToDamage && errors.As(err, &damaged) && damaged.info.MinTXID > infos[0].MaxTXID {
		upTo = damaged.info.MinTXID - 1
		log.Error("restore: a file of the term is damaged; restoring the term up to the transaction before it, the later ones are lost",
			"damaged", ltxName(damaged.info), "up_to_txid", upTo.String(), "err", damaged.err)
		removeCopy(tmp)
		if infos, err = litestream.CalcRestorePlan(ctx, client, upTo, time.Time{}, log); err == nil {
			err = restoreCopy(ctx, client, tmp, infos, log)
		}
	}
	if err != nil {
		return Restored{}, fmt.Errorf("%s: %w", where, err)
	}
	if err := continueLease(ctx, tmp, newest); err != nil {
		return Restored{}, fmt.Errorf("%s: %w", where, err)
	}
	// Linked, not renamed: an output that appeared meanwhile (a run that
	// created its archive) is never replaced.
	if err := os.Link(tmp, out); errors.Is(err, os.ErrExist) {
		return Restored{}, fmt.Errorf("%w: %s appeared during the restore; restore into a new file", ErrExists, out)
	} else if err != nil {
		return Restored{}, err
	}
	if err := syncDir(filepath.Dir(out)); err != nil {
		os.Remove(out)
		return Restored{}, err
	}
	r := Restored{Replica: Name(raw), Generation: t.Generation()}
	switch {
	case upTo != 0:
		last := infos[len(infos)-1]
		r.TXID, r.At = last.MaxTXID.String(), last.CreatedAt
	case opt.At.IsZero():
		r.TXID, r.At = p.TXID.String(), p.At
	}
	return r, nil
}

// continueLease makes the embedded ledger's leader lease in a restored
// archive continue past every term the replica has seen: a copy from before
// the last terms would otherwise hand out their fence tokens again, and two
// terms would share a replica path. The lease is left released.
func continueLease(ctx context.Context, path string, newest int64) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE quota_lease SET token = max(token, ?), holder = '', expires_at = 0`, newest)
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return nil // not a ytrend archive's schema yet: nothing to continue
	}
	return err
}

// lockRestore takes the lock of the restore whose copy is tmp; the
// returned func releases it. A restore already running is an error.
func lockRestore(tmp string) (func(), error) {
	p := tmp + ".lock"
	fh, err := tryLock(p)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, fmt.Errorf("another restore into %s is running (lock %s)", strings.TrimSuffix(tmp, ".restoring"), p)
	} else if err != nil {
		return nil, err
	}
	return func() { os.Remove(p); fh.Close() }, nil
}

// removeCopy removes a restore's copy and what SQLite or Litestream keep
// beside it.
func removeCopy(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal", path + ".tmp"} {
		os.Remove(p)
	}
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
