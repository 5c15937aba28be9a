-- 0003_quota_books: books that survive losing the ledger.
--
-- The embedded ledger lives in the archive (see quota/doc.go). This migration
-- gives it an identity (an epoch per credential), stores each limit's
-- definition beside it, adds the leader lease, and replaces the fail-open
-- journal with the process's own record of every grant it was given.

-- Each process's record of its grants: every reservation granted to this
-- archive's processes, kept for the longest window and pruned after it. When
-- the ledger loses its books (Redis restarted without persistence, flushed,
-- failed over to a replica that missed writes), the record is replayed into
-- it, idempotently by reservation id. pending = 1 marks a fail-open grant the
-- backend has never seen (it was unreachable): what the old quota_journal held.
CREATE TABLE quota_grants (
    credential TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    call       TEXT    NOT NULL,
    costs      TEXT    NOT NULL,          -- JSON object: limit name -> units charged
    at         INTEGER NOT NULL,          -- grant time: backend clock, or the host's for a fail-open grant
    epoch      TEXT    NOT NULL,          -- the ledger's epoch when granted ('' when unknown)
    pending    INTEGER NOT NULL DEFAULT 0 CHECK (pending IN (0, 1)),
    PRIMARY KEY (credential, id)
) STRICT, WITHOUT ROWID;

CREATE INDEX quota_grants_by_time ON quota_grants (credential, at);

INSERT INTO quota_grants (credential, id, call, costs, at, epoch, pending)
    SELECT credential, id, call, costs, at, '', 1 FROM quota_journal;
DROP TABLE quota_journal;

-- The embedded ledger's identity and housekeeping, one row per credential.
-- A missing row while a process holds grants means the books were lost.
CREATE TABLE quota_epoch (
    credential  TEXT    PRIMARY KEY,
    id          TEXT    NOT NULL,
    created     INTEGER NOT NULL,
    grace_until INTEGER NOT NULL DEFAULT 0, -- after a rebuild nothing is admitted before this
    rebuilt     INTEGER NOT NULL DEFAULT 0, -- when a loss was detected (0: never)
    restored    INTEGER NOT NULL DEFAULT 0, -- grants replayed into it since
    entries     INTEGER NOT NULL DEFAULT 0  -- live quota_log rows: an emptied log is a loss, not an empty day
) STRICT;

-- Each limit's definition, as the processes spending from it agreed. A
-- process with another window for the same name would prune the others'
-- entries, so it is refused while the limit holds entries.
CREATE TABLE quota_limits (
    credential TEXT    NOT NULL,
    limit_name TEXT    NOT NULL,
    units      INTEGER NOT NULL,
    window_us  INTEGER NOT NULL,
    PRIMARY KEY (credential, limit_name)
) STRICT, WITHOUT ROWID;

-- The ledger counts a window by summing its entries (quota_log_by_time
-- covers it): a running total cannot tell a pruned entry from one a clock
-- jump hid, and pruning now keeps entries well past their window.
DROP TABLE quota_totals;

-- The leader lease of `ytrend run` replicas sharing this archive's ledger.
-- token grows with every new leader and fences reservations made for it.
CREATE TABLE quota_lease (
    credential TEXT    PRIMARY KEY,
    holder     TEXT    NOT NULL,          -- '' when released
    token      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL           -- host clock, unix microseconds
) STRICT;

-- A run of a replica that lost the leader lease ends as 'fenced'. SQLite
-- cannot change a CHECK constraint in place, so runs is rebuilt.
CREATE TABLE runs_new (
    id             INTEGER PRIMARY KEY,
    region         TEXT    NOT NULL,
    triggered_by   TEXT    NOT NULL CHECK (triggered_by IN ('schedule', 'cli')),
    owner          TEXT    NOT NULL,
    started_at     INTEGER NOT NULL,
    finished_at    INTEGER,
    status         TEXT    NOT NULL DEFAULT 'running'
                   CHECK (status IN ('running', 'ok', 'stopped_quota', 'failed', 'interrupted', 'fenced')),
    pages          INTEGER NOT NULL DEFAULT 0,
    videos         INTEGER NOT NULL DEFAULT 0,
    new_videos     INTEGER NOT NULL DEFAULT 0,
    updated_videos INTEGER NOT NULL DEFAULT 0,
    units          INTEGER NOT NULL DEFAULT 0,
    refused_by     TEXT    NOT NULL DEFAULT '',
    retry_at       INTEGER,
    error          TEXT    NOT NULL DEFAULT '',
    last_page_at   INTEGER,
    min_video      INTEGER
) STRICT;
INSERT INTO runs_new SELECT * FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_region ON runs (region, id);
CREATE INDEX runs_running ON runs (owner) WHERE status = 'running';
CREATE INDEX runs_last_page ON runs (last_page_at);
