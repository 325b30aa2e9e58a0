--
-- Cost model: plan shapes on clear-cut cases, bloomidx_estimate, and how
-- close the estimated candidates come to the real ones.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- a: unique; b: 2 rows a value; c: 1000 values; d: 10 values; e: 1% NULL;
-- h: 90% NULL; g: text
CREATE TABLE tc AS
	SELECT i AS a, (i * 7) % 50000 AS b, i % 1000 AS c, i % 10 AS d,
		CASE WHEN i % 100 = 0 THEN NULL ELSE i END AS e,
		CASE WHEN i % 10 = 0 THEN i END AS h,
		'g' || (i % 5000) AS g
	FROM generate_series(1, 100000) i;
-- A sample as large as the table, so that the statistics (and the plans)
-- do not depend on which rows ANALYZE happens to pick
SET default_statistics_target = 400;
ANALYZE tc;

-- Default options (the sliced layout, 0.035% target): a multi-column
-- equality uses the index, and so does a one-column equality
CREATE INDEX tc_def ON tc USING bloomidx (a, b, c, d, e, h);
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE a = 4242 AND b = 29694;
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE a = 4242;
SELECT * FROM tc WHERE a = 4242 AND b = 29694;

-- = ANY: a short list is one pass over the index; a long one lets most rows
-- through (each element about 0.02%: 3,000 of them, more than half), and
-- the seq scan wins (its plan without the list)
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE a = ANY ('{1, 2, 3}');
SELECT array_agg(i) AS list3000 FROM generate_series(1, 3000) i \gset
CREATE FUNCTION tc_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		RETURN NEXT regexp_replace(line, '(Cond|Filter): .*', '\1: ...');
	END LOOP;
END;
$$;
SELECT tc_plan(format('SELECT * FROM tc WHERE a = ANY (%L::int[])', :'list3000'));
SELECT count(*) FROM tc WHERE a = ANY (:'list3000'::int[]);
DROP FUNCTION tc_plan(text);
-- A list unknown at plan time counts as 10 elements (the planner's guess)
PREPARE qa(int[]) AS SELECT * FROM tc WHERE a = ANY ($1) AND b = 7;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE qa('{1,2,3}');
RESET plan_cache_mode;
DEALLOCATE qa;
-- NULL elements equal nothing: the scan reads nothing
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE a = ANY ('{NULL}'::int[]);
SELECT count(*) FROM tc WHERE a = ANY ('{NULL}'::int[]);

-- IS NULL tests the column's null bits: 1% of e is NULL (the index), 90%
-- of h (the seq scan); with a selective equality, the index
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE e IS NULL;
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE h IS NULL;
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE a = 4244 AND h IS NULL;
SELECT * FROM tc WHERE a = 4244 AND h IS NULL;
-- IS NOT NULL tests nothing: alone it is a seq scan, with an equality the
-- index helps through the equality
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE e IS NOT NULL;
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE a = 4243 AND e IS NOT NULL;

-- A column with few values: rows matching d = 3 pass that clause for sure,
-- so d = 3 AND c = 7 lets 10% of the c-false positives through on top
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE d = 3 AND c = 7;
SELECT count(*) FROM tc WHERE d = 3 AND c = 7;

-- Generic plan: values unknown at plan time, averaged over the probes
PREPARE q2(int, int) AS SELECT * FROM tc WHERE a = $1 AND b = $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE q2(4242, 29694);
EXECUTE q2(4242, 29694);
RESET plan_cache_mode;
DEALLOCATE q2;
DROP INDEX tc_def;

-- One bit for a (col1 = 1) in 80, the other columns 14 bits each (the
-- optimum for the length): about 40% of the bits are set, so 40% of the rows
-- pass a = ... (where the bitmap and the seq scan take about the same
-- time) and nearly 80% pass a = ANY of three values: a seq scan; b's 14
-- bits make b = ... selective
CREATE INDEX tc_1bit ON tc USING bloomidx (a, b, c, d) WITH (length = 80, col1 = 1);
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE a IN (4242, 4243, 4244);
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE b = 29694;
EXPLAIN (COSTS OFF) SELECT * FROM tc WHERE a = 4242 AND b = 29694;
SELECT round(fill::numeric, 2) AS fill, round(false_positive_rate::numeric, 2) AS fpr
FROM bloomidx_estimate('tc_1bit', '{a}');
DROP INDEX tc_1bit;

-- bloomidx_estimate: the shape's fill and false-positive rate, the true
-- matches from the statistics (a: 1 row; c: 100 rows; d: 10,000 rows), the
-- candidates, the pages (of an index without stripe summaries, whose
-- skipped stripes the candidates below would not count)
CREATE INDEX tc_est ON tc USING bloomidx (a, b, c, d) WITH (length = 64, col1 = 4, col2 = 4, col3 = 4, col4 = 4, summaries = off);
SELECT round(fill::numeric, 3) AS fill,
	round(false_positive_rate::numeric, 4) AS fpr,
	round(false_positive_rows::numeric, -1) AS fp_rows,
	round(true_rows::numeric) AS true_rows,
	round(candidate_rows::numeric, -1) AS candidates,
	index_pages
FROM bloomidx_estimate('tc_est', '{a}');
SELECT round(false_positive_rate::numeric, 5) AS fpr,
	round(true_rows::numeric, 4) AS true_rows,
	round(candidate_rows::numeric) AS candidates
FROM bloomidx_estimate('tc_est', '{a, b}');
-- d has 10 values: a row with d = 3 passes d's bits, so the false positives
-- of {c, d} are many more than the rate among rows matching neither
SELECT round(false_positive_rate::numeric, 5) AS fpr,
	round(false_positive_rows::numeric, -1) AS fp_rows,
	round(true_rows::numeric) AS true_rows
FROM bloomidx_estimate('tc_est', '{c, d}');
SELECT (e1).false_positive_rate = (e2).false_positive_rate AS same_rate
FROM (SELECT bloomidx_estimate('tc_est', '{a}') e1, bloomidx_estimate('tc_est', '{b}') e2) s;

-- The estimate is close to what the scan returns: candidates over 20
-- absent values on one column, estimated and actual (Bitmap Index Scan rows)
CREATE FUNCTION tc_candidates(q text, OUT estimated float8, OUT actual float8)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	SET LOCAL enable_seqscan = off;
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO plan;
	SELECT (p->>'Plan Rows')::float8, (p->>'Actual Rows')::float8
	INTO estimated, actual
	FROM json_array_elements(plan->0->'Plan'->'Plans') p
	WHERE p->>'Node Type' = 'Bitmap Index Scan';
END;
$$;
SELECT sum(estimated) / sum(actual) BETWEEN 0.6 AND 1.5 AS close,
	sum(actual) > 0 AS some_false_positives
FROM generate_series(200001, 200020) v,
	tc_candidates('SELECT * FROM tc WHERE b = ' || v);
-- Per value, with the value's own bits known at plan time: close each time
SELECT count(*) FILTER (WHERE estimated BETWEEN actual * 0.5 - 10 AND actual * 2 + 10) AS close,
	count(*) AS queries
FROM generate_series(200001, 200020) v,
	tc_candidates('SELECT * FROM tc WHERE b = ' || v);
-- Each value of d is in 10% of the rows: a value of b whose bits fall among
-- those of a value of d lets thousands of rows through.  The model hashes
-- the frequent values of every column (from the statistics) and sees them
SELECT count(*) FILTER (WHERE actual > 1000) AS many_false_positives,
	count(*) FILTER (WHERE actual > 1000 AND estimated > actual / 2) AS foreseen,
	count(*) FILTER (WHERE actual <= 1000 AND estimated > 1000) AS false_alarms
FROM generate_series(200001, 201000) v,
	tc_candidates('SELECT * FROM tc WHERE b = ' || v);
DROP FUNCTION tc_candidates;

-- The fill kept by inserts (a sample per new page) and by VACUUM (all)
CREATE TABLE tc2 (a int, b int);
CREATE INDEX tc2_idx ON tc2 USING bloomidx (a, b) WITH (length = 64, col1 = 4, col2 = 4);
SELECT round(fill::numeric, 2) AS expected_fill FROM bloomidx_estimate('tc2_idx', '{a}');
INSERT INTO tc2 SELECT i, i * 3 FROM generate_series(1, 20000) i;
SELECT round(fill::numeric, 1) AS sampled_fill FROM bloomidx_estimate('tc2_idx', '{a}');
VACUUM tc2;
SELECT round(fill::numeric, 3) AS vacuumed_fill FROM bloomidx_estimate('tc2_idx', '{a}');
-- No statistics yet: no true matches
SELECT true_rows, candidate_rows FROM bloomidx_estimate('tc2_idx', '{a}');
DROP TABLE tc2;

-- Lossy pages: 64kB of work_mem holds 1,024 heap pages in a bitmap.  When
-- the candidates lie on more pages than that, the bitmap turns half of
-- them lossy each time it fills, and the heap scan rechecks every tuple of
-- a lossy page one by one; the index's cost counts those tuples.  tl has
-- 2,440 pages, 41 rows each; b = 3 is 5% of the rows (on 87% of the pages,
-- three fillings of the bitmap: 1,536 lossy pages), a = 4242 one row
-- (INSERT, not CREATE TABLE AS, which on PostgreSQL 17 and later inserts
-- rows in batches that leave pages less full)
CREATE TABLE tl (a int, b int, pad text);
INSERT INTO tl SELECT i, i % 20, repeat('x', 150) FROM generate_series(1, 100000) i;
ANALYZE tl;
SELECT relpages FROM pg_class WHERE relname = 'tl';
CREATE INDEX tl_idx ON tl USING bloomidx (a, b);
CREATE FUNCTION tl_index_cost(q text, mem text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	SET LOCAL enable_seqscan = off;
	PERFORM set_config('work_mem', mem, true);
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
	RETURN (SELECT (p->>'Total Cost')::float8
			FROM json_array_elements(plan->0->'Plan'->'Plans') p
			WHERE p->>'Node Type' = 'Bitmap Index Scan');
END;
$$;
-- 1,536 lossy pages of 41 tuples at 0.7 cpu_tuple_cost: 441 more
SELECT round(tl_index_cost('SELECT * FROM tl WHERE b = 3', '64kB') -
			 tl_index_cost('SELECT * FROM tl WHERE b = 3', '4MB')) AS lossy_cost;
SELECT tl_index_cost('SELECT * FROM tl WHERE a = 4242', '64kB') =
	tl_index_cost('SELECT * FROM tl WHERE a = 4242', '4MB') AS same_cost_when_exact;
SHOW work_mem;
DROP FUNCTION tl_index_cost;
DROP TABLE tl;

-- An expression column: its statistics are the index's own
CREATE INDEX tc_expr ON tc USING bloomidx (lower(g), a);
ANALYZE tc;
SELECT round(true_rows::numeric) AS true_rows FROM bloomidx_estimate('tc_expr', '{lower}');
DROP INDEX tc_expr;

-- Errors
CREATE INDEX tc_btree ON tc (a);
SELECT * FROM bloomidx_estimate('tc_btree', '{a}');
SELECT * FROM bloomidx_estimate('tc', '{a}');
SELECT * FROM bloomidx_estimate('tc_est', '{z}');
SELECT * FROM bloomidx_estimate('tc_est', '{a, NULL}');
SELECT * FROM bloomidx_estimate('tc_est', '{}');
SELECT * FROM bloomidx_estimate('tc_est', '{a, a}');
SELECT * FROM bloomidx_estimate(NULL, '{a}');

DROP TABLE tc;
RESET max_parallel_workers_per_gather;
RESET jit;
RESET default_statistics_target;
