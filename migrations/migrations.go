// Package migrations holds ytrend's SQLite schema as numbered SQL files
// (NNNN_name.sql), embedded in the binary. The store package applies them in
// order, each in one transaction together with its row in schema_migrations.
//
// Files are never edited once released: a schema change is a new file with
// the next number.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
