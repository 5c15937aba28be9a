package budget_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ytrend/ytrend/budget"
	"github.com/ytrend/ytrend/config"
	"github.com/ytrend/ytrend/store"
)

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Store.Path = filepath.Join(t.TempDir(), "ytrend.db")
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Without redis.url the budget is the embedded ledger in the archive, and
// a process that spends reserves from it.
func TestEmbeddedLedger(t *testing.T) {
	cfg := testConfig(t)
	db, err := store.Open(context.Background(), cfg.Store.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, err := budget.Open(context.Background(), budget.ConfigFrom(cfg), budget.Options{Archive: db})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Name() != "embedded ledger" || b.Redis != nil || b.Durability(context.Background()) != nil {
		t.Errorf("name %q, redis %v: want the embedded ledger, no Redis, no durability warning", b.Name(), b.Redis)
	}
	res, err := b.Limiter.Reserve(context.Background(), "videos.list")
	if err != nil || !res.Granted {
		t.Fatalf("reserve: %+v, %v; want granted", res, err)
	}
	st, err := b.Limiter.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Limits[0].Used != cfg.Costs["videos.list"] {
		t.Errorf("used %d, want %d: the grant is in the archive's ledger", st.Limits[0].Used, cfg.Costs["videos.list"])
	}
}

// A process that spends must give its archive (its record of grants); a
// status-only one may not, and a handle it cannot open is an ArchiveError.
func TestOptionsChecked(t *testing.T) {
	cfg := testConfig(t)
	if _, err := budget.Open(context.Background(), budget.ConfigFrom(cfg), budget.Options{}); err == nil {
		t.Error("a spending process without its archive was let through")
	}
	bc := budget.ConfigFrom(cfg)
	bc.Archive = filepath.Join(t.TempDir(), "missing", "dir", "ytrend.db")
	_, err := budget.Open(context.Background(), bc, budget.Options{StatusOnly: true})
	if ae := (*budget.ArchiveError)(nil); !errors.As(err, &ae) {
		t.Errorf("status-only on an archive that cannot be opened: %v, want an ArchiveError", err)
	}
}
