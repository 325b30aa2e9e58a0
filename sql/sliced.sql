--
-- The sliced layout: inserts through the pending pages and automatic
-- merges, a stripe emptied by VACUUM giving its live rows back, and the
-- errors of its option and of bloomidx_merge.
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

-- Every row arrives through the pending pages; inserts merge them into
-- the slices whenever a stripe's worth is pending
CREATE TABLE sl (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
CREATE INDEX sl_bix ON sl USING bloomidx (a, b, c) WITH (layout = sliced);
INSERT INTO sl SELECT i, i % 100, 'b' || i % 37, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 13 END
FROM generate_series(1, 140000) i;
SELECT * FROM sl_counts('a = 5 AND b = ''b7''');
SELECT * FROM sl_counts('c IS NULL AND a IN (10, 20, 30)');
SELECT * FROM sl_counts('b = ANY (''{b1,b2,b3}'') AND c = ANY (''{1,2}'')');
SELECT bloomidx_merge('sl_bix') > 0 AS merged_the_rest;
SELECT * FROM sl_counts('a = 5 AND b = ''b7''');

-- VACUUM: dead rows leave the TID maps; the first stripe, now mostly dead,
-- gives its live rows back through the pending pages
DELETE FROM sl WHERE id <= 65000 AND id % 10 <> 0;
VACUUM sl;
SELECT * FROM sl_counts('a = 5 AND b = ''b7''');
SELECT * FROM sl_counts('a = 10');
SELECT * FROM sl_counts('c IS NULL');
SELECT live_tuples = (SELECT count(*) FROM sl) AS one_tuple_per_row FROM bloomidx_stats('sl_bix');
SELECT bloomidx_check('sl_bix', heapallindexed => true);
UPDATE sl SET a = 1000 WHERE id % 1000 = 7;
SELECT * FROM sl_counts('a = 1000');
VACUUM sl;
SELECT * FROM sl_counts('a = 1000');
SELECT bloomidx_check('sl_bix', heapallindexed => true);

-- The cost model knows a sliced scan reads only the query's slices: beside
-- a row-layout index on the same columns, the planner takes the sliced one
CREATE INDEX sl_row ON sl USING bloomidx (a, b, c) WITH (layout = 'row');
ANALYZE sl;
EXPLAIN (COSTS OFF) SELECT * FROM sl WHERE a = 5 AND b = 'b7';
DROP INDEX sl_row;

-- A parallel build (forced on this small table; parallel_build shows the
-- workers planned): each participant writes full stripes, the leader
-- combines their leftover rows
SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
SET parallel_setup_cost = 0;
CREATE INDEX sl_par ON sl USING bloomidx (a, b, c) WITH (layout = sliced);
RESET min_parallel_table_scan_size;
RESET max_parallel_maintenance_workers;
RESET parallel_setup_cost;
SELECT live_tuples = (SELECT count(*) FROM sl) AS one_tuple_per_row FROM bloomidx_stats('sl_par');
SELECT bloomidx_check('sl_par', heapallindexed => true);
DROP INDEX sl_bix;
SELECT * FROM sl_counts('a = 5 AND b = ''b7''');
SELECT * FROM sl_counts('c IS NULL AND a IN (10, 20, 30)');
INSERT INTO sl VALUES (0, 5, 'b7', NULL);
SELECT * FROM sl_counts('a = 5 AND b = ''b7''');
DELETE FROM sl WHERE id = 0;
CREATE INDEX sl_bix ON sl USING bloomidx (a, b, c) WITH (layout = sliced);
DROP INDEX sl_par;

-- A table built before the index: rows go straight into the slices
CREATE INDEX sl_built ON sl USING bloomidx (a, b) WITH (layout = sliced, false_positive_rate = 0.001);
DROP INDEX sl_bix;
SELECT * FROM sl_counts('a = 5 AND b = ''b7''');
TRUNCATE sl;
SELECT * FROM sl_counts('a = 5');
INSERT INTO sl VALUES (1, 5, 'b7', NULL);
SELECT * FROM sl_counts('a = 5 AND b = ''b7''');

-- A signature longer than the sliced layout takes gets the row layout
CREATE INDEX sl_long ON sl USING bloomidx (a) WITH (layout = sliced, length = 2048);
SELECT signature_bits, layout FROM bloomidx_stats('sl_long');
DROP INDEX sl_long;

-- Errors
CREATE INDEX sl_bad ON sl USING bloomidx (a) WITH (layout = columnar);
CREATE INDEX sl_row ON sl USING bloomidx (a) WITH (layout = 'row');
SELECT bloomidx_merge('sl_row');
SELECT bloomidx_merge('sl');

DROP TABLE sl;
DROP FUNCTION sl_counts(text);
