package search

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// FTS5 seeks each term in each segment with one statement, its segid bound
// in turn to 1, 2, 3: without the planner stability guarantee SQLite
// re-prepares it each time the segid goes from 1 to another value or back.
func TestFTSSegmentLookupNotReprepared(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "fts.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `CREATE VIRTUAL TABLE f USING fts5(t)`); err != nil {
		t.Fatal(err)
	}
	for seg := 0; seg < 3; seg++ { // a transaction each: a segment each
		if _, err := c.ExecContext(ctx, `INSERT INTO f (t) VALUES (?), (?)`,
			fmt.Sprintf("alpha beta %d", seg), fmt.Sprintf("beta gamma %d", seg)); err != nil {
			t.Fatal(err)
		}
	}
	const query = `SELECT count(*) FROM f WHERE f MATCH ? AND rowid BETWEEN ? AND ?`
	for i := 0; i < 10; i++ {
		var n int
		if err := c.QueryRowContext(ctx, query, "beta", i%3, 6).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	lookups := 0
	if err := c.Raw(func(dc any) error {
		h, tls, ok := connHandle(dc)
		if !ok {
			t.Fatal("no handle on the driver's connection: the planner guarantee is not set")
		}
		for st := sqlite3.Xsqlite3_next_stmt(tls, h, 0); st != 0; st = sqlite3.Xsqlite3_next_stmt(tls, h, st) {
			if !strings.Contains(libc.GoString(sqlite3.Xsqlite3_sql(tls, st)), "segid=?") {
				continue
			}
			lookups += int(sqlite3.Xsqlite3_stmt_status(tls, st, sqlite3.SQLITE_STMTSTATUS_RUN, 0))
			if n := sqlite3.Xsqlite3_stmt_status(tls, st, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0); n != 0 {
				t.Errorf("FTS5's segment lookup re-prepared %d times", n)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if lookups == 0 {
		t.Fatal("no segment lookup ran: the test does not exercise FTS5's statement")
	}
	t.Logf("%d segment lookups", lookups)
}
