package store

import (
	"context"

	"github.com/ytrend/ytrend/migrations"
)

// Migration is one numbered schema change (the runner lives beside the SQL,
// in migrations).
type Migration = migrations.Migration

// MigrationStatus describes the schema of one database against the
// migrations this binary carries.
type MigrationStatus = migrations.Status

// Migrate applies the pending migrations of the set db was opened with (the
// embedded one unless WithMigrations), as Open does unless WithoutMigrate.
func (db *DB) Migrate(ctx context.Context) ([]int, error) {
	applied, err := migrations.Apply(ctx, db.writer, db.migrations)
	if err == nil && len(applied) > 0 {
		db.prepareReads(ctx) // the pages' statements, against the new schema
	}
	return applied, err
}

// MigrationStatus reports which migrations of db's set are applied and which
// are pending.
func (db *DB) MigrationStatus(ctx context.Context) (MigrationStatus, error) {
	return migrations.Read(ctx, db.reader, db.migrations)
}
