-- 0005: reserved for issue 13 (instances), which is on another branch.
--
-- This file only keeps the migration set gap-free on the branch that added
-- 0006 (categories, issue 11): it changes nothing. When issue 13's 0005 is
-- merged, this file is deleted in the same merge (two 0005 files are
-- rejected at start, so the merge cannot forget it).
SELECT 1;
