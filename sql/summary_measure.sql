--
-- An index made on an empty table, then loaded: the merge that starts its
-- first stripe measures the summaries' sizes on a stripe's worth of
-- pending rows, as a build does, so its summaries are sized like a
-- REINDEX's and its pending list stays short from then on.  The index's
-- answers equal a seq scan's throughout.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse
SET max_parallel_maintenance_workers = 0;

-- tenant: 6,528 values a stripe in insertion order, ten rows each, of
-- which a merge step's first rows hold a few dozen; u: random; day: a
-- handful a stripe
CREATE TABLE smx (tenant int, u int, day int) WITH (autovacuum_enabled = off);
CREATE INDEX smx_loaded ON smx USING bloomidx (tenant, u, day);
-- one column: its pending pages hold a stripe's rows before they are
-- crowded (the others' are crowded first and measure most of a stripe)
CREATE INDEX smx_loaded1 ON smx USING bloomidx (tenant);
SELECT stripes, pending_pages FROM bloomidx_stats('smx_loaded');
INSERT INTO smx SELECT i / 10, (i * 7919) % 1000003, i / 5000
FROM generate_series(0, 139999) i;
-- The stripes are started as the rows come: few pending pages are left
SELECT i, stripes >= 2 AS stripes, pending_pages < 10 AS few_pending
FROM unnest(ARRAY['smx_loaded', 'smx_loaded1']) i, bloomidx_stats(i::regclass)
ORDER BY i;
SELECT bloomidx_merge('smx_loaded') >= 0 AS merged, bloomidx_merge('smx_loaded1') >= 0 AS merged1;

-- The same index built on the loaded table, as a REINDEX would make it
CREATE INDEX smx_built ON smx USING bloomidx (tenant, u, day);
CREATE INDEX smx_built1 ON smx USING bloomidx (tenant);

-- Each column's summaries: fill and false-positive rate within a tenth of
-- the built index's (sized from a few hundred rows, the tenant column's
-- would let through about thirty times as many values a stripe lacks)
SELECT l.stripes = b.stripes AS same_stripes,
	   l.summarized_stripes = l.stripes AS all_summarized,
	   c AS col,
	   abs(l.summary_fill[c] - b.summary_fill[c]) < 0.1 * b.summary_fill[c] AS fill_close,
	   abs(l.summary_fpr[c] - b.summary_fpr[c]) <= 0.1 * b.summary_fpr[c] + 0.0005 AS fpr_close,
	   l.summary_fpr[c] < 0.05 AS fpr_low
FROM bloomidx_stats('smx_loaded') l, bloomidx_stats('smx_built') b,
	 generate_series(1, 3) c
UNION ALL
SELECT l.stripes = b.stripes, l.summarized_stripes = l.stripes, 0,
	   abs(l.summary_fill[1] - b.summary_fill[1]) < 0.1 * b.summary_fill[1],
	   abs(l.summary_fpr[1] - b.summary_fpr[1]) <= 0.1 * b.summary_fpr[1] + 0.0005,
	   l.summary_fpr[1] < 0.05
FROM bloomidx_stats('smx_loaded1') l, bloomidx_stats('smx_built1') b
ORDER BY col;

-- More inserts, past the stripe being filled, keep the pending list short
INSERT INTO smx SELECT i / 10, (i * 7919) % 1000003, i / 5000
FROM generate_series(140000, 219999) i;
SELECT i, pending_pages < 10 AS few_pending
FROM unnest(ARRAY['smx_loaded', 'smx_loaded1']) i, bloomidx_stats(i::regclass)
ORDER BY i;

-- Answers of the loaded index (the other one hidden) equal a seq scan's
CREATE FUNCTION smx_counts(cond text, OUT via_index bigint, OUT via_seqscan bigint)
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE pg_index SET indisvalid = false
	WHERE indexrelid IN ('smx_built'::regclass, 'smx_built1'::regclass, 'smx_loaded1'::regclass);
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	EXECUTE 'SELECT count(*) FROM smx WHERE ' || cond INTO via_index;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'SELECT count(*) FROM smx WHERE ' || cond INTO via_seqscan;
	UPDATE pg_index SET indisvalid = true
	WHERE indexrelid IN ('smx_built'::regclass, 'smx_built1'::regclass, 'smx_loaded1'::regclass);
END;
$$;
SELECT q, c.*
FROM (VALUES ('tenant = 3'), ('tenant = 16000'), ('tenant = 99999'),
			 ('u = 7919'), ('day = 20'), ('tenant = 7000 AND day = 14'),
			 ('tenant = 7000 AND day = 15')) v(q),
	 LATERAL smx_counts(q) c
ORDER BY q;
SELECT bloomidx_check('smx_loaded', heapallindexed => true),
	   bloomidx_check('smx_loaded1', heapallindexed => true);

DROP TABLE smx;
DROP FUNCTION smx_counts(text);
