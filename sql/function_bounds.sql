--
-- Every SQL-callable function of bloomidx with extreme arguments (0, -1,
-- NULL, INT_MAX, INT_MIN, NaN, Infinity, huge arrays and texts), called by
-- a role with no privilege beyond SELECT: each returns, or fails with a
-- proper SQLSTATE (never XX000).  statement_timeout turns a regression
-- into a failure rather than a hang.  t/028_function_sweep.pl runs the
-- same kind of calls under statement_timeout = 1s and checks that the long
-- ones are cancelled.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
DROP ROLE IF EXISTS regress_bx_bounds;
RESET client_min_messages;
\set VERBOSITY terse

CREATE ROLE regress_bx_bounds;

-- Run statement s and show its first value, or its error as SQLSTATE and
-- the start of its message
CREATE FUNCTION fb_try(s text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	EXECUTE s INTO r;
	RETURN 'ok: ' || coalesce(r, 'NULL');
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || left(SQLERRM, 100);
END;
$$;

CREATE TABLE tfb (a int, s text, arr int[]);
INSERT INTO tfb
SELECT i, 'word' || i, ARRAY[i, i + 1] FROM generate_series(1, 2000) i;
CREATE INDEX tfb_sets ON tfb USING bloomidx (a, s text_trgm_ops, arr);
CREATE INDEX tfb_long ON tfb USING bloomidx (s text_trgm_ops)
	WITH (layout = 'row', length = 4096);
ANALYZE tfb;
GRANT SELECT ON tfb TO regress_bx_bounds;

SET ROLE regress_bx_bounds;
SET statement_timeout = '60s';

--
-- bloomidx_estimate's elements: bits per element times elements in 64
-- bits; past the point where a query tests every bit of the signature the
-- estimate no longer changes (no row has every bit set: no false
-- positive), and it comes at once
--
SELECT e, round(false_positive_rate::numeric, 8) AS fpr
FROM unnest(ARRAY[1, 3, 1000, 715827883, 1431655765, 2147483647]) e,
	LATERAL bloomidx_estimate('tfb_sets', '{s}', e);
SELECT e, round(false_positive_rate::numeric, 8) AS fpr
FROM unnest(ARRAY[715827883, 2147483647]) e,
	LATERAL bloomidx_estimate('tfb_sets', '{s, arr}', e);
-- 4096-bit signatures: the longest, the slowest to fill
SELECT e, round(false_positive_rate::numeric, 12) AS fpr
FROM unnest(ARRAY[1, 2147483647]) e,
	LATERAL bloomidx_estimate('tfb_long', '{s}', e);
SELECT e, fb_try(format('SELECT false_positive_rate FROM bloomidx_estimate(%L, %L, %s)',
						'tfb_sets', '{s}', e)) AS fpr
FROM unnest(ARRAY[-2147483648, -1, 0]) e;
SELECT * FROM bloomidx_estimate('tfb_sets', '{s}', NULL);
SELECT fb_try('SELECT false_positive_rate FROM bloomidx_estimate(''tfb_sets'', NULL, 3)');
SELECT fb_try('SELECT false_positive_rate FROM bloomidx_estimate(''tfb_sets'', ''{}'', 3)');
SELECT fb_try('SELECT false_positive_rate FROM bloomidx_estimate(''tfb_sets'', ''{NULL}'', 3)');
SELECT fb_try('SELECT false_positive_rate FROM bloomidx_estimate(''tfb_sets'', array_fill(''s''::text, ARRAY[10000000]), 3)');
SELECT fb_try('SELECT false_positive_rate FROM bloomidx_estimate(''tfb_sets'', ARRAY[repeat(''x'', 100000000)], 3)');
SELECT fb_try('SELECT false_positive_rate FROM bloomidx_estimate(0, ''{s}'', 3)');
SELECT fb_try('SELECT false_positive_rate FROM bloomidx_estimate(4294967295, ''{s}'', 3)');
SELECT fb_try('SELECT false_positive_rate FROM bloomidx_estimate(''tfb'', ''{s}'', 3)');

SELECT fb_try('SELECT bloomidx_merge(0)');
SELECT fb_try('SELECT bloomidx_merge(4294967295)');
SELECT fb_try('SELECT bloomidx_merge(''tfb_sets'')');
-- Revoked from PUBLIC
SELECT fb_try('SELECT bloomidx_stats(''tfb_sets'')');
SELECT fb_try('SELECT bloomidx_check(''tfb_sets'')');

--
-- The bloomfilter type's functions: each statement's first value, or its
-- error
--
SELECT s, fb_try(s) FROM (VALUES
	('SELECT ''''::bloomfilter'),
	('SELECT ''\xzz''::bloomfilter'),
	('SELECT bloomfilter(''''::bytea)'),
	('SELECT bloomfilter(decode(repeat(''ff'', 1000000), ''hex''))'),
	('SELECT bloom_empty_raw(0, 1)'),
	('SELECT bloom_empty_raw(-1, 1)'),
	('SELECT bloom_empty_raw(9223372036854775807, 1)'),
	('SELECT bloom_empty_raw(-9223372036854775808, 1)'),
	('SELECT bloom_empty_raw(64, 0)'),
	('SELECT bloom_empty_raw(64, 2147483647)'),
	('SELECT bloom_empty_raw(64, -2147483648)'),
	('SELECT bloom_empty_raw(NULL, 1)'),
	('SELECT bloom_empty(0)'),
	('SELECT bloom_empty(-1)'),
	('SELECT bloom_empty(9223372036854775807)'),
	('SELECT bloom_empty(-9223372036854775808)'),
	('SELECT bloom_empty(2147483647)'),
	('SELECT bloom_empty(1000, 0)'),
	('SELECT bloom_empty(1000, 1)'),
	('SELECT bloom_empty(1000, -1)'),
	('SELECT bloom_empty(1000, ''NaN'')'),
	('SELECT bloom_empty(1000, ''Infinity'')'),
	('SELECT bloom_empty(1000, ''-Infinity'')'),
	('SELECT bloom_empty(1000, 1e-300)'),
	('SELECT bloom_empty(1000, 5e-324)'),
	('SELECT (bloom_info(bloom_empty(1000, 0.9999999999999999))).nbits'),
	('SELECT (bloom_info(bloom_empty(1, 1e-300))).nbits'),
	('SELECT bloom_empty(9223372036854775807, 0.9999999)'),
	('SELECT bloom_empty(1000, 0.01, -1)'),
	('SELECT bloom_empty(1000, 0.01, 2147483647)'),
	('SELECT bloom_empty(1000, 0.01, -2147483648)'),
	('SELECT bloom_empty(2147483647, 0.01, 0, true)'),
	('SELECT bloom_empty(2147483647, 0.01, 0, false, true)'),
	('SELECT bloom_empty(1000, 1e-300, 0, false, true)'),
	('SELECT bloom_empty(1000, 0.01, 2, true, true)'),
	('SELECT bloom_empty(1000, 0.01, ''''::bytea)'),
	('SELECT bloom_empty(1000, 0.01, decode(repeat(''ab'', 17), ''hex''))'),
	('SELECT bloom_empty(2147483647, ''NaN'', decode(repeat(''ab'', 16), ''hex''))'),
	('SELECT bloom_add(bloom_empty(1000), 1, decode(repeat(''ab'', 16), ''hex''))'),
	('SELECT bloom_contains(bloom_empty(1000, 0.01, decode(repeat(''ab'', 16), ''hex'')), 1, decode(repeat(''cd'', 16), ''hex''))'),
	('SELECT bloom_contains_all(bloom_empty(1000, 0.01, decode(repeat(''ab'', 16), ''hex'')), array_fill(1, ARRAY[10000000]), decode(repeat(''ab'', 16), ''hex''))'),
	('SELECT bloom_contains_any(bloom_empty(1000), array_fill(1, ARRAY[10000000]))'),
	('SELECT bloom_contains_all(bloom_empty(1000), array_fill(NULL::int, ARRAY[10000000]))'),
	('SELECT cardinality(bloom_contains(bloom_add(bloom_empty(1000), 1), array_fill(1, ARRAY[1000000])))'),
	('SELECT bloom_contains(bloom_empty(1000), repeat(''x'', 10000000))'),
	('SELECT bloom_contains(bloom_add(bloom_empty(1000), repeat(''x'', 10000000)), repeat(''x'', 10000000))'),
	('SELECT bloom_union(bloom_empty(1000), bloom_empty(2000))'),
	('SELECT bloom_union(bloom_empty(1000), bloom_empty(1000, 0.01, 0, true))'),
	('SELECT bloom_intersect(bloom_empty(1000, 0.01, 2), bloom_empty(1000, 0.01, 2))'),
	('SELECT bloom_remove(bloom_empty(1000), 1)'),
	('SELECT bloom_remove(bloom_empty(1000, 0.01, 0, true), 1)'),
	('SELECT bloom_remove(bloom_empty(1000, 0.01, 0, true), array_fill(1, ARRAY[1000000]))'),
	('SELECT bloom_fold(bloom_empty_raw(1024, 3), 0)'),
	('SELECT bloom_fold(bloom_empty_raw(1024, 3), -1)'),
	('SELECT bloom_fold(bloom_empty_raw(1024, 3), 2147483647)'),
	('SELECT bloom_fold(bloom_empty_raw(1024, 3), -2147483648)'),
	('SELECT (bloom_info(bloom_fold(bloom_empty_raw(1024, 3), 1024))).nbits'),
	('SELECT bloom_fold(bloom_empty_raw(1024, 3), 2048)'),
	('SELECT bloom_fold(bloom_empty(1000, 0.01, 2), 2)'),
	('SELECT bloom_fold(bloom_empty(1000, 0.01, 0, true), 2)'),
	('SELECT bloom_agg(i, 0, 0.01) FROM generate_series(1, 3) i'),
	('SELECT bloom_agg(i, 9223372036854775807, 0.01) FROM generate_series(1, 3) i'),
	('SELECT bloom_agg(i, 1000, ''NaN'') FROM generate_series(1, 3) i'),
	('SELECT bloom_agg(i, 1000, 0.01, 2147483647) FROM generate_series(1, 3) i'),
	('SELECT bloom_agg(i, NULL::bloomfilter) FROM generate_series(1, 3) i'),
	('SELECT bloom_agg(i, bloom_empty(1000, 0.01, decode(repeat(''ab'', 16), ''hex'')), NULL::bytea) FROM generate_series(1, 3) i'),
	('SELECT bloom_union_agg(f) FROM (VALUES (bloom_empty(1000)), (bloom_empty(2000))) v(f)'),
	('SELECT round(bloom_cardinality(bloom_agg(x))) FROM (SELECT array_fill(1, ARRAY[10000000]) x) s')
) v(s);

RESET ROLE;
-- Functions revoked from PUBLIC, as their owner calls them
SELECT fb_try('SELECT bloomidx_stats(0)');
SELECT fb_try('SELECT bloomidx_stats(4294967295)');
SELECT fb_try('SELECT bloomidx_check(0)');
SELECT fb_try('SELECT bloomidx_check(4294967295, true)');

RESET statement_timeout;
DROP TABLE tfb;
DROP FUNCTION fb_try(text);
DROP ROLE regress_bx_bounds;
