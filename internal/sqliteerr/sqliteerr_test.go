package sqliteerr_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/ytrend/ytrend/internal/sqliteerr"
)

// Real errors from a real file: a lock another connection holds, a syntax
// error, and errors that are not SQLite's.
func TestClassify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	a, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if _, err := a.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	tx, err := a.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	_, locked := b.Exec(`INSERT INTO t VALUES (2)`)
	_, syntax := b.Exec(`INSERT INTO nowhere VALUES (2)`)

	for _, c := range []struct {
		name            string
		err             error
		busy, transient bool
	}{
		{"locked by another connection", locked, true, true},
		{"wrapped lock", fmt.Errorf("store: %w", locked), true, true},
		{"no such table", syntax, false, false},
		{"not sqlite", errors.New("database is locked"), false, false},
		{"nil", nil, false, false},
	} {
		if got := sqliteerr.Busy(c.err); got != c.busy {
			t.Errorf("%s: Busy(%v) = %v, want %v", c.name, c.err, got, c.busy)
		}
		if got := sqliteerr.Transient(c.err); got != c.transient {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.transient)
		}
	}
}
