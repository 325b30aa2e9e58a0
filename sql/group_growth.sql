-- Summary groups whose region grows: an index built on a small table gets
-- a region for the stripes the table then gave its group; once the table
-- has grown, VACUUM moves the group to a larger region (the sealed
-- stripes' blocks copied, laid out for the new size) and seals the later
-- stripes there, whose own summary pages are freed.  Answers equal a seq
-- scan's; a query for a value no stripe holds touches fewer index pages
-- than before; bloomidx_check (with heapallindexed) finds nothing wrong.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
SET max_parallel_maintenance_workers = 0;

-- a 1,000 values, b many: a full stripe and 1,000 rows more, so that the
-- build sizes group 0's region for two stripes
CREATE TABLE gg (id int, a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO gg SELECT i, i % 1000, (i::bigint * 7919 % 1000003)::int
FROM generate_series(1, 66280) i;
VACUUM ANALYZE gg;
CREATE INDEX gg_bx ON gg USING bloomidx (a, b);

-- Shared buffers the bitmap scan hit for a query, and the rows it found
CREATE FUNCTION gg_hits(q text, t text DEFAULT 'gg', OUT hits bigint, OUT n bigint)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM ' || t || ' WHERE ' || q INTO plan;
	EXECUTE 'SELECT count(*) FROM ' || t || ' WHERE ' || q INTO n;
	hits := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 -> 'Plans' -> 0 ->> 'Shared Hit Blocks')::bigint;
END;
$$;
CREATE FUNCTION gg_seq(q text, OUT n bigint) LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_seqscan = on;
	EXECUTE 'SELECT count(*) FROM gg WHERE ' || q INTO n;
END;
$$;
CREATE TABLE gg_q (q text, absent bool);
INSERT INTO gg_q VALUES
	('a = 7', false), ('a = 1000', true), ('b = 7919', false),
	('b = 1000002', true), ('a = 5 AND b = 39595', false),
	('a = 6 AND b = 39595', true),
	('a = ANY (ARRAY[3, 1001, 1002])', false), ('a IS NULL', true);

-- The table grows to three full stripes and a partial one, by merges
INSERT INTO gg SELECT i, i % 1000, (i::bigint * 7919 % 1000003)::int
FROM generate_series(66281, 200000) i;
SELECT bloomidx_merge('gg_bx') > 0 AS merged;
SELECT stripes FROM bloomidx_stats('gg_bx');
CREATE TABLE gg_before AS
SELECT q, h.hits FROM gg_q, LATERAL gg_hits(q) h;
SELECT bloomidx_check('gg_bx', heapallindexed => true);

-- VACUUM seals stripe 1 in the region, which holds two positions, then
-- grows the region for stripe 2: a value no stripe holds touches fewer
-- pages, the own summary pages of stripe 2 are gone, answers are unchanged
VACUUM gg;
SELECT q, h.n AS via_index, s.n AS via_seqscan,
	   CASE WHEN absent THEN h.hits < b.hits END AS fewer_pages
FROM gg_q JOIN gg_before b USING (q), LATERAL gg_hits(q) h, LATERAL gg_seq(q) s
ORDER BY q;
SELECT bloomidx_check('gg_bx', heapallindexed => true);
-- as few as an index built on the grown table, which seals its three full
-- stripes (a stripe left unsealed would cost its stripe page and a summary
-- page more)
CREATE TABLE gg_copy AS SELECT * FROM gg;
VACUUM ANALYZE gg_copy;
CREATE INDEX gg_copy_bx ON gg_copy USING bloomidx (a, b);
SELECT q, h.hits = c.hits AS as_built, h.n = c.n AS same_answer
FROM gg_q, LATERAL gg_hits(q) h, LATERAL gg_hits(q, 'gg_copy') c
WHERE absent ORDER BY q;
DROP TABLE gg_copy;

-- A second VACUUM has nothing to grow or seal: same size, same pages
SELECT pg_relation_size('gg_bx') AS gg_size \gset
CREATE TABLE gg_after AS SELECT q, h.hits FROM gg_q, LATERAL gg_hits(q) h;
VACUUM gg;
SELECT pg_relation_size('gg_bx') = :gg_size AS same_size;
SELECT q, h.hits, a.hits FROM gg_q JOIN gg_after a USING (q), LATERAL gg_hits(q) h
WHERE h.hits <> a.hits;

-- The table grows further: the region grows again, for stripes 3 and 4
INSERT INTO gg SELECT i, i % 1000, (i::bigint * 7919 % 1000003)::int
FROM generate_series(200001, 340000) i;
SELECT bloomidx_merge('gg_bx') > 0 AS merged;
DROP TABLE gg_after;
CREATE TABLE gg_after AS SELECT q, h.hits FROM gg_q, LATERAL gg_hits(q) h;
VACUUM gg;
SELECT q, h.n AS via_index, s.n AS via_seqscan,
	   CASE WHEN absent THEN h.hits < a.hits END AS fewer_pages
FROM gg_q JOIN gg_after a USING (q), LATERAL gg_hits(q) h, LATERAL gg_seq(q) s
ORDER BY q;
SELECT bloomidx_check('gg_bx', heapallindexed => true);

-- Deleted rows: a stripe VACUUM empties leaves the grown region
DELETE FROM gg WHERE id <= 60000;
VACUUM gg;
SELECT q, h.n AS via_index, s.n AS via_seqscan
FROM gg_q, LATERAL gg_hits(q) h, LATERAL gg_seq(q) s
ORDER BY q;
SELECT bloomidx_check('gg_bx', heapallindexed => true);

DROP TABLE gg, gg_q, gg_before, gg_after;
DROP FUNCTION gg_hits(text, text);
DROP FUNCTION gg_seq(text);
