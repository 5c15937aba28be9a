package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ytrend/ytrend/store"
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
			out[q] = ids(search(t, db, store.Query{Text: q}))
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
	if got := ids(search(t, db, store.Query{Text: "日帰り"})); len(got) != 0 {
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
