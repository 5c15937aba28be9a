-- 0012_quota_buckets: the embedded ledger counts a window from time buckets
-- instead of summing every entry in it (issue 21).
--
-- A bucket is the sum of a limit's quota_log entries whose grant time falls
-- in one 128th of the limit's window: bucket = at / (window_us / 128). A
-- window's usage is the buckets wholly inside it plus the few entries of the
-- one it cuts, read from quota_log: exact, in about 128 + 1/128 of the
-- window's rows instead of all of them.
--
-- The buckets are keyed by the entries' own times, never by the clock, and
-- these triggers keep them equal to quota_log's GROUP BY for every write,
-- whoever makes it: a host clock that jumps forward and back changes nothing
-- in them. That is what the 0003 comment asked of a running total and the
-- per-limit total could not give: it was decremented by pruning, so an entry
-- a forward jump hid could not be told from one that was gone.

CREATE TABLE quota_buckets (
    credential TEXT    NOT NULL,
    limit_name TEXT    NOT NULL,
    bucket     INTEGER NOT NULL, -- at / max(1, window_us / 128) of the limit's quota_limits row
    used       INTEGER NOT NULL, -- SUM(cost) of its entries
    entries    INTEGER NOT NULL, -- COUNT(*) of its entries
    PRIMARY KEY (credential, limit_name, bucket)
) STRICT, WITHOUT ROWID;

-- An entry of a limit with no stored definition has no bucket yet: the
-- definition's insert below builds them all.
CREATE TRIGGER quota_log_bucket_insert AFTER INSERT ON quota_log BEGIN
    INSERT INTO quota_buckets (credential, limit_name, bucket, used, entries)
        SELECT NEW.credential, NEW.limit_name, NEW.at / max(1, window_us / 128), NEW.cost, 1
        FROM quota_limits WHERE credential = NEW.credential AND limit_name = NEW.limit_name
        ON CONFLICT DO UPDATE SET used = used + excluded.used, entries = entries + 1;
END;

CREATE TRIGGER quota_log_bucket_delete AFTER DELETE ON quota_log BEGIN
    UPDATE quota_buckets SET used = used - OLD.cost, entries = entries - 1
        WHERE credential = OLD.credential AND limit_name = OLD.limit_name
        AND bucket = OLD.at / (SELECT max(1, window_us / 128) FROM quota_limits
                               WHERE credential = OLD.credential AND limit_name = OLD.limit_name);
    DELETE FROM quota_buckets
        WHERE credential = OLD.credential AND limit_name = OLD.limit_name
        AND bucket = OLD.at / (SELECT max(1, window_us / 128) FROM quota_limits
                               WHERE credential = OLD.credential AND limit_name = OLD.limit_name)
        AND entries <= 0;
END;

-- Nothing updates quota_log in place; should anything, it is a delete and
-- an insert.
CREATE TRIGGER quota_log_bucket_update AFTER UPDATE ON quota_log BEGIN
    UPDATE quota_buckets SET used = used - OLD.cost, entries = entries - 1
        WHERE credential = OLD.credential AND limit_name = OLD.limit_name
        AND bucket = OLD.at / (SELECT max(1, window_us / 128) FROM quota_limits
                               WHERE credential = OLD.credential AND limit_name = OLD.limit_name);
    DELETE FROM quota_buckets
        WHERE credential = OLD.credential AND limit_name = OLD.limit_name
        AND bucket = OLD.at / (SELECT max(1, window_us / 128) FROM quota_limits
                               WHERE credential = OLD.credential AND limit_name = OLD.limit_name)
        AND entries <= 0;
    INSERT INTO quota_buckets (credential, limit_name, bucket, used, entries)
        SELECT NEW.credential, NEW.limit_name, NEW.at / max(1, window_us / 128), NEW.cost, 1
        FROM quota_limits WHERE credential = NEW.credential AND limit_name = NEW.limit_name
        ON CONFLICT DO UPDATE SET used = used + excluded.used, entries = entries + 1;
END;

-- A new definition, or a new window, rebuilds the limit's buckets from the
-- log: the bucket width follows the window.
CREATE TRIGGER quota_limits_bucket_insert AFTER INSERT ON quota_limits BEGIN
    DELETE FROM quota_buckets WHERE credential = NEW.credential AND limit_name = NEW.limit_name;
    INSERT INTO quota_buckets (credential, limit_name, bucket, used, entries)
        SELECT credential, limit_name, at / max(1, NEW.window_us / 128), SUM(cost), COUNT(*)
        FROM quota_log WHERE credential = NEW.credential AND limit_name = NEW.limit_name
        GROUP BY 3;
END;

CREATE TRIGGER quota_limits_bucket_window AFTER UPDATE OF window_us ON quota_limits
WHEN OLD.window_us != NEW.window_us BEGIN
    DELETE FROM quota_buckets WHERE credential = NEW.credential AND limit_name = NEW.limit_name;
    INSERT INTO quota_buckets (credential, limit_name, bucket, used, entries)
        SELECT credential, limit_name, at / max(1, NEW.window_us / 128), SUM(cost), COUNT(*)
        FROM quota_log WHERE credential = NEW.credential AND limit_name = NEW.limit_name
        GROUP BY 3;
END;

CREATE TRIGGER quota_limits_bucket_delete AFTER DELETE ON quota_limits BEGIN
    DELETE FROM quota_buckets WHERE credential = OLD.credential AND limit_name = OLD.limit_name;
END;

INSERT INTO quota_buckets (credential, limit_name, bucket, used, entries)
    SELECT l.credential, l.limit_name, l.at / max(1, d.window_us / 128), SUM(l.cost), COUNT(*)
    FROM quota_log l JOIN quota_limits d ON d.credential = l.credential AND d.limit_name = l.limit_name
    GROUP BY 1, 2, 3;
