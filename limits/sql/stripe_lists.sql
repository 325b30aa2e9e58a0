--
-- The stripe lists of the sliced layout, on a build of bloomidx made with
-- -DBLOOMIDX_SMALL_LIMITS (scripts/test.sh, suite limits): two stripes a
-- stripe-list page and three pages, so the lists fill up after six
-- stripes (391,680 rows) instead of 1.04 million.  The lists grow page by
-- page, an index with no row numbers left refuses inserts, and VACUUM
-- drops the first list once its stripes are emptied, moving the oldest
-- live rows forward, so the index takes rows again.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

-- Count rows through the forced index and through a seq scan
CREATE FUNCTION sl_counts(cond text, OUT via_index bigint, OUT via_seqscan bigint)
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = on;
	EXECUTE 'SELECT count(*) FROM sl WHERE ' || cond INTO via_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'SELECT count(*) FROM sl WHERE ' || cond INTO via_seqscan;
END;
$$;

-- Rows in the index and in the table, the stripes in use and the row
-- numbers they span, and the index's own check (with heapallindexed)
CREATE FUNCTION sl_state(OUT live bigint, OUT rows bigint, OUT stripes bigint,
						 OUT first_row bigint, OUT next_row bigint, OUT checked boolean)
LANGUAGE plpgsql AS $$
BEGIN
	SELECT s.live_tuples, s.stripes, s.first_row, s.next_row
		INTO live, stripes, first_row, next_row
		FROM bloomidx_stats('sl_bx') s;
	SELECT count(*) INTO rows FROM sl;
	PERFORM bloomidx_check('sl_bx', heapallindexed => true);
	checked := true;
END;
$$;

CREATE TABLE sl (id int, a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO sl SELECT g, g % 1000, g % 7919 FROM generate_series(1, 250000) g;

-- A serial build: three full stripes on two stripe-list pages, the rest
-- of the rows pending.  Without summaries: the figures below count on the
-- pending list's room, which keys (format 4) make smaller
SET max_parallel_maintenance_workers = 0;
CREATE INDEX sl_bx ON sl USING bloomidx (a, b) WITH (layout = sliced, summaries = off);
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7');
SELECT * FROM sl_counts('a = 7 AND b = 7');
SELECT * FROM sl_counts('b IN (1, 7918, 4000)');

-- A parallel one (forced on this small table), the same
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
SET maintenance_work_mem = '256MB';
REINDEX INDEX sl_bx;
RESET min_parallel_table_scan_size;
RESET maintenance_work_mem;
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7 AND b = 7');

-- Serial again: which rows share a stripe decides what VACUUM does below
SET max_parallel_maintenance_workers = 0;
REINDEX INDEX sl_bx;

-- Merges add the fifth and sixth stripes, the third list page
INSERT INTO sl SELECT g, g % 1000, g % 7919 FROM generate_series(250001, 380000) g;
SELECT bloomidx_merge('sl_bx') >= 0 AS merged;
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7');
SELECT * FROM sl_counts('b = 7918');

-- No row numbers left: merges take what fits, the pending list fills up,
-- and then the index is full
\set VERBOSITY default
INSERT INTO sl SELECT g, g % 1000, g % 7919 FROM generate_series(380001, 700000) g;
\set VERBOSITY terse
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7');

-- VACUUM empties the first stripes (now dead) and drops their list page:
-- the index takes rows again
DELETE FROM sl WHERE id <= 200000;
VACUUM sl;
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7');
INSERT INTO sl SELECT g, g % 1000, g % 7919 FROM generate_series(380001, 580000) g;
SELECT bloomidx_merge('sl_bx') >= 0 AS merged;
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7');
SELECT * FROM sl_counts('a = 7 AND b = 7');

-- With the lists nearly full again, VACUUM moves the live rows of the
-- oldest stripes forward although none is dead: first_row moves on
VACUUM sl;
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7');
SELECT * FROM sl_counts('b IN (1, 7918, 4000)');
INSERT INTO sl SELECT g, g % 1000, g % 7919 FROM generate_series(580001, 590000) g;
SELECT bloomidx_merge('sl_bx') >= 0 AS merged;
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7');

-- REINDEX numbers the rows afresh, if they fit in six stripes and the
-- pending list
INSERT INTO sl SELECT g, g % 1000, g % 7919 FROM generate_series(590001, 760000) g;
\set VERBOSITY default
REINDEX INDEX sl_bx;
\set VERBOSITY terse
DELETE FROM sl WHERE id % 4 = 0;
REINDEX INDEX sl_bx;
SELECT * FROM sl_state();
SELECT * FROM sl_counts('a = 7 AND b = 7');
SELECT * FROM sl_counts('a = 7');

DROP TABLE sl;
DROP FUNCTION sl_counts(text);
DROP FUNCTION sl_state();
