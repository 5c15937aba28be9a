-- 0010_quota_mirror: each `ytrend run` keeps a copy of the whole shared log.
--
-- A process's own record (quota_grants) restores only its own grants after
-- the ledger loses its books. The mirror holds every process's grants, as
-- copied from the shared log on each epoch check (the entries since the last
-- copy, the whole log at each audit), so that a loss is restored even for the
-- processes that never run again. Rows are kept for their limit's window and
-- pruned after it on the ledger's clock.
CREATE TABLE quota_mirror (
    credential TEXT    NOT NULL,
    limit_name TEXT    NOT NULL,
    id         TEXT    NOT NULL,          -- reservation id
    cost       INTEGER NOT NULL,          -- units it holds in this limit
    at         INTEGER NOT NULL,          -- grant time, microseconds of the ledger's clock
    PRIMARY KEY (credential, limit_name, id)
) STRICT, WITHOUT ROWID;

CREATE INDEX quota_mirror_by_time ON quota_mirror (credential, at);
