package store

import (
	"context"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
)

// Test-only access to internals, for the package's external tests.

// WithPageTxHook makes SavePage call f inside its transaction, after every
// write and before the commit.
func WithPageTxHook(f func()) Option { return func(o *options) { o.pageTxHook = f } }

// FTSWrites is how many statements have changed the full-text index
// through db.
func FTSWrites(db *DB) int64 { return db.ftsWrites.Load() }

// RegionFacet is the facet token of a region, for tests that write rows as
// older binaries did.
func RegionFacet(region regions.Code) string { return search.RegionFacet(region) }

// SetHeartbeat makes db beat every d instead of HeartbeatInterval; call it
// before the first StartRun.
func SetHeartbeat(db *DB, d time.Duration) { db.self.every = d }

// SetSweep makes db's Sweep look every d instead of SweepInterval.
func SetSweep(db *DB, d time.Duration) { db.self.sweep = d }

// Degram puts every video's index data back as binaries before
// 0007_regram wrote it (grams of the title only) and marks the upgrades
// since pending, as an archive upgraded from them is.
func Degram(ctx context.Context, db *DB) error {
	return reindexAsOld(ctx, db, func(title, _, _, _ string) search.Grams {
		g := search.GramsOf(title, "", "", "")
		g.Glued = ""
		return g
	}, "grams_every_column", "glued_words")
}

// Unglue puts every video's index data back as binaries between
// 0007_regram and 0009_glued_words wrote it (grams of every column, no
// glued words) and marks that upgrade pending.
func Unglue(ctx context.Context, db *DB) error {
	return reindexAsOld(ctx, db, func(title, tags, channel, desc string) search.Grams {
		g := search.GramsOf(title, tags, channel, desc)
		g.Glued = ""
		return g
	}, "glued_words")
}

func reindexAsOld(ctx context.Context, db *DB, gramsOf func(title, tags, channel, desc string) search.Grams, pending ...string) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT v.id, v.title, v.tags, v.channel_title, v.description, s.doc_len FROM videos v JOIN video_stats s ON s.video = v.id`)
	if err != nil {
		return err
	}
	type old struct {
		id            int64
		grams         any
		terms         []byte
		docLen, delta int64
	}
	var olds []old
	for rows.Next() {
		var o old
		var title, tags, channel, desc string
		if err := rows.Scan(&o.id, &title, &tags, &channel, &desc, &o.docLen); err != nil {
			rows.Close()
			return err
		}
		g := gramsOf(title, tags, channel, desc)
		if s := g.Indexed(); s != "" {
			o.grams = s
		}
		t, n := search.BuildTerms(title, tags, channel, desc, g)
		o.terms, o.delta = t, int64(n)-o.docLen
		o.docLen = int64(n)
		olds = append(olds, o)
	}
	rows.Close()
	var ids []int64
	var delta int64
	for _, o := range olds {
		ids = append(ids, o.id)
		delta += o.delta
	}
	if _, err := tx.ExecContext(ctx, search.IndexDeleteSQL, jsonIDs(ids)); err != nil {
		return err
	}
	for _, o := range olds {
		if _, err := tx.ExecContext(ctx, `UPDATE videos SET title_grams = ? WHERE id = ?`, o.grams, o.id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE video_stats SET terms = ?, doc_len = ? WHERE video = ?`, o.terms, o.docLen, o.id); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, search.IndexInsertSQL, jsonIDs(ids)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE archive_totals SET tokens = tokens + ? WHERE id = 1`, delta); err != nil {
		return err
	}
	for _, name := range pending {
		if _, err := tx.ExecContext(ctx, `UPDATE index_upgrades SET next_id = 0, done = 0 WHERE name = ?`, name); err != nil {
			return err
		}
	}
	return tx.Commit()
}
