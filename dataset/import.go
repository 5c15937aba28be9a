package dataset

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Imported is what an import stored of a file.
type Imported struct {
	Charts        int          // stored, each as a new run
	Rows          int          // their chart positions
	AlreadyThere  int          // charts the archive had: left as they were
	NewVideos     int          // videos the archive did not know
	UpdatedVideos int          // videos whose text changed
	Region        regions.Code // of a public dataset's charts; "" for an export (its rows name theirs)
	Ended         bool         // the file was read to its end
}

// StoreError is an import's failure to store a batch; the reader's own
// errors come back as ReadError.
type StoreError struct {
	File string // the file, or "" when the batch held several files' charts
	Err  error
}

func (e *StoreError) Error() string {
	if e.File == "" {
		return e.Err.Error()
	}
	return e.File + ": " + e.Err.Error()
}
func (e *StoreError) Unwrap() error { return e.Err }

// ReadError is the failure to read one of ImportAll's files: the import
// stopped there, with every batch before it stored.
type ReadError struct {
	Index int // the file's place in ImportAll's readers
	Err   error
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Import stores r's charts in db (ImportAll of one file). The error is
// the reader's own, a *StoreError or ErrStopped.
func Import(ctx context.Context, stop <-chan struct{}, r *Reader, db *store.DB, progress func(rows int)) (Imported, error) {
	imps, err := ImportAll(ctx, stop, []*Reader{r}, db, progress)
	var re *ReadError
	if errors.As(err, &re) {
		err = re.Err
	}
	return imps[0], err
}

// ImportAll stores the charts of several files in db, earliest first
// across the files: each next chart is the earliest of the files' next ones
// (ties in the files' order), and each file's own order is kept. The
// archive then holds the files' history in the order it happened, as a
// scheduler fetching every region would have stored it, rather than one
// region's years after another's; new videos get their ids in that order,
// which keeps the archive's newest videos together, where its searches
// look first.
//
// Charts are stored in batches of about store.ImportBatchRows chart
// positions, one transaction each, until every file's end, an error, or
// stop: then the charts already read are stored (a moment's work) and it
// returns ErrStopped. An interrupted import keeps every batch it finished;
// importing the same files again stores only what is missing. progress, if
// not nil, is told the positions of every batch stored. ctx bounds each
// batch's transaction. The results are per file, in rs's order; a file's
// read error comes back as a *ReadError, a batch's as a *StoreError.
func ImportAll(ctx context.Context, stop <-chan struct{}, rs []*Reader, db *store.DB, progress func(rows int)) ([]Imported, error) {
	imps := make([]Imported, len(rs))
	heads := make([]*store.ImportedChart, len(rs)) // each file's next chart; nil once read to its end
	var batch []store.ImportedChart
	var from []int // the file of each chart in batch
	rows := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := db.ImportCharts(ctx, batch)
		if err != nil {
			file := ""
			if len(rs) == 1 {
				file = rs[0].name
			}
			return &StoreError{File: file, Err: err}
		}
		for i, res := range res {
			imp := &imps[from[i]]
			n := 0
			for _, pg := range batch[i].Pages {
				n += len(pg.Videos)
			}
			if res.Skipped {
				imp.AlreadyThere++
			} else {
				imp.Charts++
				imp.Rows += n
				imp.NewVideos += res.New
				imp.UpdatedVideos += res.Updated
			}
		}
		if progress != nil {
			progress(rows)
		}
		batch, from, rows = batch[:0], from[:0], 0
		return nil
	}
	// fail stores what was read, then returns err (the store's error, if
	// storing failed too).
	fail := func(err error) ([]Imported, error) {
		var re *ReadError
		if errors.As(err, &re) && stopped(stop) {
			err = ErrStopped // the stop may have ended a stalled read (ytrend import closes the files)
		}
		if ferr := flush(); ferr != nil {
			return imps, ferr
		}
		return imps, err
	}
	advance := func(i int) error {
		c, err := rs[i].Next()
		switch {
		case errors.Is(err, io.EOF):
			heads[i], imps[i].Ended = nil, true
			return nil
		case err != nil:
			heads[i] = nil
			return &ReadError{Index: i, Err: err}
		}
		if rs[i].Format() != FormatYtrend {
			imps[i].Region = c.Region
		}
		heads[i] = &c
		return nil
	}
	select {
	case <-stop:
		return imps, ErrStopped
	default:
	}
	for i := range rs {
		if err := advance(i); err != nil {
			return fail(err)
		}
	}
	for {
		select {
		case <-stop:
			return fail(ErrStopped)
		default:
		}
		next := -1
		for i, h := range heads {
			if h != nil && (next < 0 || chartTime(*h).Before(chartTime(*heads[next]))) {
				next = i
			}
		}
		if next < 0 {
			return imps, flush()
		}
		c := *heads[next]
		batch, from = append(batch, c), append(from, next)
		for _, pg := range c.Pages {
			rows += len(pg.Videos)
		}
		if err := advance(next); err != nil {
			return fail(err)
		}
		if rows >= store.ImportBatchRows {
			if err := flush(); err != nil {
				return imps, err
			}
		}
	}
}

// stopped reports whether stop has come.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// chartTime is when a chart was fetched: its first page's time.
func chartTime(c store.ImportedChart) time.Time { return c.Pages[0].FetchedAt }
