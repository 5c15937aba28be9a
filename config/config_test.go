package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
)

func mustValid(t *testing.T, yaml string) *Config {
	t.Helper()
	c, err := Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return c
}

func offsets(t *testing.T, c *Config) []time.Duration {
	t.Helper()
	jobs, err := c.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Duration
	for _, j := range jobs {
		out = append(out, j.Offset)
	}
	return out
}

func TestDefaultsStaggerEightHourlyRegions(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, r := range c.Regions {
		codes = append(codes, r.Code.String())
		if r.Pages != 4 || r.Cron != "0 * * * *" {
			t.Errorf("%s: pages %d cron %q, want 4 and hourly", r.Code, r.Pages, r.Cron)
		}
	}
	if got := strings.Join(codes, " "); got != "US GB DE FR IN BR AU CA" {
		t.Errorf("default regions %q", got)
	}
	want := []time.Duration{0, 450 * time.Second, 900 * time.Second, 1350 * time.Second,
		1800 * time.Second, 2250 * time.Second, 2700 * time.Second, 3150 * time.Second}
	if got := offsets(t, c); !reflect.DeepEqual(got, want) {
		t.Errorf("offsets %v, want %v (7m30s apart)", got, want)
	}
}

func TestRepoScheduleYAMLIsTheDefaults(t *testing.T) {
	c, err := Load("../schedule.yaml", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	def := Default()
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.QuotaConfig(), quota.DefaultConfig()) {
		t.Errorf("schedule.yaml budget %+v differs from quota.DefaultConfig %+v", c.QuotaConfig(), quota.DefaultConfig())
	}
	if !reflect.DeepEqual(offsets(t, c), offsets(t, def)) {
		t.Errorf("schedule.yaml offsets %v differ from the defaults %v", offsets(t, c), offsets(t, def))
	}
	if c.Store.Path != "ytrend.db" || c.Redis.URL != "" || c.YouTube.Retries != 3 || c.Scheduler.ShutdownTimeout.D() != 20*time.Second {
		t.Errorf("unexpected values: %+v", c)
	}
}

func TestIssueSampleRegions(t *testing.T) {
	c := mustValid(t, `
regions:
  - {code: US, cron: "0 * * * *", pages: 4}                 # offset computed
  - {code: IN, cron: "CRON_TZ=Asia/Kolkata 30 6 * * *", pages: 4, offset: 2m,
     searches: [{q: cricket, order: viewCount, published_within: 24h, pages: 1}]}
`)
	jobs, err := c.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if jobs[0].Offset != 0 || jobs[1].Offset != 2*time.Minute {
		t.Fatalf("offsets %v %v", jobs[0].Offset, jobs[1].Offset)
	}
	from := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	// 06:30 in Kolkata is 01:00 UTC; plus the 2m offset.
	if got, want := jobs[1].Schedule.Next(from), time.Date(2026, 11, 21, 1, 2, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("IN next %v, want %v", got, want)
	}
	if got, want := jobs[0].Schedule.Next(from), time.Date(2026, 11, 21, 1, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("US next %v, want %v", got, want)
	}
	s := jobs[1].Searches[0]
	if s.Q != "cricket" || s.Order != "viewCount" || s.PublishedWithin.D() != 24*time.Hour || s.Pages != 1 {
		t.Errorf("search %+v", s)
	}
}

func TestStaggerGroupsBySpecAndKeepsExplicitOffsets(t *testing.T) {
	c := mustValid(t, `
regions:
  - {code: US, cron: "0 6 * * *"}
  - {code: GB, cron: "*/20 * * * *"}
  - {code: DE, cron: "0  6 * * *"}
  - {code: FR, cron: "*/20 * * * *", offset: 1m}
  - {code: IN, cron: "*/20 * * * *"}
  - {code: BR, cron: "@every 90s"}
`)
	want := []time.Duration{0, 0, 12 * time.Hour, time.Minute, 10 * time.Minute, 0}
	if got := offsets(t, c); !reflect.DeepEqual(got, want) {
		t.Errorf("offsets %v, want %v", got, want)
	}
}

func TestOffsetSchedule(t *testing.T) {
	s, err := ParseSchedule("0 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	o := Offset(s, 7*time.Minute+30*time.Second)
	at := time.Date(2026, 11, 21, 10, 5, 0, 0, time.UTC)
	if got, want := o.Next(at), time.Date(2026, 11, 21, 10, 7, 30, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next after 10:05 = %v, want %v", got, want)
	}
	if got, want := o.Next(time.Date(2026, 11, 21, 10, 7, 30, 0, time.UTC)), time.Date(2026, 11, 21, 11, 7, 30, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next after 10:07:30 = %v, want %v", got, want)
	}
}

func TestSpecsWithoutZoneRunInUTC(t *testing.T) {
	s, err := ParseSchedule("0 9 * * *")
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("Asia/Tokyo")
	at := time.Date(2026, 11, 21, 0, 0, 0, 0, loc) // 15:00 UTC the day before
	if got, want := s.Next(at).UTC(), time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next %v, want %v", got, want)
	}
}

func TestBadFilesNameFieldValueAndAllowed(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"typo field", "regions:\n  - {code: US, cronn: \"0 * * * *\"}\n",
			[]string{`regions[0]: unknown field "cronn" (line 2); allowed: category, code, cron, offset, pages, searches`}},
		{"top-level typo", "limts: []\n", []string{`top level: unknown field "limts" (line 1); allowed: api_key_env, archive, costs, credential, failure_policy, limits, redis, regions, scheduler, serve, store, youtube`}},
		{"typo in nested search", "regions:\n  - {code: IN, searches: [{q: x, pagez: 2}]}\n",
			[]string{`regions[0].searches[0]: unknown field "pagez"`, "allowed: order, pages, published_within, q"}},
		{"bad cron", "regions:\n  - {code: US, cron: \"61 * * * *\"}\n",
			[]string{`regions[0].cron: "61 * * * *" is not a valid cron spec`, "want 5 fields"}},
		{"six fields", "regions:\n  - {code: US, cron: \"0 0 * * * *\"}\n", []string{`regions[0].cron: "0 0 * * * *" is not a valid cron spec`}},
		{"zone without spec", "regions:\n  - {code: US, cron: \"CRON_TZ=UTC\"}\n", []string{`regions[0].cron: "CRON_TZ=UTC" has a time zone but no schedule`}},
		{"unknown zone", "regions:\n  - {code: US, cron: \"CRON_TZ=Mars/Base 0 * * * *\"}\n", []string{`unknown time zone "Mars/Base"`}},
		{"never fires", "regions:\n  - {code: US, cron: \"0 0 31 2 *\"}\n", []string{"never fires"}},
		{"unknown region", "regions:\n  - {code: UK}\n", []string{`regions[0].code: "UK" is not a region code; did you mean "GB"?`}},
		{"duplicate region", "regions:\n  - {code: US}\n  - {code: us}\n", []string{"regions[1].code: US is already listed at regions[0]"}},
		{"pages out of range", "regions:\n  - {code: US, pages: 7}\n", []string{"regions[0].pages: 7: allowed 1-4"}},
		{"negative offset", "regions:\n  - {code: US, offset: -5m}\n", []string{"regions[0].offset: -5m: must not be negative"}},
		{"bad search order", "regions:\n  - {code: US, searches: [{q: x, order: popular}]}\n",
			[]string{`regions[0].searches[0].order: "popular": allowed date, rating, relevance, title, viewCount`}},
		{"empty regions", "regions: []\n", []string{"regions: empty list"}},
		{"cost over capacity", "limits:\n  - {name: daily, units: 9500, window: 24h}\n  - {name: search, units: 50, window: 1h, costs: {search.list: 100}}\n",
			[]string{"search.list", "100", "50"}},
		{"negative units", "limits:\n  - {name: daily, units: -5, window: 24h}\n", []string{"limits[0]", "-5"}},
		{"zero cost", "costs: {videos.list: 0, search.list: 100}\n", []string{`videos.list`, "0"}},
		{"unknown call in limit", "limits:\n  - {name: daily, units: 100, window: 24h, costs: {serch.list: 100}}\n", []string{"serch.list"}},
		{"missing required call", "costs: {search.list: 100}\nlimits:\n  - {name: daily, units: 100, window: 24h}\n", []string{`costs: missing "videos.list"`}},
		{"bad policy", "failure_policy: {videos.list: maybe}\n", []string{"maybe"}},
		{"bad duration", "limits:\n  - {name: daily, units: 9500, window: 24 hours}\n", []string{`"24 hours" is not a duration`}},
		{"wrong type", "regions:\n  - {code: US, pages: four}\n", []string{"four"}},
		{"not a list", "regions: {code: US}\n", []string{"regions (line 1): want a list"}},
		{"bad redis scheme", "redis: {url: \"http://localhost:6379\"}\n", []string{`redis.url: bad Redis URL "http://localhost:6379": allowed schemes are redis://, rediss://`}},
		{"wait without a timeout", "redis: {url: \"redis://h:6379\", wait_replicas: 1, wait_timeout: 0s}\n", []string{`redis.wait_timeout: 0s: with wait_replicas it must be positive and below redis.timeout`}},
		{"wait on the ledger", "redis: {wait_replicas: 1}\n", []string{`redis.wait_replicas: 1: needs redis.url`}},
		{"default wait above the timeout", "redis: {url: \"redis://s1:26379?master_name=m\", timeout: 200ms}\n",
			[]string{`redis.wait_timeout: 250ms: with wait_replicas 1 (the default for a sentinel URL) it must be positive and below redis.timeout (200ms)`}},
		{"negative wait", "redis: {url: \"redis://h:6379\", wait_replicas: -1}\n", []string{`redis.wait_replicas: -1: allowed 0-16`}},
		{"epoch check too short", "redis: {epoch_check: 10ms}\n", []string{`redis.epoch_check: 10ms: must be at least 100ms`}},
		{"leader ttl too short", "scheduler: {leader_ttl: 500ms}\n", []string{`scheduler.leader_ttl: 500ms: must be at least 1s`}},
		{"bad endpoint", "youtube: {endpoint: \"localhost:8089\"}\n", []string{`youtube.endpoint: "localhost:8089"`}},
		{"bad maintenance spec", "scheduler: {maintenance: \"17 25 * * *\"}\n",
			[]string{`scheduler.maintenance: "17 25 * * *" is not a valid cron spec`, `or "off" to never run it`}},
		{"empty maintenance spec", "scheduler: {maintenance: \"\"}\n", []string{"scheduler.maintenance: empty cron spec"}},
		{"bad replica scheme", "archive: {replicas: [\"ftp://h/x\"]}\n", []string{`archive.replicas[0]: "ftp://h/x": scheme "ftp": allowed file, s3`}},
		{"unlinked replica scheme", "archive: {replicas: [\"gs://bucket/x\"]}\n", []string{`archive.replicas[0]: "gs://bucket/x": scheme "gs" is Litestream's but not built into ytrend (built in: file, s3, nats, sftp); use Google Cloud Storage's S3-compatible API`}},
		{"relative file replica", "archive: {replicas: [\"file://backups\"]}\n", []string{`archive.replicas[0]: "file://backups": give an absolute directory`}},
		{"replica password masked", "archive: {replicas: [\"ftp://u:hunter2@h/x\"]}\n", []string{`archive.replicas[0]: "ftp://u:REDACTED@h/x"`}},
		{"sync interval too short", "archive: {sync_interval: 10ms}\n", []string{"archive.sync_interval: 10ms: must be at least 100ms"}},
		{"retention below snapshots", "archive: {snapshot_interval: 2h, retention: 1h}\n", []string{"archive.retention: 1h: must be at least archive.snapshot_interval (2h)"}},
		{"syntax error", "regions: [\n", []string{"test.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("test.yaml", []byte(tc.yaml))
			if err == nil {
				err = c.Validate()
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, quota.ErrInvalidConfig) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	c, err := Parse("x.yaml", []byte("regions:\n  - {code: UK, pages: 9}\n  - {code: US, cron: nope}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v", err)
	}
	if len(ve.Problems) != 3 {
		t.Errorf("want 3 problems, got %d: %v", len(ve.Problems), err)
	}
	if !strings.HasPrefix(err.Error(), "invalid configuration in x.yaml:\n  ") {
		t.Errorf("headline: %q", err)
	}
}

func TestSectionsReplaceDefaultsWhole(t *testing.T) {
	c := mustValid(t, "costs: {videos.list: 1, search.list: 1}\nlimits:\n  - {name: search-daily, units: 100, window: 24h, costs: {search.list: 1}}\n  - {name: daily, units: 9500, window: 24h, costs: {videos.list: 1}}\n")
	q := c.QuotaConfig()
	if len(q.Costs) != 2 || len(q.Limits) != 2 || q.Limits[0].Name != "search-daily" {
		t.Errorf("2026 pricing not expressed: %+v", q)
	}
}

// The 2026-pricing recipe in schedule.yaml's comments must be valid as written.
func TestScheduleYAML2026PricingRecipe(t *testing.T) {
	data, err := os.ReadFile("../schedule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var recipe []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.Contains(line, "#  - {name: daily"):
			in = true
			recipe = append(recipe, strings.Replace(line, "#", " ", 1))
		case in && strings.HasPrefix(strings.TrimSpace(line), "#"):
			recipe = append(recipe, strings.Replace(line, "#", " ", 1))
		default:
			in = false
		}
		if in && strings.Contains(line, "search-daily") {
			break
		}
	}
	if len(recipe) != 3 {
		t.Fatalf("recipe not found in schedule.yaml comments: %q", recipe)
	}
	c := mustValid(t, "limits:\n"+strings.Join(recipe, "\n")+"\n")
	if got := c.QuotaConfig().Limits[1]; got.Name != "search-daily" || got.Units != 100 || got.Costs["search.list"] != 1 {
		t.Errorf("recipe parsed to %+v", got)
	}
}

func TestEnvironmentOverridesFile(t *testing.T) {
	c := mustValid(t, "redis: {url: \"redis://file:6379\"}\nstore: {path: file.db}\n")
	env := map[string]string{"REDIS_URL": "", "YOUTUBE_ENDPOINT": "http://127.0.0.1:1", "YTREND_DB": "env.db", "MY_KEY": " k3y "}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c.ApplyEnv(lookup)
	if c.Redis.URL != "" || c.YouTube.Endpoint != "http://127.0.0.1:1" || c.Store.Path != "env.db" {
		t.Errorf("env not applied: redis %q endpoint %q db %q", c.Redis.URL, c.YouTube.Endpoint, c.Store.Path)
	}
	c.APIKeyEnv = "MY_KEY"
	if len(c.Archive.Replicas) != 0 {
		t.Errorf("replicas %v without YTREND_ARCHIVE_REPLICA", c.Archive.Replicas)
	}
	env["YTREND_ARCHIVE_REPLICA"] = " file:///backups/ytrend "
	c.ApplyEnv(lookup)
	if want := []string{"file:///backups/ytrend"}; !slices.Equal(c.Archive.Replicas, want) {
		t.Errorf("YTREND_ARCHIVE_REPLICA: replicas %v, want %v", c.Archive.Replicas, want)
	}
	if k, err := c.APIKey(lookup); err != nil || k.Reveal() != "k3y" || fmt.Sprint(k) == "k3y" {
		t.Errorf("APIKey = %q, %v", k, err)
	}
	c.APIKeyEnv = "ABSENT"
	if _, err := c.APIKey(lookup); err == nil || !strings.Contains(err.Error(), "set ABSENT") {
		t.Errorf("missing key error: %v", err)
	}
}

// A bad value from the environment is reported as the environment's, not
// the file's (the red team got "invalid configuration in schedule.yaml" for
// a bad REDIS_URL), and a password in it is not shown.
func TestEnvironmentErrorsNameTheVariable(t *testing.T) {
	c, err := Parse("schedule.yaml", []byte("regions: [{code: US}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.ApplyEnv(func(k string) (string, bool) {
		return map[string]string{"REDIS_URL": "redis://u:hunter2@h:bad/0", "YTREND_ARCHIVE_REPLICA": "bogus://x"}[k], k != "YTREND_DB"
	})
	err = c.Validate()
	want := "invalid configuration:\n" +
		`  redis.url (from environment variable REDIS_URL): bad Redis URL "redis://u:REDACTED@h:bad/0"`
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("got %v\nwant prefix %s", err, want)
	}
	if !strings.Contains(err.Error(), "\n  archive.replicas[0] (from environment variable YTREND_ARCHIVE_REPLICA): ") {
		t.Errorf("replica from the environment: %v", err)
	}
	// An endpoint that is no HTTP URL is quoted without its password.
	c, err = Parse("schedule.yaml", []byte("regions: [{code: US}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.ApplyEnv(func(k string) (string, bool) { return "ftp://u:hunter2@x", k == "YOUTUBE_ENDPOINT" })
	if err := c.Validate(); err == nil || strings.Contains(err.Error(), "hunter2") ||
		!strings.Contains(err.Error(), "youtube.endpoint (from environment variable YOUTUBE_ENDPOINT): ") {
		t.Errorf("endpoint with a password: %v", err)
	}
	// A problem of the file's too: the headline names the file, each line
	// its own source.
	c, err = Parse("schedule.yaml", []byte("regions: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.ApplyEnv(func(k string) (string, bool) { return "ftp://h", k == "REDIS_URL" })
	err = c.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "invalid configuration in schedule.yaml:\n  redis.url (from environment variable REDIS_URL): ") ||
		!strings.Contains(err.Error(), "\n  regions: empty list") {
		t.Errorf("mixed: %v", err)
	}
}

// TestWaitReplicasByURL: unset, wait_replicas is 1 with a Sentinel or
// Cluster URL (from the file or the environment) and 0 otherwise; an
// explicit 0 with one of those stands and warns once.
func TestWaitReplicasByURL(t *testing.T) {
	const (
		sentinel = "redis://s1:26379?master_name=main&addr=s2:26379"
		cluster  = "redis://n1:6379?addr=n2:6379&addr=n3:6379"
		warning  = "writes are not waited for on a replica: a failover can lose the last grants"
	)
	tests := []struct {
		name string
		yaml string
		env  string // REDIS_URL, if set
		want int
		warn bool
	}{
		{"embedded ledger", "", "", 0, false},
		{"single node", "redis: {url: \"redis://h:6379/0\"}\n", "", 0, false},
		{"sentinel", "redis: {url: \"" + sentinel + "\"}\n", "", 1, false},
		{"cluster", "redis: {url: \"" + cluster + "\"}\n", "", 1, false},
		{"sentinel from the environment", "", sentinel, 1, false},
		{"cluster from the environment over a single node", "redis: {url: \"redis://h:6379/0\"}\n", cluster, 1, false},
		{"sentinel, explicit 0", "redis: {url: \"" + sentinel + "\", wait_replicas: 0}\n", "", 0, true},
		{"cluster, explicit 0", "redis: {url: \"" + cluster + "\", wait_replicas: 0}\n", "", 0, true},
		{"cluster from the environment, explicit 0", "redis: {wait_replicas: 0}\n", cluster, 0, true},
		{"single node, explicit 0", "redis: {url: \"redis://h:6379/0\", wait_replicas: 0}\n", "", 0, false},
		{"single node, explicit 2", "redis: {url: \"redis://h:6379/0\", wait_replicas: 2}\n", "", 2, false},
		{"sentinel, explicit 2", "redis: {url: \"" + sentinel + "\", wait_replicas: 2}\n", "", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("test.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			c.ApplyEnv(func(k string) (string, bool) { return tt.env, k == "REDIS_URL" && tt.env != "" })
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if c.Redis.WaitReplicas == nil || *c.Redis.WaitReplicas != tt.want {
				t.Errorf("wait_replicas = %v, want %d", c.Redis.WaitReplicas, tt.want)
			}
			w := c.Warnings()
			switch {
			case tt.warn && (len(w) != 1 || !strings.Contains(w[0], warning)):
				t.Errorf("warnings %q, want one saying %q", w, warning)
			case !tt.warn && len(w) != 0:
				t.Errorf("warnings %q, want none", w)
			}
		})
	}
	// The repo's schedule.yaml leaves it unset.
	c, err := Load("../schedule.yaml", true)
	if err != nil {
		t.Fatal(err)
	}
	c.ApplyEnv(func(k string) (string, bool) { return sentinel, k == "REDIS_URL" })
	if err := c.Validate(); err != nil || *c.Redis.WaitReplicas != 1 || len(c.Warnings()) != 0 {
		t.Errorf("schedule.yaml with a Sentinel URL: wait_replicas %d, warnings %q, %v; want 1, none",
			*c.Redis.WaitReplicas, c.Warnings(), err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("/nonexistent/schedule.yaml", false); err != nil {
		t.Errorf("optional missing file: %v", err)
	}
	if _, err := Load("/nonexistent/schedule.yaml", true); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("required missing file: %v", err)
	}
}

func TestParseDuration(t *testing.T) {
	cases := map[string]time.Duration{"90s": 90 * time.Second, "7d": 7 * 24 * time.Hour, "1d12h": 36 * time.Hour, "24h": 24 * time.Hour, "500ms": 500 * time.Millisecond}
	for in, want := range cases {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "7x", "-1d", "1d2"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
	// Durations that overflowed silently: 106752d wrapped to a negative
	// window, 213503d to an offset of -23h. Negative ones are refused too.
	for in, want := range map[string]string{
		"106752d":    `"106752d" is too long: at most 106751d`,
		"213503d":    `"213503d" is too long: at most 106751d`,
		"2562048h":   `"2562048h" is too long`,
		"106751d24h": `"106751d24h" is too long`,
		"-24h":       `"-24h" is negative`,
	} {
		if _, err := ParseDuration(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDuration(%q) = %v, want %q", in, err, want)
		}
	}
	if got, err := ParseDuration("106751d"); err != nil || got <= 0 {
		t.Errorf("ParseDuration(106751d) = %v, %v; want the longest duration accepted", got, err)
	}
	for d, want := range map[time.Duration]string{24 * time.Hour: "1d", time.Hour: "1h", 450 * time.Second: "7m30s", 0: "0s", 90 * time.Minute: "1h30m"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestOverflowsInTheFile: the audit's overflowing durations and a
// sub-second @every are errors that name the field.
func TestOverflowsInTheFile(t *testing.T) {
	for yaml, want := range map[string]string{
		"limits: [{name: daily, units: 9500, window: 106752d}]\n": "too long",
		"regions:\n  - {code: US, offset: 213503d}\n":             "too long",
		"regions:\n  - {code: US, cron: \"@every 500ms\"}\n":      "@every counts whole seconds",
		"regions:\n  - {code: US, cron: \"@every 1500ms\"}\n":     "@every counts whole seconds",
	} {
		c, err := Parse("test.yaml", []byte(yaml))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", yaml, err, want)
		}
	}
}

// TestAliasBomb: a file whose aliases expand to millions of nodes is refused
// up front with an error that says why. checkFields used to follow every
// alias before yaml.v3's own alias limit applied: 60 KB took 28 s of CPU.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("regions:\n  - &r {code: US, searches: [&s {q: x}")
	for range 3000 {
		b.WriteString(", *s")
	}
	b.WriteString("]}\n")
	for range 3000 {
		b.WriteString("  - *r\n")
	}
	_, err := Parse("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "too many aliases") {
		t.Fatalf("Parse(a %d-byte alias bomb) = %v, want a too-many-aliases error", b.Len(), err)
	}
	// A file with a few aliases is fine.
	if _, err := Parse("ok.yaml", []byte("regions:\n  - &r {code: US}\n  - {code: GB, cron: \"5 * * * *\"}\n")); err != nil {
		t.Errorf("a file with an anchor: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("../schedule.yaml")
	f.Add(string(data))
	f.Add("regions:\n  - {code: IN, cron: \"CRON_TZ=Asia/Kolkata 30 6 * * *\", offset: 2m}\n")
	f.Add("regions:\n  - {code: US, cron: \"CRON_TZ=\"}\n")
	f.Add("limits: [{name: x, units: 1, window: 1d}]")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse("fuzz.yaml", []byte(s))
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			return
		}
		if _, err := c.Jobs(); err != nil {
			t.Fatalf("valid config but Jobs failed: %v", err)
		}
	})
}

// Upkeep runs daily by default, at the spec given, or never with "off"
// (unquoted: YAML 1.2 keeps it a string).
func TestMaintenanceSchedule(t *testing.T) {
	at := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	cases := []struct {
		yaml   string
		on     bool
		wantAt time.Time
	}{
		{"", true, time.Date(2026, 11, 22, 4, 17, 0, 0, time.UTC)},
		{"scheduler: {maintenance: \"CRON_TZ=Asia/Kolkata 0 3 * * 0\"}\n", true, time.Date(2026, 11, 21, 21, 30, 0, 0, time.UTC)},
		{"scheduler: {maintenance: off}\n", false, time.Time{}},
	}
	for _, tc := range cases {
		c, err := Parse("test.yaml", []byte(tc.yaml))
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		s, on, err := c.MaintenanceSchedule()
		if err != nil || on != tc.on {
			t.Fatalf("%q: on=%v err=%v, want on=%v", tc.yaml, on, err, tc.on)
		}
		if on {
			if got := s.Next(at).UTC(); !got.Equal(tc.wantAt) {
				t.Errorf("%q: next upkeep %v, want %v", tc.yaml, got, tc.wantAt)
			}
		}
	}
}
