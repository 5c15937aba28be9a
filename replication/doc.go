// Package replication keeps copies of the archive away from its host, by
// embedding Litestream (github.com/benbjohnson/litestream): the leader
// streams the archive's WAL to each configured replica URL, a restore reads
// a replica back into a new file, and a follower keeps a read-only copy
// current.
//
// Words, used the same way in the code, the logs, the metrics and the README:
//
//   - archive replica (replica, where the context says it): one configured URL (file:///backups/ytrend, s3://bucket/path).
//   - term: one leadership term of `ytrend run`, named by its lease's fencing
//     token. Each term writes below its own path, <replica>/term-<token>, so
//     two terms never write the same files: a deposed leader that wakes
//     writes only into its own, ended, term.
//   - term index: one small LTX marker per term at the replica's root, whose
//     TXID is the token. Listing it with Litestream's own client finds the
//     terms on every backend (file, S3, NATS...), newest first; it is what the
//     CLI shows as the replica's generation.
//   - stream: one term's replication of the archive to every replica
//     (Stream), started when the term begins and stopped when it ends.
//   - restore: the archive rebuilt from the newest term that holds the wanted
//     time (Restore).
//   - takeover: the previous term copied into the live archive before the
//     new term streams (Takeover): a standby's stopped copy (Handover) when
//     it holds the whole term, else a restore of the term.
//   - follow: a read-only copy applying the newest term's changes as they
//     arrive (Follow), for `ytrend serve --follow` and the standbys of
//     ytrend run (which stop it with Follower.Stop on taking over, and hand
//     the copy to the takeover). Litestream writes the changes
//     into the copy in place; follow.go says what a reader could see and
//     the gate that keeps it to committed states.
//
// Key decision: Litestream, not home-made code. The archive is the one thing
// ytrend cannot fetch again; WAL shipping, snapshots, point-in-time restore
// and a dozen storage backends are a well-kept library's job. ytrend adds
// only what Litestream cannot know: which process may write (the lease's
// fence) and where each term's copy lives.
package replication
