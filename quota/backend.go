package quota

import (
	"context"
	"fmt"
	"time"
)

// Backend stores a credential's reservation log. The two implementations are
// *Redis (shared by every host) and *Ledger (the archive's SQLite file, shared
// by every process on one host). Its methods are unexported: the Limiter
// relies on each one being a single atomic step on the backend's own clock,
// which is a promise of this package rather than a contract for others to
// implement.
type Backend interface {
	// kind is "redis" or "ledger", for Status.
	kind() string
	// reserve prunes every limit, then checks the upstream marks (the
	// credential's, and call's when call is not "") and all limits, and
	// records the reservation in every limit that counts it, or in none.
	reserve(ctx context.Context, cred, call, id string, charges []charge) (decision, error)
	// release removes every entry of id and reports whether there was one.
	release(ctx context.Context, cred, id string, limits []charge) (bool, error)
	// mark refuses reservations until until: of the whole credential when
	// calls is empty, else of those calls. A mark lasting longer is kept.
	mark(ctx context.Context, cred string, calls []string, until time.Time, reason string) error
	// status prunes and reports every limit, the credential's mark and the
	// marks of calls.
	status(ctx context.Context, cred string, calls []string, limits []charge) (snapshot, error)
	// replay adds journaled fail-open grants that are still inside their
	// windows and not already present; it returns how many entries added
	// anything. Running it twice adds nothing the second time.
	replay(ctx context.Context, cred string, limits []charge, entries []journalEntry) (int, error)
	// now is the backend's clock; a cheap round trip, so it also serves Ping.
	now(ctx context.Context) (time.Time, error)
}

// charge is one limit as a backend sees it for one reservation. cost 0 means
// the limit does not count this call (it is still pruned and reported).
type charge struct {
	name   string
	units  int64
	window time.Duration
	cost   int64
}

// decision is a backend's answer to reserve.
type decision struct {
	at         time.Time
	granted    bool
	duplicate  bool
	refusedBy  int // index into charges; -1 none; upstreamRefusal for a mark
	retryAfter time.Duration
	used       []int64 // per charge, after the decision
}

const upstreamRefusal = -2

// snapshot is a backend's answer to status.
type snapshot struct {
	at        time.Time
	limits    []limitSnapshot
	mark      *Exhaustion  // the credential's; nil when none is in force
	callMarks []Exhaustion // the calls' marks in force, in the order asked
}

type limitSnapshot struct {
	used, count int64
	oldest      time.Time // zero when the log is empty
}

// journalEntry is a fail-open grant waiting to be added to the backend.
// costs is per limit, in the order of the limits passed to replay.
type journalEntry struct {
	id    string
	at    time.Time
	costs []int64
}

// ttlSlack is how much longer than its window a Redis key lives after its
// last write, so a key never expires while one of its entries still counts.
const ttlSlack = time.Second

// ttl is the PEXPIRE of a log of the given window, in milliseconds.
func ttl(window time.Duration) int64 {
	return int64((window + ttlSlack + time.Millisecond - 1) / time.Millisecond)
}

// pastMarkError is a backend's answer to a mark that would already be over.
type pastMarkError struct{ until, now time.Time }

func (e pastMarkError) Error() string {
	return fmt.Sprintf("quota: mark exhausted until %s: not after the backend's clock (%s)",
		e.until.Format(time.RFC3339Nano), e.now.Format(time.RFC3339Nano))
}

func markInPast(until, now time.Time) error { return pastMarkError{until, now} }

func micros(d time.Duration) int64 { return int64(d / time.Microsecond) }
