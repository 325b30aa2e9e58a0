--
-- bloomidx on partitioned tables: CREATE INDEX on the parent makes one
-- index per partition, also for partitions created or attached later;
-- partition pruning leaves per-partition bitmap scans; every answer equals
-- a sequential scan's.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
DROP SCHEMA IF EXISTS bloomidx_partition CASCADE;
CREATE SCHEMA bloomidx_partition;
RESET client_min_messages;
SET search_path = bloomidx_partition, public;

-- The index tree under a partitioned index: each index, its parent index,
-- the table it is on, its access method, and whether it is valid.
CREATE FUNCTION index_tree(idx regclass)
RETURNS TABLE (index regclass, parent_index regclass, on_table regclass,
			   am name, level int, valid bool)
LANGUAGE sql AS $$
	SELECT t.relid, t.parentrelid, i.indrelid, a.amname, t.level, i.indisvalid
	FROM pg_partition_tree(idx) t
	JOIN pg_class c ON c.oid = t.relid
	JOIN pg_am a ON a.oid = c.relam
	JOIN pg_index i ON i.indexrelid = t.relid
	ORDER BY t.level, t.relid::text
$$;

-- Every index on a table, or on the leaf partitions of a partitioned table,
-- and the partitioned index it is attached to, if any.
CREATE FUNCTION leaf_indexes(tbl regclass)
RETURNS TABLE (on_table regclass, index regclass, am name, attached_to regclass,
			   definition text)
LANGUAGE sql AS $$
	SELECT i.indrelid, i.indexrelid, a.amname, inh.inhparent::regclass,
		   regexp_replace(pg_get_indexdef(i.indexrelid), '^.* USING ', 'USING ')
	FROM pg_index i
	JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam
	LEFT JOIN pg_inherits inh ON inh.inhrelid = i.indexrelid
	WHERE c.relkind = 'i'
	  AND i.indrelid IN (SELECT relid FROM pg_partition_tree(tbl) WHERE isleaf
						 UNION ALL SELECT tbl)
	ORDER BY i.indrelid::regclass::text, i.indexrelid::regclass::text
$$;

-- Number of rows of a table.
CREATE FUNCTION row_count(tbl regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s', tbl) INTO n;
	RETURN n;
END
$$;

-- Run query q twice, once as planned (after counting the bitmap scans of
-- bloomidx indexes in its plan) and once with index and bitmap scans
-- disabled, and compare the two answers as multisets of rows.
CREATE FUNCTION check_query(q text,
							OUT nrows bigint, OUT bloomidx_scans int,
							OUT same_as_seqscan bool)
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	idx text;
	diff bigint;
BEGIN
	bloomidx_scans := 0;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		idx := substring(line FROM 'Bitmap Index Scan on (\S+)');
		IF idx IS NOT NULL AND
		   (SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
			WHERE c.oid = idx::regclass) = 'bloomidx' THEN
			bloomidx_scans := bloomidx_scans + 1;
		END IF;
	END LOOP;
	EXECUTE 'CREATE TEMP TABLE check_indexed AS ' || q;
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', 'off', true);
	PERFORM set_config('enable_seqscan', 'on', true);
	EXECUTE 'CREATE TEMP TABLE check_seqscan AS ' || q;
	PERFORM set_config('enable_bitmapscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_indexonlyscan', 'on', true);
	SELECT count(*) INTO nrows FROM check_seqscan;
	SELECT count(*) INTO diff FROM (
		(TABLE check_indexed EXCEPT ALL TABLE check_seqscan)
		UNION ALL
		(TABLE check_seqscan EXCEPT ALL TABLE check_indexed)) d;
	same_as_seqscan := diff = 0;
	DROP TABLE check_indexed, check_seqscan;
END
$$;

-- Orders by region; region 3 is itself partitioned by hash of customer.
CREATE TABLE orders (
	id int NOT NULL,
	region int NOT NULL,
	customer int,
	product int,
	status text
) PARTITION BY LIST (region);
CREATE TABLE orders_r1 PARTITION OF orders FOR VALUES IN (1);
CREATE TABLE orders_r2 PARTITION OF orders FOR VALUES IN (2);
CREATE TABLE orders_r3 PARTITION OF orders FOR VALUES IN (3)
	PARTITION BY HASH (customer);
CREATE TABLE orders_r3_h0 PARTITION OF orders_r3
	FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE orders_r3_h1 PARTITION OF orders_r3
	FOR VALUES WITH (MODULUS 2, REMAINDER 1);

INSERT INTO orders
SELECT i, 1 + i % 3, i % 101, i % 13,
	   CASE WHEN i % 11 = 0 THEN NULL ELSE 's' || i % 5 END
FROM generate_series(1, 6000) i;

-- One CREATE INDEX on the parent: a bloomidx index on every leaf, and a
-- partitioned index for the sub-partitioned region 3.
CREATE INDEX orders_bloom ON orders USING bloomidx (customer, product, status);
SELECT * FROM index_tree('orders_bloom');

-- Partitions added later get their index too.
-- 1. CREATE TABLE ... PARTITION OF: the index is created with the table.
CREATE TABLE orders_r4 PARTITION OF orders FOR VALUES IN (4);
INSERT INTO orders
SELECT i, 4, i % 101, i % 13, 's' || i % 5 FROM generate_series(6001, 7000) i;
-- 2. ATTACH PARTITION of a table with no index: the index is built.
CREATE TABLE orders_r5 (LIKE orders);
INSERT INTO orders_r5
SELECT i, 5, i % 101, i % 13, 's' || i % 5 FROM generate_series(7001, 8000) i;
ALTER TABLE orders ATTACH PARTITION orders_r5 FOR VALUES IN (5);
-- 3. ATTACH PARTITION of a table that has a matching bloomidx index (same
--    columns, operator classes and access method): that index is adopted,
--    no second one is built.  Index options are not part of the match, so
--    an index with its own signature length is adopted as it is.
CREATE TABLE orders_r6 (LIKE orders);
INSERT INTO orders_r6
SELECT i, 6, i % 101, i % 13, 's' || i % 5 FROM generate_series(8001, 9000) i;
CREATE INDEX orders_r6_own ON orders_r6 USING bloomidx (customer, product, status)
	WITH (length = 128);
ALTER TABLE orders ATTACH PARTITION orders_r6 FOR VALUES IN (6);
-- 4. ATTACH PARTITION of a table whose indexes do not match (a bloomidx
--    index on other columns, a btree on the same columns): a bloomidx index
--    is built, and the others stay as they are, attached to nothing.
CREATE TABLE orders_r7 (LIKE orders);
INSERT INTO orders_r7
SELECT i, 7, i % 101, i % 13, 's' || i % 5 FROM generate_series(9001, 10000) i;
CREATE INDEX orders_r7_two ON orders_r7 USING bloomidx (customer, product);
CREATE INDEX orders_r7_btree ON orders_r7 USING btree (customer, product, status);
ALTER TABLE orders ATTACH PARTITION orders_r7 FOR VALUES IN (7);
-- Rows inserted through the parent after that land in the partitions'
-- indexes.
INSERT INTO orders
SELECT i, 1 + i % 7, i % 101, i % 13, 's' || i % 5
FROM generate_series(10001, 11400) i;

SELECT * FROM index_tree('orders_bloom');
SELECT * FROM leaf_indexes('orders');
-- The indexes that did not match play no part in what follows.
DROP INDEX orders_r7_two, orders_r7_btree;

-- bloomidx_stats works on each partition's index: one index tuple per row
-- of its partition, and the adopted index keeps its own signature length.
-- A partitioned index has no pages of its own: its row says so.
SELECT t.relid::regclass AS index, s.live_tuples,
	   row_count(i.indrelid) AS partition_rows, s.signature_bits,
	   s.bits_per_column, s.data_pages > 0 AS has_data_pages
FROM pg_partition_tree('orders_bloom') t
JOIN pg_index i ON i.indexrelid = t.relid,
LATERAL bloomidx_stats(t.relid) s
WHERE t.isleaf
ORDER BY t.relid::regclass::text;
SELECT layout, meta_pages, data_pages, live_tuples FROM bloomidx_stats('orders_bloom');
SELECT layout, meta_pages, data_pages, live_tuples FROM bloomidx_stats('orders_r3_customer_product_status_idx');
\set VERBOSITY terse
SELECT bloomidx_check('orders_bloom');
\set VERBOSITY default
-- An UPDATE of the partition key moves rows to another partition, and into
-- that partition's index.
UPDATE orders SET region = 6 WHERE region = 1 AND customer = 7;

ANALYZE orders;

-- Partition pruning at plan time: only the matching partitions are
-- scanned, each through its own bloomidx index.
EXPLAIN (COSTS OFF)
SELECT * FROM orders WHERE region = 2 AND customer = 7 AND product = 3;
EXPLAIN (COSTS OFF)
SELECT * FROM orders WHERE region IN (1, 6) AND product = 3 AND status = 's4';
-- The hash sub-partitions of region 3 are pruned on customer.
EXPLAIN (COSTS OFF)
SELECT * FROM orders WHERE region = 3 AND customer = 7 AND status = 's2';
-- No partition key: every partition is scanned (of region 3, the one hash
-- sub-partition that can hold customer 7), each by its own index.
EXPLAIN (COSTS OFF)
SELECT * FROM orders WHERE customer = 7 AND product = 7;

-- Partition pruning at run time: a generic plan removes the subplans of the
-- other partitions at executor start-up.
SET plan_cache_mode = force_generic_plan;
PREPARE orders_q(int, int, int) AS
	SELECT * FROM orders WHERE region = $1 AND customer = $2 AND product = $3;
EXPLAIN (COSTS OFF) EXECUTE orders_q(5, 7, 7);
SELECT count(*) FROM orders WHERE region = 5 AND customer = 7 AND product = 7;
EXECUTE orders_q(5, 7, 7);
DEALLOCATE orders_q;
RESET plan_cache_mode;

-- Answers equal the sequential scan's: equality, = ANY and IS NULL on
-- subsets of the columns, with and without the partition key.
SELECT q, r.*
FROM unnest(ARRAY[
	'SELECT * FROM orders WHERE region = 2 AND customer = 7 AND product = 3',
	'SELECT * FROM orders WHERE region IN (1, 6) AND product = 3 AND status = ''s4''',
	'SELECT * FROM orders WHERE region = 3 AND customer = 7 AND status = ''s2''',
	'SELECT * FROM orders WHERE customer = 7 AND product = 7',
	'SELECT * FROM orders WHERE customer = 40 AND status = ''s0''',
	'SELECT * FROM orders WHERE customer = ANY (ARRAY[1, 2, 3]) AND product = 1',
	'SELECT * FROM orders WHERE customer = 10 AND status IS NULL',
	'SELECT * FROM orders WHERE region = 7 AND customer = 50 AND product = 11 AND status = ''s1''',
	'SELECT * FROM orders WHERE customer = 1000 AND product = 1'
]) q, check_query(q) r;

-- bloomidx_check, with heapallindexed, passes on every partition's index
-- after the inserts through the parent and the rows moved by UPDATE.
SELECT t.relid::regclass AS index, 'checked' AS bloomidx_check
FROM pg_partition_tree('orders_bloom') t,
LATERAL bloomidx_check(t.relid, heapallindexed => true)
WHERE t.isleaf
ORDER BY t.relid::regclass::text;

-- CREATE INDEX ON ONLY the parent, then one index per partition (which may
-- be built CONCURRENTLY, one at a time), attached with ALTER INDEX: the
-- parent index is valid once every partition has one.
CREATE TABLE events (id int, kind int, source int, target int)
	PARTITION BY RANGE (id);
CREATE TABLE events_p1 PARTITION OF events FOR VALUES FROM (0) TO (1000);
CREATE TABLE events_p2 PARTITION OF events FOR VALUES FROM (1000) TO (2000);
INSERT INTO events SELECT i, i % 7, i % 31, i % 37 FROM generate_series(0, 1999) i;
CREATE INDEX events_bloom ON ONLY events USING bloomidx (kind, source, target);
SELECT * FROM index_tree('events_bloom');
CREATE INDEX CONCURRENTLY events_p1_bloom ON events_p1 USING bloomidx (kind, source, target);
ALTER INDEX events_bloom ATTACH PARTITION events_p1_bloom;
SELECT * FROM index_tree('events_bloom');
CREATE INDEX CONCURRENTLY events_p2_bloom ON events_p2 USING bloomidx (kind, source, target);
ALTER INDEX events_bloom ATTACH PARTITION events_p2_bloom;
SELECT * FROM index_tree('events_bloom');
ANALYZE events;
EXPLAIN (COSTS OFF)
SELECT * FROM events WHERE source = 5 AND target = 6;
SELECT * FROM check_query('SELECT * FROM events WHERE source = 5 AND target = 6');
-- An index on other columns cannot be attached.
CREATE INDEX events_p2_other ON events_p2 USING bloomidx (kind, source);
\set VERBOSITY terse
ALTER INDEX events_bloom ATTACH PARTITION events_p2_other;
\set VERBOSITY default

-- DETACH PARTITION keeps the partition's index, now standing alone.
ALTER TABLE orders DETACH PARTITION orders_r7;
SELECT * FROM index_tree('orders_bloom') WHERE on_table = 'orders_r7'::regclass;
SELECT * FROM leaf_indexes('orders_r7');
SELECT * FROM check_query('SELECT * FROM orders_r7 WHERE customer = 50 AND product = 4');

-- Dropping the parent index drops every partition's index with it, the
-- adopted one included; the detached partition keeps its own.
DROP INDEX orders_bloom;
SELECT * FROM leaf_indexes('orders');
SELECT * FROM leaf_indexes('orders_r7');

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA bloomidx_partition CASCADE;
RESET client_min_messages;
