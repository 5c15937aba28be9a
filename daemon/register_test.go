package daemon

import (
	"context"
	"slices"
	"testing"

	"github.com/ytrend/ytrend/store"
)

// A scheduler is a writer from its start, not from its first run: a
// Compact in another process (store.OtherWriters) refuses beside a freshly
// started ytrend run, whose first run would otherwise wait on the VACUUM's
// write lock past its busy timeout.
func TestStartRegistersBeforeTheFirstRun(t *testing.T) {
	ctx := context.Background()
	d, db := newDaemon(t, Options{}, "US")
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Stop(ctx) })
	other, err := store.Open(ctx, d.cfg.Store.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	var runs int
	if err := other.Writer().QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	ids, err := other.OtherWriters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{db.Instance()}) {
		t.Errorf("OtherWriters after the daemon started (%d runs so far): %v, want [%s]", runs, ids, db.Instance())
	}
}
