-- The quota package's tables: the embedded ledger (the reservation log when no
-- Redis is configured), upstream "quota exhausted" marks, and the journal of
-- fail-open grants waiting to be added to the backend. Timestamps are integer
-- microseconds since the Unix epoch.

-- One row per reservation and limit. The reservation's identity is its ID
-- together with its cost, exactly like the Redis member "<id>|<cost>".
CREATE TABLE quota_log (
    credential TEXT    NOT NULL,
    limit_name TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    cost       INTEGER NOT NULL CHECK (cost > 0),
    at         INTEGER NOT NULL, -- grant time, ledger clock
    PRIMARY KEY (credential, limit_name, id, cost)
) STRICT, WITHOUT ROWID;

-- Pruning and the Retry-After walk read a limit's entries oldest first.
CREATE INDEX quota_log_by_time ON quota_log (credential, limit_name, at);

-- The running sum of quota_log.cost per limit, so a reservation reads its
-- limit's usage in O(1) instead of summing up to a day of entries.
CREATE TABLE quota_totals (
    credential TEXT    NOT NULL,
    limit_name TEXT    NOT NULL,
    used       INTEGER NOT NULL CHECK (used >= 0),
    PRIMARY KEY (credential, limit_name)
) STRICT, WITHOUT ROWID;

-- Upstream said quotaExceeded: reservations are refused until `until`. call
-- is '' for a mark on the whole credential, or the one API call it blocks
-- (Google's 2026 pricing meters search.list in a bucket of its own).
CREATE TABLE quota_marks (
    credential TEXT    NOT NULL,
    call       TEXT    NOT NULL,
    until      INTEGER NOT NULL,
    reason     TEXT    NOT NULL,
    marked_at  INTEGER NOT NULL,
    PRIMARY KEY (credential, call)
) STRICT, WITHOUT ROWID;

-- Fail-open grants made while the backend was unreachable, replayed into it
-- (and deleted here) once it answers again.
CREATE TABLE quota_journal (
    credential TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    call       TEXT    NOT NULL,
    costs      TEXT    NOT NULL, -- JSON object: limit name -> units charged
    at         INTEGER NOT NULL, -- grant time, client clock
    PRIMARY KEY (credential, id)
) STRICT;
