--
-- The sliced layout keeps its pending list short once an index has
-- stripes (every scan reads every pending page): a build past a stripe
-- writes its leftover rows into a partial stripe, inserts start new
-- stripes a merge step at a time, VACUUM merges every pending row.  An
-- index of a table smaller than a stripe keeps its rows in pending pages.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

-- Count rows through the forced index and through a seq scan
CREATE FUNCTION ps_counts(cond text, OUT via_index bigint, OUT via_seqscan bigint)
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = on;
	EXECUTE 'SELECT count(*) FROM ps WHERE ' || cond INTO via_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'SELECT count(*) FROM ps WHERE ' || cond INTO via_seqscan;
END;
$$;

CREATE TABLE ps (a int, b int, c text) WITH (autovacuum_enabled = off);
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(1, 70000) i;

-- Where an index keeps its rows: stripes, a few pending pages at most
-- (a step's rows and a stripe's allocation: a stripe's worth of rows
-- would take some 200), rows in stripes, every row once
CREATE FUNCTION ps_where(idx regclass, OUT stripes bigint,
						 OUT few_pending boolean, OUT next_row bigint,
						 OUT one_tuple_per_row boolean)
LANGUAGE sql AS $$
	SELECT s.stripes, s.pending_pages <= 8, s.next_row,
		   s.live_tuples = (SELECT count(*) FROM ps)
	FROM bloomidx_stats(idx) s;
$$;

-- A build of a bit more than a stripe: one full stripe, then a partial
-- one of the other 4,720 rows, no pending page
CREATE INDEX ps_bx ON ps USING bloomidx (a, b, c);
SELECT stripes, pending_pages, next_row FROM bloomidx_stats('ps_bx');
SELECT * FROM ps_counts('a = 69999');
SELECT * FROM ps_counts('b = 7 AND c = ''c7''');
SELECT bloomidx_check('ps_bx', heapallindexed => true);

-- So does a parallel build, whose participants' leftover rows are combined
SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
SET parallel_setup_cost = 0;
REINDEX INDEX ps_bx;
RESET min_parallel_table_scan_size;
RESET max_parallel_maintenance_workers;
RESET parallel_setup_cost;
SELECT stripes, pending_pages, next_row FROM bloomidx_stats('ps_bx');
SELECT * FROM ps_counts('a = 69999');
SELECT bloomidx_check('ps_bx', heapallindexed => true);

-- Inserts fill the partial stripe a merge step at a time, then start the
-- next one without waiting for a stripe's worth of pending rows: a
-- statement of many rows, then single-row statements
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(70001, 90000) i;
SELECT stripes, few_pending, next_row > 70000 AS merged, one_tuple_per_row
FROM ps_where('ps_bx');
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(90001, 140000) i;
SELECT stripes, few_pending, next_row > 130560 AS third_stripe_started
FROM ps_where('ps_bx');
DO $$
BEGIN
	FOR i IN 140001..142000 LOOP
		INSERT INTO ps VALUES (i, i % 1000, 'c' || (i % 777));
	END LOOP;
END;
$$;
SELECT stripes, few_pending, one_tuple_per_row FROM ps_where('ps_bx');
SELECT * FROM ps_counts('a = 141999');
SELECT * FROM ps_counts('a = 89999');
SELECT * FROM ps_counts('b = 7 AND c = ''c7''');
SELECT * FROM ps_counts('b = 7');
SELECT bloomidx_check('ps_bx', heapallindexed => true);

-- VACUUM merges every pending row of an index that has stripes
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(142001, 142100) i;
DELETE FROM ps WHERE a % 100 = 0;
VACUUM ps;
SELECT s.stripes, s.pending_pages, w.one_tuple_per_row
FROM bloomidx_stats('ps_bx') s, ps_where('ps_bx') w;
SELECT * FROM ps_counts('a = 142099');
SELECT * FROM ps_counts('a = 142100');
SELECT * FROM ps_counts('b = 7 AND c = ''c7''');
SELECT bloomidx_check('ps_bx', heapallindexed => true);

-- Without summaries, an index built on a table smaller than a stripe
-- keeps its rows pending until they fill one; once it has a stripe, its
-- pending list shrinks to a few pages (the merge steps outpace the
-- inserts) and stays short
DROP INDEX ps_bx;
TRUNCATE ps;
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(1, 10000) i;
CREATE INDEX ps_nosum ON ps USING bloomidx (a, b, c) WITH (summaries = off);
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(10001, 60000) i;
SELECT stripes, pending_pages = data_pages AS pending_only, next_row
FROM bloomidx_stats('ps_nosum');
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(60001, 150000) i;
SELECT stripes, few_pending, next_row > 65280 AS second_stripe_started
FROM ps_where('ps_nosum');
SELECT * FROM ps_counts('a = 149999');
SELECT * FROM ps_counts('a = 89999');
SELECT * FROM ps_counts('b = 7 AND c = ''c7''');
SELECT bloomidx_check('ps_nosum', heapallindexed => true);
DROP INDEX ps_nosum;

-- A table smaller than a stripe: its index has no stripe, after the build
-- as after inserts and VACUUM, its rows all in pending pages
TRUNCATE ps;
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(1, 10000) i;
CREATE INDEX ps_bx ON ps USING bloomidx (a, b, c);
SELECT stripes, pending_pages = data_pages AS pending_only, next_row
FROM bloomidx_stats('ps_bx');
INSERT INTO ps SELECT i, i % 1000, 'c' || (i % 777) FROM generate_series(10001, 30000) i;
DELETE FROM ps WHERE a % 100 = 0;
VACUUM ps;
SELECT stripes, pending_pages = data_pages AS pending_only, next_row
FROM bloomidx_stats('ps_bx');
SELECT * FROM ps_counts('a = 29999');
SELECT * FROM ps_counts('b = 7 AND c = ''c7''');
SELECT bloomidx_check('ps_bx', heapallindexed => true);

DROP TABLE ps;
DROP FUNCTION ps_counts(text);
DROP FUNCTION ps_where(regclass);
