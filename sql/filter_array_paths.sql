--
-- The array forms of bloom_contains walk an array without NULLs of a
-- fixed-width type by pointer, hash int4 and int8 elements (and domains
-- over them) without a function call, and read a large array stored out
-- of line uncompressed onto huge pages: they must answer exactly as
-- bloom_contains does for each element, on those paths and on the others
-- (NULLs, variable width, other fixed-width types, by reference,
-- compressed), in any number of dimensions and with any lower bounds.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

CREATE DOMAIN ap_posint AS int CHECK (VALUE > 0);

-- Answers of the array form against bloom_contains on each element: the
-- number of answers, of trues, of mismatches (must be 0), whether the
-- answers have the array's dimensions, and the any and all forms against
-- the answers.
CREATE FUNCTION ap_check(f bloomfilter, a anyarray) RETURNS text
LANGUAGE sql AS $$
	SELECT format('%s answers, %s true, %s mismatches, dims %s, any %s, all %s',
				  count(*), count(*) FILTER (WHERE r),
				  count(*) FILTER (WHERE r IS DISTINCT FROM bloom_contains(f, v)),
				  array_dims(bloom_contains(f, a)) IS NOT DISTINCT FROM array_dims(a),
				  bloom_contains_any(f, a) IS NOT DISTINCT FROM
					(CASE WHEN bool_or(r) THEN true WHEN bool_or(r IS NULL) THEN NULL ELSE false END),
				  bloom_contains_all(f, a) IS NOT DISTINCT FROM
					(CASE WHEN NOT bool_and(coalesce(r, true)) THEN false WHEN bool_or(r IS NULL) THEN NULL ELSE true END))
	FROM ROWS FROM (unnest(a), unnest(bloom_contains(f, a))) x(v, r)
$$;

-- every third value of -3000 .. 3000, in filters of each type; int8
-- values spread over the whole range, negative ones included
CREATE TABLE apf (t text, f bloomfilter);
INSERT INTO apf
	SELECT 'int4', bloom_agg(i, bloom_empty(2000, 0.02)) FROM generate_series(-3000, 3000, 3) i
	UNION ALL
	SELECT 'int4_blocked', bloom_agg(i, bloom_empty(2000, 0.02, blocked => true)) FROM generate_series(-3000, 3000, 3) i
	UNION ALL
	SELECT 'int8', bloom_agg(i * 3037000493::int8, bloom_empty(2000, 0.02)) FROM generate_series(-3000, 3000, 3) i
	UNION ALL
	SELECT 'int8_growing', bloom_agg(i * 3037000493::int8, 100, 0.02, 2) FROM generate_series(-3000, 3000, 3) i
	UNION ALL
	SELECT 'int2', bloom_agg(i::int2, bloom_empty(2000, 0.02)) FROM generate_series(-3000, 3000, 3) i
	UNION ALL
	SELECT 'float8', bloom_agg(i / 7.0::float8, bloom_empty(2000, 0.02)) FROM generate_series(-3000, 3000, 3) i
	UNION ALL
	SELECT 'uuid', bloom_agg(md5(i::text)::uuid, bloom_empty(2000, 0.02)) FROM generate_series(-3000, 3000, 3) i
	UNION ALL
	SELECT 'text', bloom_agg('v' || i, bloom_empty(2000, 0.02)) FROM generate_series(-3000, 3000, 3) i
	UNION ALL
	SELECT 'posint', bloom_agg(i::ap_posint, bloom_empty(2000, 0.02)) FROM generate_series(3, 3000, 3) i;

-- every value of -3000 .. 3000: flat, with NULLs (every 11th), and in two
-- dimensions (the first 6000 values, 2000 rows of 3)
CREATE TABLE apv AS
	SELECT i, i % 11 = 0 AS nul, (i + 3000) / 3 AS row FROM generate_series(-3000, 3000) i;

SELECT 'int4' AS t, ap_check(f, (SELECT array_agg(i ORDER BY i) FROM apv)) FROM apf WHERE t = 'int4'
UNION ALL
SELECT 'int4 nulls', ap_check(f, (SELECT array_agg(CASE WHEN NOT nul THEN i END ORDER BY i) FROM apv)) FROM apf WHERE t = 'int4'
UNION ALL
SELECT 'int4 2-D', ap_check(f, (SELECT array_agg(r ORDER BY row) FROM (SELECT row, array_agg(i ORDER BY i) r FROM apv WHERE row < 2000 GROUP BY row) s)) FROM apf WHERE t = 'int4'
UNION ALL
SELECT 'int4 blocked', ap_check(f, (SELECT array_agg(i ORDER BY i) FROM apv)) FROM apf WHERE t = 'int4_blocked'
UNION ALL
SELECT 'int8', ap_check(f, (SELECT array_agg(i * 3037000493::int8 ORDER BY i) FROM apv)) FROM apf WHERE t = 'int8'
UNION ALL
SELECT 'int8 nulls', ap_check(f, (SELECT array_agg(CASE WHEN NOT nul THEN i * 3037000493::int8 END ORDER BY i) FROM apv)) FROM apf WHERE t = 'int8'
UNION ALL
SELECT 'int8 2-D', ap_check(f, (SELECT array_agg(r ORDER BY row) FROM (SELECT row, array_agg(i * 3037000493::int8 ORDER BY i) r FROM apv WHERE row < 2000 GROUP BY row) s)) FROM apf WHERE t = 'int8'
UNION ALL
SELECT 'int8 growing', ap_check(f, (SELECT array_agg(i * 3037000493::int8 ORDER BY i) FROM apv)) FROM apf WHERE t = 'int8_growing'
UNION ALL
SELECT 'int2', ap_check(f, (SELECT array_agg(i::int2 ORDER BY i) FROM apv)) FROM apf WHERE t = 'int2'
UNION ALL
SELECT 'int2 nulls', ap_check(f, (SELECT array_agg(CASE WHEN NOT nul THEN i::int2 END ORDER BY i) FROM apv)) FROM apf WHERE t = 'int2'
UNION ALL
SELECT 'float8', ap_check(f, (SELECT array_agg(i / 7.0::float8 ORDER BY i) FROM apv)) FROM apf WHERE t = 'float8'
UNION ALL
SELECT 'uuid', ap_check(f, (SELECT array_agg(md5(i::text)::uuid ORDER BY i) FROM apv)) FROM apf WHERE t = 'uuid'
UNION ALL
SELECT 'uuid nulls', ap_check(f, (SELECT array_agg(CASE WHEN NOT nul THEN md5(i::text)::uuid END ORDER BY i) FROM apv)) FROM apf WHERE t = 'uuid'
UNION ALL
SELECT 'text', ap_check(f, (SELECT array_agg('v' || i ORDER BY i) FROM apv)) FROM apf WHERE t = 'text'
UNION ALL
SELECT 'text nulls', ap_check(f, (SELECT array_agg(CASE WHEN NOT nul THEN 'v' || i END ORDER BY i) FROM apv)) FROM apf WHERE t = 'text'
UNION ALL
SELECT 'posint', ap_check(f, (SELECT array_agg(i::ap_posint ORDER BY i) FROM apv WHERE i > 0)) FROM apf WHERE t = 'posint';

-- lower bounds other than 1, literal arrays, values added and not
SELECT t, ap_check(f, '[-2:0][5:6]={{-3000,-2999},{0,1},{2999,3000}}'::int4[]) FROM apf WHERE t = 'int4'
UNION ALL
SELECT t, ap_check(f, '[0:3]={-9111001479000,-9110998442000,0,9111001479000}'::int8[]) FROM apf WHERE t = 'int8'
UNION ALL
SELECT t, ap_check(f, '[7:8]={3,NULL}'::int4[]) FROM apf WHERE t = 'int4'
UNION ALL
SELECT t, ap_check(f, '{}'::int8[]) FROM apf WHERE t = 'int8';
SELECT bloom_contains(f, '[-2:0][5:6]={{-3000,-2999},{0,1},{2999,3000}}'::int4[]) FROM apf WHERE t = 'int4';

-- a large array stored out of line: uncompressed (read onto huge pages)
-- and compressed (detoasted as usual); the answers must be those for the
-- same array held in memory
CREATE TABLE apbig (storage text, a int[]);
ALTER TABLE apbig ALTER COLUMN a SET STORAGE EXTERNAL;
INSERT INTO apbig SELECT 'external', array_agg(i ORDER BY i) FROM generate_series(-600000, 600000) i;
ALTER TABLE apbig ALTER COLUMN a SET STORAGE EXTENDED;
INSERT INTO apbig SELECT 'extended', array_agg(i / 100 ORDER BY i) FROM generate_series(-600000, 600000) i;
SELECT storage, pg_column_size(a) >= 4 * 1024 * 1024 AS large_uncompressed,
	   t, bloom_contains(f, a) = bloom_contains(f, a || '{}'::int[]) AS same,
	   cardinality(bloom_contains(f, a)) AS answers,
	   (SELECT count(*) FROM unnest(bloom_contains(f, a)) x WHERE x) AS trues,
	   bloom_contains_any(f, a) AS any, bloom_contains_all(f, a) AS all
FROM apbig, apf WHERE t IN ('int4', 'int4_blocked') ORDER BY storage, t;

DROP TABLE apf, apv, apbig;
DROP FUNCTION ap_check(bloomfilter, anyarray);
DROP DOMAIN ap_posint;
