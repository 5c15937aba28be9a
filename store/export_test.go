package store

import "context"

// Test-only access to internals, for the package's external tests.

// SetPageTxHook makes SavePage call f inside its transaction, after every
// write and before the commit (nil removes it).
func SetPageTxHook(f func()) { testHookInPageTx = f }

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
func TitleGrams(title string) string { return titleGrams(title) }

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
func RegionFacet(region string) string { return regionFacet(region) }
