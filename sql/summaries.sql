-- Stripe summaries of the sliced layout: the summaries option, and index
-- answers equal to a seq scan's with summaries on and off, on correlated
-- and random data, through merges and VACUUM; a stripe a summary rules out
-- is not read.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
SET max_parallel_maintenance_workers = 0;
SET enable_seqscan = off;
SET enable_indexscan = off;

-- tenant and day in insertion order (correlated), a random, b text
CREATE TABLE sm (tenant int, day int, a int, b text);
INSERT INTO sm
SELECT i / 20000, (i / 5000) % 365, ((i::bigint * 7919) % 100003)::int,
       CASE WHEN i % 97 = 0 THEN NULL ELSE 'v' || (i % 1000) END
FROM generate_series(0, 199999) i;

CREATE INDEX sm_on ON sm USING bloomidx (tenant, day, a, b);
CREATE INDEX sm_off ON sm USING bloomidx (tenant, day, a, b) WITH (summaries = off);
SELECT version FROM bloomidx_stats('sm_on');
SELECT version FROM bloomidx_stats('sm_off');
SELECT bloomidx_check('sm_on', true);

-- bloomidx_stats on the summaries: every stripe has a complete one; a
-- column in insertion order sets few of its bits, a random one about
-- 1 - 1/e of them at 8 bits a key, and lets through about 3% of the values
-- a stripe lacks
SELECT summary_bits_per_key, summary_pages >= stripes AS pages,
       summarized_stripes = stripes AS all_summarized,
       cardinality(summary_fill) AS fills, cardinality(summary_fpr) AS fprs,
       summary_fill[1] < 0.3 AS tenant_few_bits, summary_fpr[1] < 0.001 AS tenant_fpr,
       round(summary_fill[3]::numeric, 2) AS a_fill,
       summary_fpr[3] BETWEEN 0.02 AND 0.05 AS a_fpr
FROM bloomidx_stats('sm_on');
-- Without summaries: no pages and no stripes summarized; the cheap form
-- reads only the bits a key
SELECT summary_bits_per_key, summary_pages, summarized_stripes, summary_fill, summary_fpr
FROM bloomidx_stats('sm_off');
SELECT summary_bits_per_key, summary_pages, summarized_stripes, summary_fill, summary_fpr
FROM bloomidx_stats('sm_on', exact => false);

-- The index's answer (a bitmap scan of the one index left) against a seq scan
CREATE FUNCTION sm_diff(idx text, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  other text := CASE idx WHEN 'sm_on' THEN 'sm_off' ELSE 'sm_on' END;
  a bigint[]; b bigint[];
BEGIN
  EXECUTE 'ALTER INDEX ' || other || ' RENAME TO sm_hidden';
  EXECUTE 'UPDATE pg_index SET indisvalid = false WHERE indexrelid = ''sm_hidden''::regclass';
  SET LOCAL enable_seqscan = off;
  EXECUTE 'SELECT array_agg(x ORDER BY x) FROM (SELECT (ctid::text::point)[0]::bigint * 1000 + (ctid::text::point)[1]::bigint AS x FROM sm WHERE ' || q || ') s' INTO a;
  SET LOCAL enable_seqscan = on;
  SET LOCAL enable_bitmapscan = off;
  EXECUTE 'SELECT array_agg(x ORDER BY x) FROM (SELECT (ctid::text::point)[0]::bigint * 1000 + (ctid::text::point)[1]::bigint AS x FROM sm WHERE ' || q || ') s' INTO b;
  RESET enable_bitmapscan;
  EXECUTE 'UPDATE pg_index SET indisvalid = true WHERE indexrelid = ''sm_hidden''::regclass';
  EXECUTE 'ALTER INDEX sm_hidden RENAME TO ' || other;
  RETURN CASE WHEN a IS NOT DISTINCT FROM b THEN 'same ' || coalesce(cardinality(a), 0)
              ELSE 'DIFFERENT ' || coalesce(cardinality(a), 0) || ' ' || coalesce(cardinality(b), 0) END;
END $$;

-- Shared buffers the bitmap index scan of an index hit for a query
CREATE FUNCTION sm_hits(idx text, q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  other text := CASE idx WHEN 'sm_on' THEN 'sm_off' ELSE 'sm_on' END;
  plan json;
BEGIN
  EXECUTE 'UPDATE pg_index SET indisvalid = false WHERE indexrelid = ''' || other || '''::regclass';
  EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM sm WHERE ' || q INTO plan;
  EXECUTE 'UPDATE pg_index SET indisvalid = true WHERE indexrelid = ''' || other || '''::regclass';
  RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 -> 'Plans' -> 0 ->> 'Shared Hit Blocks')::bigint;
END $$;

CREATE TABLE sm_q (q text);
INSERT INTO sm_q VALUES
  ('tenant = 7'), ('tenant = 3 AND day = 60'), ('tenant = 1000'),
  ('day = 5'), ('a = 77'), ('a = 100002'), ('b = ''v7'''), ('b IS NULL'),
  ('tenant IS NULL'), ('tenant = ANY (ARRAY[1, 8, 500])'),
  ('a = ANY (ARRAY[5, 6, 7, 8])'), ('tenant = 9::bigint'),
  ('tenant = 2::smallint AND b = ''v40'''), ('tenant = 4 AND a = 3');

SELECT q, sm_diff('sm_on', q) AS summaries_on, sm_diff('sm_off', q) AS summaries_off
FROM sm_q ORDER BY q;

-- A stripe the summary rules out is not read: far fewer pages
-- (of the stripes' pages: the pending rows', whose pages carry keys in
-- format 4, are read by both)
SELECT sm_hits('sm_on', 'tenant = 1000') - (SELECT pending_pages FROM bloomidx_stats('sm_on')) <
       (sm_hits('sm_off', 'tenant = 1000') - (SELECT pending_pages FROM bloomidx_stats('sm_off'))) / 2
       AS half_the_pages;
SELECT q, sm_hits('sm_on', q) < sm_hits('sm_off', q) AS fewer_pages
FROM (VALUES ('tenant = 7'), ('day = 5'), ('tenant = 7 AND day = 130')) v(q);

-- A parallel build: its participants' leftover rows carry their keys
DROP INDEX sm_on;
SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
SET parallel_setup_cost = 0;
CREATE INDEX sm_on ON sm USING bloomidx (tenant, day, a, b);
RESET min_parallel_table_scan_size;
SET max_parallel_maintenance_workers = 0;
RESET parallel_setup_cost;
SELECT bloomidx_check('sm_on', true);
SELECT q, sm_diff('sm_on', q) AS summaries_on
FROM sm_q ORDER BY q;

-- Rows merged later: into a new stripe without a summary, always read
INSERT INTO sm SELECT 2000, 9, i, 'late' FROM generate_series(1, 70000) i;
SELECT bloomidx_merge('sm_on') > 0 AS merged, bloomidx_merge('sm_off') > 0 AS merged_off;
SELECT q, sm_diff('sm_on', q) AS summaries_on, sm_diff('sm_off', q) AS summaries_off
FROM (VALUES ('tenant = 2000'), ('b = ''late'''), ('tenant = 7'), ('a = 77')) v(q);

-- VACUUM: stale bits are allowed, no row is missed
DELETE FROM sm WHERE tenant IN (1, 2) OR (tenant = 2000 AND a > 1000);
VACUUM sm;
SELECT q, sm_diff('sm_on', q) AS summaries_on
FROM (VALUES ('tenant = 2000'), ('tenant = 1'), ('tenant = 7'), ('a = 77'), ('b = ''v7''')) v(q);
SELECT bloomidx_check('sm_on', true);

-- A merge into a stripe whose summary was built marks it incomplete: its
-- new rows are found.  A long signature makes the build write its last
-- rows as a partial stripe (they would crowd the pending list).
CREATE TABLE sm_long (k int, v int);
INSERT INTO sm_long SELECT i, i % 10 FROM generate_series(1, 90000) i;
CREATE INDEX sm_long_ix ON sm_long USING bloomidx (k, v) WITH (length = 1024);
SELECT stripes, version FROM bloomidx_stats('sm_long_ix');
INSERT INTO sm_long SELECT 1000000 + i, 77 FROM generate_series(1, 100) i;
SELECT bloomidx_merge('sm_long_ix') > 0 AS merged;
SELECT count(*) FROM sm_long WHERE k = 1000050;
SELECT count(*) FROM sm_long WHERE v = 77;
SELECT count(*) FROM sm_long WHERE k = 89999;
SELECT bloomidx_check('sm_long_ix', true);

-- The option: off gives the format of before; the row layout has none
\set VERBOSITY terse
CREATE INDEX sm_row ON sm USING bloomidx (tenant) WITH (layout = 'row', summaries = on);
CREATE INDEX sm_row ON sm USING bloomidx (tenant) WITH (length = 2048, summaries = on);
CREATE INDEX sm_bad ON sm USING bloomidx (tenant) WITH (summaries = maybe);
\set VERBOSITY default
CREATE INDEX sm_row ON sm USING bloomidx (tenant) WITH (layout = 'row');
SELECT version FROM bloomidx_stats('sm_row');
SELECT summary_bits_per_key, summary_pages, summarized_stripes, summary_fill, summary_fpr
FROM bloomidx_stats('sm_row');
-- REINDEX keeps the option; without it, a format 3 index becomes format 4
ALTER INDEX sm_off RESET (summaries);
REINDEX INDEX sm_off;
SELECT version FROM bloomidx_stats('sm_off');

-- Data that outgrows the summaries' sizing: built on 7 values of k a
-- stripe, the summaries get one block for k, and so does every stripe a
-- merge starts; rows of new values of k fill those blocks, and
-- bloomidx_check says so (a column of sets, t, has no summary)
CREATE TABLE sm_grow (k int, v int, t text);
INSERT INTO sm_grow SELECT i / 10000, i % 10, 'x' || i % 7 FROM generate_series(1, 70000) i;
CREATE INDEX sm_grow_ix ON sm_grow USING bloomidx (k, v, t text_trgm_ops);
SELECT bloomidx_check('sm_grow_ix', true);
SELECT summarized_stripes, summary_fpr[1] < 0.01 AS k_fpr, summary_fill[3] IS NULL AS t_none,
       summary_fpr[3] IS NULL AS t_fpr_none
FROM bloomidx_stats('sm_grow_ix');
INSERT INTO sm_grow SELECT 100000 + i, i % 10, 'y' FROM generate_series(1, 70000) i;
SELECT bloomidx_merge('sm_grow_ix') >= 0 AS merged;
SELECT summarized_stripes, summary_fpr[1] > 0.5 AS k_fpr, summary_fpr[2] < 0.01 AS v_fpr
FROM bloomidx_stats('sm_grow_ix');
SELECT bloomidx_check('sm_grow_ix', true);
SELECT count(*) FROM sm_grow WHERE k = 100077;
SELECT count(*) FROM sm_grow WHERE k = 3 AND v = 4;
-- REINDEX sizes every stripe's summary for its own values
REINDEX INDEX sm_grow_ix;
SELECT bloomidx_check('sm_grow_ix', true);

DROP TABLE sm, sm_long, sm_q, sm_grow;
DROP FUNCTION sm_diff(text, text), sm_hits(text, text);
RESET enable_seqscan;
RESET enable_indexscan;
RESET max_parallel_maintenance_workers;
