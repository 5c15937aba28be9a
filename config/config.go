// Package config loads ytrend's configuration: built-in defaults, then
// schedule.yaml, then the environment, then command-line flags.
//
// Key decision: the file is strict. Unknown fields are errors (a typo must not
// silently fall back to a default that spends quota differently), and every
// error names the field, the bad value and what is allowed. The API key is
// never part of the file: the file names the environment variable holding it.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ytrend/ytrend/internal/redisclient"
	"github.com/ytrend/ytrend/internal/secret"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
)

// ErrInvalid wraps every validation error.
var ErrInvalid = errors.New("invalid configuration")

// Config is the whole configuration. Field comments live in schedule.yaml,
// which documents every field in place.
type Config struct {
	Credential    string            `yaml:"credential"`
	APIKeyEnv     string            `yaml:"api_key_env"`
	Costs         map[string]int64  `yaml:"costs"`
	Limits        []Limit           `yaml:"limits"`
	FailurePolicy map[string]string `yaml:"failure_policy"`
	Redis         Redis             `yaml:"redis"`
	Store         Store             `yaml:"store"`
	YouTube       YouTube           `yaml:"youtube"`
	Scheduler     Scheduler         `yaml:"scheduler"`
	Regions       []Region          `yaml:"regions"`
	Serve         Serve             `yaml:"serve"`
	Archive       Archive           `yaml:"archive"`

	// Source is the file the configuration was read from ("" for defaults).
	Source string `yaml:"-"`
	// origins names where a field's value came from when not from Source:
	// "environment variable REDIS_URL", "--redis" (SetFrom).
	origins map[string]string
}

// Limit is one sliding window of the shared budget.
type Limit struct {
	Name   string           `yaml:"name"`
	Units  int64            `yaml:"units"`
	Window Duration         `yaml:"window"`
	Costs  map[string]int64 `yaml:"costs"` // nil: the top-level costs
}

// Redis selects the shared budget's backend.
type Redis struct {
	URL     string   `yaml:"url"`     // "" = embedded ledger in the archive
	Timeout Duration `yaml:"timeout"` // per budget call; past it the failure policy applies
	// EpochCheck is how often `ytrend run` checks that the ledger still has
	// its books (and restores its share if not), even with nothing to reserve.
	EpochCheck Duration `yaml:"epoch_check"`
	// RebuildGrace is how long a rebuilt ledger admits nothing; 0 = twice EpochCheck.
	RebuildGrace Duration `yaml:"rebuild_grace"`
	// AuditInterval is how often `ytrend run` re-adds grants a failover dropped.
	AuditInterval Duration `yaml:"audit_interval"`
	// WaitReplicas: a write returns only once this many replicas have it
	// (WAIT, at most WaitTimeout); 0 = do not wait. Unset (nil), Validate
	// sets it by the URL's form: 1 for Sentinel or Cluster, whose failover
	// promotes a replica that may have missed the last grants, else 0.
	WaitReplicas *int `yaml:"wait_replicas"`
	// waitDefaulted: Validate chose WaitReplicas (WaitReplicasDefaulted).
	waitDefaulted bool
	WaitTimeout   Duration `yaml:"wait_timeout"`
}

// Store locates the archive.
type Store struct {
	Path string `yaml:"path"`
}

// YouTube configures the API client.
type YouTube struct {
	Endpoint   string   `yaml:"endpoint"`    // server root; "" = Google
	Timeout    Duration `yaml:"timeout"`     // per request
	Retries    int      `yaml:"retries"`     // extra attempts on 5xx, throttling, timeouts
	Backoff    Duration `yaml:"backoff"`     // first retry delay (jittered, doubling)
	MaxBackoff Duration `yaml:"max_backoff"` // cap on one retry delay
}

// Scheduler configures `ytrend run`.
type Scheduler struct {
	ShutdownTimeout Duration `yaml:"shutdown_timeout"` // soft stop before in-flight work is cancelled
	Maintenance     string   `yaml:"maintenance"`      // cron spec of the archive's upkeep; "off" disables it
	LeaderTTL       Duration `yaml:"leader_ttl"`       // the leader lease of several `ytrend run` replicas
}

// Region is one region's entry: what its fetch asks for and when it runs.
// It is ytrend's one description of a region fetch: ingest.Job carries it
// as it is, so a new field is added here and nowhere else.
type Region struct {
	Code     regions.Code `yaml:"code"` // parsed (upper-cased, aliases resolved) by Validate
	Cron     string       `yaml:"cron"`
	Pages    int          `yaml:"pages"`
	Offset   *Duration    `yaml:"offset"` // nil: staggered automatically
	Category string       `yaml:"category"`
	Searches []Search     `yaml:"searches"`
}

// Search is an optional search.list query run with a region's fetch.
type Search struct {
	Q               string   `yaml:"q"`
	Order           string   `yaml:"order"`
	PublishedWithin Duration `yaml:"published_within"`
	Pages           int      `yaml:"pages"`
}

// Defaults shared with documentation and tests.
const (
	DefaultPath       = "schedule.yaml"
	DefaultAPIKeyEnv  = "YOUTUBE_API_KEY"
	DefaultCron       = "0 * * * *"
	DefaultPages      = 4
	MaxPages          = 4 // the mostPopular chart holds at most 200 videos, 50 a page
	DefaultStorePath  = "ytrend.db"
	DefaultSearchPage = 1
	// DefaultMaintenance runs the archive's upkeep daily at 04:17 UTC, off
	// the hourly regions' quarter-hour fires.
	DefaultMaintenance = "17 4 * * *"
	MaintenanceOff     = "off"
	// The budget's books: how often a daemon checks the ledger's epoch and
	// audits its record, and how long a replica's leader lease lasts.
	DefaultEpochCheck    = 5 * time.Second
	DefaultAuditInterval = 30 * time.Second
	DefaultLeaderTTL     = 15 * time.Second
	// With a Sentinel or Cluster URL a write waits for one replica by
	// default, at most DefaultWaitTimeout (below quota's default timeout).
	DefaultWaitReplicas = 1
	DefaultWaitTimeout  = 250 * time.Millisecond
)

// SearchOrders are the search.list orders ytrend accepts.
var SearchOrders = []string{"date", "rating", "relevance", "title", "viewCount"}

// Default returns the built-in configuration: the quota package's default
// budget, the embedded ledger, and no explicit regions (Validate fills in the
// eight default regions, hourly, four pages, staggered).
func Default() *Config {
	q := quota.DefaultConfig()
	c := &Config{
		Credential:    q.Credential,
		APIKeyEnv:     DefaultAPIKeyEnv,
		Costs:         maps(q.Costs),
		FailurePolicy: map[string]string{},
		Redis: Redis{Timeout: Duration(q.Timeout), EpochCheck: Duration(DefaultEpochCheck),
			AuditInterval: Duration(DefaultAuditInterval), WaitTimeout: Duration(DefaultWaitTimeout)},
		Store: Store{Path: DefaultStorePath},
		YouTube: YouTube{
			Timeout:    Duration(15 * time.Second),
			Retries:    3,
			Backoff:    Duration(time.Second),
			MaxBackoff: Duration(30 * time.Second),
		},
		Scheduler: Scheduler{ShutdownTimeout: Duration(20 * time.Second), Maintenance: DefaultMaintenance,
			LeaderTTL: Duration(DefaultLeaderTTL)},
		Serve:   defaultServe(),
		Archive: defaultArchive(),
	}
	for _, l := range q.Limits {
		c.Limits = append(c.Limits, Limit{Name: l.Name, Units: l.Units, Window: Duration(l.Window), Costs: maps(l.Costs)})
	}
	for call, p := range q.Policies {
		c.FailurePolicy[call] = string(p)
	}
	return c
}

func maps(m map[string]int64) map[string]int64 {
	if m == nil {
		return nil
	}
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Load reads path over the defaults. A missing file is an error only when
// required is set (the user named it); otherwise the defaults stand.
func Load(path string, required bool) (*Config, error) {
	c := Default()
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && !required:
		return c, nil
	case err != nil:
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := c.decode(path, data); err != nil {
		return nil, err
	}
	c.Source = path
	return c, nil
}

// Parse reads a configuration from YAML bytes over the defaults; name is used
// in error messages.
func Parse(name string, data []byte) (*Config, error) {
	c := Default()
	if err := c.decode(name, data); err != nil {
		return nil, err
	}
	c.Source = name
	return c, nil
}

func (c *Config) decode(name string, data []byte) error {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file: defaults
		}
		return fmt.Errorf("%w: %s: %v", ErrInvalid, name, cleanYAMLError(err))
	}
	if err := checkFields(&root, c); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
	}
	// Sections present in the file replace the defaults as a whole, so a
	// file that lists costs or limits states the complete table.
	if hasKey(&root, "costs") {
		c.Costs = nil
	}
	if hasKey(&root, "limits") {
		c.Limits = nil
	}
	if hasKey(&root, "failure_policy") {
		c.FailurePolicy = nil
	}
	if err := root.Decode(c); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, name, cleanYAMLError(err))
	}
	return nil
}

func cleanYAMLError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: unmarshal errors:\n")
	s = strings.TrimPrefix(s, "yaml: ")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func hasKey(root *yaml.Node, key string) bool {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// Env is what ApplyEnv reads; os.LookupEnv in production.
type Env func(string) (string, bool)

// ApplyEnv overrides the file with the environment: REDIS_URL,
// YOUTUBE_ENDPOINT, YTREND_DB, YTREND_ARCHIVE_REPLICA. The API key itself
// is read by APIKey; replica credentials by Litestream's clients, from
// their usual variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...).
func (c *Config) ApplyEnv(env Env) {
	if v, ok := env("REDIS_URL"); ok {
		c.Redis.URL = v
		c.SetFrom("redis.url", "environment variable REDIS_URL")
	}
	if v, ok := env("YOUTUBE_ENDPOINT"); ok && v != "" {
		c.YouTube.Endpoint = v
		c.SetFrom("youtube.endpoint", "environment variable YOUTUBE_ENDPOINT")
	}
	if v, ok := env("YTREND_DB"); ok && v != "" {
		c.Store.Path = v
		c.SetFrom("store.path", "environment variable YTREND_DB")
	}
	if c.Archive.applyEnv(env) {
		c.SetFrom("archive.replicas", "environment variable YTREND_ARCHIVE_REPLICA")
	}
}

// SetFrom records that field's value (as Validate names it: "redis.url")
// came from origin, an environment variable or a flag ("--redis"), and not
// from the file: Validate's errors then send the reader there. A field
// holding a list ("archive.replicas") covers its elements.
func (c *Config) SetFrom(field, origin string) {
	if c.origins == nil {
		c.origins = map[string]string{}
	}
	c.origins[field] = origin
}

// origin is where field's value came from, "" for the file (or defaults).
func (c *Config) origin(field string) string {
	if o, ok := c.origins[field]; ok {
		return o
	}
	if i := strings.IndexByte(field, '['); i > 0 {
		return c.origins[field[:i]]
	}
	return ""
}

// APIKey reads the API key from the environment variable the file names.
func (c *Config) APIKey(env Env) (secret.Value, error) {
	v, ok := env(c.APIKeyEnv)
	v = strings.TrimSpace(v)
	if !ok || v == "" {
		return secret.Value{}, fmt.Errorf("no YouTube API key: set %s (the variable named by api_key_env)", c.APIKeyEnv)
	}
	return secret.New(v), nil
}

// QuotaConfig is the budget the quota package enforces.
func (c *Config) QuotaConfig() quota.Config {
	q := quota.Config{
		Credential: c.Credential,
		Costs:      maps(c.Costs),
		Policies:   map[string]quota.Policy{},
		Timeout:    c.Redis.Timeout.D(),
		// Twice the epoch check: the long-lived processes restore their
		// share of lost books before anyone spends.
		RebuildGrace: c.Redis.RebuildGrace.D(),
	}
	if q.RebuildGrace == 0 {
		q.RebuildGrace = 2 * c.Redis.EpochCheck.D()
	}
	for _, l := range c.Limits {
		q.Limits = append(q.Limits, quota.Limit{Name: l.Name, Units: l.Units, Window: l.Window.D(), Costs: maps(l.Costs)})
	}
	for call, p := range c.FailurePolicy {
		q.Policies[call] = quota.Policy(p)
	}
	return q
}

// Warnings are what a valid configuration risks, one sentence each, for a
// process to log once at its start. Call after Validate.
func (c *Config) Warnings() []string {
	var out []string
	kind, err := redisclient.KindOf(c.Redis.URL)
	if c.Redis.URL != "" && err == nil && (kind == redisclient.Sentinel || kind == redisclient.Cluster) &&
		c.Redis.WaitReplicas != nil && *c.Redis.WaitReplicas == 0 {
		out = append(out, fmt.Sprintf("redis.wait_replicas is 0 with a %s URL: writes are not waited for on a replica: "+
			"a failover can lose the last grants, and their units can be granted again; "+
			"remove the setting to wait for %d replica (the default)", kind, DefaultWaitReplicas))
	}
	return out
}

// Calls ytrend itself makes; the cost table must price each of them.
var requiredCalls = []string{"videos.list", "search.list"}

// Validate checks everything and fills in derived defaults (regions). It
// returns all problems at once, each naming its field.
// WaitReplicasDefaulted reports whether redis.wait_replicas was left unset,
// so that Validate chose it from the URL's kind.
func (c *Config) WaitReplicasDefaulted() bool { return c.Redis.waitDefaulted }

func (c *Config) Validate() error {
	var errs []error
	fromFile := false // whether any problem is the file's (or the defaults')
	add := func(field, format string, args ...any) {
		if o := c.origin(field); o != "" {
			field += " (from " + o + ")"
		} else {
			fromFile = true
		}
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}

	if err := c.QuotaConfig().Validate(); err != nil {
		errs, fromFile = append(errs, err), true
	}
	for _, call := range requiredCalls {
		if _, ok := c.Costs[call]; !ok {
			add("costs", "missing %q: ytrend makes this call and must know its cost", call)
		}
	}
	if c.APIKeyEnv == "" || strings.ContainsAny(c.APIKeyEnv, " =\t") {
		add("api_key_env", "%q is not an environment variable name", c.APIKeyEnv)
	}
	kind := redisclient.Single
	if c.Redis.URL != "" {
		var err error
		if kind, err = redisclient.KindOf(c.Redis.URL); err != nil {
			add("redis.url", "%v; or empty for the embedded ledger", err)
		}
	}
	waitSet := c.Redis.WaitReplicas != nil
	c.Redis.waitDefaulted = !waitSet
	if !waitSet {
		n := 0
		if kind == redisclient.Sentinel || kind == redisclient.Cluster {
			n = DefaultWaitReplicas
		}
		c.Redis.WaitReplicas = &n
	}
	wait := *c.Redis.WaitReplicas
	if wait < 0 || wait > 16 {
		add("redis.wait_replicas", "%d: allowed 0-16", wait)
	}
	if wait > 0 && (c.Redis.WaitTimeout <= 0 || c.Redis.WaitTimeout >= c.Redis.Timeout) {
		why := "with wait_replicas"
		if !waitSet {
			why = fmt.Sprintf("with wait_replicas %d (the default for a %s URL)", wait, kind)
		}
		add("redis.wait_timeout", "%s: %s it must be positive and below redis.timeout (%s)",
			c.Redis.WaitTimeout, why, c.Redis.Timeout)
	}
	if wait > 0 && c.Redis.URL == "" {
		add("redis.wait_replicas", "%d: needs redis.url (the embedded ledger has no replicas)", wait)
	}
	for _, d := range []struct {
		field string
		v     Duration
	}{{"redis.epoch_check", c.Redis.EpochCheck}, {"redis.audit_interval", c.Redis.AuditInterval}} {
		if d.v < Duration(100*time.Millisecond) {
			add(d.field, "%s: must be at least 100ms", d.v)
		}
	}
	if c.Redis.RebuildGrace < 0 {
		add("redis.rebuild_grace", "%s: must be >= 0 (0 = twice redis.epoch_check)", c.Redis.RebuildGrace)
	}
	if c.Scheduler.LeaderTTL < Duration(time.Second) {
		add("scheduler.leader_ttl", "%s: must be at least 1s", c.Scheduler.LeaderTTL)
	}
	if c.Store.Path == "" {
		add("store.path", "empty; give the archive's file path")
	}
	if c.YouTube.Endpoint != "" && !strings.HasPrefix(c.YouTube.Endpoint, "http://") && !strings.HasPrefix(c.YouTube.Endpoint, "https://") {
		add("youtube.endpoint", "%q: give the server root, e.g. http://127.0.0.1:8089", secret.URL(c.YouTube.Endpoint))
	}
	if c.YouTube.Timeout <= 0 {
		add("youtube.timeout", "%s: must be positive", c.YouTube.Timeout)
	}
	if c.YouTube.Retries < 0 || c.YouTube.Retries > 10 {
		add("youtube.retries", "%d: allowed 0-10", c.YouTube.Retries)
	}
	if c.YouTube.Backoff <= 0 || c.YouTube.MaxBackoff < c.YouTube.Backoff {
		add("youtube.backoff", "%s (max_backoff %s): both positive, backoff <= max_backoff", c.YouTube.Backoff, c.YouTube.MaxBackoff)
	}
	if c.Scheduler.ShutdownTimeout <= 0 {
		add("scheduler.shutdown_timeout", "%s: must be positive", c.Scheduler.ShutdownTimeout)
	}
	c.Serve.validate(add)
	c.Archive.validate(add)
	if _, _, err := c.MaintenanceSchedule(); err != nil {
		add("scheduler.maintenance", "%v; or \"off\" to never run it", err)
	}

	if c.Regions == nil {
		for _, code := range regions.Default() {
			c.Regions = append(c.Regions, Region{Code: code})
		}
	} else if len(c.Regions) == 0 {
		add("regions", "empty list; list at least one region, or remove the key to use the defaults %v", regions.Default())
	}
	seen := map[regions.Code]int{}
	for i := range c.Regions {
		r := &c.Regions[i]
		field := fmt.Sprintf("regions[%d]", i)
		code, err := regions.Parse(string(r.Code))
		if err != nil {
			add(field+".code", "%v", err)
		} else {
			r.Code = code
			if j, dup := seen[code]; dup {
				add(field+".code", "%s is already listed at regions[%d]; give each region one entry", code, j)
			}
			seen[code] = i
		}
		if r.Cron == "" {
			r.Cron = DefaultCron
		}
		if _, err := ParseSchedule(r.Cron); err != nil {
			add(field+".cron", "%v", err)
		}
		if r.Pages == 0 {
			r.Pages = DefaultPages
		}
		if r.Pages < 1 || r.Pages > MaxPages {
			add(field+".pages", "%d: allowed 1-%d (the chart holds at most 200 videos, 50 a page)", r.Pages, MaxPages)
		}
		if r.Offset != nil && *r.Offset < 0 {
			add(field+".offset", "%s: must not be negative", *r.Offset)
		}
		for j := range r.Searches {
			s := &r.Searches[j]
			sf := fmt.Sprintf("%s.searches[%d]", field, j)
			if strings.TrimSpace(s.Q) == "" {
				add(sf+".q", "empty; give the search words")
			}
			if s.Order == "" {
				s.Order = "relevance"
			}
			if !slices.Contains(SearchOrders, s.Order) {
				add(sf+".order", "%q: allowed %s", s.Order, strings.Join(SearchOrders, ", "))
			}
			if s.PublishedWithin < 0 {
				add(sf+".published_within", "%s: must not be negative (0 = no limit)", s.PublishedWithin)
			}
			if s.Pages == 0 {
				s.Pages = DefaultSearchPage
			}
			if s.Pages < 1 || s.Pages > 10 {
				add(sf+".pages", "%d: allowed 1-10", s.Pages)
			}
		}
	}
	where := ""
	if fromFile {
		where = c.sourceSuffix()
	}
	return joinInvalid(where, errs)
}

// joinInvalid formats problems one per line under an ErrInvalid headline,
// keeping each one reachable with errors.Is/As.
func joinInvalid(where string, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = strings.ReplaceAll(e.Error(), "\n", "\n  ")
	}
	return &ValidationError{Where: where, Problems: errs, text: strings.Join(lines, "\n  ")}
}

// ValidationError lists every problem found in a configuration.
type ValidationError struct {
	Where    string // " in schedule.yaml", or "" (defaults, or only the environment's and flags' values are wrong)
	Problems []error
	text     string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("invalid configuration%s:\n  %s", e.Where, e.text)
}

// Unwrap exposes ErrInvalid and every problem.
func (e *ValidationError) Unwrap() []error { return append([]error{ErrInvalid}, e.Problems...) }

func (c *Config) sourceSuffix() string {
	if c.Source == "" {
		return ""
	}
	return " in " + c.Source
}

// Region returns the entry for code, or a default entry when the file does
// not list it (ytrend fetch may fetch any valid region).
func (c *Config) Region(code regions.Code) Region {
	for _, r := range c.Regions {
		if r.Code == code {
			return r
		}
	}
	return Region{Code: code, Cron: DefaultCron, Pages: DefaultPages}
}
