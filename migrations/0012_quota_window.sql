-- 0012_quota_window: the embedded ledger keeps each limit's window total
-- instead of summing every entry in it on every call (issue 21).
--
-- A row holds the sum of a limit's quota_log entries granted after a point
-- in time, cutoff: used = SUM(cost) WHERE at > cutoff. The triggers below
-- keep that equal for every write to the log, whoever makes it. A call
-- moves the cutoff to its own window's start (now - window) by adding or
-- taking away only the entries between the old and the new cutoff: one or
-- two a call at a steady rate, however full the window.
--
-- Nothing here is pruned by the clock, which is what the per-limit total of
-- 0002 got wrong (0003 dropped it): a host clock that jumps forward moves
-- the cutoff past entries the log still keeps, and a jump back moves it
-- back over them, adding them again. A jump costs what it crosses.

CREATE TABLE quota_window (
    credential TEXT    NOT NULL,
    limit_name TEXT    NOT NULL,
    cutoff     INTEGER NOT NULL, -- microseconds; the entries after it are counted
    used       INTEGER NOT NULL, -- SUM(cost) of quota_log's entries of the limit with at > cutoff
    PRIMARY KEY (credential, limit_name)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER quota_log_window_insert AFTER INSERT ON quota_log BEGIN
    UPDATE quota_window SET used = used + NEW.cost
        WHERE credential = NEW.credential AND limit_name = NEW.limit_name AND NEW.at > cutoff;
END;

CREATE TRIGGER quota_log_window_delete AFTER DELETE ON quota_log BEGIN
    UPDATE quota_window SET used = used - OLD.cost
        WHERE credential = OLD.credential AND limit_name = OLD.limit_name AND OLD.at > cutoff;
END;

-- Nothing updates quota_log in place; should anything, it is a delete and
-- an insert.
CREATE TRIGGER quota_log_window_update AFTER UPDATE ON quota_log BEGIN
    UPDATE quota_window SET used = used - OLD.cost
        WHERE credential = OLD.credential AND limit_name = OLD.limit_name AND OLD.at > cutoff;
    UPDATE quota_window SET used = used + NEW.cost
        WHERE credential = NEW.credential AND limit_name = NEW.limit_name AND NEW.at > cutoff;
END;
