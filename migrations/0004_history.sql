-- 0004_history: the archive's history, in and out (issue 11).
--
-- 1. runs.triggered_by accepts 'import': each (region, trending day) of an
--    imported dataset, and each run of an imported ytrend export, becomes one
--    historical run. SQLite cannot change a CHECK constraint in place, so runs
--    is rebuilt with the same columns (named, so the copy does not depend on
--    their order). The status CHECK keeps 'fenced' (0003's leader fence).
-- 2. A chart sighting keeps its likes, dislikes and comments beside its views,
--    so that exporting a day's chart gives that day's counts, as the public
--    datasets do. Snapshots stored before this migration have only views:
--    counted = 0 marks them, so that a NULL count there means "not recorded",
--    not "hidden by the owner".
-- 3. Indexes for `ytrend chart` (the newest finished fetch of a region at or
--    before a time) and for a chart's movement (the fetch before it).

CREATE TABLE runs_new (
    id             INTEGER PRIMARY KEY,
    region         TEXT    NOT NULL,
    triggered_by   TEXT    NOT NULL CHECK (triggered_by IN ('schedule', 'cli', 'import')),
    owner          TEXT    NOT NULL,          -- host:pid of the process running it
    started_at     INTEGER NOT NULL,
    finished_at    INTEGER,                   -- NULL while running
    status         TEXT    NOT NULL DEFAULT 'running'
                   CHECK (status IN ('running', 'ok', 'stopped_quota', 'failed', 'interrupted', 'fenced')),
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

INSERT INTO runs_new (id, region, triggered_by, owner, started_at, finished_at, status, pages, videos, new_videos,
    updated_videos, units, refused_by, retry_at, error, last_page_at, min_video)
SELECT id, region, triggered_by, owner, started_at, finished_at, status, pages, videos, new_videos,
    updated_videos, units, refused_by, retry_at, error, last_page_at, min_video FROM runs;

DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;

CREATE INDEX runs_region ON runs (region, id);
CREATE INDEX runs_running ON runs (owner) WHERE status = 'running';
CREATE INDEX runs_last_page ON runs (last_page_at);
-- The charts of a region in time order: finished runs that stored a page.
-- Queries must repeat the WHERE terms for SQLite to use it.
CREATE INDEX runs_charts ON runs (region, last_page_at) WHERE pages > 0 AND status <> 'running';

-- NULL: hidden by the owner (counted = 1) or not recorded (counted = 0).
-- dislikes is NULL for everything the API fetched: it stopped giving them in
-- December 2021; imported datasets from before then have them.
ALTER TABLE trending_snapshots ADD COLUMN likes INTEGER;
ALTER TABLE trending_snapshots ADD COLUMN dislikes INTEGER;
ALTER TABLE trending_snapshots ADD COLUMN comments INTEGER;
ALTER TABLE trending_snapshots ADD COLUMN counted INTEGER NOT NULL DEFAULT 0;
