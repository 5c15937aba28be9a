package store

import (
	"context"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// Test-only access to internals, for the package's external tests.

// SetPageTxHook makes SavePage call f inside its transaction, after every
// write and before the commit (nil removes it).
func SetPageTxHook(f func()) { testHookInPageTx = f }

// SetWalkHook makes every search that walks blocks report how many of them
// it ranked, and how many there were (nil removes it).
func SetWalkHook(f func(ranked, blocks int)) { testHookWalk = f }

// SetWalkGroup fixes how many blocks a walk ranks per range query (0: its
// own choice, growing).
func SetWalkGroup(n int) { testWalkGroup = n }

// FTSWrites is how many statements have changed the full-text index
// through db.
func FTSWrites(db *DB) int64 { return db.ftsWrites.Load() }

// MatchExpr is the FTS5 expression a plain query becomes.
func MatchExpr(text string) string { return parseQuery(text, false).expr }

// Tokens is the Go tokenizer's view of s.
func Tokens(s string) []string {
	var out []string
	for _, t := range tokenize(s) {
		out = append(out, t.text)
	}
	return out
}

// TitleGrams is the indexed bigram text of a title.
func TitleGrams(title string) string { return gramText(title) }

// TextScores computes the store's bm25 (without the trend blend) for every
// video matching text, keyed by YouTube id, to compare with FTS5's bm25().
func TextScores(ctx context.Context, db *DB, text string) (map[string]float64, error) {
	pq := parseQuery(text, false)
	st2, err := db.searchStatements(ctx, Query{}, pq)
	if err != nil {
		return nil, err
	}
	tx, err := db.reader.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var st archiveState
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM videos), videos, tokens FROM archive_totals`).Scan(&st.maxID, &st.videos, &st.tokens); err != nil {
		return nil, err
	}
	s := searcher{ctx: ctx, tx: tx, st: st2, pq: pq}
	phrases := make([]rankedPhrase, len(pq.phrases))
	for i, p := range pq.phrases {
		df, err := s.docFreq(p.expr, st)
		if err != nil {
			return nil, err
		}
		phrases[i] = newRankedPhrase(p)
		phrases[i].idf = idf(float64(st.videos), df)
	}
	rows, err := tx.QueryContext(ctx, `SELECT v.video_id, s.doc_len, s.terms FROM video_fts f JOIN video_stats s ON s.video = -f.rowid
		JOIN videos v ON v.id = -f.rowid WHERE video_fts MATCH ?`, pq.expr)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]float64{}
	avgdl := float64(st.tokens) / float64(st.videos)
	for rows.Next() {
		var id string
		var docLen int
		var t []byte
		if err := rows.Scan(&id, &docLen, &t); err != nil {
			return nil, err
		}
		out[id] = textScore(phrases, terms(t), docLen, avgdl)
	}
	return out, rows.Err()
}

// RegionFacet is the facet token of a region, for tests that write rows as
// older binaries did.
func RegionFacet(region regions.Code) string { return regionFacet(region) }

// SetHeartbeat makes db beat every d instead of HeartbeatInterval; call it
// before the first StartRun.
func SetHeartbeat(db *DB, d time.Duration) { db.self.every = d }

// Degram puts every video's index data back as binaries before
// 0007_regram wrote it (grams of the title only) and marks the upgrades
// since pending, as an archive upgraded from them is.
func Degram(ctx context.Context, db *DB) error {
	return reindexAsOld(ctx, db, func(title, _, _, _ string) columnGrams {
		return columnGrams{runs: [4]string{gramText(title)}}
	}, upgradeGrams, upgradeGlued)
}

// Unglue puts every video's index data back as binaries between
// 0007_regram and 0009_glued_words wrote it (grams of every column, no
// glued words) and marks that upgrade pending.
func Unglue(ctx context.Context, db *DB) error {
	return reindexAsOld(ctx, db, func(title, tags, channel, desc string) columnGrams {
		return columnGrams{runs: [4]string{gramText(title), gramText(tags), gramText(channel), gramText(desc)}}
	}, upgradeGlued)
}

func reindexAsOld(ctx context.Context, db *DB, gramsOf func(title, tags, channel, desc string) columnGrams, pending ...string) error {
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
		if s := g.indexed(); s != "" {
			o.grams = s
		}
		t, n := buildTerms(title, tags, channel, desc, g)
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
	if _, err := tx.ExecContext(ctx, sqlFTSDelete, jsonIDs(ids)); err != nil {
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
	if _, err := tx.ExecContext(ctx, sqlFTSInsert, jsonIDs(ids)); err != nil {
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

// SetTitleGramsOnly makes new rows index grams of their titles alone (the
// index before 0007_regram), for the index size comparison.
func SetTitleGramsOnly(on bool) { testTitleGramsOnly = on }

// GluedWords is what the gram column adds for the glued tokens of s.
func GluedWords(s string) []string { return appendGlued(nil, s) }

// GluedMark begins each group of glued words.
const GluedMark = gluedMark
