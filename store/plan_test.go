package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The page writes' lookups must reach their tables by key (the search's
// plans are pinned in package search).
func TestWritePlans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{sqlExisting, sqlChannelIDs} {
		q = strings.ReplaceAll(q, "?2", "?7")
		rows, err := db.reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, "[]", 0, `"x"`, -2047, -1024, "[]", 0, 10)
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(detail, "SCAN") && !strings.Contains(detail, "VIRTUAL TABLE") && !strings.Contains(detail, "subquery") {
				t.Errorf("full scan %q in %s", detail, q)
			}
		}
		rows.Close()
	}
}
