package quota

import (
	"context"
	"fmt"
	"time"
)

// Backend stores a credential's reservation log. The two implementations are
// *Redis (shared by every host) and *SQLite (the archive's SQLite file, shared
// by every process on one host). Its methods are unexported: the Limiter
// relies on each one being a single atomic step on the backend's own clock,
// which is a promise of this package rather than a contract for others to
// implement.
type Backend interface {
	// kind is "redis" or "ledger", for Status.
	kind() string
	// reserve checks the fence and the epoch, prunes every limit, then
	// checks the upstream marks, the grace period and all limits, and
	// records the reservation in every limit that counts it, or in none.
	// An epoch that is not r.epoch decides nothing (decision.replay): the
	// caller syncs its record first.
	reserve(ctx context.Context, cred string, r reservation) (decision, error)
	// release removes every entry of id and reports whether there was one.
	release(ctx context.Context, cred, id string, limits []charge) (bool, error)
	// mark refuses reservations until until: of the whole credential when
	// calls is empty, else of those calls. A mark lasting longer is kept.
	mark(ctx context.Context, cred string, calls []string, until time.Time, reason string) error
	// status prunes and reports every limit, the credential's mark, the
	// marks of calls, the epoch and the leader lease.
	status(ctx context.Context, cred string, calls []string, limits []charge) (snapshot, error)
	// sync checks the epoch like reserve and adds the entries that are
	// still inside their windows and not already present. Running it twice
	// adds nothing the second time.
	sync(ctx context.Context, cred string, s syncRequest) (syncResult, error)
	// lease acquires, renews or releases the leader lease.
	lease(ctx context.Context, cred string, op leaseOp, holder string, ttl time.Duration, token int64) (leaseState, error)
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

// reservation is what reserve is asked to decide.
type reservation struct {
	call     string // whose own upstream mark applies besides the credential's; "" for none
	id       string
	callerID bool // the caller chose id: a reuse with another cost is an error
	charges  []charge
	epoch    string        // the epoch the caller last saw, "" for none
	seen     int64         // the highest write count the caller saw in that epoch
	grace    time.Duration // how long a loss detected now admits nothing
	fence    *Fence        // the leader lease the caller acts for, or nil
}

// decision is a backend's answer to reserve.
type decision struct {
	at         time.Time
	granted    bool
	duplicate  bool
	grantedAt  time.Time // a duplicate's first grant, where the backend says
	replay     bool      // the epoch was not the caller's: nothing was decided
	refusedBy  int       // index into charges; -1 none; upstreamRefusal, graceRefusal
	retryAfter time.Duration
	used       []int64 // per charge, after the decision
	epoch      string
	graceUntil time.Time
	seq        int64 // the epoch's write count after the decision (0 where not kept)
	lost       bool  // this call found the books lost and started epoch
}

const (
	upstreamRefusal = -2
	graceRefusal    = -3
)

// syncRequest carries a process's grants to the backend.
type syncRequest struct {
	epoch     string
	seen      int64 // the highest write count the caller saw in epoch
	restoring bool  // the caller met a loss: what it adds counts as restored
	// audit: the entries are grants the ledger acknowledged; one it lacks
	// means it lost writes, which is a loss of the books.
	audit   bool
	grace   time.Duration
	limits  []charge
	entries []replayEntry
	// copyFrom asks for each limit's entries granted after it (one per
	// limit; the zero time copies the whole log), for the caller's
	// mirror; nil copies nothing.
	copyFrom []time.Time
}

// syncResult is a backend's answer to sync.
type syncResult struct {
	added      int
	at         time.Time
	epoch      string
	graceUntil time.Time
	restored   bool // the epoch was not the caller's: the books had been lost
	seq        int64
	lost       bool // this call found the books lost and started epoch
	// copies holds, when copyFrom was given and the backend keeps a log
	// worth mirroring, one copy per limit.
	copies []logCopy
}

// logCopy is part of one limit's log, for a mirror.
type logCopy struct {
	count   int64 // entries in the window now
	entries []mirrorEntry
}

// snapshot is a backend's answer to status.
type snapshot struct {
	at        time.Time
	limits    []limitSnapshot
	mark      *Exhaustion  // the credential's; nil when none is in force
	callMarks []Exhaustion // the calls' marks in force, in the order asked
	ledger    LedgerInfo
	lease     string // "<token> <holder>", "" when free
}

type limitSnapshot struct {
	used, count int64
	oldest      time.Time // zero when the log is empty
}

// replayEntry is a grant to replay into the ledger. costs is per limit, in the
// order of the limits passed to sync.
type replayEntry struct {
	id    string
	at    time.Time
	costs []int64
}

type leaseOp string

const (
	leaseAcquire leaseOp = "acquire"
	leaseRenew   leaseOp = "renew"
	leaseRelease leaseOp = "release"
)

// leaseState is a backend's answer to lease.
type leaseState struct {
	held  bool
	token int64
	ttl   time.Duration // remaining, for a lease held by another
	at    time.Time
}

// pastMarkError is a backend's answer to a mark that would already be over.
type pastMarkError struct{ until, now time.Time }

func (e pastMarkError) Error() string {
	return fmt.Sprintf("quota: mark exhausted until %s: not after the backend's clock (%s)",
		e.until.Format(time.RFC3339Nano), e.now.Format(time.RFC3339Nano))
}

func markInPast(until, now time.Time) error { return pastMarkError{until, now} }

func micros(d time.Duration) int64 { return int64(d / time.Microsecond) }
