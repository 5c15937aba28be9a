package replication

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// restoreCopy writes the state a restore plan of the replica's term that
// client reads ends at (litestream.CalcRestorePlan) into a new file at
// path, and checks it (checkCopy). On an error path may hold a partial
// copy; the caller removes it.
func restoreCopy(ctx context.Context, client litestream.ReplicaClient, path string, infos []*ltx.FileInfo, log *slog.Logger) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { // as Litestream's restore does
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	// A file of the plan can vanish while it is read (compaction and
	// retention on a replica still written to): plan again for the same
	// transaction, as Litestream's own restore does.
	target := infos[len(infos)-1].MaxTXID
	for attempt := 0; ; attempt++ {
		err = writeCopy(ctx, client, infos, f)
		if err == nil || !errors.Is(err, os.ErrNotExist) || attempt == 3 {
			break
		}
		log.Debug("a file of the restore plan is gone; planning again", "txid", target, "err", err)
		if infos, err = litestream.CalcRestorePlan(ctx, client, target, time.Time{}, log); err != nil {
			return err
		}
		if err := f.Truncate(0); err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	// The copy is checked while the kernel writes it out: the check reads
	// it from the page cache, and the disk's time overlaps the CPU's.
	synced := make(chan error, 1)
	go func() { synced <- f.Sync() }()
	checked := checkCopy(ctx, path)
	if err := <-synced; err != nil {
		return err
	}
	if checked != nil {
		return checked
	}
	return f.Close()
}

// writeCopy writes the database that a restore plan's LTX files add up to
// (litestream.CalcRestorePlan: a snapshot, then the changes after it, in
// TXID order) into f, page by page, the newest version of each page.
//
// Litestream's own Restore does the same through ltx.Compactor, which
// encodes the merged pages into one more LTX stream (compressing every
// page with LZ4 and checksumming it) only to decode it again: at 1M videos
// that round trip was most of the restore's CPU time. The checks are the
// same: each file's checksum (verified when its decoder closes, after its
// last page), contiguous TXIDs, and every page of the database present.
// f is not synced: the caller syncs it while it checks the copy.
func writeCopy(ctx context.Context, client litestream.ReplicaClient, infos []*ltx.FileInfo, f *os.File) error {
	type input struct {
		dec  *ltx.Decoder
		hdr  ltx.PageHeader // zero: the next page is not read yet
		done bool
		data []byte
	}
	ins := make([]*input, len(infos))
	for i, info := range infos {
		var r io.Reader
		if i == 0 {
			rc, err := client.OpenLTXFile(ctx, info.Level, info.MinTXID, info.MaxTXID, 0, 0)
			if err != nil {
				return err
			}
			defer rc.Close()
			r = rc
		} else {
			spooled, err := spool(ctx, client, info, filepath.Dir(f.Name()))
			if err != nil {
				return err
			}
			defer spooled.Close()
			r = spooled
		}
		in := &input{dec: ltx.NewDecoder(bufio.NewReaderSize(r, 1<<20))}
		if err := in.dec.DecodeHeader(); err != nil {
			return &damagedFileError{info, err}
		}
		h := in.dec.Header()
		switch {
		case i == 0 && !h.IsSnapshot():
			return fmt.Errorf("%s: the restore does not begin with a snapshot", ltxName(info))
		case i > 0 && h.PageSize != ins[0].dec.Header().PageSize:
			return fmt.Errorf("%s: page size %d, not %d", ltxName(info), h.PageSize, ins[0].dec.Header().PageSize)
		case i > 0 && !ltx.IsContiguous(ins[i-1].dec.Header().MaxTXID, h.MinTXID, h.MaxTXID):
			return fmt.Errorf("%s: does not follow %s", ltxName(info), ltxName(infos[i-1]))
		}
		in.data = make([]byte, h.PageSize)
		ins[i] = in
	}
	last := ins[len(ins)-1].dec.Header()
	commit, pageSize, lock := last.Commit, last.PageSize, last.LockPgno()
	w := bufio.NewWriterSize(f, 1<<20)
	zero := make([]byte, pageSize)
	want := uint32(1) // the next page the copy needs
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The lowest page number any input holds next.
		var pgno uint32
		for i, in := range ins {
			if in.hdr.Pgno == 0 && !in.done {
				if err := in.dec.DecodePage(&in.hdr, in.data); err == io.EOF {
					in.done = true
				} else if err != nil {
					return &damagedFileError{infos[i], err}
				}
			}
			if !in.done && (pgno == 0 || in.hdr.Pgno < pgno) {
				pgno = in.hdr.Pgno
			}
		}
		if pgno == 0 {
			break
		}
		// Its newest version; every input holding it moves on.
		var page []byte
		for i := len(ins) - 1; i >= 0; i-- {
			if in := ins[i]; !in.done && in.hdr.Pgno == pgno {
				if page == nil {
					page = in.data
				}
				in.hdr = ltx.PageHeader{}
			}
		}
		if pgno > commit {
			continue // beyond the database's final size
		}
		if want == lock && pgno != lock {
			if _, err := w.Write(zero); err != nil {
				return err
			}
			want++
		}
		if pgno != want {
			return fmt.Errorf("page %d missing from the restore plan (next page held: %d)", want, pgno)
		}
		if _, err := w.Write(page); err != nil {
			return err
		}
		want++
	}
	if want <= commit {
		return fmt.Errorf("pages %d to %d missing from the restore plan", want, commit)
	}
	for i, in := range ins {
		if err := in.dec.Close(); err != nil {
			return &damagedFileError{infos[i], err}
		}
	}
	return w.Flush()
}

// damagedFileError: an LTX file of a restore plan cannot be read whole
// (torn, truncated, failing its checksum).
type damagedFileError struct {
	info *ltx.FileInfo
	err  error
}

func (e *damagedFileError) Error() string { return ltxName(e.info) + ": " + e.err.Error() }
func (e *damagedFileError) Unwrap() error { return e.err }

// spool copies one LTX file of a restore plan to a temporary file in dir,
// removed once closed. The merge reads the files of a plan side by side,
// the snapshot for minutes while the changes after it wait: a stream left
// idle that long is dropped by object stores (S3 closes idle connections,
// a NATS object read is cancelled), so only the snapshot is read as a
// stream, and the changes, small beside it, from local copies.
func spool(ctx context.Context, client litestream.ReplicaClient, info *ltx.FileInfo, dir string) (io.ReadCloser, error) {
	rc, err := client.OpenLTXFile(ctx, info.Level, info.MinTXID, info.MaxTXID, 0, 0)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	f, err := os.CreateTemp(dir, ".restore-*.ltx")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // gone once closed, whatever happens
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", ltxName(info), err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func ltxName(info *ltx.FileInfo) string {
	return fmt.Sprintf("level %d %s", info.Level, ltx.FormatFilename(info.MinTXID, info.MaxTXID))
}
