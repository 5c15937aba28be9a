package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ytrend/ytrend/internal/secret"
)

// Archive configures the archive's replicas: where `ytrend run`'s leader
// streams the archive's WAL (package replica, on Litestream), where
// `archive restore` and `run`'s restore-on-start read it back, and where
// standbys and `serve --follow` follow it.
type Archive struct {
	// Replicas are Litestream replica URLs: file:///backups/ytrend,
	// s3://bucket/path?endpoint=..., nats://host:4222/bucket, sftp://...
	// Each leadership term writes below its own term-<token> path.
	Replicas []string `yaml:"replicas"`
	// SyncInterval is how often the WAL is shipped: the replication lag's
	// floor.
	SyncInterval Duration `yaml:"sync_interval"`
	// SnapshotInterval is how often a full snapshot is written; a restore
	// replays at most this much WAL on top of the latest one.
	SnapshotInterval Duration `yaml:"snapshot_interval"`
	// Retention is how long snapshots (and so point-in-time restore) and
	// the replica paths of ended terms are kept.
	Retention Duration `yaml:"retention"`
	// FollowInterval is how often a follower polls the replica.
	FollowInterval Duration `yaml:"follow_interval"`
}

// Archive defaults (measured in BENCHMARKS.md, "Replication").
const (
	DefaultSyncInterval     = time.Second
	DefaultSnapshotInterval = 6 * time.Hour
	DefaultRetention        = 72 * time.Hour
	DefaultFollowInterval   = time.Second
)

// ReplicaSchemes are the replica URL schemes ytrend links Litestream's
// clients for. Its others (gs, abs, webdav, oss) are not linked: together
// they would add about 57 MB of cloud SDKs to the binary, and every
// command pays their package initialisation; unlinkedSchemes says what to
// use instead.
var ReplicaSchemes = []string{"file", "s3", "nats", "sftp"}

// unlinkedSchemes are Litestream's schemes ytrend does not link, with
// what to use instead.
var unlinkedSchemes = map[string]string{
	"gs":      "use Google Cloud Storage's S3-compatible API: s3://bucket/path?endpoint=https://storage.googleapis.com&region=auto with HMAC keys in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
	"abs":     "use an S3-compatible gateway in front of the container, or sftp://",
	"webdav":  "use sftp:// or an S3-compatible store",
	"webdavs": "use sftp:// or an S3-compatible store",
	"oss":     "use Alibaba Cloud OSS's S3-compatible endpoint: s3://bucket/path?endpoint=https://oss-REGION.aliyuncs.com",
}

func defaultArchive() Archive {
	return Archive{SyncInterval: Duration(DefaultSyncInterval), SnapshotInterval: Duration(DefaultSnapshotInterval),
		Retention: Duration(DefaultRetention), FollowInterval: Duration(DefaultFollowInterval)}
}

// applyEnv: YTREND_ARCHIVE_REPLICA replaces the file's list with one URL.
// It reports whether it did.
func (a *Archive) applyEnv(env Env) bool {
	if v, ok := env("YTREND_ARCHIVE_REPLICA"); ok && strings.TrimSpace(v) != "" {
		a.Replicas = []string{strings.TrimSpace(v)}
		return true
	}
	return false
}

func (a *Archive) validate(add func(field, format string, args ...any)) {
	for i, raw := range a.Replicas {
		if err := ValidateReplicaURL(raw); err != nil {
			add(fmt.Sprintf("archive.replicas[%d]", i), "%v", err)
		}
	}
	for _, d := range []struct {
		field string
		v     Duration
		least time.Duration
	}{
		{"archive.sync_interval", a.SyncInterval, 100 * time.Millisecond},
		{"archive.snapshot_interval", a.SnapshotInterval, time.Minute},
		{"archive.retention", a.Retention, time.Minute},
		{"archive.follow_interval", a.FollowInterval, 100 * time.Millisecond},
	} {
		if d.v.D() < d.least {
			add(d.field, "%s: must be at least %s", d.v, Duration(d.least))
		}
	}
	if a.Retention < a.SnapshotInterval {
		add("archive.retention", "%s: must be at least archive.snapshot_interval (%s), or no snapshot would be kept", a.Retention, a.SnapshotInterval)
	}
}

// ValidateReplicaURL checks the form of a replica URL; its errors show the
// URL with any password masked.
func ValidateReplicaURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("%q: not a URL; e.g. file:///backups/ytrend or s3://bucket/ytrend", secret.URL(raw))
	}
	if alt, ok := unlinkedSchemes[u.Scheme]; ok {
		return fmt.Errorf("%q: scheme %q is Litestream's but not built into ytrend (built in: %s); %s",
			secret.URL(raw), u.Scheme, strings.Join(ReplicaSchemes, ", "), alt)
	}
	if !slices.Contains(ReplicaSchemes, u.Scheme) {
		return fmt.Errorf("%q: scheme %q: allowed %s", secret.URL(raw), u.Scheme, strings.Join(ReplicaSchemes, ", "))
	}
	if u.Scheme == "file" && (u.Host != "" || u.Path == "" || u.Path == "/") {
		return fmt.Errorf("%q: give an absolute directory, file:///backups/ytrend", secret.URL(raw))
	}
	if u.Scheme != "file" && u.Host == "" {
		return fmt.Errorf("%q: no bucket or host", secret.URL(raw))
	}
	return nil
}
