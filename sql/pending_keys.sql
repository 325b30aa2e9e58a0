--
-- The keys of the sliced layout's pending rows: inserts after a build carry
-- them through the pending pages into merges; rows VACUUM moves back from
-- an emptied stripe have none and wait on pending pages of their own.  The
-- index's answers equal a seq scan's throughout.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

-- Count rows through the forced index and through a seq scan
CREATE FUNCTION pk_counts(cond text, OUT via_index bigint, OUT via_seqscan bigint)
LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = on;
	EXECUTE 'SELECT count(*) FROM pk WHERE ' || cond INTO via_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'SELECT count(*) FROM pk WHERE ' || cond INTO via_seqscan;
END;
$$;

-- The pending pages the metapage lists (pendingPages from byte 4228 of its
-- contents, nPending at 2176), read from the index's file after a
-- checkpoint: pages and rows, and those of them without keys (page flag
-- 0x100 in the special space; 8 kB pages, little-endian)
CREATE FUNCTION pk_pending(idx regclass, OUT pages int, OUT keyless_pages int,
						   OUT rows int, OUT keyless_rows int)
LANGUAGE sql AS $$
WITH f AS (SELECT pg_read_binary_file(pg_relation_filepath(idx)) AS b),
n AS (SELECT b, get_byte(b, 24 + 2176) + (get_byte(b, 24 + 2177) << 8) AS npending FROM f),
p AS (SELECT b, get_byte(b, 24 + 4228 + 4 * i) + (get_byte(b, 24 + 4229 + 4 * i) << 8) +
				(get_byte(b, 24 + 4230 + 4 * i) << 16) AS blk
	  FROM n, generate_series(0, npending - 1) i),
s AS (SELECT get_byte(b, blk * 8192 + 8188) + (get_byte(b, blk * 8192 + 8189) << 8) AS flags,
			 get_byte(b, blk * 8192 + 8184) + (get_byte(b, blk * 8192 + 8185) << 8) AS ntuples
	  FROM p)
SELECT count(*)::int, (count(*) FILTER (WHERE flags & 256 <> 0))::int,
	   coalesce(sum(ntuples), 0)::int,
	   coalesce(sum(ntuples) FILTER (WHERE flags & 256 <> 0), 0)::int
FROM s
$$;

-- A small table's index: its rows wait on pending pages
CREATE TABLE pk (id int, a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO pk SELECT i, i % 1000, i % 7 FROM generate_series(1, 1000) i;
CREATE INDEX pk_bx ON pk USING bloomidx (a, b) WITH (summaries = on);
SELECT version >= 4 AS with_keys FROM bloomidx_stats('pk_bx');
CHECKPOINT;
SELECT * FROM pk_pending('pk_bx');

-- Inserts of more than two stripes' worth (65,280 rows a stripe), merged
-- by the inserts' steps as they go; one row alone, and rows of a
-- subtransaction rolled back
INSERT INTO pk SELECT i, i % 1000, i % 7 FROM generate_series(1001, 150000) i;
INSERT INTO pk VALUES (150001, 5, 5);
BEGIN;
INSERT INTO pk SELECT i, i % 1000, i % 7 FROM generate_series(150002, 150100) i;
SAVEPOINT s;
INSERT INTO pk SELECT i, -1, -1 FROM generate_series(150101, 150200) i;
ROLLBACK TO s;
INSERT INTO pk SELECT i, i % 1000, i % 7 FROM generate_series(150101, 150150) i;
COMMIT;
SELECT stripes >= 2 AS merged_by_inserts FROM bloomidx_stats('pk_bx');
CHECKPOINT;
SELECT pages > 0 AS pending, keyless_pages, keyless_rows FROM pk_pending('pk_bx');
SELECT * FROM pk_counts('a = 5');
SELECT * FROM pk_counts('a = 5 AND b = 5');
SELECT * FROM pk_counts('a = -1');
SELECT * FROM pk_counts('a IN (1, 999) AND b = ANY (''{1,2}'')');
SELECT bloomidx_check('pk_bx', heapallindexed => true);
SELECT bloomidx_merge('pk_bx') > 0 AS merged_the_rest;
SELECT * FROM pk_counts('a = 5 AND b = 5');

-- VACUUM empties the first stripe, mostly dead: its live rows go back to
-- pending pages without keys, and VACUUM merges them with every pending
-- row (the merge that started the index's first stripe measured its
-- summaries' sizes on the pending rows: it starts stripes early since), so
-- none is left pending
DELETE FROM pk WHERE id <= 65000 AND id % 10 <> 0;
VACUUM pk;
CHECKPOINT;
SELECT * FROM pk_pending('pk_bx');
SELECT * FROM pk_counts('a = 5');
SELECT * FROM pk_counts('a = 10 AND b = 3');

-- Rows inserted now keep their keys
INSERT INTO pk SELECT i, i % 1000, i % 7 FROM generate_series(150201, 151200) i;
CHECKPOINT;
SELECT keyless_pages > 0 AS pages_without_keys, pages > keyless_pages AS pages_with_keys,
	   rows - keyless_rows AS rows_with_keys
FROM pk_pending('pk_bx');
SELECT * FROM pk_counts('a = 5');
SELECT * FROM pk_counts('a = 200 AND b = 5');
SELECT bloomidx_check('pk_bx', heapallindexed => true);

-- A merge takes both kinds
SELECT bloomidx_merge('pk_bx') > 0 AS merged_the_rest;
CHECKPOINT;
SELECT * FROM pk_pending('pk_bx');
SELECT * FROM pk_counts('a = 5');
SELECT * FROM pk_counts('a = 10 AND b = 3');
SELECT live_tuples = (SELECT count(*) FROM pk) AS one_tuple_per_row FROM bloomidx_stats('pk_bx');
SELECT bloomidx_check('pk_bx', heapallindexed => true);

-- Stripes that merges of inserted rows fill get complete summaries, from
-- the pending rows' keys: a query for a value no stripe holds reads only
-- the stripe pages and summaries, far fewer pages than through the same
-- index without summaries.  tenant in insertion order, 20,000 rows each;
-- the build (a stripe's worth) sizes the summaries of the stripes merges
-- start, the inserts then fill three and start a fourth.
CREATE TABLE pks (tenant int, v int) WITH (autovacuum_enabled = off);
INSERT INTO pks SELECT i / 20000, i % 1000 FROM generate_series(0, 69999) i;
CREATE INDEX pks_on ON pks USING bloomidx (tenant, v) WITH (summaries = on);
CREATE INDEX pks_off ON pks USING bloomidx (tenant, v) WITH (summaries = off);
INSERT INTO pks SELECT i / 20000, i % 1000 FROM generate_series(70000, 269999) i;
SELECT s.stripes AS stripes_on, o.stripes AS stripes_off, s.version, o.version
FROM bloomidx_stats('pks_on') s, bloomidx_stats('pks_off') o;

-- Shared buffers the bitmap index scan of an index hit for a query (the
-- table's other valid indexes made invalid meanwhile), and its count
CREATE FUNCTION pk_hits(idx regclass, q text, OUT hits bigint, OUT n bigint)
LANGUAGE plpgsql AS $$
DECLARE
	tbl regclass := (SELECT indrelid FROM pg_index WHERE indexrelid = idx);
	hidden oid[] := ARRAY(SELECT indexrelid FROM pg_index
						  WHERE indrelid = tbl AND indexrelid <> idx AND indisvalid);
	plan json;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	UPDATE pg_index SET indisvalid = false WHERE indexrelid = ANY (hidden);
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM ' || tbl || ' WHERE ' || q INTO plan;
	EXECUTE 'SELECT count(*) FROM ' || tbl || ' WHERE ' || q INTO n;
	UPDATE pg_index SET indisvalid = true WHERE indexrelid = ANY (hidden);
	hits := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 -> 'Plans' -> 0 ->> 'Shared Hit Blocks')::bigint;
END;
$$;
-- (the stripes' pages: both read the pending pages, larger with keys)
SELECT q, o.n AS with_summaries, f.n AS without, c.via_seqscan,
	   o.hits - po.pending_pages < (f.hits - pf.pending_pages) / 2 AS half_the_pages
FROM (VALUES ('tenant = 1000'), ('tenant = 1000 AND v = 5'), ('tenant = 10'),
			 ('tenant = 10 AND v = 7'), ('v = 7')) v(q),
	 LATERAL pk_hits('pks_on', q) o, LATERAL pk_hits('pks_off', q) f,
	 bloomidx_stats('pks_on') po, bloomidx_stats('pks_off') pf,
	 LATERAL (SELECT count(*) AS via_seqscan FROM pks
			  WHERE CASE q WHEN 'tenant = 1000' THEN tenant = 1000
						   WHEN 'tenant = 1000 AND v = 5' THEN tenant = 1000 AND v = 5
						   WHEN 'tenant = 10' THEN tenant = 10
						   WHEN 'tenant = 10 AND v = 7' THEN tenant = 10 AND v = 7
						   ELSE v = 7 END) c
ORDER BY q;
SELECT bloomidx_check('pks_on', heapallindexed => true);

-- VACUUM empties the first stripe: its live rows come back without keys,
-- and the stripe VACUUM then merges them into (with every pending row: the
-- index has stripes) is always read, its summary incomplete; no row is
-- missed
DELETE FROM pks WHERE tenant < 3 AND v <> 0;
VACUUM pks;
SELECT bloomidx_merge('pks_on') AS left_to_merge;
SELECT q, o.n AS with_summaries, c.via_seqscan
FROM (VALUES ('tenant = 1'), ('tenant = 1 AND v = 0'), ('tenant = 7'), ('v = 0')) v(q),
	 LATERAL pk_hits('pks_on', q) o,
	 LATERAL (SELECT count(*) AS via_seqscan FROM pks
			  WHERE CASE q WHEN 'tenant = 1' THEN tenant = 1
						   WHEN 'tenant = 1 AND v = 0' THEN tenant = 1 AND v = 0
						   WHEN 'tenant = 7' THEN tenant = 7
						   ELSE v = 0 END) c
ORDER BY q;
SELECT bloomidx_check('pks_on', heapallindexed => true);

-- An index built on an empty table has measured no stripe: the merge that
-- starts its first stripe measures the summaries' sizes on the pending
-- rows (see summary_measure), so a column of many values (u) gets
-- summaries as large as a build would give it (one block a column is all
-- the metapage said), and its queries skip the stripes that do not hold
-- their values
CREATE TABLE pke (tenant int, u int) WITH (autovacuum_enabled = off);
CREATE INDEX pke_on ON pke USING bloomidx (tenant, u) WITH (summaries = on);
CREATE INDEX pke_off ON pke USING bloomidx (tenant, u) WITH (summaries = off);
INSERT INTO pke SELECT i / 20000, (i * 7919) % 1000003 FROM generate_series(0, 269999) i;
SELECT bloomidx_merge('pke_on') > 0 AS merged_on, bloomidx_merge('pke_off') > 0 AS merged_off;
SELECT s.stripes AS stripes_on, o.stripes AS stripes_off
FROM bloomidx_stats('pke_on') s, bloomidx_stats('pke_off') o;
SELECT q, o.n AS with_summaries, f.n AS without,
	   o.hits < f.hits / 2 AS half_the_pages
FROM (VALUES ('u = 7919'), ('u = 15838'), ('tenant = 3 AND u = 7919'),
			 ('u = 1000002')) v(q),
	 LATERAL pk_hits('pke_on', q) o, LATERAL pk_hits('pke_off', q) f
ORDER BY q;
SELECT count(*) FILTER (WHERE u = 7919) AS u_7919, count(*) FILTER (WHERE u = 15838) AS u_15838,
	count(*) FILTER (WHERE tenant = 3 AND u = 7919) AS t3_u_7919 FROM pke;
SELECT bloomidx_check('pke_on', heapallindexed => true);
DROP TABLE pke;

DROP TABLE pk, pks;
DROP FUNCTION pk_counts(text);
DROP FUNCTION pk_pending(regclass);
DROP FUNCTION pk_hits(regclass, text);
