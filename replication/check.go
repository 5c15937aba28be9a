package replication

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
)

// checkCopy checks a restored copy before it is put in place, with SQLite's
// quick_check: every b-tree and the free list, and FTS5's own check of the
// search index (its xIntegrity, which quick_check runs too: at 1M videos
// about four fifths of the check's CPU time). The LTX checksums already
// prove the copy holds the bytes Litestream read from the archive; this
// proves those bytes are a sound database.
//
// The copy is read through a memory map: the check reads every page once,
// and SQLite's own reads (one pread and one copy per page) cost about an
// eighth of the check at 1M videos (BENCHMARKS.md).
func checkCopy(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`PRAGMA mmap_size = %d`, fi.Size())); err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return fmt.Errorf("integrity check: %w", err)
		}
		if p != "ok" {
			problems = append(problems, p)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrDamaged, strings.Join(problems, "; "))
	}
	return nil
}
