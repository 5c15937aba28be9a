-- Processes that own runs, with a heartbeat.
--
-- runs.owner used to be host:pid, and a run was taken as dead when that pid
-- no longer existed. A pid is no proof of life: in a container ytrend is pid
-- 1, and pids are reused, so a crashed run could stay 'running' forever.
-- Now every process that starts a run registers an instance id
-- (host:pid:random, never reused) here and refreshes heartbeat_at while it
-- lives; runs.owner holds that id. A run whose owner's heartbeat is stale, or
-- whose owner left no row, was abandoned: the next process to start on any
-- host sharing the archive marks it interrupted. A clean exit deletes its row.
CREATE TABLE instances (
    id           TEXT    PRIMARY KEY,   -- host:pid:random
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,      -- unix µs, the owner's clock
    heartbeat_at INTEGER NOT NULL       -- unix µs, the owner's clock
) STRICT, WITHOUT ROWID;
