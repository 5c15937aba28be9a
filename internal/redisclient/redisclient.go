// Package redisclient opens the Redis that holds ytrend's budget from the
// one URL an operator gives, in any of go-redis' three forms, and tells
// whether that Redis can lose the budget.
//
//   - a single node: redis://[user:password@]host:6379/0, rediss://..., unix:///path
//   - Sentinel: redis://sentinel1:26379?master_name=NAME&addr=sentinel2:26379&addr=...
//   - Cluster: redis://node1:6379?addr=node2:6379&addr=node3:6379 (several addr, no master_name)
//
// The key decision: the URL's form picks the client; ytrend's options
// (timeouts, context deadlines honoured, one retry) are applied to every
// form the same way, and a password never appears in an error.
package redisclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/internal/secret"
)

// ErrBadURL is wrapped by every error about the URL itself.
var ErrBadURL = errors.New("bad Redis URL")

// Kind is the topology a URL names.
type Kind string

const (
	Single   Kind = "single"
	Sentinel Kind = "sentinel"
	Cluster  Kind = "cluster"
)

// KindOf tells which form raw has, or an error naming what is wrong. The
// URL is read by go-redis' own parser for its form, so a URL KindOf accepts
// (config validation) is one Open accepts.
func KindOf(raw string) (Kind, error) {
	kind, err := form(raw)
	if err != nil {
		return "", err
	}
	switch kind {
	case Sentinel:
		_, err = redis.ParseFailoverURL(raw)
	case Cluster:
		_, err = redis.ParseClusterURL(raw)
	default:
		_, err = redis.ParseURL(raw)
	}
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrBadURL, secret.URL(raw), redactErr(err, raw))
	}
	return kind, nil
}

// form tells the topology from the URL's shape: its scheme, master_name,
// addr.
func form(raw string) (Kind, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrBadURL, secret.URL(raw), redactErr(err, raw))
	}
	switch u.Scheme {
	case "redis", "rediss":
	case "unix":
		return Single, nil
	default:
		return "", fmt.Errorf("%w %q: allowed schemes are redis://, rediss:// and unix://", ErrBadURL, secret.URL(raw))
	}
	q := u.Query()
	switch {
	case q.Has("master_name") && q.Get("master_name") == "":
		return "", fmt.Errorf("%w %q: master_name is empty: name the master the sentinels monitor", ErrBadURL, secret.URL(raw))
	case q.Has("master_name"):
		return Sentinel, nil
	case len(q["addr"]) > 0:
		// go-redis' cluster parser ignores the path: say so rather than
		// use database 0 for a URL that names another.
		if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
			return "", fmt.Errorf("%w %q: database %q: Redis Cluster has only database 0", ErrBadURL, secret.URL(raw), db)
		}
		return Cluster, nil
	}
	return Single, nil
}

// Open returns a client for raw with ytrend's options: every dial, read and
// write bounded by timeout, context deadlines honoured, one retry, and a
// call that times out while dialing says why the dial failed (lastDial).
func Open(raw string, timeout time.Duration) (redis.UniversalClient, error) {
	kind, err := KindOf(raw)
	if err != nil {
		return nil, err
	}
	timeout = max(timeout, 50*time.Millisecond)
	bad := func(err error) error {
		return fmt.Errorf("%w %q: %v", ErrBadURL, secret.URL(raw), redactErr(err, raw))
	}
	dials := &lastDial{password: password(raw)}
	switch kind {
	case Sentinel:
		opt, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, bad(err)
		}
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = timeout, timeout, timeout
		opt.ContextTimeoutEnabled, opt.MaxRetries = true, 1
		opt.Dialer = dials.dialer(redis.NewDialer(&redis.Options{DialTimeout: timeout, TLSConfig: opt.TLSConfig}))
		c := redis.NewFailoverClient(opt)
		c.AddHook(dials)
		return c, nil
	case Cluster:
		opt, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, bad(err)
		}
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = timeout, timeout, timeout
		opt.ContextTimeoutEnabled, opt.MaxRetries = true, 1
		opt.Dialer = dials.dialer(redis.NewDialer(&redis.Options{DialTimeout: timeout, TLSConfig: opt.TLSConfig}))
		c := redis.NewClusterClient(opt)
		c.AddHook(dials)
		return c, nil
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, bad(err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = timeout, timeout, timeout
	opt.ContextTimeoutEnabled, opt.MaxRetries = true, 1
	opt.Dialer = dials.dialer(redis.NewDialer(&redis.Options{DialTimeout: timeout, TLSConfig: opt.TLSConfig}))
	c := redis.NewClient(opt)
	c.AddHook(dials)
	return c, nil
}

// password is raw's password, if it has one.
func password(raw string) secret.Value {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			return secret.New(p)
		}
	}
	return secret.Value{}
}

// redactErr removes raw's password, in every encoding, from err's text.
func redactErr(err error, raw string) string {
	if p := password(raw); !p.IsZero() {
		return p.Redact(err.Error())
	}
	if strings.Contains(raw, "@") {
		// The URL did not parse, so its password is not known, and Go's
		// message can quote a piece of it: a "/" in "u:s3/cret@h" gives
		// `invalid port ":s3" after host`.
		return "not a URL that can be read; a password holding / ? # @ % or a space must be percent-encoded (%2F %3F %23 %40 %25 %20)"
	}
	return secret.Scrub(err.Error())
}

// Durability reads the server's persistence and eviction settings and says,
// in plain words, how the budget could vanish without a trace. No warning
// means AOF (fsynced at least every second) is on and no budget key can be
// evicted: no maxmemory, maxmemory-policy noeviction (a full server then
// refuses grants, the safe direction), or a volatile-* policy (the
// budget's logs, totals and epoch have no TTL, so it never picks them). On
// a Cluster every master is asked. An allkeys-* policy may evict them: the
// loss is found and restored, at the price of a grace and of what the
// mirror had not copied.
func Durability(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	if c, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		var out []string
		err := c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			w, err := nodeDurability(ctx, node)
			mu.Lock()
			defer mu.Unlock()
			for _, s := range w {
				out = append(out, node.Options().Addr+": "+s)
			}
			return err
		})
		slices.Sort(out)
		return out, err
	}
	return nodeDurability(ctx, rdb)
}

func nodeDurability(ctx context.Context, c redis.Cmdable) ([]string, error) {
	info, err := c.Info(ctx, "persistence", "memory").Result()
	if err != nil {
		return nil, fmt.Errorf("redis: INFO: %w", err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	var out []string
	aof := fields["aof_enabled"] == "1"
	// INFO has no "snapshots are configured" field; CONFIG GET save does,
	// where CONFIG is allowed (managed services often rename it away).
	save, err := c.ConfigGet(ctx, "save").Result()
	rdbKnown := err == nil
	rdb := rdbKnown && strings.TrimSpace(save["save"]) != ""
	switch {
	case !aof && !rdbKnown:
		out = append(out, "AOF is off and CONFIG is not allowed, so RDB snapshots cannot be checked: "+
			"unless the server snapshots, a restart forgets the day's spend; run Redis with appendonly yes")
	case !aof && !rdb:
		out = append(out, "no persistence (neither AOF nor RDB): a restart forgets the day's spend; "+
			"run Redis with appendonly yes")
	case !aof:
		out = append(out, "RDB snapshots only: a restart forgets what was spent since the last snapshot; "+
			"run Redis with appendonly yes for exact books")
	default:
		if fsync, err := c.ConfigGet(ctx, "appendfsync").Result(); err == nil && fsync["appendfsync"] == "no" {
			out = append(out, "AOF with appendfsync no: a crash of the host forgets the last ~30 s of spend "+
				"the OS had not written yet; use appendfsync everysec or always")
		}
	}
	policy := fields["maxmemory_policy"]
	if policy == "" {
		if cfg, err := c.ConfigGet(ctx, "maxmemory-policy").Result(); err == nil {
			policy = cfg["maxmemory-policy"]
		}
	}
	// Without a maxmemory (0, or absent from INFO) Redis never evicts,
	// whatever the policy says.
	if strings.HasPrefix(policy, "allkeys-") && fields["maxmemory"] != "0" {
		out = append(out, fmt.Sprintf("maxmemory-policy %s may evict the budget's keys: each eviction is a "+
			"loss of the books (a grace, then a restore); use noeviction or a volatile-* policy", policy))
	}
	return out, nil
}

// Replicas returns how many replicas are connected to the master that
// holds key: the master itself on a single node or behind Sentinel, the
// key's slot's on a Cluster.
func Replicas(ctx context.Context, rdb redis.UniversalClient, key string) (int, error) {
	var node redis.Cmdable = rdb
	if c, ok := rdb.(*redis.ClusterClient); ok {
		m, err := c.MasterForKey(ctx, key)
		if err != nil {
			return 0, fmt.Errorf("redis: the master of %s: %w", key, err)
		}
		node = m
	}
	info, err := node.Info(ctx, "replication").Result()
	if err != nil {
		return 0, fmt.Errorf("redis: INFO replication: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("redis: INFO replication has no connected_slaves")
}

// RouteLogs sends go-redis' own log lines (it logs pool, Sentinel and
// Cluster events itself, by default straight to stderr) through log, so
// they share the process's format and level handling: WARN, but for the
// routine ones, at DEBUG. It is process-wide, as go-redis' logger is.
func RouteLogs(log *slog.Logger) {
	redis.SetLogger(slogPrinter{log: log})
}

// routine are the formats of go-redis' lines that report a client doing its
// job, not a problem: a Sentinel client says "new master" on its first
// contact (every CLI call), not only after a failover, and which sentinel
// it asked. What follows a failover is logged by the budget itself. A
// failed dial is the caller's error too, and each caller says what it means
// once (the budget's outage, serve's limiter breaker): go-redis' own line
// repeated it at every retry and every probe of a Redis that is down.
var routine = []string{"sentinel: new master=", "sentinel: selected addr=", "sentinel: discovered new sentinel=",
	"redis: connection pool: failed to dial"}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	level := slog.LevelWarn
	for _, r := range routine {
		if strings.HasPrefix(format, r) {
			level = slog.LevelDebug
		}
	}
	// A lookup its own caller gave up on (a context canceled: a CLI call
	// that got its answer from another sentinel, a shutdown) is no problem
	// of Redis'; the caller reports its own errors.
	for _, a := range v {
		if err, ok := a.(error); ok && errors.Is(err, context.Canceled) {
			level = slog.LevelDebug
		}
	}
	p.log.Log(ctx, level, "redis client: "+fmt.Sprintf(format, v...))
}
