package main

import (
	"bytes"
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/ytrend/ytrend/ingest/sim"
)

// TestReadCommandsLeaveAnArchiveTheyRefuseAlone: search, chart, history
// and export refuse an archive this ytrend cannot migrate (a newer schema,
// or an applied set with a gap) and leave its file as it was, byte for byte:
// in particular they do not switch an archive kept in rollback-journal mode
// (a copy made by sqlite3's .backup, say) to WAL before refusing it, which
// the usual open, their fallback for a missing or unmigrated archive, does
// first.
func TestReadCommandsLeaveAnArchiveTheyRefuseAlone(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, sql, want string
	}{
		{"newer schema", `INSERT INTO schema_migrations(version, name, applied_at) VALUES (99, '0099_future.sql', 0)`, "newer"},
		{"gap", `DELETE FROM schema_migrations WHERE version = 2`, "gap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, sim.Config{})
			w.mustRun("migrate")
			path := w.env["YTREND_DB"]
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			raw.SetMaxOpenConns(1)
			if _, err := raw.Exec(c.sql); err != nil {
				t.Fatal(err)
			}
			var mode string
			if err := raw.QueryRow(`PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil || mode != "delete" {
				t.Fatalf("journal mode %q, %v; want delete", mode, err)
			}
			raw.Close()
			before := readArchive(t, path)
			for _, args := range [][]string{{"search", "x"}, {"chart", "US"}, {"history", "dQw4w9WgXcQ"}, {"export", "--out", "x.csv"}} {
				r := w.run(args...)
				if r.code != 1 || !strings.Contains(r.stderr, c.want) {
					t.Errorf("ytrend %v: exit %d, stderr %q; want a refusal naming the %s", args, r.code, r.stderr, c.name)
				}
				if after := readArchive(t, path); !bytes.Equal(after, before) {
					t.Fatalf("ytrend %v changed the archive it refused (%d bytes, was %d; header bytes 18-19 %v, were %v: 1 1 is rollback journal, 2 2 WAL)",
						args, len(after), len(before), after[18:20], before[18:20])
				}
				for _, suffix := range []string{"-wal", "-shm", "-journal"} {
					if _, err := os.Stat(path + suffix); err == nil {
						t.Errorf("ytrend %v left %s behind", args, path+suffix)
					}
				}
			}
		})
	}
}

func readArchive(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
