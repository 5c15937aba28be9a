// Package store is ytrend's local archive: one SQLite file (pure-Go
// modernc.org/sqlite) holding every fetched video, where and when it
// trended, the history of fetch runs, and an FTS5 index that answers searches
// at zero API quota.
//
// # Files, connections, processes
//
// [Open] applies the numbered migrations embedded from the migrations
// package (refusing gaps, duplicates and a database newer than the binary)
// and hands out one writer connection and a pool of readers. The file is in
// WAL mode; every connection has busy_timeout, synchronous=NORMAL and
// foreign keys on; write transactions are BEGIN IMMEDIATE, so they never fail
// half way with SQLITE_BUSY_SNAPSHOT. `ytrend run`, `ytrend fetch` and
// `ytrend search` in separate processes share the file: writers queue for
// the write lock (up to the busy timeout), readers never wait for writers,
// and opening an up-to-date archive takes no write lock at all.
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
// # Tokenizing
//
// unicode61 with remove_diacritics 2 folds Latin accents (cafe finds Café);
// categories 'L* N* Co M*' keeps Devanagari vowel signs and viramas inside
// words (क्रिकेट stays one word). Chinese, Japanese, Korean, Thai, Lao, Khmer
// and Myanmar are written without spaces, so every column's runs in those
// scripts are also indexed as overlapping bigrams (東京の天気 -> 東京 京の の天
// 天気 気) in the gram column (named title_grams from when only titles had
// them), and query text in those scripts is matched as a phrase of bigrams
// there: 東京 finds 東京の天気予報 in a title, 日帰り finds a description's
// 東京からの日帰りで... A bigram never spans two runs, so nothing matches
// across two columns or two tags. Each column's grams count in that column
// for ranking (a description word weighs as description text). FTS5's
// Unicode tables also predate many emoji and keep them inside a token
// (Дорого🤍Идеальные is one FTS5 token); the store splits there as at any
// emoji, and the gram column also holds the words of each such token
// (дорого идеальные), so each is found, alone or as a phrase, and counts in
// its own column. Archives indexed before either are upgraded in place by
// [DB.Regram] (migrate and the daily maintenance). text.go mirrors the FTS5
// tokenizer in Go (fold_table.go is generated from FTS5 itself), so the store
// counts terms and builds snippets without asking SQLite.
//
// # Queries
//
// What a person types is plain words ([Query.Text]): each word, or "quoted
// phrase", must match; FTS5 operators, column filters, '*', '-', stray quotes,
// emoji and control characters are text, never syntax. The MATCH expression
// is built only from quoted runs of letters, digits and marks, so no input
// can produce an SQL error. [Query.Raw] opts in to FTS5 syntax; errors are
// then [ErrBadQuery].
//
// Region and channel filters are facet terms of the MATCH: the facets column
// holds tokens that begin with the noncharacter U+FDD0, which FTS5 indexes as
// part of a word and the Go tokenizer (so any typed text) never produces.
// FTS5 intersects them with the words, skipping what cannot match, so a
// filter on a small region or channel costs no more than on a big one. Not
// for a raw query: its text is FTS5 syntax that parentheses cannot contain
// ("a) OR (b"), so its filters are SQL conditions only (the region join,
// the channel list, the since bound), and hold whatever the text says.
//
// # Ranking, exactly
//
// Relevance is BM25 with the title weighted above tags above channel above
// description, multiplied by how recently and how high the video trended
// (the formula is in rank.go). The store computes it, not FTS5's bm25():
// that function counts the whole doclist of every query term to get its IDF
// on every query, about 100 ms for a common word at a million videos,
// whatever the LIMIT. The IDF of each term is exact up to 64 matches and
// estimated above that from the density of its newest matches; both ways of
// ranking below use the same estimate.
//
// Every search returns the page that scoring every match would give, ties
// broken the same way (score, then last sighting, then id), without scoring
// every match of a common word. video_blocks keeps, per block of 1,024
// video ids, the newest sighting, best chart rank and most views of its
// videos (triggers on video_stats keep it, whatever writes). A search walks
// the blocks best bound first — newest sighting first, or most views first
// for --sort views — ranks a group of blocks at a time inside SQLite (the
// ytrend_rank function scores, SQLite sorts, only the group's best page
// crosses into Go), and stops once no block left could place a video in the
// page it holds: for relevance, BM25 cannot exceed Σ idf·(k1+1) and the
// trend factor cannot exceed that of a #1 video seen when the block last
// was. Within a group, plain comparisons on the last sighting, best rank or
// view count keep most older matches from being scored at all. A query with
// fewer than 1,024 matches, a raw query (FTS5's bm25 has no bound to stop
// on) and --sort views over a few percent of the archive are ranked in one
// pass. search_walk.go has the details; [Query.Exhaustive] ranks every
// match in one pass, and is what the tests compare the walk with.
//
// # History
//
// Every chart position fetched is a trending_snapshots row, with the
// sighting's views, likes, dislikes and comments. [DB.Chart] is a region's
// chart as its newest finished fetch at or before a time saw it, with each
// entry's movement against the fetch before; [DB.History] is every sighting
// of one video, per region; both read a handful of rows by index whatever
// the archive's size, and their JSON is the HTTP API's. [DB.Snapshots]
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
