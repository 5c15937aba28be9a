package dataset

import (
	"context"
	"errors"
	"io"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Imported is what Import stored of a file.
type Imported struct {
	Charts        int          // stored, each as a new run
	Rows          int          // their chart positions
	AlreadyThere  int          // charts the archive had: left as they were
	NewVideos     int          // videos the archive did not know
	UpdatedVideos int          // videos whose text changed
	Region        regions.Code // of a public dataset's charts; "" for an export (its rows name theirs)
}

// StoreError is Import's failure to store a batch; the reader's own errors
// come back as they are.
type StoreError struct {
	File string
	Err  error
}

func (e *StoreError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// Import stores r's charts in db in batches of about store.ImportBatchRows
// chart positions, one transaction each, until the file's end, an error,
// or stop: then the charts already read are stored (a moment's work) and
// it returns ErrStopped. An interrupted import keeps every batch it
// finished. progress, if not nil, is told the positions of every batch
// stored. ctx bounds each batch's transaction.
func Import(ctx context.Context, stop <-chan struct{}, r *Reader, db *store.DB, progress func(rows int)) (Imported, error) {
	var imp Imported
	var batch []store.ImportedChart
	rows := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := db.ImportCharts(ctx, batch)
		if err != nil {
			return &StoreError{File: r.name, Err: err}
		}
		for i, res := range res {
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
		batch, rows = batch[:0], 0
		return nil
	}
	for {
		select {
		case <-stop:
			if err := flush(); err != nil {
				return imp, err
			}
			return imp, ErrStopped
		default:
		}
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			return imp, flush()
		}
		if err != nil {
			if ferr := flush(); ferr != nil {
				return imp, ferr
			}
			return imp, err
		}
		if r.Format() != FormatYtrend {
			imp.Region = c.Region
		}
		batch = append(batch, c)
		for _, pg := range c.Pages {
			rows += len(pg.Videos)
		}
		if rows >= store.ImportBatchRows {
			if err := flush(); err != nil {
				return imp, err
			}
		}
	}
}
