-- Summary groups: a build seals the summaries of its full stripes into
-- their group's region, so that a query tests one page a group for each
-- value instead of a stripe page and a summary page a stripe.  Answers
-- equal a seq scan's; a query for a value no stripe holds touches fewer
-- index pages than the same index before sealing (filled by merges) and
-- than one without summaries; bloomidx_check finds nothing wrong.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
SET max_parallel_maintenance_workers = 0;

-- a random (many values), b 1,000 values, c text, d few values and NULLs;
-- four full stripes and some rows more
CREATE TABLE sg (a int, b int, c text, d int) WITH (autovacuum_enabled = off);
-- filled by merges: stripes of their own summaries
CREATE INDEX sg_m ON sg USING bloomidx (a, b, c, d);
INSERT INTO sg
SELECT ((i::bigint * 7919) % 1000003)::int, i % 1000, 'c' || (i % 5003),
       CASE WHEN i % 101 = 0 THEN NULL ELSE i % 7 END
FROM generate_series(0, 269999) i;
SELECT bloomidx_merge('sg_m') > 0 AS merged;
-- (no VACUUM yet: it would seal sg_m's full stripes, see below)
ANALYZE sg;
-- built: sealed stripes, and a partial one of the rows short of a stripe
-- (nothing left to merge)
CREATE INDEX sg_b ON sg USING bloomidx (a, b, c, d);
SELECT bloomidx_merge('sg_b') = 0 AS nothing_pending;
CREATE INDEX sg_off ON sg USING bloomidx (a, b, c, d) WITH (summaries = off);
SELECT stripes FROM bloomidx_stats('sg_b');
-- bloomidx_stats counts the sealed stripes' summaries, read from their
-- group's region, as it counts those in pages of their own
SELECT i, stripes, summarized_stripes = stripes AS all_summarized,
       summary_pages > 0 AS has_pages,
       summary_fpr[1] BETWEEN 0.01 AND 0.08 AS a_fpr,
       summary_fill[4] < 0.5 AS d_few_bits
FROM unnest(ARRAY['sg_b', 'sg_m']) i, bloomidx_stats(i::regclass)
ORDER BY i;
SELECT bloomidx_check('sg_b');
SELECT bloomidx_check('sg_b', heapallindexed => true);

-- Shared buffers the bitmap scan of one index hit for a query (the others
-- made invalid meanwhile), the rows it found, and the plan's cost
CREATE FUNCTION sg_hits(idx text, q text, OUT hits bigint, OUT n bigint,
						OUT cost float8)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	UPDATE pg_index SET indisvalid = (indexrelid = idx::regclass)
	WHERE indrelid = 'sg'::regclass;
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM sg WHERE ' || q INTO plan;
	EXECUTE 'SELECT count(*) FROM sg WHERE ' || q INTO n;
	UPDATE pg_index SET indisvalid = true WHERE indrelid = 'sg'::regclass;
	hits := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 -> 'Plans' -> 0 ->> 'Shared Hit Blocks')::bigint;
	cost := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 -> 'Plans' -> 0 ->> 'Total Cost')::float8;
END;
$$;
CREATE FUNCTION sg_seq(q text, OUT n bigint) LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_seqscan = on;
	EXECUTE 'SELECT count(*) FROM sg WHERE ' || q INTO n;
END;
$$;
CREATE TABLE sg_q (q text, absent bool);
INSERT INTO sg_q VALUES
	('a = 7919', false), ('a = 1000002', true), ('a = 5', true),
	('a = ANY (ARRAY[7919, 15838, 1000002])', false),
	('a = ANY (ARRAY[1000002, 999999])', true),
	('b = 17', false), ('b = 17 AND a = 134623', false), ('b = 1001', true),
	('b = 17 AND a = 7919', true),
	('c = ''c17'' AND b = 17 AND d = 3', false), ('c = ''nope''', true),
	('d IS NULL', false), ('d IS NULL AND b = 0', false), ('d = 9', true),
	('a IS NULL', true);

-- Answers equal a seq scan's, every index; the sealed index touches fewer
-- pages than the others for a value no stripe holds
SELECT q, b.n AS sealed, m.n AS merged, f.n AS off, s.n AS seqscan,
	   CASE WHEN absent THEN b.hits < m.hits AND b.hits < f.hits END AS fewer_pages
FROM sg_q, LATERAL sg_hits('sg_b', q) b, LATERAL sg_hits('sg_m', q) m,
	 LATERAL sg_hits('sg_off', q) f, LATERAL sg_seq(q) s
ORDER BY q;

-- The planner knows: a value no stripe holds costs the sealed index less
-- than the one whose stripes have summaries of their own
SELECT q, b.cost < m.cost AS cheaper
FROM (VALUES ('a = 1000002'), ('b = 1001'), ('c = ''nope''')) v(q),
	 LATERAL sg_hits('sg_b', q) b, LATERAL sg_hits('sg_m', q) m
ORDER BY q;

-- VACUUM seals the full stripes merges filled (sg_m was created on the
-- empty table) into their group's region: a value no stripe holds then
-- touches fewer pages than before, answers are unchanged, and
-- bloomidx_check finds every listed full stripe flagged GROUPED exactly
-- when its group's slot seals it
CREATE TABLE sg_before AS SELECT q, h.hits FROM sg_q, LATERAL sg_hits('sg_m', q) h;
VACUUM sg;
SELECT bloomidx_merge('sg_m') = 0 AS nothing_pending;
SELECT q, h.n = s.n AS same_answer, h.hits < p.hits AS fewer_pages
FROM sg_q JOIN sg_before p USING (q), LATERAL sg_hits('sg_m', q) h,
	 LATERAL sg_seq(q) s
WHERE absent ORDER BY q;
SELECT q, m.n AS merged, s.n AS seqscan
FROM sg_q, LATERAL sg_hits('sg_m', q) m, LATERAL sg_seq(q) s
WHERE m.n <> s.n;
SELECT bloomidx_check('sg_m', heapallindexed => true);
-- A second VACUUM has nothing left to seal: the index keeps its size and
-- a query its pages
CREATE TABLE sg_after AS SELECT q, h.hits FROM sg_q, LATERAL sg_hits('sg_m', q) h;
SELECT pg_relation_size('sg_m') AS sg_m_size \gset
VACUUM sg;
SELECT pg_relation_size('sg_m') = :sg_m_size AS same_size;
SELECT q, h.hits, a.hits
FROM sg_q JOIN sg_after a USING (q), LATERAL sg_hits('sg_m', q) h
WHERE h.hits <> a.hits;

-- Rows inserted since, deleted rows and VACUUM: answers unchanged
INSERT INTO sg SELECT 424242, i, 'new', 8 FROM generate_series(1, 3000) i;
DELETE FROM sg WHERE b = 18;
VACUUM sg;
SELECT q, b.n AS sealed, s.n AS seqscan
FROM (VALUES ('a = 424242'), ('b = 18'), ('b = 17'), ('d = 8 AND b = 5'),
			 ('a = 7919')) v(q),
	 LATERAL sg_hits('sg_b', q) b, LATERAL sg_seq(q) s
ORDER BY q;
-- The inserted rows went into the partial stripe, whose summary was sized
-- for a full stripe's 1,000 values of b: 3,000 more are too many, and
-- bloomidx_check says so
SELECT bloomidx_check('sg_b', heapallindexed => true);

-- VACUUM empties the first stripe, most of its rows deleted: it leaves its
-- group (bloomidx_check finds no group sealing a stripe no longer listed),
-- its live rows are found elsewhere
SELECT stripes FROM bloomidx_stats('sg_b');
DELETE FROM sg WHERE ctid < '(300,0)';
VACUUM sg;
SELECT stripes FROM bloomidx_stats('sg_b');
SELECT bloomidx_check('sg_b', heapallindexed => true);
SELECT bloomidx_check('sg_m', heapallindexed => true);
SELECT q, b.n AS sealed, m.n AS merged, s.n AS seqscan
FROM sg_q, LATERAL sg_hits('sg_b', q) b, LATERAL sg_hits('sg_m', q) m,
	 LATERAL sg_seq(q) s
WHERE b.n <> s.n OR m.n <> s.n;
SELECT q, b.n AS sealed, s.n AS seqscan
FROM (VALUES ('a = 424242'), ('b = 17'), ('d IS NULL AND b = 0'), ('a = 134623')) v(q),
	 LATERAL sg_hits('sg_b', q) b, LATERAL sg_seq(q) s
ORDER BY q;

-- A parallel build seals the stripes its participants write the same way
SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
SET parallel_setup_cost = 0;
CREATE INDEX sg_p ON sg USING bloomidx (a, b, c, d);
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
SET max_parallel_maintenance_workers = 0;
-- (its partial stripe, of the rows inserted since, as sg_b's, if they
-- reach it: which stripe the participants write them into varies, and so
-- does bloomidx_check's NOTICE about it)
SET client_min_messages = warning;
SELECT bloomidx_check('sg_p', heapallindexed => true);
RESET client_min_messages;
SELECT q, p.n AS parallel, s.n AS seqscan
FROM sg_q, LATERAL sg_hits('sg_p', q) p, LATERAL sg_seq(q) s
WHERE p.n <> s.n;

DROP TABLE sg, sg_q, sg_before, sg_after;
DROP FUNCTION sg_hits(text, text);
DROP FUNCTION sg_seq(text);
