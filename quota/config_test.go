package quota_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
)

func TestDefaultConfig(t *testing.T) {
	cfg := quota.DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	if cfg.Credential != "main" || cfg.Timeout != 500*time.Millisecond {
		t.Errorf("credential %q timeout %s, want main 500ms", cfg.Credential, cfg.Timeout)
	}
	want := map[string]int64{"videos.list": 1, "search.list": 100, "channels.list": 1, "videoCategories.list": 1, "i18nRegions.list": 1}
	if len(cfg.Costs) != len(want) {
		t.Errorf("costs = %v, want %v", cfg.Costs, want)
	}
	for call, n := range want {
		if cfg.Costs[call] != n {
			t.Errorf("costs[%q] = %d, want %d", call, cfg.Costs[call], n)
		}
	}
	if len(cfg.Limits) != 2 ||
		cfg.Limits[0].Name != "daily" || cfg.Limits[0].Units != 9500 || cfg.Limits[0].Window != 24*time.Hour || cfg.Limits[0].Costs != nil ||
		cfg.Limits[1].Name != "search" || cfg.Limits[1].Units != 1000 || cfg.Limits[1].Window != time.Hour ||
		len(cfg.Limits[1].Costs) != 1 || cfg.Limits[1].Costs["search.list"] != 100 {
		t.Errorf("limits = %+v", cfg.Limits)
	}
	if cfg.Policies["videos.list"] != quota.FailOpen || cfg.Policies["search.list"] != quota.FailClosed {
		t.Errorf("policies = %v", cfg.Policies)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*quota.Config)
		want   string // a substring of the error; every case must fail
	}{
		{"empty credential", func(c *quota.Config) { c.Credential = "" },
			"credential: must not be empty"},
		{"credential with a brace", func(c *quota.Config) { c.Credential = "ma{in" },
			`credential "ma{in": must not contain '{', '}'`},
		{"credential with a closing brace", func(c *quota.Config) { c.Credential = "main}" },
			`credential "main}"`},
		{"credential with whitespace", func(c *quota.Config) { c.Credential = "my key" },
			`credential "my key": must not contain`},
		{"no costs", func(c *quota.Config) { c.Costs = nil },
			"costs: at least one call is required"},
		{"zero cost", func(c *quota.Config) { c.Costs["videos.list"] = 0 },
			`costs["videos.list"]: cost must be > 0, got 0`},
		{"negative cost", func(c *quota.Config) { c.Costs["channels.list"] = -3 },
			`costs["channels.list"]: cost must be > 0, got -3`},
		{"no limits", func(c *quota.Config) { c.Limits = nil },
			"limits: at least one limit is required"},
		{"unknown call in a limit's table", func(c *quota.Config) { c.Limits[1].Costs = map[string]int64{"serch.list": 100} },
			`limits[1].costs: unknown call "serch.list" (not in costs: channels.list, i18nRegions.list, search.list, videoCategories.list, videos.list)`},
		{"zero cost in a limit's table", func(c *quota.Config) { c.Limits[1].Costs["search.list"] = 0 },
			`limits[1].costs["search.list"]: cost must be > 0, got 0`},
		{"empty limit table", func(c *quota.Config) { c.Limits[1].Costs = map[string]int64{} },
			`limits[1].costs: empty table counts no call`},
		{"cost larger than the limit", func(c *quota.Config) { c.Limits[0].Units = 50 },
			`limits[0] "daily": search.list costs 100 but the limit holds only 50 units; it could never be granted`},
		{"cost larger than the limit's own table", func(c *quota.Config) { c.Limits[1].Units = 99 },
			`limits[1] "search": search.list costs 100 but the limit holds only 99 units`},
		{"duplicate limit names", func(c *quota.Config) { c.Limits[1].Name = "daily" },
			`limits[1].name "daily": duplicate of limits[0]`},
		{"empty limit name", func(c *quota.Config) { c.Limits[0].Name = "" },
			`limits[0].name: must not be empty`},
		{"limit name with a brace", func(c *quota.Config) { c.Limits[0].Name = "da}ly" },
			`limits[0].name "da}ly": must not contain`},
		{"zero window", func(c *quota.Config) { c.Limits[0].Window = 0 },
			`limits[0] "daily": window must be > 0, got 0s`},
		{"negative window", func(c *quota.Config) { c.Limits[1].Window = -time.Hour },
			`limits[1] "search": window must be > 0, got -1h0m0s`},
		{"sub-microsecond window", func(c *quota.Config) { c.Limits[1].Window = time.Hour + 1 },
			`limits[1] "search": window must be a whole number of microseconds`},
		{"zero units", func(c *quota.Config) { c.Limits[0].Units = 0 },
			`limits[0] "daily": units must be > 0, got 0`},
		{"negative units", func(c *quota.Config) { c.Limits[1].Units = -1 },
			`limits[1] "search": units must be > 0, got -1`},
		{"call counted by no limit", func(c *quota.Config) {
			c.Limits = c.Limits[1:]
		}, `costs["channels.list"]: no limit counts this call; it would never be metered`},
		{"policy for an unknown call", func(c *quota.Config) { c.Policies["vidoes.list"] = quota.FailOpen },
			`policies: unknown call "vidoes.list"`},
		{"bad policy value", func(c *quota.Config) { c.Policies["videos.list"] = "opn" },
			`policies["videos.list"]: must be "open" or "closed", got "opn"`},
		{"negative timeout", func(c *quota.Config) { c.Timeout = -time.Second },
			`timeout: must be >= 0`},
		{"reserved call name", func(c *quota.Config) { c.Costs["manual"] = 1 },
			`costs["manual"]: reserved call name`},
		{"call name with a brace", func(c *quota.Config) { c.Costs["videos}.list"] = 1 },
			`costs["videos}.list"]: a call name must not contain`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := quota.DefaultConfig()
			tt.change(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %q\nwant it to contain %q", err, tt.want)
			}
			if !errors.Is(err, quota.ErrInvalidConfig) {
				t.Errorf("Validate() error does not match ErrInvalidConfig: %v", err)
			}
			if _, err := quota.New(cfg, quota.NewSQLite(nil)); !errors.Is(err, quota.ErrInvalidConfig) {
				t.Errorf("New accepted an invalid config: %v", err)
			}
		})
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	cfg := quota.DefaultConfig()
	cfg.Credential = ""
	cfg.Costs["videos.list"] = 0
	cfg.Limits[1].Window = 0
	err := cfg.Validate()
	for _, want := range []string{"credential: must not be empty", `costs["videos.list"]`, `limits[1] "search": window`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

func TestConfigIsCopied(t *testing.T) {
	cfg := quota.DefaultConfig()
	cfg.Timeout = 0
	l, err := quota.New(cfg, quota.NewSQLite(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Costs["videos.list"] = 50
	cfg.Limits[1].Costs["search.list"] = 1
	got := l.Config()
	if got.Costs["videos.list"] != 1 || got.Limits[1].Costs["search.list"] != 100 {
		t.Errorf("Limiter shares maps with the caller's Config: %+v", got)
	}
	if got.Timeout != quota.DefaultTimeout {
		t.Errorf("Config().Timeout = %s, want the default %s", got.Timeout, quota.DefaultTimeout)
	}
	got.Costs["videos.list"] = 7
	if l.Config().Costs["videos.list"] != 1 {
		t.Error("Config() returns the Limiter's own map")
	}
}

// TestInputErrors checks that bad input is rejected before the backend is
// touched: the backend here is a Redis that does not exist, so anything that
// reached it would come back as ErrBackend instead.
func TestInputErrors(t *testing.T) {
	cfg := quota.DefaultConfig()
	cfg.Credential = "inputs"
	l := newLimiter(t, cfg, quota.NewRedis(deadRedis(t)))
	tests := []struct {
		name string
		call string
		opts []quota.ReserveOption
		want error
		msg  string
	}{
		{"unknown call", "serch.list", nil, quota.ErrUnknownCall, `quota: unknown call "serch.list" (known: channels.list, i18nRegions.list, search.list, videoCategories.list, videos.list)`},
		{"empty call without a cost", "", nil, quota.ErrUnknownCall, `unknown call ""`},
		{"zero manual cost", "", []quota.ReserveOption{quota.WithCost(0)}, quota.ErrInvalidCost, "cost must be > 0, got 0"},
		{"negative manual cost", "", []quota.ReserveOption{quota.WithCost(-5)}, quota.ErrInvalidCost, "got -5"},
		{"manual cost over a limit", "", []quota.ReserveOption{quota.WithCost(1001)}, quota.ErrCostExceedsLimit,
			`limit "search" holds 1000 units, cost is 1001; it could never be granted`},
		{"manual cost over the daily limit", "", []quota.ReserveOption{quota.WithCost(9501)}, quota.ErrCostExceedsLimit, `limit "daily" holds 9500`},
		{"manual cost with an unknown call", "serch.list", []quota.ReserveOption{quota.WithCost(3)}, quota.ErrUnknownCall, `"serch.list"`},
		{"id with a pipe", "videos.list", []quota.ReserveOption{quota.WithID("a|1")}, quota.ErrInvalidID, "only [A-Za-z0-9_.:-]"},
		{"id with a glob", "videos.list", []quota.ReserveOption{quota.WithID("a*")}, quota.ErrInvalidID, "only"},
		{"id too long", "videos.list", []quota.ReserveOption{quota.WithID(strings.Repeat("x", 65))}, quota.ErrInvalidID, "1-64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := l.Reserve(context.Background(), tt.call, tt.opts...)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Reserve = %v, want %v", err, tt.want)
			}
			if errors.Is(err, quota.ErrBackend) || errors.Is(err, quota.ErrRefused) {
				t.Errorf("input error also matches ErrBackend/ErrRefused: %v", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if res.Granted {
				t.Error("granted despite the error")
			}
		})
	}
	if err := l.Release(context.Background(), "bad id"); !errors.Is(err, quota.ErrInvalidID) {
		t.Errorf("Release(bad id) = %v, want ErrInvalidID", err)
	}
}

func TestResultRemaining(t *testing.T) {
	r := quota.Result{Limits: []quota.Usage{
		{Name: "daily", Cost: 100, Remaining: 900},
		{Name: "search", Cost: 100, Remaining: 300},
		{Name: "other", Cost: 0, Remaining: 5}, // does not count this call
	}}
	if got := r.Remaining(); got != 300 {
		t.Errorf("Remaining() = %d, want 300", got)
	}
	if got := (quota.Result{}).Remaining(); got != -1 {
		t.Errorf("Remaining() of an empty result = %d, want -1", got)
	}
}

func TestRefusedError(t *testing.T) {
	tests := []struct {
		err  *quota.RefusedError
		want string
	}{
		{&quota.RefusedError{Limit: "daily", RetryAfter: 3*time.Hour + 12*time.Minute + 200*time.Millisecond}, `quota: refused by limit "daily": retry after 3h12m`},
		{&quota.RefusedError{Limit: "search", RetryAfter: 41*time.Second + 20*time.Millisecond}, `quota: refused by limit "search": retry after 41s`},
		{&quota.RefusedError{Limit: "burst", RetryAfter: 250 * time.Millisecond}, `quota: refused by limit "burst": retry after 250ms`},
		{&quota.RefusedError{Limit: "daily", RetryAfter: 2*time.Hour + 5*time.Second}, `quota: refused by limit "daily": retry after 2h0m5s`},
		{&quota.RefusedError{Limit: quota.Upstream, RetryAfter: 5 * time.Hour, Until: time.Date(2026, 3, 9, 7, 0, 0, 0, time.UTC)},
			`quota: refused: upstream quota exhausted until 2026-03-09T07:00:00Z: retry after 5h`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		var err error = tt.err
		if !errors.Is(err, quota.ErrRefused) || errors.Is(err, quota.ErrBackend) {
			t.Errorf("%v: errors.Is ErrRefused must hold and ErrBackend must not", err)
		}
	}
}
