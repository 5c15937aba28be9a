package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/synth"
)

// An archive whose rows were indexed with title grams only (as before
// 0007_regram) finds description and tag fragments once Regram has run,
// with the index, the term counts and the token total as a fresh archive
// would have them; a second Regram changes nothing.
func TestRegramUpgradesOldRows(t *testing.T) {
	ctx := context.Background()
	db := openFixture(t)
	fresh := func() (map[string][]string, int64) {
		out := map[string][]string{}
		for _, q := range []string{"日帰り", "関西", "小笼包", "中国", "東京", "天気"} {
			out[q] = ids(find(t, db, store.Query{Text: q}))
		}
		var tokens int64
		db.Reader().QueryRowContext(ctx, `SELECT tokens FROM archive_totals`).Scan(&tokens)
		return out, tokens
	}
	want, wantTokens := fresh()
	if !slices.Equal(want["日帰り"], []string{"ja2"}) {
		t.Fatalf("fixture: 日帰り = %v", want["日帰り"])
	}
	if err := store.Degram(ctx, db); err != nil {
		t.Fatal(err)
	}
	ftsIntegrity(t, db)
	if got := ids(find(t, db, store.Query{Text: "日帰り"})); len(got) != 0 {
		t.Fatalf("after Degram: 日帰り = %v; the old index did not have it", got)
	}
	st, err := db.RegramProgress(ctx)
	if err != nil || st.Done || st.Pending == 0 {
		t.Fatalf("progress before: %+v, %v", st, err)
	}
	var steps int
	if err := db.Regram(ctx, func(store.RegramStatus) { steps++ }); err != nil {
		t.Fatal(err)
	}
	ftsIntegrity(t, db)
	got, gotTokens := fresh()
	for q, w := range want {
		if !slices.Equal(got[q], w) {
			t.Errorf("after Regram: %s = %v, want %v", q, got[q], w)
		}
	}
	if gotTokens != wantTokens {
		t.Errorf("token total %d after Regram, %d before Degram", gotTokens, wantTokens)
	}
	if st, err := db.RegramProgress(ctx); err != nil || !st.Done || st.Pending != 0 || steps != 1 {
		t.Errorf("progress after: %+v, %v (%d steps)", st, err, steps)
	}
	if err := db.Regram(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// A new archive has nothing to upgrade.
func TestRegramNothingOnNewArchive(t *testing.T) {
	db, _ := openDB(t)
	st, err := db.RegramProgress(context.Background())
	if err != nil || !st.Done {
		t.Errorf("new archive: %+v, %v", st, err)
	}
}

// An archive whose rows were indexed before 0009_glued_words finds words
// written against an emoji once Regram has run. Only the rows holding such
// words are rewritten; their term counts and the token total stay as they
// were (glued words are counted as their column's words already).
func TestRegramGluedWords(t *testing.T) {
	ctx := context.Background()
	db := openGlued(t)
	queries := []string{"дорого", `"дорого идеальные"`, "ep", "os", "alpha", `"bravo delta"`, "まとめ", "gols"}
	state := func() (map[string][]string, string, int64) {
		out := map[string][]string{}
		for _, q := range queries {
			got := ids(find(t, db, store.Query{Text: q}))
			slices.Sort(got)
			out[q] = got
		}
		var blobs string
		var tokens int64
		if err := db.Reader().QueryRowContext(ctx, `SELECT group_concat(hex(terms) || ':' || doc_len, ' ') FROM (SELECT terms, doc_len FROM video_stats ORDER BY video)`).Scan(&blobs); err != nil {
			t.Fatal(err)
		}
		db.Reader().QueryRowContext(ctx, `SELECT tokens FROM archive_totals`).Scan(&tokens)
		return out, blobs, tokens
	}
	want, wantBlobs, wantTokens := state()
	if err := store.Unglue(ctx, db); err != nil {
		t.Fatal(err)
	}
	ftsIntegrity(t, db)
	old, oldBlobs, oldTokens := state()
	for _, q := range []string{"дорого", "ep", "alpha"} {
		if len(old[q]) != 0 {
			t.Errorf("before Regram: %s = %v; the old index did not have it", q, old[q])
		}
	}
	if oldBlobs != wantBlobs || oldTokens != wantTokens {
		t.Errorf("the old index counted terms differently: %d tokens, today %d", oldTokens, wantTokens)
	}
	st, err := db.RegramProgress(ctx)
	if err != nil || st.Done || st.Pending != int64(len(synth.Glued())) || !slices.Equal(st.Upgrades, []string{"words written against an emoji"}) {
		t.Fatalf("progress before: %+v, %v", st, err)
	}
	// Which rows Regram rewrites (the writer pool is one connection, so a
	// temporary trigger on it sees every write).
	if _, err := db.Writer().ExecContext(ctx, `CREATE TEMP TABLE rewritten (video_id TEXT);
		CREATE TEMP TRIGGER log_regram AFTER UPDATE OF title_grams ON main.videos BEGIN
			INSERT INTO rewritten VALUES (new.video_id);
		END`); err != nil {
		t.Fatal(err)
	}
	if err := db.Regram(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ftsIntegrity(t, db)
	var rewritten string
	if err := db.Writer().QueryRowContext(ctx, `SELECT coalesce(group_concat(video_id, ' '), '') FROM (SELECT video_id FROM rewritten ORDER BY video_id)`).Scan(&rewritten); err != nil {
		t.Fatal(err)
	}
	if rewritten != "en1 ja1 ko1 pt1 ru1" {
		t.Errorf("Regram rewrote %q, want the five rows with glued words", rewritten)
	}
	got, gotBlobs, gotTokens := state()
	for _, q := range queries {
		if !slices.Equal(got[q], want[q]) {
			t.Errorf("after Regram: %s = %v, want %v", q, got[q], want[q])
		}
	}
	if gotBlobs != wantBlobs || gotTokens != wantTokens {
		t.Errorf("term counts changed: %d tokens, want %d", gotTokens, wantTokens)
	}
	if st, err := db.RegramProgress(ctx); err != nil || !st.Done || st.Pending != 0 || len(st.Upgrades) != 0 {
		t.Errorf("progress after: %+v, %v", st, err)
	}
}

// Two pending upgrades at different points (0007 half done when 0009
// arrived): Regram resumes from the lower one and finishes both.
func TestRegramCarriesEveryUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openGlued(t)
	if err := store.Degram(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().ExecContext(ctx, `UPDATE index_upgrades SET next_id = 4 WHERE name = 'grams_every_column'`); err != nil {
		t.Fatal(err)
	}
	st, err := db.RegramProgress(ctx)
	if err != nil || st.Done || st.NextID != 0 || st.Pending != int64(len(synth.Glued())) ||
		!slices.Equal(st.Upgrades, []string{"words written against an emoji", "CJK/Thai words in every column"}) {
		t.Fatalf("progress before: %+v, %v", st, err)
	}
	if got := ids(find(t, db, store.Query{Text: "ep"})); len(got) != 0 {
		t.Fatalf("after Degram: ep = %v", got)
	}
	if err := db.Regram(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ftsIntegrity(t, db)
	if got := ids(find(t, db, store.Query{Text: "ep"})); !slices.Equal(got, []string{"ko1"}) {
		t.Errorf("after Regram: ep = %v", got)
	}
	// 브이로그 is inside ko1's description: found through its grams.
	if got := ids(find(t, db, store.Query{Text: "브이"})); !slices.Equal(got, []string{"ko1"}) {
		t.Errorf("after Regram: 브이 = %v", got)
	}
	var pending int
	db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM index_upgrades WHERE NOT done`).Scan(&pending)
	if st, err := db.RegramProgress(ctx); err != nil || !st.Done || pending != 0 {
		t.Errorf("progress after: %+v, %v, %d pending", st, err, pending)
	}
}

func openGlued(tb testing.TB) *store.DB {
	tb.Helper()
	db, _ := openDB(tb)
	saveChart(tb, db, "RU", t0, 1, synth.Glued()...)
	return db
}
