package dataset_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/dataset"
)

// Import stores a file's charts and counts them: the 2017 fixture's two
// days (8 positions), then nothing new the second time.
func TestImportCountsChartsAndRows(t *testing.T) {
	db := openDB(t)
	for _, want := range []dataset.Imported{
		{Charts: 2, Rows: 8, NewVideos: 6, Region: "US"},
		{AlreadyThere: 2, Region: "US"},
	} {
		r, err := dataset.NewReader(strings.NewReader(file2017(rows2017)), "USvideos.csv", "US")
		if err != nil {
			t.Fatal(err)
		}
		var told int
		got, err := dataset.Import(context.Background(), nil, r, db, func(rows int) { told += rows })
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("imported %+v, want %+v", got, want)
		}
		if told != 8 {
			t.Errorf("progress told %d positions, want 8 (every position read)", told)
		}
	}
}

// A stop that has come already stores nothing more and says so.
func TestImportStopped(t *testing.T) {
	db := openDB(t)
	r, err := dataset.NewReader(strings.NewReader(file2017(rows2017)), "USvideos.csv", "US")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	close(stop)
	got, err := dataset.Import(context.Background(), stop, r, db, nil)
	if !errors.Is(err, dataset.ErrStopped) || got != (dataset.Imported{}) {
		t.Errorf("Import after the stop: %+v, %v; want nothing and ErrStopped", got, err)
	}
}
