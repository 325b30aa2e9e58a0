--
-- Ad hoc bloom filters: the bloomfilter type, its functions, operators,
-- casts and aggregates, every error, NULL handling, parallel aggregation,
-- a full filter, and a golden value that must decode the same on every
-- server.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

-- Shape of a filter, without the parts that depend on hashing
CREATE FUNCTION f_shape(f bloomfilter)
RETURNS TABLE (element_type regtype, nbits bigint, nhashes int,
			   capacity bigint, target float8, nbits_set bigint, size_bytes bigint)
LANGUAGE sql AS $$
	SELECT element_type, nbits, nhashes, capacity, target_false_positive_rate,
		   nbits_set, size_bytes
	FROM bloom_info(f)
$$;

-- Overwrite n bytes of a filter's bytes at zero-based offset off
CREATE FUNCTION f_patch(f bytea, off int, b bytea) RETURNS bytea
LANGUAGE sql AS $$ SELECT overlay(f PLACING b FROM off + 1 FOR length(b)) $$;

--
-- Constructors and text I/O
--
SELECT bloom_empty(10);
SELECT * FROM f_shape(bloom_empty(1000));
SELECT * FROM f_shape(bloom_empty(1000, 0.001));
SELECT * FROM f_shape(bloom_empty(1000, 0.5));
SELECT * FROM f_shape(bloom_empty(1, 0.99));
SELECT bloom_empty_raw(20, 3);
SELECT * FROM f_shape(bloom_empty_raw(20, 3));
SELECT bloom_empty(NULL), bloom_empty(10, NULL), bloom_empty_raw(NULL, 1) IS NULL;

-- the text form reads back to the same value
SELECT bloom_add(bloom_empty(10), 42)::text::bloomfilter::text
	 = bloom_add(bloom_empty(10), 42)::text AS text_round_trip;
SELECT '\x424C4D460100010000000000020000001400000000000000000000000000000000000000000000000000000000'::bloomfilter;

-- parameter errors
SELECT bloom_empty(0);
SELECT bloom_empty(-5, 0.1);
SELECT bloom_empty(10, 0);
SELECT bloom_empty(10, 1);
SELECT bloom_empty(10, 1.5);
SELECT bloom_empty(10, -0.1);
SELECT bloom_empty(10, 'NaN');
SELECT bloom_empty(1000000000, 0.01);
SELECT bloom_empty(9223372036854775807, 0.5);
SELECT bloom_empty_raw(0, 3);
SELECT bloom_empty_raw(-1, 3);
SELECT bloom_empty_raw(2147483649, 3);
SELECT bloom_empty_raw(64, 0);
SELECT bloom_empty_raw(64, 65);

--
-- Adding and probing
--
CREATE TABLE fi AS
	SELECT bloom_add(bloom_add(bloom_add(bloom_empty(100), 1), 2), 3) AS f;
SELECT v, bloom_contains(f, v) FROM fi, generate_series(0, 5) v ORDER BY v;
SELECT element_type, nbits_set > 0 AS has_bits FROM fi, bloom_info(f);

-- text, with the default collation, "C" and no collation hash alike
SELECT bloom_contains(bloom_add(bloom_empty(10), 'abc'::text), 'abc'::text),
	   bloom_contains(bloom_add(bloom_empty(10), 'abc'::text), 'abc'::text COLLATE "C"),
	   bloom_contains(bloom_add(bloom_empty(10), 'abc'::text COLLATE "C"), 'abc'::text),
	   bloom_contains(bloom_add(bloom_empty(10), 'abc'::varchar), 'abc'::varchar),
	   bloom_contains(bloom_add(bloom_empty(10), 'abc'::text), 'abd'::text);
-- an expression of conflicting implicit collations has none: hashed as default
CREATE TABLE fc (x text COLLATE "C", y text COLLATE "POSIX");
INSERT INTO fc VALUES ('a', 'b');
SELECT bloom_contains(bloom_add(bloom_empty(10), 'ab'::text), x || y),
	   bloom_contains(bloom_agg(x || y), 'ab'::text)
FROM fc GROUP BY x, y;
DROP TABLE fc;
-- like any polymorphic function, an untyped literal needs a cast
SELECT bloom_contains(bloom_add(bloom_empty(10), 'x'), 'x');
-- equality of the type decides: numeric 1.0 = 1.00, bpchar blanks
SELECT bloom_contains(bloom_add(bloom_empty(10), 1.0::numeric), 1.00::numeric),
	   bloom_contains(bloom_add(bloom_empty(10), 'ab '::char(5)), 'ab'::char(3));
-- a domain is its base type
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
SELECT bloom_contains(bloom_add(bloom_empty(10), 7::posint), 7),
	   (bloom_info(bloom_add(bloom_empty(10), 7::posint))).element_type;

-- NULL filter or value gives NULL
SELECT bloom_add(NULL, 1) IS NULL AS add_null_filter,
	   bloom_add(bloom_empty(10), NULL::int) IS NULL AS add_null_value,
	   bloom_contains(NULL, 1) IS NULL AS contains_null_filter,
	   bloom_contains(f, NULL::int) IS NULL AS contains_null_value
FROM fi;

-- an empty filter has no type yet and contains nothing
SELECT bloom_contains(bloom_empty(10), 1), bloom_contains(bloom_empty(10), 'a'::text),
	   (bloom_info(bloom_empty(10))).element_type;

-- type errors name both types
SELECT bloom_contains(f, 1::bigint) FROM fi;
SELECT bloom_contains(f, 'x'::text) FROM fi;
SELECT bloom_add(f, 1::smallint) FROM fi;
SELECT bloom_contains(f, ARRAY[1, 2]::bigint[]) FROM fi;
-- types without an extended hash function, and nondeterministic collations
SELECT bloom_add(bloom_empty(10), point '(1,2)');
SELECT bloom_agg(x) FROM (VALUES (point '(1,2)')) v(x);
CREATE COLLATION f_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT bloom_add(bloom_empty(10), 'abc'::text COLLATE f_ci);
SELECT bloom_agg(x COLLATE f_ci) FROM (VALUES ('a'), ('A')) v(x);

-- array probes: one answer per element, NULL for NULL
SELECT bloom_contains(f, ARRAY[1, 4, NULL, 3]) FROM fi;
SELECT bloom_contains(f, '{{1,2},{5,6}}'::int[]) FROM fi;
SELECT bloom_contains(f, '{}'::int[]) FROM fi;
SELECT bloom_contains(f, NULL::int[]) IS NULL FROM fi;
SELECT bloom_contains(bloom_empty(10), ARRAY[1, NULL]);
-- any and all, with the NULL rules of = ANY and = ALL
SELECT bloom_contains_any(f, ARRAY[4, 5, 1]) AS any_hit,
	   bloom_contains_any(f, ARRAY[4, 5]) AS any_miss,
	   bloom_contains_any(f, ARRAY[4, NULL]) AS any_null,
	   bloom_contains_any(f, ARRAY[1, NULL]) AS any_hit_null,
	   bloom_contains_any(f, '{}'::int[]) AS any_empty,
	   bloom_contains_all(f, ARRAY[1, 2, 3]) AS all_hit,
	   bloom_contains_all(f, ARRAY[1, 4]) AS all_miss,
	   bloom_contains_all(f, ARRAY[1, NULL]) AS all_null,
	   bloom_contains_all(f, ARRAY[4, NULL]) AS all_miss_null,
	   bloom_contains_all(f, '{}'::int[]) AS all_empty
FROM fi;
SELECT bloom_contains_any(f, ARRAY['a']) FROM fi;
SELECT bloom_contains_all(NULL, ARRAY[1]) IS NULL, bloom_contains_any(NULL, ARRAY[1]) IS NULL;
-- a filter of arrays is probed with an array as one value
SELECT bloom_contains(f, ARRAY[1, 2]) AS one, bloom_contains(f, ARRAY[2, 1]) AS other,
	   bloom_contains_any(f, ARRAY[1, 2]) AS one_any
FROM (SELECT bloom_agg(ARRAY[i, i + 1]) AS f FROM generate_series(1, 10) i) s;

--
-- Union and intersection
--
CREATE TABLE fu AS
	SELECT (SELECT bloom_agg(i, 100, 0.01) FROM generate_series(1, 50) i) AS a,
		   (SELECT bloom_agg(i, 100, 0.01) FROM generate_series(41, 90) i) AS b;
SELECT count(*) FILTER (WHERE bloom_contains(bloom_union(a, b), i)) AS in_union,
	   count(*) FILTER (WHERE bloom_contains(a | b, i)) AS in_or,
	   count(*) FILTER (WHERE bloom_contains(bloom_intersect(a, b), i) AND i BETWEEN 41 AND 50) AS both_in_and,
	   count(*) FILTER (WHERE bloom_contains(a & b, i)) >= 10 AS and_at_least_common
FROM fu, generate_series(1, 90) i;
SELECT (a | b)::bytea = (b | a)::bytea AS union_commutes,
	   (a & b)::bytea = (b & a)::bytea AS intersect_commutes,
	   (a | a)::bytea = a::bytea AS union_idempotent,
	   bloom_union(a, NULL) IS NULL AS union_null
FROM fu;
SELECT * FROM f_shape(bloom_union(bloom_empty(100), (SELECT a FROM fu))) s
	WHERE s.nbits_set = (bloom_info((SELECT a FROM fu))).nbits_set;
-- untyped filters combine with typed ones; different sizing gives unknown sizing
SELECT element_type, capacity, target FROM f_shape(bloom_empty(100) | (SELECT a FROM fu));
SELECT element_type, capacity, target FROM f_shape(bloom_empty_raw(960, 7) | bloom_add(bloom_empty(100), 1));
SELECT element_type, capacity, target FROM f_shape(bloom_empty(100) & bloom_empty(100));
-- combining incompatible filters
SELECT bloom_add(bloom_empty(100), 1) | bloom_add(bloom_empty(100), 1::bigint);
SELECT bloom_empty(100) | bloom_empty(101);
SELECT bloom_empty_raw(64, 2) & bloom_empty_raw(64, 3);
SELECT bloom_union_agg(f) FROM (VALUES (bloom_empty(10)), (bloom_empty(20))) v(f);

--
-- Aggregates
--
CREATE TABLE fa AS SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE i % 1000 END AS v
	FROM generate_series(1, 20000) i;
-- NULL inputs are ignored; sized for the distinct values (900)
SELECT * FROM f_shape((SELECT bloom_agg(v) FROM fa));
SELECT count(*) FILTER (WHERE bloom_contains(f, v)) AS contained,
	   count(v) AS non_null
FROM fa, (SELECT bloom_agg(v) AS f FROM fa) s;
SELECT round(bloom_cardinality(bloom_agg(v))) AS estimate FROM fa;
-- with a capacity
SELECT * FROM f_shape((SELECT bloom_agg(v, 5000, 0.001) FROM fa));
SELECT count(*) FILTER (WHERE bloom_contains(f, v)) AS contained
FROM fa, (SELECT bloom_agg(v, 5000, 0.001) AS f FROM fa) s;
-- no rows, or only NULLs: NULL
SELECT bloom_agg(v) IS NULL AS no_rows, bloom_agg(v, 10, 0.1) IS NULL AS no_rows_sized
FROM fa WHERE false;
SELECT bloom_agg(NULL::int) IS NULL AS only_nulls, bloom_union_agg(NULL) IS NULL AS union_only_nulls
FROM generate_series(1, 3);
-- per group
SELECT g, (bloom_info(f)).capacity,
	   bloom_contains(f, g) AS has_own, bloom_contains(f, g + 1) AS has_next
FROM (SELECT i % 3 AS g, bloom_agg(i) AS f FROM generate_series(0, 29) i GROUP BY 1) s
ORDER BY g;
-- union of filters
SELECT count(*) FILTER (WHERE bloom_contains(u, i)) AS contained
FROM (SELECT bloom_union_agg(f) AS u
	  FROM (SELECT bloom_agg(i, 1000, 0.01) AS f FROM generate_series(1, 900) i GROUP BY i % 7) s) s2,
	 generate_series(1, 900) i;
SELECT (bloom_info(bloom_union_agg(f))).element_type
FROM (VALUES (bloom_empty(10)), (NULL), (bloom_add(bloom_empty(10), 'a'::text))) v(f);
-- aggregate errors
SELECT bloom_agg(i, 0, 0.01) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, 10, 2) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, NULL, 0.01) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, 10, NULL) FROM generate_series(1, 3) i;

--
-- Parallel aggregation gives the serial answer
--
CREATE TABLE fp AS SELECT i, (i * 7919) % 100003 AS v FROM generate_series(1, 200000) i;
ANALYZE fp;
CREATE TABLE fp_serial AS
	SELECT bloom_agg(v) AS a, bloom_agg(v, 100000, 0.01) AS b,
		   bloom_union_agg(bloom_add(bloom_empty(64), i % 50)) AS c
	FROM fp;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
	SELECT bloom_agg(v), bloom_agg(v, 100000, 0.01),
		   bloom_union_agg(bloom_add(bloom_empty(64), i % 50))
	FROM fp;
SELECT s.a::bytea = p.a::bytea AS same_agg,
	   s.b::bytea = p.b::bytea AS same_sized_agg,
	   s.c::bytea = p.c::bytea AS same_union_agg
FROM fp_serial s,
	 (SELECT bloom_agg(v) AS a, bloom_agg(v, 100000, 0.01) AS b,
			 bloom_union_agg(bloom_add(bloom_empty(64), i % 50)) AS c
	  FROM fp) p;
SELECT bool_and(p.f::bytea = s.f::bytea) AS same_per_group, count(*)
FROM (SELECT i % 4 AS g, bloom_agg(v) AS f FROM fp GROUP BY 1) p
	 JOIN (SELECT i % 4 AS g, bloom_agg(v) AS f FROM (SELECT * FROM fp ORDER BY i DESC) o GROUP BY 1) s USING (g);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT (bloom_info(a)).capacity AS distinct_values FROM fp_serial;

--
-- A full filter keeps working, and its expected rate rises
--
CREATE TABLE ff AS
	SELECT n, bloom_agg(i, 100, 0.01) AS f
	FROM generate_series(1, 10) k, LATERAL (SELECT k * 50 AS n) x,
		 LATERAL generate_series(1, n) i
	GROUP BY n;
SELECT n, (SELECT count(*) FROM generate_series(1, n) i WHERE bloom_contains(f, i)) = n AS all_contained,
	   round(fill_ratio::numeric, 2) AS fill,
	   expected_false_positive_rate > target_false_positive_rate AS above_target,
	   expected_false_positive_rate > lag(expected_false_positive_rate) OVER (ORDER BY n) AS rising
FROM ff, bloom_info(f) ORDER BY n;
-- completely full: everything matches, the cardinality is unknowable
SELECT bloom_contains(f, -1), bloom_cardinality(f), (bloom_info(f)).expected_false_positive_rate
FROM (SELECT bloom_agg(i, 1, 0.5) AS f FROM generate_series(1, 100) i) s;

--
-- Inspection
--
SELECT format_version, element_type, nbits, nhashes, capacity, target_false_positive_rate,
	   nbits_set, round(fill_ratio::numeric, 4) AS fill_ratio,
	   round(estimated_cardinality) AS estimated_cardinality,
	   round(expected_false_positive_rate::numeric, 6) AS expected_false_positive_rate,
	   size_bytes
FROM bloom_info((SELECT bloom_agg(i, 1000, 0.01) FROM generate_series(1, 500) i));
SELECT * FROM bloom_info(bloom_empty_raw(100, 2));
SELECT bloom_cardinality(bloom_empty(10)), bloom_cardinality(NULL) IS NULL;
SELECT round(bloom_cardinality(bloom_agg(i))) FROM generate_series(1, 10000) i;

--
-- Casts and binary I/O
--
SELECT bloom_empty_raw(8, 1)::bytea;
SELECT '\x424c4d46010001000000000001000000080000000000000000000000000000000000000000000000000000'::bytea::bloomfilter;
SELECT bloomfilter_send(f) = f::bytea AS send_is_bytes FROM fi;
SELECT f::bytea::bloomfilter::bytea = f::bytea AS bytea_round_trip FROM fi;
CREATE TABLE fb (f bloomfilter);
INSERT INTO fb SELECT f FROM fi;
\copy fb TO 'results/filter.bin' WITH (FORMAT binary)
\copy fb FROM 'results/filter.bin' WITH (FORMAT binary)
SELECT count(DISTINCT f::bytea) AS distinct_filters, count(*) FROM fb;

--
-- Bad bytes: every kind is a data exception, from bytea and from text
--
CREATE TABLE fgood AS SELECT bloom_empty_raw(12, 2)::bytea AS b;
SELECT b FROM fgood;
SELECT b::bloomfilter IS NOT NULL AS valid FROM fgood;
SELECT ''::bytea::bloomfilter;
SELECT substr(b, 1, 20)::bloomfilter FROM fgood;
SELECT substr(b, 1, 43)::bloomfilter FROM fgood;
SELECT (b || '\x00'::bytea)::bloomfilter FROM fgood;
SELECT f_patch(b, 0, '\x58')::bloomfilter FROM fgood;
SELECT '\x00010203'::bytea::bloomfilter;
SELECT f_patch(b, 4, '\x0200')::bloomfilter FROM fgood;
SELECT f_patch(b, 4, '\x0000')::bloomfilter FROM fgood;
SELECT f_patch(b, 6, '\x0200')::bloomfilter FROM fgood;
SELECT f_patch(b, 12, '\x00000000')::bloomfilter FROM fgood;
SELECT f_patch(b, 12, '\x41000000')::bloomfilter FROM fgood;
SELECT f_patch(b, 16, '\x0000000000000000')::bloomfilter FROM fgood;
SELECT f_patch(b, 16, '\x0100008000000000')::bloomfilter FROM fgood;
SELECT f_patch(b, 16, '\x0800000000000000')::bloomfilter FROM fgood;
SELECT f_patch(b, 16, '\x1800000000000000')::bloomfilter FROM fgood;
SELECT f_patch(b, 24, '\x0a00000000000000')::bloomfilter FROM fgood;
SELECT f_patch(f_patch(b, 24, '\x0a00000000000000'), 32, '\x000000000000f03f')::bloomfilter FROM fgood;
SELECT f_patch(f_patch(b, 24, '\x0a00000000000000'), 32, '\x000000000000f87f')::bloomfilter FROM fgood;
SELECT f_patch(b, 32, '\x7b14ae47e17a843f')::bloomfilter FROM fgood;
SELECT f_patch(b, 40, '\x01')::bloomfilter FROM fgood;
SELECT f_patch(b, 42, '\x0010')::bloomfilter FROM fgood;
SELECT f_patch(f_patch(b, 8, '\x17000000'), 43, '\x10')::bloomfilter FROM fgood;
SELECT f_patch(b, 8, '\x17000000')::bloomfilter IS NOT NULL AS typed_empty_ok FROM fgood;
SELECT f_patch(b, 42, '\x0100')::bloomfilter FROM fgood;
SELECT f_patch(b, 8, '\xff0f0000')::bloomfilter FROM fgood;
SELECT f_patch(b, 8, '\x10270000')::bloomfilter FROM fgood;
-- the same through text input
SELECT ('\x' || encode(f_patch(b, 0, '\x58'), 'hex'))::bloomfilter FROM fgood;
SELECT ('\x' || encode(substr(b, 1, 30), 'hex'))::bloomfilter FROM fgood;
SELECT ('\x' || encode(f_patch(b, 42, '\x0010'), 'hex'))::bloomfilter FROM fgood;
SELECT '\x'::bloomfilter;
SELECT 'abc'::bloomfilter;
SELECT '\x424c4d4'::bloomfilter;
SELECT '\x424c4d4g'::bloomfilter;
SELECT ' \x424c4d46'::bloomfilter;

-- the SQLSTATE of each kind of error
CREATE FUNCTION f_sqlstate(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END $$;
SELECT q, f_sqlstate(q) FROM (VALUES
	('SELECT bloom_empty(0)'),
	('SELECT bloom_empty(10, 1)'),
	('SELECT bloom_empty(1000000000)'),
	('SELECT bloom_empty_raw(2147483649, 1)'),
	('SELECT bloom_empty_raw(8, 65)'),
	('SELECT bloom_agg(i, 10, NULL) FROM generate_series(1, 2) i'),
	('SELECT ''\x00''::bytea::bloomfilter'),
	('SELECT ''\x424c4d46''::bloomfilter'),
	('SELECT ''\x424c4d4''::bloomfilter'),
	('SELECT bloom_contains(bloom_add(bloom_empty(10), 1), 1::bigint)'),
	('SELECT bloom_add(bloom_empty(10), 1) | bloom_add(bloom_empty(10), 1::bigint)'),
	('SELECT bloom_empty(10) | bloom_empty(11)'),
	('SELECT bloom_add(bloom_empty(10), point ''(1,1)'')'),
	('SELECT bloom_add(bloom_empty(10), ''a''::text COLLATE f_ci)')
) v(q);

--
-- Types that are not built in are stored by name as well as by OID, so a
-- filter moved to another database finds its type there by name
--
CREATE TYPE f_pair AS (a int, b text);
CREATE TABLE fn AS SELECT bloom_agg((i, 'v' || i)::f_pair) AS f FROM generate_series(1, 20) i;
SELECT (bloom_info(f)).element_type, convert_from(substr(f::bytea, 43, 12), 'UTF8') AS names,
	   get_byte(f::bytea, 40) AS nsp_len, get_byte(f::bytea, 41) AS typ_len
FROM fn;
SELECT bloom_contains(f, (3, 'v3')::f_pair) AS hit, bloom_contains(f, (3, 'v4')::f_pair) AS miss FROM fn;
-- another server had another OID: the name decides
SELECT (bloom_info(g)).element_type, bloom_contains(g, (3, 'v3')::f_pair),
	   substr(g::bytea, 9, 4) = substr(f::bytea, 9, 4) AS oid_is_local
FROM fn, LATERAL (SELECT f_patch(f::bytea, 8, '\x9f860100')::bloomfilter AS g) x;
-- a type of that name must exist
SELECT f_patch(f::bytea, 42 + 6, convert_to('x', 'UTF8'))::bloomfilter FROM fn;
SELECT f_patch(f::bytea, 42, convert_to('x', 'UTF8'))::bloomfilter FROM fn;

--
-- Golden value: this filter of the integers 1 to 20 (bloom_agg(i, 20, 0.05)),
-- written on one server, reads the same on every server
--
SELECT bloom_agg(i, 20, 0.05) FROM generate_series(1, 20) i;
SELECT '\x424c4d460100010017000000040000007d0000000000000014000000000000009a9999999999a93f0000d2bd6dc7ee2794b812798d006e825618'::bloomfilter::bytea
	 = (SELECT bloom_agg(i, 20, 0.05) FROM generate_series(1, 20) i)::bytea AS golden_matches;
SELECT * FROM f_shape('\x424c4d460100010017000000040000007d0000000000000014000000000000009a9999999999a93f0000d2bd6dc7ee2794b812798d006e825618');
SELECT array_agg(i ORDER BY i) FILTER (WHERE bloom_contains(g, i)) AS contained
FROM generate_series(-10, 60) i,
	 (SELECT '\x424c4d460100010017000000040000007d0000000000000014000000000000009a9999999999a93f0000d2bd6dc7ee2794b812798d006e825618'::bloomfilter AS g) s;

--
-- A filter stored out of line is probed once detoasted
--
CREATE TABLE ft (id int, f bloomfilter);
INSERT INTO ft SELECT 1, bloom_agg(i) FROM generate_series(1, 50000) i;
INSERT INTO ft SELECT 2, bloom_agg(i) FROM generate_series(50001, 100000) i;
SELECT id, pg_column_size(f) < octet_length(f::bytea) OR pg_column_size(f) > 2000 AS stored_big FROM ft ORDER BY id;
SELECT (SELECT count(*) FROM generate_series(1, 100000) i WHERE bloom_contains(f, i)) AS contained
FROM ft ORDER BY id;
SELECT count(*) FROM generate_series(1, 50000) i WHERE bloom_contains((SELECT f FROM ft WHERE id = 1), i);

DROP TABLE fi, fu, fa, fp, fp_serial, ff, fb, fgood, fn, ft;
DROP TYPE f_pair;
DROP COLLATION f_ci;
DROP DOMAIN posint;
DROP FUNCTION f_shape(bloomfilter), f_patch(bytea, int, bytea), f_sqlstate(text);
