// Package migrations holds ytrend's SQLite schema as numbered SQL files
// (NNNN_name.sql), embedded in the binary, and the runner that applies them
// (migrate.go): in order, each in one transaction together with its row in
// schema_migrations, refusing gaps, duplicates and a database newer than the
// set. The store applies them when it opens an archive.
//
// The runner's errors still say "store:": they are what a user of the
// archive sees, and the archive is the store's.
//
// Files are never edited once released: a schema change is a new file with
// the next number.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
