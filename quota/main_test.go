package quota_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// discard silences go-redis' own logger: the failure tests dial dead ports
// on purpose, and its "failed to dial" lines would bury real output.
type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(discard{})
	os.Exit(m.Run())
}
