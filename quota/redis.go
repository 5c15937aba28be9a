package quota

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scripts, as one Redis Function library (FUNCTION LOAD, FCALL). Each
// script's file, whose header states its KEYS, ARGV and reply, is the body of
// one function; window.lua, the shared prune, clock and epoch functions, is
// the library's own code above them, run once per load, not once per call.
// That is what makes the library worth it: a local of the library lives
// exactly as long as the server process's Lua VM, so it can hold what the
// process cannot change (its run id, read once from INFO instead of on every
// call; see server_id in window.lua).
//
// The library's name, and its functions', carry a hash of its whole text
// (newLibrary), so two builds of ytrend spending from one Redis each call
// their own, however little their libraries differ. A server that lacks the
// library (a restart that lost everything, FUNCTION FLUSH, a new master of a
// Cluster) answers "Function not found"; the call loads it (on every master
// of a Cluster) and runs again, as EVALSHA's NOSCRIPT did.
//
// Nothing checks that the code under the name is still this build's. No
// build of ytrend loads other code under it, so what differs was put there
// on purpose, by a client allowed FUNCTION LOAD. A check at each sync
// (FUNCTION LIST WITHCODE, loading ours over anything else; branch redfcall)
// was measured and left out: ~63k server instructions and a 34 KB reply per
// check, a third of a reservation, every 5 s per `ytrend run` and once per
// CLI process, and FUNCTION LIST in the ACL. It would also protect nothing.
// Whoever loaded the code can load it again the moment after a check, and
// calls in between run the foreign code; a process that does not sync keeps
// calling it until its next sync. The guard is the ACL: FUNCTION LOAD's code
// runs with the rights of whoever calls it, so only the operator may load
// functions on a Redis that ytrend spends from (see README).
var (
	//go:embed window.lua
	windowLua string
	//go:embed reserve.lua
	reserveLua string
	//go:embed release.lua
	releaseLua string
	//go:embed status.lua
	statusLua string
	//go:embed mark.lua
	markLua string
	//go:embed sync.lua
	syncLua string
	//go:embed lease.lua
	leaseLua string
	//go:embed time.lua
	timeLua string

	// lib is built when first called: hashing it is work that every process
	// did at start, and most (a search, a chart) never call Redis.
	lib = sync.OnceValue(func() *library {
		return newLibrary(windowLua,
			libFunc{name: reserveFn, body: reserveLua},
			libFunc{name: releaseFn, body: releaseLua},
			libFunc{name: statusFn, body: statusLua},
			libFunc{name: markFn, body: markLua},
			libFunc{name: syncFn, body: syncLua},
			libFunc{name: leaseFn, body: leaseLua},
			// Redis' clock alone: it may run on a replica and on a full server.
			libFunc{name: timeFn, body: timeLua, flags: "no-writes"},
		)
	})
)

// The library's functions, as fcall is given them.
const (
	reserveFn = "reserve"
	releaseFn = "release"
	statusFn  = "status"
	markFn    = "mark"
	syncFn    = "sync"
	leaseFn   = "lease"
	timeFn    = "time"
)

// library is the Redis Function library: its versioned name and its code.
type library struct {
	name string            // "ytrend_<SHA-256 of the code>"
	code string            // exactly what FUNCTION LOAD is sent
	fns  map[string]string // function -> the name it is called by
}

// libFunc is one script of the library: a file whose KEYS and ARGV become
// the function's arguments, and the function's flags ("" for none).
type libFunc struct{ name, body, flags string }

// libraryName stands for the library's name in its text while the text is
// hashed: the name is a hash of every byte FUNCTION LOAD is sent (the
// header, each register_function wrapper, the shared code and the bodies)
// except the hash's own digits, which cannot be part of their own input.
const libraryName = "ytrend_LIBRARY"

func newLibrary(shared string, fns ...libFunc) *library {
	var b strings.Builder
	fmt.Fprintf(&b, "#!lua name=%s\n%s\n", libraryName, shared)
	l := &library{fns: map[string]string{}}
	for _, f := range fns {
		flags := ""
		if f.flags != "" {
			flags = ", flags = {'" + f.flags + "'}"
		}
		fmt.Fprintf(&b, "redis.register_function{function_name = '%s_%s'%s, callback = function(KEYS, ARGV)\nif not call then bind() end\n%s\nend}\n",
			libraryName, f.name, flags, f.body)
	}
	l.name = nameOf(b.String())
	l.code = strings.ReplaceAll(b.String(), libraryName, l.name)
	for _, f := range fns {
		l.fns[f.name] = l.name + "_" + f.name
	}
	return l
}

// nameOf is the name of the library whose text, with libraryName where its
// name goes, is text: the whole SHA-256, so that two libraries that differ
// anywhere never share a name (and a build never calls another's code as
// its own).
func nameOf(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "ytrend_" + hex.EncodeToString(sum[:])
}

// fn is the name a function of the library is called by.
func (l *library) fn(name string) string {
	fn, ok := l.fns[name]
	if !ok {
		panic("quota: no function " + name + " in the library")
	}
	return fn
}

// rediser is what the backend needs of a go-redis client: *redis.Client
// (standalone or Sentinel), *redis.ClusterClient, *redis.Ring, and the
// *redis.Conn a write and its WAIT share.
type rediser interface {
	FCall(ctx context.Context, function string, keys []string, args ...any) *redis.Cmd
	FunctionLoadReplace(ctx context.Context, code string) *redis.StringCmd
}

// fcall runs the library's function name (reserveFn, ...) on c. When c's
// server lacks the library it loads it and runs the function again: once,
// since a server that still lacks it is an answer. A Cluster gets it on
// every master, and a Ring on every shard, so that each credential's node
// has it; replicas get it from their master.
func fcall(ctx context.Context, c rediser, name string, keys []string, args []any) (any, error) {
	fn := lib().fn(name)
	v, err := c.FCall(ctx, fn, keys, args...).Result()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Function not found") {
		return v, err
	}
	if err := loadLibrary(ctx, c); err != nil {
		return nil, fmt.Errorf("FUNCTION LOAD %s: %w", lib().name, err)
	}
	return c.FCall(ctx, fn, keys, args...).Result()
}

// loadLibrary loads (or loads again: it is the same code under the same
// name) the library on every node of c that can run its functions.
func loadLibrary(ctx context.Context, c rediser) error {
	load := func(ctx context.Context, node *redis.Client) error {
		return node.FunctionLoadReplace(ctx, lib().code).Err()
	}
	switch c := c.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, load)
	case *redis.Ring:
		return c.ForEachShard(ctx, load)
	}
	return c.FunctionLoadReplace(ctx, lib().code).Err()
}

// Redis keeps the log in Redis, shared by every process and host that spends
// from the same credential. Every operation is one function of the library
// (one Lua script) on Redis' clock.
type Redis struct {
	rdb rediser
	// boundByClient: the client itself cuts a call off at its context's
	// deadline (ContextTimeoutEnabled), so run need not watch the context.
	boundByClient bool
	waitReplicas  int
	waitTimeout   time.Duration
}

// NewRedis returns a backend over rdb (a *redis.Client, *redis.ClusterClient
// or *redis.Ring) on Redis 7.0 or later. All keys of one credential share a
// hash tag, so a Cluster runs each function on one node.
//
// Config.Timeout bounds every call whatever the client's options. Give the
// client ContextTimeoutEnabled: true: it then ends a timed-out call itself and
// frees its connection at once, and Reserve avoids a goroutine per call.
func NewRedis(rdb rediser, opts ...RedisOption) *Redis {
	r := &Redis{rdb: rdb}
	for _, opt := range opts {
		opt(r)
	}
	switch c := rdb.(type) {
	case *redis.Client:
		r.boundByClient = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		r.boundByClient = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		r.boundByClient = c.Options().ContextTimeoutEnabled
	}
	return r
}

func (r *Redis) kind() string { return "redis" }

// key builds every Redis key this package uses:
// ytrend:{cred}:log:<limit>, ytrend:{cred}:total:<limit>,
// ytrend:{cred}:exhausted, ytrend:{cred}:exhausted:<call>,
// ytrend:{cred}:epoch, ytrend:{cred}:epoch:info,
// ytrend:{cred}:leader and ytrend:{cred}:leader:seq.
// The braces are a Cluster hash tag: one credential, one slot.
func key(cred string, parts ...string) string {
	return "ytrend:{" + cred + "}:" + strings.Join(parts, ":")
}

const (
	keyLog       = "log"
	keyTotal     = "total"
	keyExhausted = "exhausted"
	keyEpoch     = "epoch"
	keyInfo      = "info"
	keyLeader    = "leader"
	keySeq       = "seq"
)

// limitArgs appends each limit's keys and its units and window.
func limitArgs(cred string, keys []string, args []any, limits []charge) ([]string, []any) {
	for _, c := range limits {
		keys = append(keys, key(cred, keyLog, c.name), key(cred, keyTotal, c.name))
		args = append(args, c.units, micros(c.window))
	}
	return keys, args
}

func (r *Redis) reserve(ctx context.Context, cred string, rv reservation) (decision, error) {
	keys := make([]string, 0, 5+2*len(rv.charges))
	args := make([]any, 0, 7)
	keys = append(keys, key(cred, keyExhausted))
	if rv.call == "" {
		keys = append(keys, keys[0])
	} else {
		keys = append(keys, key(cred, keyExhausted, rv.call))
	}
	keys = append(keys, key(cred, keyEpoch), key(cred, keyLeader))
	for _, c := range rv.charges {
		keys = append(keys, key(cred, keyTotal, c.name))
	}
	keys = append(keys, key(cred, keyEpoch, keyInfo))
	for _, c := range rv.charges {
		keys = append(keys, key(cred, keyLog, c.name))
	}
	callerID := "0"
	if rv.callerID {
		callerID = "1"
	}
	// The grace and the limits in one argument: each argument costs the
	// server as much to hand to Lua as parsing this one once per library
	// load (spec in window.lua).
	spec := make([]byte, 0, 16+48*len(rv.charges))
	spec = strconv.AppendInt(spec, micros(rv.grace), 10)
	for _, c := range rv.charges {
		spec = append(spec, ' ')
		spec = strconv.AppendInt(spec, c.units, 10)
		spec = append(spec, ' ')
		spec = strconv.AppendInt(spec, micros(c.window), 10)
		spec = append(spec, ' ')
		spec = strconv.AppendInt(spec, c.cost, 10)
	}
	args = append(args, rv.id, rv.epoch, newEpoch(), rv.fence.value(), callerID, rv.seen, string(spec))
	v, err := r.runWrite(ctx, reserveFn, keys, args)
	var unacked waitError
	if errors.As(err, &unacked) {
		// Decided, but not on enough replicas: a grant is an error (the
		// policy decides); a refusal stands as it is.
		v = unacked.v
	} else if err != nil {
		return decision{}, scriptError(err, rv.charges)
	}
	vs, ok := v.([]any)
	if s, plain := v.(string); plain {
		// A plain grant, "<now> <epoch> <seq> <used>...": the whole reply's
		// code 1 and zeros around those (a grace that is over reads as
		// none). Fields that are not integers fail in ints below.
		f := strings.Fields(s)
		if len(f) == 3+len(rv.charges) {
			full := make([]any, 9+len(rv.charges))
			full[0], full[1], full[2], full[3], full[4] = int64(1), int64(0), int64(0), f[0], int64(0)
			full[5], full[6], full[7], full[8] = f[1], int64(0), f[2], int64(0)
			for i, u := range f[3:] {
				full[9+i] = u
			}
			vs, ok = full, true
		}
	}
	if !ok || len(vs) != 9+len(rv.charges) {
		return decision{}, fmt.Errorf("redis: reserve.lua: unexpected reply %v", v)
	}
	epoch, _ := vs[5].(string)
	vs[5] = int64(0)
	n, err := ints(vs, len(vs))
	if err != nil {
		return decision{}, err
	}
	d := decision{
		granted:    n[0] == 1,
		replay:     n[0] == 2,
		refusedBy:  int(n[1]) - 1,
		retryAfter: time.Duration(n[2]) * time.Microsecond,
		at:         time.UnixMicro(n[3]),
		duplicate:  n[4] != 0,
		epoch:      epoch,
		graceUntil: fromMicros(n[6]),
		seq:        n[7],
		lost:       n[8] == 1,
		used:       n[9:],
	}
	switch n[1] {
	case -1:
		d.refusedBy = upstreamRefusal
	case -2:
		d.refusedBy = graceRefusal
	}
	// Only a grant needs its acks: a refusal wrote nothing that counts,
	// and a replay decided nothing (at most it started an epoch, which the
	// next write waits for again).
	if d.duplicate && n[4] > 1 {
		d.grantedAt = time.UnixMicro(n[4])
	}
	if unacked.err != nil && d.granted {
		return decision{}, unacked.err
	}
	return d, nil
}

func (r *Redis) release(ctx context.Context, cred, id string, limits []charge) (bool, error) {
	keys, args := limitArgs(cred, make([]string, 0, 2*len(limits)), append(make([]any, 0, 1+2*len(limits)), id), limits)
	v, err := r.runWrite(ctx, releaseFn, keys, args)
	if err != nil {
		return false, scriptError(err, limits)
	}
	n, ok := v.(int64)
	if !ok {
		return false, fmt.Errorf("redis: release.lua: unexpected reply %T", v)
	}
	return n > 0, nil
}

func (r *Redis) mark(ctx context.Context, cred string, calls []string, until time.Time, reason string) error {
	keys := []string{key(cred, keyExhausted)}
	if len(calls) > 0 {
		keys = keys[:0]
		for _, c := range calls {
			keys = append(keys, key(cred, keyExhausted, c))
		}
	}
	v, err := r.runWrite(ctx, markFn, keys, []any{until.UnixMicro(), reason})
	if err != nil {
		return err
	}
	n, err := ints(v, 2)
	if err != nil {
		return err
	}
	if n[0] < 0 {
		return markInPast(until, time.UnixMicro(n[1]))
	}
	return nil
}

func (r *Redis) status(ctx context.Context, cred string, calls []string, limits []charge) (snapshot, error) {
	keys := make([]string, 0, 4+len(calls)+2*len(limits))
	keys = append(keys, key(cred, keyExhausted))
	for _, c := range calls {
		keys = append(keys, key(cred, keyExhausted, c))
	}
	keys = append(keys, key(cred, keyEpoch), key(cred, keyEpoch, keyInfo), key(cred, keyLeader))
	keys, args := limitArgs(cred, keys, []any{len(calls)}, limits)
	v, err := r.run(ctx, statusFn, keys, args)
	if err != nil {
		return snapshot{}, scriptError(err, limits)
	}
	marks := 1 + len(calls)
	vs, ok := v.([]any)
	if !ok || len(vs) != 1+2*marks+6+3*len(limits) {
		return snapshot{}, fmt.Errorf("redis: status.lua: unexpected reply %v", v)
	}
	reasons := make([]string, marks)
	for j := range marks {
		reasons[j], _ = vs[2+2*j].(string)
		vs[2+2*j] = int64(0)
	}
	eb := 1 + 2*marks // the epoch's fields
	epoch, _ := vs[eb].(string)
	lease, _ := vs[eb+5].(string)
	vs[eb], vs[eb+5] = int64(0), int64(0)
	n, err := ints(vs, len(vs))
	if err != nil {
		return snapshot{}, err
	}
	s := snapshot{at: time.UnixMicro(n[0]), lease: lease}
	for j := range marks {
		if until := n[1+2*j]; until > 0 {
			e := Exhaustion{Until: time.UnixMicro(until), Reason: reasons[j]}
			if j == 0 {
				s.mark = &e
			} else {
				e.Call = calls[j-1]
				s.callMarks = append(s.callMarks, e)
			}
		}
	}
	s.ledger = LedgerInfo{Epoch: epoch, GraceUntil: fromMicros(n[eb+1]), Created: fromMicros(n[eb+2]),
		Rebuilt: fromMicros(n[eb+3]), Restored: n[eb+4]}
	base := eb + 6
	for i := range limits {
		ls := limitSnapshot{used: n[base+3*i], count: n[base+1+3*i]}
		if o := n[base+2+3*i]; o > 0 {
			ls.oldest = time.UnixMicro(o)
		}
		s.limits = append(s.limits, ls)
	}
	return s, nil
}

func (r *Redis) sync(ctx context.Context, cred string, sr syncRequest) (syncResult, error) {
	keys := make([]string, 0, 2+2*len(sr.limits))
	keys = append(keys, key(cred, keyEpoch), key(cred, keyEpoch, keyInfo))
	args := make([]any, 0, 6+3*len(sr.limits)+len(sr.entries)*(2+len(sr.limits)))
	mode := "0"
	switch {
	case sr.restoring:
		mode = "1"
	case sr.audit:
		mode = "audit"
	}
	args = append(args, sr.epoch, newEpoch(), micros(sr.grace), len(sr.entries), mode, sr.seen)
	for i, c := range sr.limits {
		keys = append(keys, key(cred, keyLog, c.name), key(cred, keyTotal, c.name))
		since := ""
		switch {
		case sr.copyFrom == nil:
		case sr.copyFrom[i].IsZero():
			since = "-inf"
		default:
			since = strconv.FormatInt(sr.copyFrom[i].UnixMicro(), 10)
		}
		args = append(args, c.units, micros(c.window), since)
	}
	for _, e := range sr.entries {
		args = append(args, e.id, e.at.UnixMicro())
		for _, c := range e.costs {
			args = append(args, c)
		}
	}
	v, err := r.runWrite(ctx, syncFn, keys, args)
	var unacked waitError
	if errors.As(err, &unacked) {
		// The master answered and holds what was sent; too few replicas
		// do. A sync grants nothing, so its answer stands: should the
		// master fail before a replica has it, the promoted replica is
		// another server, which is a loss, and everyone replays again.
		v, err = unacked.v, nil
	}
	if err != nil {
		return syncResult{}, scriptError(err, sr.limits)
	}
	vs, ok := v.([]any)
	if !ok || len(vs) != 7+len(sr.limits) {
		return syncResult{}, fmt.Errorf("redis: sync.lua: unexpected reply %v", v)
	}
	epoch, _ := vs[2].(string)
	vs[2] = int64(0)
	n, err := ints(vs[:7], 7)
	if err != nil {
		return syncResult{}, err
	}
	res := syncResult{added: int(n[0]), at: time.UnixMicro(n[1]), epoch: epoch,
		graceUntil: fromMicros(n[3]), restored: n[4] == 1, seq: n[5], lost: n[6] == 1}
	if sr.copyFrom != nil {
		res.copies = make([]logCopy, len(sr.limits))
		for i, c := range sr.limits {
			if res.copies[i], err = parseCopy(vs[7+i], c.name); err != nil {
				return syncResult{}, err
			}
		}
	}
	return res, nil
}

// parseCopy reads one limit's copy_i from sync.lua's reply.
func parseCopy(v any, limit string) (logCopy, error) {
	vs, ok := v.([]any)
	if !ok || len(vs)%2 != 1 {
		return logCopy{}, fmt.Errorf("redis: sync.lua: unexpected copy %v", v)
	}
	count, ok := vs[0].(int64)
	if !ok {
		return logCopy{}, fmt.Errorf("redis: sync.lua: unexpected copy count %v", vs[0])
	}
	lc := logCopy{count: count, entries: make([]mirrorEntry, 0, len(vs)/2)}
	for j := 1; j < len(vs); j += 2 {
		member, _ := vs[j].(string)
		score, _ := vs[j+1].(string)
		id, costText, ok := strings.Cut(member, "|")
		cost, err1 := strconv.ParseInt(costText, 10, 64)
		at, err2 := strconv.ParseFloat(score, 64)
		if !ok || err1 != nil || err2 != nil {
			return logCopy{}, fmt.Errorf("redis: sync.lua: unexpected log entry %q at %q", member, score)
		}
		lc.entries = append(lc.entries, mirrorEntry{limit: limit, id: id, cost: cost, at: time.UnixMicro(int64(at))})
	}
	return lc, nil
}

func (r *Redis) lease(ctx context.Context, cred string, op leaseOp, holder string, ttl time.Duration, token int64) (leaseState, error) {
	keys := []string{key(cred, keyLeader), key(cred, keyLeader, keySeq)}
	v, err := r.runWrite(ctx, leaseFn, keys, []any{string(op), holder, ttl.Milliseconds(), token})
	if err != nil {
		return leaseState{}, err
	}
	n, err := ints(v, 4)
	if err != nil {
		return leaseState{}, err
	}
	return leaseState{held: n[0] == 1, token: n[1], ttl: time.Duration(n[2]) * time.Millisecond,
		at: time.UnixMicro(n[3])}, nil
}

func (r *Redis) now(ctx context.Context) (time.Time, error) {
	v, err := r.run(ctx, timeFn, nil, nil)
	if err != nil {
		return time.Time{}, err
	}
	us, ok := v.(int64)
	if !ok {
		return time.Time{}, fmt.Errorf("redis: time.lua: unexpected reply %T", v)
	}
	return time.UnixMicro(us), nil
}

// scriptError turns the scripts' own error replies (see reserve.lua) into
// this package's errors; anything else goes through as it came.
func scriptError(err error, limits []charge) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return err
	}
	f := strings.Fields(rerr.Error())
	if len(f) == 0 {
		return err
	}
	name := func(s string) string {
		if i, e := strconv.Atoi(s); e == nil && i >= 1 && i <= len(limits) {
			return limits[i-1].name
		}
		return s
	}
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	switch f[0] {
	case "YTREND_FENCED":
		return fmt.Errorf("%w: the lease is now %s", ErrFenced, strings.Join(f[1:], " "))
	case "YTREND_CONFLICT":
		if len(f) >= 6 {
			c := &ConflictError{Limit: name(f[1]),
				Stored: Limit{Units: num(f[2]), Window: time.Duration(num(f[3])) * time.Microsecond},
				Mine:   Limit{Units: num(f[4]), Window: time.Duration(num(f[5])) * time.Microsecond}}
			return c
		}
	case "YTREND_REUSED":
		if len(f) >= 3 {
			return fmt.Errorf("%w: limit %q already holds it with cost %s", ErrIDReused, name(f[1]), f[2])
		}
	}
	return err
}

// newEpoch is a fresh ledger identity: 64 random bits.
func newEpoch() string { return newID() }

func fromMicros(us int64) time.Time {
	if us <= 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

// run runs s and returns when it answers or ctx ends, whichever is first.
// go-redis only honours a context's deadline for reads and writes when the
// client has ContextTimeoutEnabled; without it a stalled server holds a call
// for ReadTimeout times MaxRetries. Waiting on ctx here makes Config.Timeout
// hold for any client. A script abandoned this way may still run on the
// server: that is a lost reply, which the reservation ID makes harmless.
func (r *Redis) run(ctx context.Context, fn string, keys []string, args []any) (any, error) {
	if r.boundByClient {
		v, err := fcall(ctx, r.rdb, fn, keys, args)
		if err != nil {
			return nil, redisError(err)
		}
		return v, nil
	}
	type reply struct {
		v   any
		err error
	}
	done := make(chan reply, 1)
	go func() {
		v, err := fcall(ctx, r.rdb, fn, keys, args)
		done <- reply{v, err}
	}()
	select {
	case rep := <-done:
		if rep.err != nil {
			return nil, redisError(rep.err)
		}
		return rep.v, nil
	case <-ctx.Done():
		return nil, unavailableError{fmt.Errorf("redis: %w", context.Cause(ctx))}
	}
}

// redisError separates "Redis could not be asked" (a dial failure, a broken
// connection, a timeout: the call's Policy decides) from "Redis answered
// with an error". Any reply is an answer, and it refuses: OOM (a full
// server under noeviction), READONLY (a demoted master), LOADING, "Function
// not found" after the library was loaded again, a script error. Failing open on one of those
// would grant past a limit that Redis itself still holds.
// Refused credentials are such an answer too, told apart (authError) so
// that the message sends the operator to the password.
func redisError(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) && !errors.Is(err, context.DeadlineExceeded) {
		if reply := authReply(rerr.Error()); reply != "" {
			return &authError{reply: reply, err: fmt.Errorf("redis: %w", err)}
		}
		return fmt.Errorf("redis: %w", err)
	}
	return unavailableError{fmt.Errorf("redis: %w", err)}
}

// authReply is the code of a Redis reply that refuses the client's
// credentials, or "". Redis 7 answers a client that has not authenticated
// and sends a command of more than a few arguments (a script call) with
// "ERR Protocol error: unauthenticated multibulk length" instead of
// NOAUTH, and closes the connection; it means the same.
func authReply(msg string) string {
	switch {
	case strings.HasPrefix(msg, "WRONGPASS"):
		return "WRONGPASS"
	case strings.HasPrefix(msg, "NOAUTH"), strings.HasPrefix(msg, "ERR Protocol error: unauthenticated"):
		return "NOAUTH"
	}
	return ""
}

// ints converts a script's array reply of integers.
func ints(v any, want int) ([]int64, error) {
	vs, ok := v.([]any)
	if !ok || len(vs) != want {
		return nil, fmt.Errorf("redis: unexpected script reply %v (want %d integers)", v, want)
	}
	out := make([]int64, len(vs))
	for i, x := range vs {
		switch x := x.(type) {
		case int64:
			out[i] = x
		case string:
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("redis: unexpected script reply element %q", x)
			}
			out[i] = n
		default:
			return nil, fmt.Errorf("redis: unexpected script reply element %T", x)
		}
	}
	return out, nil
}
