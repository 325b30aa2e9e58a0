--
-- Index maintenance: space reuse after DELETE + VACUUM, VACUUM FULL,
-- TRUNCATE, REINDEX, unlogged tables, partitioned tables, expression and
-- partial indexes, and the plan shapes of every query form.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

CREATE TABLE m (id int, a int, b text, c int);
INSERT INTO m SELECT i, i % 100, 'b' || i % 37, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 13 END
FROM generate_series(1, 50000) i;
-- The row layout, whose space reuse this test checks below (the sliced
-- layout's, a stripe at a time, is checked by t/004_bloat.pl)
CREATE INDEX m_bix ON m USING bloomidx (a, b, c) WITH (layout = 'row');

-- Count rows through the forced index and through a seq scan
CREATE FUNCTION m_counts(cond text, OUT via_index bigint, OUT via_seqscan bigint)
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = on;
	EXECUTE 'SELECT count(*) FROM m WHERE ' || cond INTO via_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'SELECT count(*) FROM m WHERE ' || cond INTO via_seqscan;
END;
$$;

-- Plan shapes: every form is one Bitmap Index Scan on the index
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE a = 5;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE a = 5 AND b = 'b7';
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE a IN (1, 2, 3);
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE a = ANY ('{1,2,3}') AND b IN ('b1', 'b2');
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE c IS NULL;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE c IS NULL AND a = ANY ('{10,11}') AND b = 'b10';
RESET enable_seqscan;

SELECT * FROM m_counts('a = 5 AND b = ''b7''');
SELECT * FROM m_counts('c IS NULL AND a IN (10, 20)');

-- Space of deleted rows is reused: DELETE half, VACUUM, reinsert as many
SELECT pg_relation_size('m_bix') AS size_before \gset
DELETE FROM m WHERE id % 2 = 0;
VACUUM m;
INSERT INTO m SELECT i, i % 100, 'b' || i % 37, i % 13 FROM generate_series(50001, 75000) i;
SELECT pg_relation_size('m_bix') - :size_before AS growth;
SELECT * FROM m_counts('a = 5 AND b = ''b7''');

-- Emptied pages are recycled: delete everything, vacuum, refill
DELETE FROM m;
VACUUM m;
INSERT INTO m SELECT i, i % 100, 'b' || i % 37, i % 13 FROM generate_series(1, 50000) i;
SELECT pg_relation_size('m_bix') - :size_before AS growth;
SELECT * FROM m_counts('a = 5 AND b = ''b7''');

-- VACUUM FULL, TRUNCATE and REINDEX rebuild the index
VACUUM FULL m;
SELECT * FROM m_counts('a = 5 AND b = ''b7''');
REINDEX INDEX m_bix;
SELECT * FROM m_counts('a = 5 AND b = ''b7''');
TRUNCATE m;
SELECT * FROM m_counts('a = 5');
INSERT INTO m VALUES (1, 5, 'b7', NULL), (2, 5, 'b8', 1);
SELECT * FROM m_counts('a = 5 AND b = ''b7''');
SELECT * FROM m_counts('c IS NULL');

-- A parallel build (forced on this small table; parallel_build shows the
-- workers planned) gives an index with every row: the same answers, one
-- tuple a row
INSERT INTO m SELECT i, i % 100, 'b' || i % 37, i % 13 FROM generate_series(3, 60000) i;
SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
SET parallel_setup_cost = 0;
CREATE INDEX m_par ON m USING bloomidx (a, b, c);
RESET min_parallel_table_scan_size;
RESET max_parallel_maintenance_workers;
RESET parallel_setup_cost;
SELECT live_tuples = (SELECT count(*) FROM m) AS one_tuple_per_row FROM bloomidx_stats('m_par');
SELECT bloomidx_check('m_par', heapallindexed => true);
DROP INDEX m_bix;
SELECT * FROM m_counts('a = 5 AND b = ''b7''');
SELECT * FROM m_counts('c IS NULL');
INSERT INTO m VALUES (0, 5, 'b7', NULL);
SELECT * FROM m_counts('a = 5 AND b = ''b7''');
DROP INDEX m_par;
DELETE FROM m WHERE id > 2;
CREATE INDEX m_bix ON m USING bloomidx (a, b, c);

-- Expression and partial indexes
INSERT INTO m SELECT i, i % 100, 'b' || i % 37, i % 13 FROM generate_series(3, 20000) i;
CREATE INDEX m_expr ON m USING bloomidx (lower(b), (a % 10)) WHERE id > 100;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE lower(b) = 'b7' AND a % 10 = 3 AND id > 100;
RESET enable_seqscan;
SELECT * FROM m_counts('lower(b) = ''b7'' AND a % 10 = 3 AND id > 100');
DROP INDEX m_expr;

-- An unlogged table's index
CREATE UNLOGGED TABLE mu (a int, b text);
CREATE INDEX mu_bix ON mu USING bloomidx (a, b);
INSERT INTO mu SELECT i % 10, 'x' || i % 3 FROM generate_series(1, 1000) i;
SET enable_seqscan = off;
SELECT count(*) FROM mu WHERE a = 3 AND b = 'x1';
RESET enable_seqscan;
SELECT count(*) FROM mu WHERE a = 3 AND b = 'x1';
DROP TABLE mu;

-- A partitioned table: the index on the parent makes one per partition
CREATE TABLE mp (k int, a int, b text) PARTITION BY RANGE (k);
CREATE TABLE mp1 PARTITION OF mp FOR VALUES FROM (0) TO (1000);
CREATE TABLE mp2 PARTITION OF mp FOR VALUES FROM (1000) TO (2000);
CREATE INDEX mp_bix ON mp USING bloomidx (a, b);
INSERT INTO mp SELECT i, i % 10, 'y' || i % 4 FROM generate_series(0, 1999) i;
SELECT c.relname, am.amname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	JOIN pg_am am ON am.oid = c.relam
WHERE i.inhparent = 'mp_bix'::regclass ORDER BY 1;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM mp WHERE a = 3 AND b = 'y3';
SELECT count(*) FROM mp WHERE a = 3 AND b = 'y3';
RESET enable_seqscan;
SELECT count(*) FROM mp WHERE a = 3 AND b = 'y3';
DROP TABLE mp;

-- An index on an empty table, and on a table of NULLs only
CREATE TABLE me (a int, b text);
CREATE INDEX me_bix ON me USING bloomidx (a, b);
SET enable_seqscan = off;
SELECT count(*) FROM me WHERE a = 1;
INSERT INTO me SELECT NULL, NULL FROM generate_series(1, 500);
SELECT count(*) FROM me WHERE a IS NULL AND b IS NULL;
SELECT count(*) FROM me WHERE a = 1;
RESET enable_seqscan;
DROP TABLE me;

DROP FUNCTION m_counts(text);
DROP TABLE m;
