--
-- The elements option of a set operator class, left out: the build
-- measures the mean elements per value of the column from a sample of the
-- table (the whole table when it is small, as here) and sizes the
-- signature as if it had been given, or longer where the values' sizes
-- spread (the last part).  The tables are small enough to be
-- read whole, so the measured mean is the exact mean, computed below in
-- SQL: a string's trigrams are its words' lengths plus one each.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

-- Trigrams text_trgm_ops extracts from a string (NULL for NULL)
CREATE FUNCTION se_trgms(s text) RETURNS int LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN s IS NULL THEN NULL ELSE
		coalesce((SELECT sum(length(w) + 1) FROM regexp_split_to_table(s, '[^a-zA-Z0-9]+') w
				  WHERE w <> ''), 0)::int END
$$;

-- The shape of an index, to compare two indexes' shapes
CREATE FUNCTION se_shape(idx regclass) RETURNS text LANGUAGE sql AS $$
	SELECT format('%s bits, k %s, %s', signature_bits, bits_per_column, layout)
	FROM bloomidx_stats(idx)
$$;

-- An index of the given definition with elements = n for its text_trgm_ops
-- column, built and dropped: its shape
CREATE FUNCTION se_shape_with(tbl text, expr text, n int, pred text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE format('CREATE INDEX se_explicit ON %s USING bloomidx ((%s) text_trgm_ops (elements = %s))%s',
				   tbl, expr, n, coalesce(' WHERE ' || pred, ''));
	result := se_shape('se_explicit');
	EXECUTE 'DROP INDEX se_explicit';
	RETURN result;
END $$;

-- Compare a condition on table tbl through the index (forced) and by a
-- sequential scan: false if the answers differ or the index is not used
CREATE FUNCTION se_same(tbl text, cond text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	q text := format('SELECT count(*), md5(coalesce(string_agg(id::text, '','' ORDER BY id), '''')) FROM %s WHERE %s', tbl, cond);
	line text;
	used boolean := false;
	idx_n bigint; idx_h text; seq_n bigint; seq_h text;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_bitmapscan = on;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		used := used OR line LIKE '%Bitmap Index Scan%';
	END LOOP;
	EXECUTE q INTO idx_n, idx_h;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE q INTO seq_n, seq_h;
	RETURN used AND idx_n = seq_n AND idx_h = seq_h AND seq_n > 0;
END $$;

-- Long paths (about 80 trigrams each) and short names (3 or 4)
CREATE TABLE se_long (id int, p text);
INSERT INTO se_long
SELECT i, format('usr/share/doc/package%s/examples/directory%s/subdirectory/file%s.txt',
				 i % 211, i % 17, i)
FROM generate_series(1, 3000) i;
CREATE TABLE se_short (id int, p text);
INSERT INTO se_short SELECT i, 'f' || i % 97 FROM generate_series(1, 3000) i;

CREATE INDEX se_long_idx ON se_long USING bloomidx (p text_trgm_ops);
CREATE INDEX se_short_idx ON se_short USING bloomidx (p text_trgm_ops);
SELECT round(avg(se_trgms(p))) AS long_mean FROM se_long;
SELECT round(avg(se_trgms(p))) AS short_mean FROM se_short;

-- The long paths get a longer signature than the short strings, and
-- longer than the default elements (32) give
SELECT l.signature_bits > s.signature_bits AS longer_than_short
FROM bloomidx_stats('se_long_idx') l, bloomidx_stats('se_short_idx') s;
SELECT se_shape('se_long_idx') <> se_shape_with('se_long', 'p', 32) AS not_the_default;

-- Each is the shape of elements = its measured mean, given
SELECT round(avg(se_trgms(p)))::int AS m1 FROM se_long \gset
SELECT se_shape('se_long_idx') = se_shape_with('se_long', 'p',
	:m1) AS long_as_given;
SELECT round(avg(se_trgms(p)))::int AS m2 FROM se_short \gset
SELECT se_shape('se_short_idx') = se_shape_with('se_short', 'p',
	:m2) AS short_as_given;

-- Answers equal a sequential scan's: selective LIKE, ILIKE and =
SELECT se_same('se_long', 'p LIKE ''%package17/%''') AS like_package,
	se_same('se_long', 'p LIKE ''%file1234.%''') AS like_file,
	se_same('se_long', 'p ILIKE ''%DIRECTORY3/%''') AS ilike_dir,
	se_same('se_long', 'p = ''usr/share/doc/package5/examples/directory5/subdirectory/file5.txt''') AS eq;
SELECT se_same('se_short', 'p LIKE ''f42''') AS short_like;

-- The data fit: bloomidx_check says nothing
SELECT bloomidx_check('se_long_idx', true), bloomidx_check('se_short_idx', true);

-- The short strings become long paths: the index is now sized for far
-- fewer elements than its values have, and bloomidx_check says so
UPDATE se_short SET p = format('usr/lib/x86_64-linux-gnu/library%s/plugins/module%s.so', id % 31, id);
SELECT bloomidx_check('se_short_idx', true);
SELECT se_same('se_short', 'p LIKE ''%module123.%''') AS outgrown_still_exact;

-- REINDEX measures again: at least the shape of the new mean, given (the
-- paths' lengths spread a little), and nothing to say
REINDEX INDEX se_short_idx;
SELECT round(avg(se_trgms(p)))::int AS m3 FROM se_short \gset
CREATE INDEX se_short_m3 ON se_short USING bloomidx (p text_trgm_ops (elements = :m3));
SELECT r.signature_bits >= g.signature_bits AS remeasured,
	r.signature_bits < 2 * g.signature_bits AS not_far_from_mean
FROM bloomidx_stats('se_short_idx') r, bloomidx_stats('se_short_m3') g;
DROP INDEX se_short_m3;
SELECT bloomidx_check('se_short_idx', true);
SELECT se_same('se_short', 'p LIKE ''%module123.%''') AS reindexed_exact;

-- The long paths become short: sized for far more elements than they have
UPDATE se_long SET p = 'f' || id % 7;
SELECT bloomidx_check('se_long_idx');
UPDATE se_long SET p = format('usr/share/doc/package%s/examples/directory%s/subdirectory/file%s.txt',
							  id % 211, id % 17, id);

-- An explicit elements wins over the data, and bloomidx_check's hint says
-- what to give
CREATE INDEX se_given ON se_long USING bloomidx (p text_trgm_ops (elements = 8));
SELECT se_shape('se_given') = se_shape_with('se_short', 'p', 8) AS given_wins;
SELECT bloomidx_check('se_given');
DROP INDEX se_given;

-- An empty table, NULLs only, empty strings only: the default (32)
CREATE TABLE se_empty (id int, p text);
CREATE INDEX se_empty_idx ON se_empty USING bloomidx (p text_trgm_ops);
SELECT se_shape('se_empty_idx') = se_shape_with('se_empty', 'p', 32) AS empty_default;
INSERT INTO se_empty SELECT i, NULL FROM generate_series(1, 100) i;
REINDEX INDEX se_empty_idx;
SELECT se_shape('se_empty_idx') = se_shape_with('se_empty', 'p', 32) AS nulls_default;
UPDATE se_empty SET p = '';
REINDEX INDEX se_empty_idx;
SELECT se_shape('se_empty_idx') = se_shape_with('se_empty', 'p', 32) AS empties_default;
SELECT bloomidx_check('se_empty_idx', true);

-- NULLs among values do not count
UPDATE se_empty SET p = CASE WHEN id % 2 = 0 THEN NULL
	ELSE format('usr/share/doc/package%s/examples/directory%s/subdirectory/file%s.txt', id, id, id) END;
REINDEX INDEX se_empty_idx;
SELECT round(avg(se_trgms(p)))::int AS m4 FROM se_empty \gset
SELECT se_shape('se_empty_idx') = se_shape_with('se_empty', 'p',
	:m4) AS nulls_left_out;

-- An expression index measures the expression's values
CREATE INDEX se_expr ON se_short USING bloomidx ((p || '/' || p || '/' || p) text_trgm_ops);
SELECT round(avg(se_trgms(p || '/' || p || '/' || p)))::int AS m5 FROM se_short \gset
SELECT se_shape('se_expr') = se_shape_with('se_short', 'p || ''/'' || p || ''/'' || p',
	:m5) AS expression_measured,
	se_shape('se_expr') <> se_shape('se_short_idx') AS not_the_column;
SELECT se_same('se_short', '(p || ''/'' || p || ''/'' || p) LIKE ''%module77.so/%''') AS expression_exact;
DROP INDEX se_expr;

-- A partial index measures the rows it holds: short names in the odd
-- rows (four trigrams each), long paths in the even ones
UPDATE se_short SET p = 'n' || 10 + id % 13 WHERE id % 2 = 1;
CREATE INDEX se_partial ON se_short USING bloomidx (p text_trgm_ops) WHERE id % 2 = 1;
SELECT round(avg(se_trgms(p)))::int AS m6 FROM se_short WHERE id % 2 = 1 \gset
SELECT round(avg(se_trgms(p)))::int AS m7 FROM se_short \gset
SELECT se_shape('se_partial') = se_shape_with('se_short', 'p',
	:m6, 'id % 2 = 1') AS partial_measured,
	se_shape('se_partial') <> se_shape_with('se_short', 'p',
	:m7, 'id % 2 = 1') AS not_the_table;
SELECT se_same('se_short', 'id % 2 = 1 AND p LIKE ''n12''') AS partial_exact;
SELECT bloomidx_check('se_partial', true);
DROP INDEX se_partial;

-- Arrays: elements per array measured, the default (8) left out
CREATE TABLE se_arr (id int, a int[]);
INSERT INTO se_arr SELECT i, ARRAY(SELECT i * 100 + g FROM generate_series(1, 40) g) FROM generate_series(1, 2000) i;
CREATE INDEX se_arr_idx ON se_arr USING bloomidx (a array_elem_ops);
CREATE INDEX se_arr_40 ON se_arr USING bloomidx (a array_elem_ops (elements = 40));
CREATE INDEX se_arr_8 ON se_arr USING bloomidx (a array_elem_ops (elements = 8));
SELECT se_shape('se_arr_idx') = se_shape('se_arr_40') AS array_measured,
	se_shape('se_arr_idx') <> se_shape('se_arr_8') AS not_the_default;
SELECT se_same('se_arr', 'a @> ARRAY[12340]') AS array_exact;

-- An unlogged table's index is measured as any other; TRUNCATE builds it
-- again, from an empty table
CREATE UNLOGGED TABLE se_unlogged (id int, p text);
INSERT INTO se_unlogged SELECT id, p FROM se_long;
CREATE INDEX se_unlogged_idx ON se_unlogged USING bloomidx (p text_trgm_ops);
SELECT se_shape('se_unlogged_idx') = se_shape('se_long_idx') AS unlogged_measured;
SELECT bloomidx_check('se_unlogged_idx', true);
TRUNCATE se_unlogged;
SELECT se_shape('se_unlogged_idx') = se_shape_with('se_empty', 'p', 32) AS truncated_default;

-- Long documents: the measured elements ask for a signature longer than
-- the sliced layout takes, and the index gets the row layout, as with
-- the same elements given
CREATE TABLE se_docs (id int, p text);
INSERT INTO se_docs SELECT i, (SELECT string_agg('word' || (i * 1000 + g), ' ') FROM generate_series(1, 300) g)
FROM generate_series(1, 50) i;
CREATE INDEX se_docs_idx ON se_docs USING bloomidx (p text_trgm_ops);
SELECT round(avg(se_trgms(p)))::int AS m8 FROM se_docs \gset
SELECT se_shape('se_docs_idx') = se_shape_with('se_docs', 'p', :m8) AS docs_as_given,
	se_shape('se_docs_idx') LIKE '%row' AS docs_row_layout;
SELECT se_same('se_docs', 'p LIKE ''%word7123 %''') AS docs_exact;

-- Sets of spread sizes: nine arrays in ten of 2 elements, one of 40 (5.8
-- on average).  A signature sized for 6 elements fills in the large
-- arrays, which then pass nearly every query: the build sizes it for the
-- mean false-positive rate over the rows, longer, and records how much
-- more the rows load it than their mean fill says, for the estimates.
CREATE TABLE se_spread (id int, a int[]);
INSERT INTO se_spread
SELECT i, ARRAY(SELECT i * 1000 + g FROM generate_series(1, CASE WHEN i % 10 = 0 THEN 40 ELSE 2 END) g)
FROM generate_series(1, 20000) i;
SELECT round(avg(cardinality(a)), 1) AS spread_mean FROM se_spread;

-- Rows an absent element's query rechecks, over 20 such queries
CREATE FUNCTION se_rechecks() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	plan json;
	total bigint := 0;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	FOR i IN 1..20 LOOP
		EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT * FROM se_spread WHERE a @> ARRAY[%s]', -i)
			INTO plan;
		total := total + (plan->0->'Plan'->>'Rows Removed by Index Recheck')::bigint;
	END LOOP;
	RETURN total;
END $$;

CREATE INDEX se_spread_mean ON se_spread USING bloomidx (a array_elem_ops (elements = 6));
SELECT signature_bits AS mean_bits FROM bloomidx_stats('se_spread_mean') \gset
SELECT se_rechecks() AS mean_rechecks \gset
SELECT :mean_rechecks > 20 * 20000 / 20 AS mean_sized_fails_often;
DROP INDEX se_spread_mean;

CREATE INDEX se_spread_idx ON se_spread USING bloomidx (a array_elem_ops);
SELECT se_rechecks() AS rechecks \gset
SELECT signature_bits > :mean_bits AS longer_than_mean,
	:rechecks * 20 < :mean_rechecks AS fails_far_less,
	:rechecks < 20 * 20000 * 0.002 AS near_the_target
FROM bloomidx_stats('se_spread_idx');

-- The estimate knows: its false-positive rows are those rechecked, within
-- a factor of 4 (the rows of the mean fill alone would say 0.3 a query)
SELECT false_positive_rows * 20 BETWEEN :rechecks / 4.0 AND :rechecks * 4.0 AS estimate_near
FROM bloomidx_estimate('se_spread_idx', '{a}');
SELECT se_same('se_spread', 'a @> ARRAY[17002]') AS spread_exact,
	se_same('se_spread', 'a @> ARRAY[20040]') AS spread_large_exact;
SELECT bloomidx_check('se_spread_idx', true);

-- The large arrays grow to 160 elements: a build would now size the
-- column for more than twice as many, and bloomidx_check says so
UPDATE se_spread SET a = a || ARRAY(SELECT -id * 1000 - g FROM generate_series(1, 120) g)
WHERE id % 10 = 0;
SELECT bloomidx_check('se_spread_idx', true);
REINDEX INDEX se_spread_idx;
SELECT bloomidx_check('se_spread_idx', true);

-- The target asks for more than the sliced layout's longest signature:
-- the sizing stops there rather than leave the layout, so summaries = on
-- builds (and the estimate says the rate is above the target)
CREATE INDEX se_spread_on ON se_spread USING bloomidx (a array_elem_ops) WITH (summaries = on);
SELECT layout, signature_bits, false_positive_rate > 0.00035 AS above_target
FROM bloomidx_stats('se_spread_on'), bloomidx_estimate('se_spread_on', '{a}');
SELECT se_same('se_spread', 'a @> ARRAY[-20120]') AS capped_exact;

DROP TABLE se_long, se_short, se_empty, se_arr, se_unlogged, se_docs, se_spread;
DROP FUNCTION se_trgms(text), se_shape(regclass), se_shape_with(text, text, int, text), se_same(text, text), se_rechecks();
