package search

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/ytrend/ytrend/migrations"
)

// Test-only access to internals, for the package's external tests.

// TitleGrams is the indexed bigram text of a title.
func TitleGrams(title string) string { return gramText(title) }

// MatchExpr is the FTS5 expression a plain query becomes.
func MatchExpr(text string) string { return parseQuery(text, false).expr }

// GluedWords is what the gram column adds for the glued tokens of s.
func GluedWords(s string) []string { return appendGlued(nil, s) }

// GluedMark begins each group of glued words.
const GluedMark = gluedMark

// TextScores computes the engine's bm25 (without the trend blend) for every
// video matching text, keyed by YouTube id, to compare with FTS5's bm25().
// reader is the archive's read pool.
func TextScores(ctx context.Context, reader *sql.DB, text string) (map[string]float64, error) {
	e := New(reader, nil)
	defer e.Close()
	pq := parseQuery(text, false)
	tx, err := reader.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var st archiveState
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM videos), videos, tokens FROM archive_totals`).Scan(&st.maxID, &st.videos, &st.tokens); err != nil {
		return nil, err
	}
	s := e.searcher(ctx, tx, e.statements(Query{}, pq), Query{}, pq)
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
		out[id] = textScore(phrases, Terms(t), docLen, avgdl)
	}
	return out, rows.Err()
}

// openSchema opens an empty archive with every migration applied, for the
// internal tests that read query plans.
func openSchema(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", filepath.Join(tb.TempDir(), "plan.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := migrations.Apply(context.Background(), db, migrations.FS); err != nil {
		tb.Fatal(err)
	}
	return db
}

// HoldRankStates registers rankStates no search owns, as searches under way
// would, until every slot of the table is taken (and n more, in the map
// past it), and returns what releases them.
func HoldRankStates(n int) (release func()) {
	var ids []int64
	for held := 0; held < 1<<rankSlotBits; {
		id := registerRankState(&rankState{})
		ids = append(ids, id)
		if id > 0 {
			held++
		}
	}
	for range n {
		ids = append(ids, registerRankState(&rankState{}))
	}
	return func() {
		for _, id := range ids {
			releaseRankState(id)
		}
	}
}
