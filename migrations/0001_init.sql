-- 0001_init: the archive.
--
-- Times are INTEGER unix microseconds, UTC, unless the column name ends in _s
-- (unix seconds). Counts the owner hid are NULL, never 0.
--
-- The FTS index (video_fts) is fed by the store package, not by triggers: new
-- and changed rows are indexed by one INSERT ... SELECT at the end of each page
-- transaction, and a changed or deleted row is first removed with FTS5's
-- 'delete' command carrying its old values. Write to these tables only
-- through store.DB, or run INSERT INTO video_fts(video_fts) VALUES('rebuild').

-- One fetch of one region's chart (or of search results).
CREATE TABLE runs (
    id             INTEGER PRIMARY KEY,
    region         TEXT    NOT NULL,
    triggered_by   TEXT    NOT NULL CHECK (triggered_by IN ('schedule', 'cli')),
    owner          TEXT    NOT NULL,          -- host:pid of the process running it
    started_at     INTEGER NOT NULL,
    finished_at    INTEGER,                   -- NULL while running
    status         TEXT    NOT NULL DEFAULT 'running'
                   CHECK (status IN ('running', 'ok', 'stopped_quota', 'failed', 'interrupted')),
    pages          INTEGER NOT NULL DEFAULT 0,
    videos         INTEGER NOT NULL DEFAULT 0,
    new_videos     INTEGER NOT NULL DEFAULT 0,
    updated_videos INTEGER NOT NULL DEFAULT 0,
    units          INTEGER NOT NULL DEFAULT 0, -- quota units reserved
    refused_by     TEXT    NOT NULL DEFAULT '', -- the quota limit that stopped it
    retry_at       INTEGER,                   -- when that limit admits again
    error          TEXT    NOT NULL DEFAULT '',
    last_page_at   INTEGER,                   -- newest FetchedAt of its pages
    min_video      INTEGER                    -- no video of its pages has a smaller videos.id
) STRICT;

CREATE INDEX runs_region ON runs (region, id);
CREATE INDEX runs_running ON runs (owner) WHERE status = 'running';
-- The archive's newest sighting (search's recency reference) and, for a
-- --since filter, the smallest video id seen since: both from the runs.
CREATE INDEX runs_last_page ON runs (last_page_at);

CREATE TABLE channels (
    id         INTEGER PRIMARY KEY,
    channel_id TEXT    NOT NULL UNIQUE,
    title      TEXT    NOT NULL,              -- latest title seen
    title_fold TEXT    NOT NULL               -- lower-cased, accents removed: for --channel substring filters
) STRICT;

-- One row per video: its latest metadata and indexed text. Columns here change
-- only when the metadata does; what changes at every sighting is in video_stats.
CREATE TABLE videos (
    id               INTEGER PRIMARY KEY,     -- grows in first-seen order (video_fts's rowid is fkey, below)
    video_id         TEXT    NOT NULL UNIQUE, -- the YouTube id
    title            TEXT    NOT NULL,
    tags             TEXT    NOT NULL,        -- one tag per line
    channel_title    TEXT    NOT NULL,
    description      TEXT    NOT NULL,
    title_grams      TEXT,                    -- overlapping bigrams of the title's CJK/Thai runs; NULL if none
    facets           TEXT    NOT NULL,        -- filter tokens: U+FDD0 'c' channels.id, U+FDD0 'r' region (store/text.go)
    channel_id       TEXT    NOT NULL,
    category_id      TEXT    NOT NULL,
    published_at_s   INTEGER NOT NULL,
    duration_s       INTEGER NOT NULL,
    default_language TEXT    NOT NULL,
    thumbnail_url    TEXT    NOT NULL,
    first_seen       INTEGER NOT NULL,
    -- The full-text index's rowid: ids grow, so fkey shrinks, and newest
    -- first is ascending fkey, the order FTS5 walks a MATCH fastest (its
    -- reverse walk costs several times more). Virtual: no storage.
    fkey             INTEGER GENERATED ALWAYS AS (-id) VIRTUAL
) STRICT;

-- What changes at every sighting, plus what search ranks candidates with and
-- what tells a re-seen video from a changed one: kept narrow, so that a search
-- and a page of re-seen videos read and rewrite small rows, never the videos
-- row with its description.
--
CREATE TABLE video_stats (
    video     INTEGER PRIMARY KEY REFERENCES videos (id) ON DELETE CASCADE,
    channel   INTEGER NOT NULL,               -- channels.id (kept by the store; no FK check on every sighting)
    last_seen INTEGER NOT NULL,               -- latest fetch (chart or search) that returned it
    best_rank INTEGER,                        -- best chart rank in any region; NULL if never charted
    views     INTEGER,                        -- NULL: hidden by the owner
    likes     INTEGER,
    comments  INTEGER,
    doc_len   INTEGER NOT NULL,               -- tokens in all indexed columns (bm25's document length)
    terms     BLOB    NOT NULL,               -- per-term counts of the short columns (store/text.go)
    text_hash INTEGER NOT NULL,               -- of the videos row's indexed text: unchanged => index untouched
    meta_hash INTEGER NOT NULL                -- of all its metadata: unchanged => videos row untouched
) STRICT;


-- Where and when a video was on a chart: one row per chart position fetched.
-- The most inserted table: no foreign keys (two lookups per row); the store
-- writes only ids it has just checked, and deletes a video's snapshots itself.
CREATE TABLE trending_snapshots (
    run_id     INTEGER NOT NULL,              -- runs.id
    rank       INTEGER NOT NULL,
    region     TEXT    NOT NULL,
    video      INTEGER NOT NULL,              -- videos.id
    fetched_at INTEGER NOT NULL,
    views      INTEGER,                       -- NULL: hidden
    PRIMARY KEY (run_id, rank)
) STRICT, WITHOUT ROWID;

CREATE INDEX trending_snapshots_video ON trending_snapshots (video);

-- Per (video, region) aggregate of trending_snapshots.
CREATE TABLE video_regions (
    video      INTEGER NOT NULL REFERENCES videos (id) ON DELETE CASCADE,
    region     TEXT    NOT NULL,
    best_rank  INTEGER NOT NULL,
    last_rank  INTEGER NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    snapshots  INTEGER NOT NULL,
    PRIMARY KEY (video, region)
) STRICT, WITHOUT ROWID;

-- Running totals, maintained by the same transactions that change them: the
-- ranker's N and average document length, and counts that would otherwise
-- need a full scan.
CREATE TABLE archive_totals (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    videos    INTEGER NOT NULL,
    tokens    INTEGER NOT NULL,               -- sum of video_stats.doc_len
    snapshots INTEGER NOT NULL
) STRICT;

INSERT INTO archive_totals (id, videos, tokens, snapshots) VALUES (1, 0, 0, 0);

-- Full-text index over the videos' text. External content: the text lives
-- once, in videos. unicode61 with M* so Devanagari vowel signs and viramas stay
-- inside words; remove_diacritics 2 folds Latin accents (cafe finds Café).
-- title_grams makes Chinese, Japanese and Thai titles findable by any part.
-- facets holds tokens no typed word can produce (they start with the
-- noncharacter U+FDD0), one for the channel and one per region the video
-- trended in, so that --channel and --region filters are intersections FTS5
-- performs inside the MATCH instead of rows the scan must test one by one.
CREATE VIRTUAL TABLE video_fts USING fts5 (
    title, tags, channel_title, description, title_grams, facets,
    content = 'videos',
    content_rowid = 'fkey',
    tokenize = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
);

-- Column weights for FTS5's own bm25 (used by raw-syntax queries); the store's
-- ranker uses the same weights. Facets do not score.
INSERT INTO video_fts (video_fts, rank) VALUES ('rank', 'bm25(10.0, 4.0, 3.0, 1.0, 10.0, 0.0)');
