// Package store is ytrend's local archive: one SQLite file (pure-Go
// modernc.org/sqlite) holding every fetched video, where and when it
// trended, the history of fetch runs, and an FTS5 index that answers searches
// at zero API quota.
//
// # Files, connections, processes
//
// [Open] applies the numbered migrations embedded from the migrations
// package (refusing gaps, duplicates and a database newer than the binary)
// and hands out one writer connection and a pool of readers (searches have
// a pool of their own, and [DB.Version] one connection, so that neither a
// slow search nor a server's version check waits behind other reads;
// [ShortLived], for a command that reads once and exits, searches through
// the readers and prepares statements as they are first run). The file is in
// WAL mode; every connection has busy_timeout, synchronous=NORMAL and
// foreign keys on; write transactions are BEGIN IMMEDIATE, so they never fail
// half way with SQLITE_BUSY_SNAPSHOT. `ytrend run`, `ytrend fetch` and
// `ytrend search` in separate processes share the file: writers queue for
// the write lock (up to the busy timeout), readers never wait for writers,
// and opening an up-to-date archive takes no write lock at all.
//
// Open reads the schema before it changes anything: an archive this build
// cannot migrate is refused as it is, not first switched to WAL. SQLite
// reads an archive in WAL mode only with its -wal and -shm beside it, so in
// a directory this user cannot write the archive is readable while another
// process holds it open (and those files exist), and is otherwise refused
// with [ErrReadOnlyDir] rather than read with ?immutable=1, which would
// promise that nobody writes it meanwhile. For the same reason a reader
// who cannot write the archive's file but can write its directory creates
// the -wal and -shm, as theirs, and cannot remove them (only a close that
// can checkpoint does); Open refuses to write an archive whose -wal or
// -shm it cannot write, saying so, instead of failing every write. It
// refuses an empty file with a non-empty -wal beside it
// ([ErrWALBesideEmpty]), which SQLite would delete with the archive's
// writes in it.
//
// The archive also holds the budget's embedded ledger and every process's
// record of its grants (the quota_* tables): the embedded ledger lives in
// the archive, by design, so that one file is all a single host needs. The
// quota package owns what those tables mean and every statement on them;
// this package owns their schema, as migrations of the one file, and hands
// quota its writer pool ([DB.Writer]) so that a reservation and a page write
// queue for the same lock instead of fighting over it.
//
// # Writes
//
// [DB.SavePage] stores one fetched page in one transaction: the videos
// (videos holds metadata and text, video_stats what changes at every
// sighting), chart snapshots, per-(video, region) aggregates, running totals,
// the run's progress and the full-text index changes. A crash loses at most
// the page in flight, never part of it.
//
// The index (video_fts, external content over videos) is fed by the store,
// not by triggers: a page's new and changed videos are indexed by one INSERT
// ... SELECT as the page transaction's last statement (FTS5 writes a segment
// per statement, so this is much faster than per-row triggers), and a changed
// or deleted video is first removed with FTS5's 'delete' command carrying the
// values that were indexed. A re-seen video whose indexed text (title, tags,
// channel, description) is unchanged — the common case for hourly
// re-fetches — is neither re-indexed nor re-tokenized: a hash of the text
// decides. The index also holds each video's facets, tokens for its channel
// and for every region it trended in (see Queries), so a video is re-indexed
// once more when it first trends in another region.
//
// # Search
//
// [DB.Search] is package search's engine over its own pool: the
// tokenizer that mirrors FTS5, query parsing, snippets, the ranking formula
// and the walk over blocks of ids that stops early and exactly. The store
// feeds it: the index columns, the per-video term blobs and the facets are
// written here, with the page that carries them. Archives indexed before the
// gram and glued-word columns are upgraded in place by [DB.Regram] (migrate
// and the daily maintenance).
//
// # History
//
// Every chart position fetched is a trending_snapshots row, with the
// sighting's views, likes, dislikes and comments. [DB.Chart] is a region's
// chart as its newest finished fetch at or before a time saw it, with each
// entry's movement against the fetch before; [DB.History] is every sighting
// of one video, per region; both read a handful of rows by index whatever
// the archive's size (package view shapes them as JSON). [DB.Snapshots]
// streams every position in fetch order from one read transaction, walking
// runs by time and each run's positions by primary key, so no sort holds the
// rows: memory stays flat at millions of them.
//
// [DB.ImportChart] stores a chart from the past (a day of a public dataset,
// a run of an export; package dataset reads the files) as a run with trigger
// "import", through SavePage's own transaction body: videos merge exactly as
// a fetch's do, so older metadata never replaces newer and the index changes
// only for changed text. The whole chart is one transaction, and a chart the
// archive already has (same region, same fetch time) is skipped: importing a
// file again changes nothing. [DB.ImportCharts] stores a batch of charts in
// one transaction and indexes each new or changed video once, at the batch's
// end: per chart, the commit and FTS5's segment flush cost a fifth of an
// import.
//
// # Categories
//
// The categories table caches videoCategories.list per region: ingest asks
// at most once per region per quota day ([DB.CategoriesFetchedAt],
// [DB.SaveCategories]). Chart entries, histories, search hits and exported
// rows carry the name beside the id ("" when none is cached), and
// [ChartQuery], [Query] and [SnapshotFilter] filter by category ids;
// [DB.CategoryIDs] reads a name, ignoring case, in the regions' cached names.
// An imported export's names fill gaps only (assignable NULL), never an
// answer the API gave.
//
// # Maintenance
//
// FTS5 keeps the index as a few segments per size level, and every query
// pays a lookup in each; [DB.Optimize] merges them into one in short
// transactions. Searches are within their targets without it.
package store
