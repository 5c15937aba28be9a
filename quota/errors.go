package quota

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

var (
	// ErrRefused is matched (errors.Is) by every *RefusedError: the budget
	// said no, and RetryAfter says for how long.
	ErrRefused = errors.New("quota: refused")
	// ErrBackend is returned when the backend could not be asked: unreachable,
	// timed out, or answering with an error. For an unreachable backend the
	// call's Policy decides; a closed policy returns this error.
	ErrBackend = errors.New("quota: backend unavailable")
	// ErrBackendAuth is matched, besides ErrBackend, when the backend refused
	// this process's credentials (Redis WRONGPASS or NOAUTH). That is an
	// answer, not an outage: no call fails open, and the message says so,
	// for the operator to fix the password rather than the network.
	ErrBackendAuth = errors.New("quota: backend refused the credentials")
	// ErrUnknownCall is returned for a call name that is not in Config.Costs.
	ErrUnknownCall = errors.New("quota: unknown call")
	// ErrInvalidCost is returned for WithCost(n) with n <= 0.
	ErrInvalidCost = errors.New("quota: invalid cost")
	// ErrCostExceedsLimit is returned for a cost larger than a limit's whole
	// capacity: such a reservation could never be granted, so it is an input
	// error, not a "try later".
	ErrCostExceedsLimit = errors.New("quota: cost exceeds a limit's capacity")
	// ErrNotFound is returned by Release for an ID that holds no units (never
	// granted, already released, or already outside every window).
	ErrNotFound = errors.New("quota: reservation not found")
	// ErrInvalidConfig is matched by every error Config.Validate returns.
	ErrInvalidConfig = errors.New("quota: invalid config")
	// ErrInvalidID is returned for a reservation ID that is empty, longer than
	// 64 bytes, or has characters outside [A-Za-z0-9_.:-].
	ErrInvalidID = errors.New("quota: invalid reservation id")
	// ErrIDReused is returned for a reservation ID that already holds units
	// at another cost: a second cost would be a second charge.
	ErrIDReused = errors.New("quota: reservation id reused with another cost")
	// ErrFenced is returned for a reservation made for a leader whose lease
	// is no longer the current one: a paused or partitioned replica that
	// woke up. Nothing was charged; the replica must step down.
	ErrFenced = errors.New("quota: fenced: not the current leader")
	// ErrLimitConflict is matched by every *ConflictError.
	ErrLimitConflict = errors.New("quota: conflicting limit definitions")
	// ErrLedgerDamaged is returned when the embedded ledger's tables are
	// missing from the archive: the books cannot be read, and an empty day
	// is never assumed.
	ErrLedgerDamaged = errors.New("quota: embedded ledger damaged")
)

// ConflictError is returned when this process gives a limit another window
// than the processes already spending from it: it would prune entries that
// still count for them, so nothing is decided until the windows agree. (A
// different capacity is a configuration change and is accepted.)
type ConflictError struct {
	Limit  string
	Stored Limit // the definition the ledger holds (Units and Window)
	Mine   Limit // this process's
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("quota: limit %q is defined as %d units per %s by the processes already spending from it, "+
		"but as %d units per %s here: the windows must agree, or each would prune the other's entries; "+
		"make every process use one window (or rename the limit); the stored one is replaced once the limit holds no entries",
		e.Limit, e.Stored.Units, e.Stored.Window, e.Mine.Units, e.Mine.Window)
}

// Is makes errors.Is(err, ErrLimitConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrLimitConflict }

// RefusedError is the error of a refused reservation. It carries what a caller
// needs to decide between waiting and stopping the run.
type RefusedError struct {
	Limit      string        // the limit that refused, or "upstream" for a MarkExhausted mark
	RetryAfter time.Duration // earliest moment this same reservation could fit
	Until      time.Time     // end of the upstream mark; zero for a limit's refusal
}

// Upstream is the RefusedBy / RefusedError.Limit value of a refusal caused by
// MarkExhausted.
const Upstream = "upstream"

// Rebuild is the RefusedBy / RefusedError.Limit value of a refusal during
// the grace period after the ledger lost its books (Config.RebuildGrace).
const Rebuild = "rebuild"

func (e *RefusedError) Error() string {
	if e.Limit == Rebuild {
		return fmt.Sprintf("quota: refused: the ledger was rebuilt after losing its books; "+
			"admitting nothing while processes restore their grants: retry after %s", formatWait(e.RetryAfter))
	}
	if e.Limit == Upstream {
		return fmt.Sprintf("quota: refused: upstream quota exhausted until %s: retry after %s",
			e.Until.UTC().Format(time.RFC3339), formatWait(e.RetryAfter))
	}
	return fmt.Sprintf("quota: refused by limit %q: retry after %s", e.Limit, formatWait(e.RetryAfter))
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// formatWait prints a wait the way an operator reads it: "3h12m", "41s",
// "250ms".
func formatWait(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// syncError is a sync's failure to ask the backend: ErrBackend to Sync's
// callers, "quota: backend unavailable: sync: " and the cause (or
// headline's words for refused credentials).
type syncError struct{ err error }

func (e *syncError) Error() string        { return headline(e.err).Error() + ": sync: " + e.err.Error() }
func (e *syncError) Is(target error) bool { return errors.Is(headline(e.err), target) }
func (e *syncError) Unwrap() error        { return e.err }

// asStep is err, from Sync, as a step of a call that says ErrBackend
// itself when the backend fails (Status's and Reserve's sync of the books
// first): a syncError, which Sync returns as it is, is passed on as
// "sync: " and its cause alone, so that the call's message says "backend
// unavailable" once. The cause stays in the chain (errors.Is finds its
// deadline; isUnavailable still holds).
func asStep(err error) error {
	if s, ok := err.(*syncError); ok {
		return fmt.Errorf("sync: %w", s.err)
	}
	return err
}

// unavailableError marks a backend error that means "could not be asked"
// (network, timeout, server loading or read-only) as opposed to an answer that
// is itself an error. Only the former falls under the call's Policy.
type unavailableError struct{ err error }

func (e unavailableError) Error() string { return e.err.Error() }
func (e unavailableError) Unwrap() error { return e.err }

func isUnavailable(err error) bool {
	var u unavailableError
	return errors.As(err, &u)
}

// authError is the backend refusing the credentials; reply is the error
// code it answered with (WRONGPASS, NOAUTH). It never holds the password:
// the server's reply does not repeat it.
type authError struct {
	reply string
	err   error
}

func (e *authError) Error() string { return e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

// headline is what a failure to ask the backend says first, for cause:
// ErrBackend, or for refused credentials "quota: backend refused the
// credentials (WRONGPASS)", which matches ErrBackend and ErrBackendAuth.
func headline(cause error) error {
	var a *authError
	if errors.As(cause, &a) {
		return credentialsRefused(a.reply)
	}
	return ErrBackend
}

// credentialsRefused is ErrBackendAuth with the backend's reply code.
type credentialsRefused string

func (c credentialsRefused) Error() string { return fmt.Sprintf("%s (%s)", ErrBackendAuth, string(c)) }
func (c credentialsRefused) Is(target error) bool {
	return target == ErrBackend || target == ErrBackendAuth
}
