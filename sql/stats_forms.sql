--
-- bloomidx_stats: the exact form (every page), the cheap form (metapage
-- only), the row of a partitioned index, the target false-positive rate,
-- and the comments \df+ shows
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

CREATE TABLE sf (a int, b text);
INSERT INTO sf SELECT g % 100, 'v' || (g % 37) FROM generate_series(1, 20000) g;
CREATE INDEX sf_row ON sf USING bloomidx (a, b) WITH (layout = 'row');
CREATE INDEX sf_sliced ON sf USING bloomidx (a, b) WITH (layout = sliced);
CREATE INDEX sf_fpr ON sf USING bloomidx (a) WITH (false_positive_rate = 0.001);
CREATE INDEX sf_len ON sf USING bloomidx (a) WITH (length = 80);

-- Right after a build, the cheap form agrees with the exact one: the same
-- shape, the metapage's tuple count and fill, every page but the metapage
-- counted as data pages
SELECT c.relname,
	   q.version = e.version AS version,
	   q.meta_pages = e.meta_pages AS meta,
	   q.data_pages = e.data_pages + e.free_pages AS pages,
	   q.free_pages IS NULL AS free_null,
	   q.live_tuples = e.live_tuples AS tuples,
	   q.signature_bits = e.signature_bits
		 AND q.bits_per_column = e.bits_per_column
		 AND q.tuples_per_page = e.tuples_per_page AS shape,
	   abs(q.fill - e.fill) < 1e-12 AS fill,
	   abs(q.fpr_1col - e.fpr_1col) < 1e-12 AS fpr,
	   q.layout = e.layout AS layout,
	   q.stripes IS NOT DISTINCT FROM e.stripes AS stripes,
	   q.target_false_positive_rate IS NOT DISTINCT FROM e.target_false_positive_rate AS target,
	   q.summary_bits_per_key IS NOT DISTINCT FROM e.summary_bits_per_key AS summary_bits
FROM pg_class c, bloomidx_stats(c.oid) e, bloomidx_stats(c.oid, exact => false) q
WHERE c.relname LIKE 'sf\_%' AND c.relkind = 'i'
ORDER BY c.relname;

-- The target false-positive rate: the one asked for, the default, or none
-- when length or colN are given; the summaries' bits a key (sliced layout)
SELECT c.relname, s.layout, s.live_tuples, s.target_false_positive_rate,
	   s.summary_bits_per_key
FROM pg_class c, bloomidx_stats(c.oid, false) s
WHERE c.relname LIKE 'sf\_%' AND c.relkind = 'i'
ORDER BY c.relname;

-- After deletes and VACUUM, the cheap form counts what VACUUM counted
DELETE FROM sf WHERE a < 50;
VACUUM sf;
SELECT c.relname, e.live_tuples, q.live_tuples AS cheap_live_tuples
FROM pg_class c, bloomidx_stats(c.oid) e, bloomidx_stats(c.oid, exact => false) q
WHERE c.relname LIKE 'sf\_%' AND c.relkind = 'i'
ORDER BY c.relname;

-- A partitioned index has a row that says what it is, so that a query over
-- every bloomidx index of a database works; its partitions have their own
CREATE TABLE sfp (a int, b text) PARTITION BY RANGE (a);
CREATE TABLE sfp1 PARTITION OF sfp FOR VALUES FROM (0) TO (50);
CREATE TABLE sfp2 PARTITION OF sfp FOR VALUES FROM (50) TO (100);
INSERT INTO sfp SELECT g % 100, 'v' || (g % 37) FROM generate_series(1, 1000) g;
CREATE INDEX sfp_bx ON sfp USING bloomidx (a, b);
SELECT c.relname, c.relkind, s.layout, s.meta_pages, s.data_pages, s.live_tuples,
	   s.signature_bits
FROM pg_class c, bloomidx_stats(c.oid) s
WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'bloomidx')
  AND c.relname LIKE 'sfp%'
ORDER BY c.relname;
SELECT c.relname, s.layout, s.data_pages, s.live_tuples
FROM pg_class c, bloomidx_stats(c.oid, exact => false) s
WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'bloomidx')
  AND c.relname LIKE 'sfp%'
ORDER BY c.relname;
-- Every bloomidx index of this test's tables, in both forms
SELECT count(*) AS indexes, count(*) FILTER (WHERE e.layout IS NULL OR q.layout IS NULL) AS no_layout
FROM pg_class c, bloomidx_stats(c.oid) e, bloomidx_stats(c.oid, false) q
WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'bloomidx')
  AND c.relname ~ '^sf';

-- Not a bloomidx index
\set VERBOSITY terse
SELECT * FROM bloomidx_stats('sf', false);
SELECT * FROM bloomidx_stats('pg_class_oid_index', false);
\set VERBOSITY default

-- What \df+ shows
SELECT p.oid::regprocedure AS function, d.description
FROM pg_proc p JOIN pg_description d ON d.objoid = p.oid AND d.classoid = 'pg_proc'::regclass
WHERE p.proname IN ('bloomidx_stats', 'bloomidx_check', 'bloomidx_estimate', 'bloomidx_merge')
ORDER BY p.proname;

DROP TABLE sf, sfp CASCADE;
