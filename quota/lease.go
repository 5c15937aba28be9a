package quota

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Leases is the credential's leader lease, kept in the budget's backend so
// that every replica sharing the budget competes for the same one. It is
// reached through Limiter.Leases; the leader package is its one user.
type Leases struct{ l *Limiter }

// Leases returns the handle of the credential's leader lease.
func (l *Limiter) Leases() *Leases { return &Leases{l: l} }

// Lease is the answer to Acquire.
type Lease struct {
	Held  bool          // this holder has the lease
	Fence Fence         // the lease as it stands: this holder's when Held, else the current holder's
	TTL   time.Duration // how long it lasts unless renewed (the other holder's remainder when not Held)
}

// errNoLeaseHolder is returned for an empty holder name.
var errNoLeaseHolder = errors.New("quota: lease holder must not be empty")

// Acquire takes the lease for holder (a replica's instance id) for ttl, or
// keeps it if holder has it already. Its token grows with every new
// leader, and a reservation made WithFence of a lease that is no longer
// current is refused with ErrFenced.
func (s *Leases) Acquire(ctx context.Context, holder string, ttl time.Duration) (Lease, error) {
	st, err := s.l.leaseOp(ctx, leaseAcquire, holder, ttl, 0)
	if err != nil {
		return Lease{}, err
	}
	f := Fence{Token: st.token, Holder: holder}
	if !st.held {
		f.Holder = "" // another replica's; its name is in Status
	}
	return Lease{Held: st.held, Fence: f, TTL: st.ttl}, nil
}

// Renew extends f for ttl and reports whether it was still current. false
// means the lease was lost (it expired and another replica may hold it):
// the caller must stop acting as the leader at once.
func (s *Leases) Renew(ctx context.Context, f Fence, ttl time.Duration) (bool, error) {
	st, err := s.l.leaseOp(ctx, leaseRenew, f.Holder, ttl, f.Token)
	return st.held, err
}

// Release gives f up, if it is still current, so that a standby takes over
// at once instead of after the TTL.
func (s *Leases) Release(ctx context.Context, f Fence) error {
	_, err := s.l.leaseOp(ctx, leaseRelease, f.Holder, time.Millisecond, f.Token)
	return err
}

func (l *Limiter) leaseOp(ctx context.Context, op leaseOp, holder string, ttl time.Duration, token int64) (leaseState, error) {
	if holder == "" {
		return leaseState{}, errNoLeaseHolder
	}
	if ttl < time.Millisecond {
		return leaseState{}, fmt.Errorf("quota: lease ttl %s: must be at least 1ms", ttl)
	}
	bctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	st, err := l.backend.lease(bctx, l.cfg.Credential, op, holder, ttl, token)
	if err != nil {
		return leaseState{}, fmt.Errorf("%w: lease %s: %w", headline(err), op, err)
	}
	return st, nil
}
