--
-- The sliced layout on small tables: rows short of a full stripe stay in
-- pending pages, as the row layout stores them, so that a small table's
-- sliced index is no bigger than its row index; a build (serial or
-- parallel) that writes no full stripe, and the merges of an index built
-- so (its summaries sized on no full stripe), write the slices of full
-- stripes only.  A build past a stripe writes the rest of the rows into a
-- partial stripe (pending_short has the rest).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

-- Count rows through the forced index and through a seq scan
CREATE FUNCTION ss_counts(cond text, OUT via_index bigint, OUT via_seqscan bigint)
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = on;
	EXECUTE 'SELECT count(*) FROM ss WHERE ' || cond INTO via_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'SELECT count(*) FROM ss WHERE ' || cond INTO via_seqscan;
END;
$$;

CREATE TABLE ss (a int, b int, c int, d text) WITH (autovacuum_enabled = off);
INSERT INTO ss SELECT i, i % 97, i % 1009, 'd' || (i % 331) FROM generate_series(1, 1000) i;
CREATE INDEX ss_row ON ss USING bloomidx (a, b, c, d) WITH (layout = 'row');
CREATE INDEX ss_sliced ON ss USING bloomidx (a, b, c, d) WITH (layout = sliced);
ANALYZE ss;

-- Pages of the sliced index over pages of the row index, less the keys of
-- the pending rows (4 bytes a column, format 4), and where the sliced index
-- keeps its rows
CREATE FUNCTION ss_sizes(OUT ratio_ok boolean, OUT stripes bigint,
						 OUT pending_rows_only boolean, OUT live_ok boolean)
LANGUAGE sql AS $$
	SELECT (pg_relation_size('ss_sliced') - 4 * 4 * s.live_tuples)::float8 /
		   pg_relation_size('ss_row') <= 1.1,
		   s.stripes,
		   s.pending_pages = s.data_pages AND s.next_row = 0,
		   s.live_tuples = (SELECT count(*) FROM ss)
	FROM bloomidx_stats('ss_sliced') s;
$$;

-- 1,000 rows
SELECT * FROM ss_sizes();
SELECT bloomidx_check('ss_sliced', heapallindexed => true);

-- 10,000 rows: the index is still all pending pages, and the planner uses it
INSERT INTO ss SELECT i, i % 97, i % 1009, 'd' || (i % 331) FROM generate_series(1001, 10000) i;
REINDEX INDEX ss_row;
REINDEX INDEX ss_sliced;
ANALYZE ss;
SELECT * FROM ss_sizes();
DROP INDEX ss_row;
EXPLAIN (COSTS OFF) SELECT * FROM ss WHERE a = 4242;
EXPLAIN (COSTS OFF) SELECT * FROM ss WHERE b = 5 AND d = 'd5';
SELECT count(*) FROM ss WHERE a = 4242;
SELECT * FROM ss_counts('a = 4242');
SELECT * FROM ss_counts('b = 5 AND d = ''d5''');
SELECT * FROM ss_counts('b = 5');
SELECT * FROM ss_counts('c IN (3, 4) AND b = 3');

-- Inserts merge nothing while the pending rows cannot fill a stripe; once
-- they can, the merge that starts it measures the summaries' sizes on them
-- (the build saw too few rows), and the inserts fill it in small steps and
-- start the next as rows come
INSERT INTO ss SELECT i, i % 97, i % 1009, 'd' || (i % 331) FROM generate_series(10001, 50000) i;
SELECT stripes, next_row FROM bloomidx_stats('ss_sliced');
INSERT INTO ss SELECT i, i % 97, i % 1009, 'd' || (i % 331) FROM generate_series(50001, 100000) i;
SELECT stripes, pending_pages > 0 AS some_pending, next_row > 0 AS merging
FROM bloomidx_stats('ss_sliced');
SELECT * FROM ss_counts('a = 4242');
SELECT * FROM ss_counts('b = 5 AND d = ''d5''');
SELECT bloomidx_check('ss_sliced', heapallindexed => true);

-- VACUUM merges every pending row of an index with a stripe
VACUUM ss;
SELECT stripes, next_row % 65280 AS stripe_row, pending_pages > 0 AS some_pending
FROM bloomidx_stats('ss_sliced');
SELECT * FROM ss_counts('b = 5 AND d = ''d5''');
SELECT live_tuples = (SELECT count(*) FROM ss) AS one_tuple_per_row FROM bloomidx_stats('ss_sliced');

-- bloomidx_merge() merges every pending row: none is left
SELECT bloomidx_merge('ss_sliced') > 0 AS merged;
SELECT stripes, next_row = (SELECT count(*) FROM ss) AS all_merged, pending_pages
FROM bloomidx_stats('ss_sliced');
SELECT * FROM ss_counts('b = 5 AND d = ''d5''');
SELECT bloomidx_check('ss_sliced', heapallindexed => true);

-- A build writes one full stripe and the rest of the rows into a partial
-- one: no pending page
REINDEX INDEX ss_sliced;
SELECT stripes, next_row, pending_pages > 0 AS some_pending,
	   live_tuples = (SELECT count(*) FROM ss) AS one_tuple_per_row
FROM bloomidx_stats('ss_sliced');
SELECT * FROM ss_counts('a = 4242');
SELECT * FROM ss_counts('b = 5 AND d = ''d5''');
SELECT bloomidx_check('ss_sliced', heapallindexed => true);

-- So does a parallel build, whose participants' leftover rows are combined
SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
SET parallel_setup_cost = 0;
REINDEX INDEX ss_sliced;
RESET min_parallel_table_scan_size;
RESET max_parallel_maintenance_workers;
RESET parallel_setup_cost;
SELECT stripes, next_row, pending_pages > 0 AS some_pending,
	   live_tuples = (SELECT count(*) FROM ss) AS one_tuple_per_row
FROM bloomidx_stats('ss_sliced');
SELECT * FROM ss_counts('a = 4242');
SELECT * FROM ss_counts('c IN (3, 4) AND b = 3');
SELECT bloomidx_check('ss_sliced', heapallindexed => true);

DROP TABLE ss;
DROP FUNCTION ss_counts(text);
DROP FUNCTION ss_sizes();
