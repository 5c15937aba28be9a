package quota_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// A Redis that refuses the credentials (WRONGPASS for a wrong password,
// NOAUTH for none) answered: it is no outage, so no call fails open, and
// the message says the credentials were refused, so the operator fixes the
// password rather than the network (the red team got "quota: backend
// unavailable"). The password is never in it.
func TestRefusedCredentialsSayAuthentication(t *testing.T) {
	t.Parallel()
	const password, wrong = "right-pass-never-print", "wrong-pass-never-print"
	rs := redistest.StartServer(t, "--requirepass", password)
	for _, tc := range []struct {
		name, password, reply string
	}{
		{"wrong password", wrong, "WRONGPASS"},
		{"no password", "", "NOAUTH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := redis.NewClient(&redis.Options{Addr: rs.Addr(), Password: tc.password})
			t.Cleanup(func() { client.Close() })
			cfg := testConfig()
			cfg.Credential = "auth-refused"
			cfg.Timeout = 2 * time.Second
			l := newLimiter(t, cfg, quota.NewRedis(client), quota.WithRecord(openStore(t).Writer()))
			ctx := context.Background()
			want := "quota: backend refused the credentials (" + tc.reply + ")"
			for _, c := range []struct {
				name string
				call func() error
			}{
				// videos.list's policy is open: it must not fail open.
				{"Reserve videos.list", func() error {
					res, err := l.Reserve(ctx, "videos.list")
					if res.Granted || res.FailOpen {
						t.Errorf("Reserve videos.list granted %+v", res)
					}
					return err
				}},
				{"Reserve search.list", func() error { _, err := l.Reserve(ctx, "search.list"); return err }},
				{"Status", func() error { _, err := l.Status(ctx); return err }},
				{"Sync", func() error { _, err := l.Sync(ctx, true); return err }},
				{"Ping", func() error { return l.Ping(ctx) }},
				{"MarkExhausted", func() error { return l.MarkExhausted(ctx, time.Now().Add(time.Hour), "x") }},
				{"Release", func() error { return l.Release(ctx, "other") }},
			} {
				err := c.call()
				if !errors.Is(err, quota.ErrBackend) || !errors.Is(err, quota.ErrBackendAuth) || !strings.HasPrefix(err.Error(), want) ||
					strings.Contains(err.Error(), "unavailable") || strings.Count(err.Error(), "refused the credentials") != 1 {
					t.Errorf("%s: %v\nwant ErrBackend and ErrBackendAuth, starting %q", c.name, err, want)
				}
				if err != nil && (strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), password)) {
					t.Errorf("%s: the password is in %q", c.name, err)
				}
			}
		})
	}
}
