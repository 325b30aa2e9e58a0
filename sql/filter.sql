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
SELECT '\x424C4D46020001000000000002000000140000000000000000000000000000000000000000000000000000000000000000000000000000000000000000'::bloomfilter;

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
SELECT '\x424c4d4602000100000000000100000008000000000000000000000000000000000000000000000000000000000000000000000000000000000000'::bytea::bloomfilter;
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
SELECT substr(b, 1, 59)::bloomfilter FROM fgood;
SELECT (b || '\x00'::bytea)::bloomfilter FROM fgood;
SELECT f_patch(b, 0, '\x58')::bloomfilter FROM fgood;
SELECT '\x00010203'::bytea::bloomfilter;
-- version 1 had no home database and is no longer read
SELECT f_patch(b, 4, '\x0100')::bloomfilter FROM fgood;
SELECT f_patch(b, 4, '\x0400')::bloomfilter FROM fgood;
SELECT f_patch(b, 4, '\x0000')::bloomfilter FROM fgood;
SELECT f_patch(b, 6, '\x0300')::bloomfilter FROM fgood;
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
SELECT f_patch(b, 56, '\x01')::bloomfilter FROM fgood;
SELECT f_patch(b, 58, '\x0010')::bloomfilter FROM fgood;
SELECT f_patch(f_patch(b, 8, '\x17000000'), 59, '\x10')::bloomfilter FROM fgood;
SELECT f_patch(b, 8, '\x17000000')::bloomfilter IS NOT NULL AS typed_empty_ok FROM fgood;
SELECT f_patch(b, 58, '\x0100')::bloomfilter FROM fgood;
SELECT f_patch(b, 8, '\xff0f0000')::bloomfilter FROM fgood;
SELECT f_patch(b, 8, '\x10270000')::bloomfilter FROM fgood;
-- the same through text input
SELECT ('\x' || encode(f_patch(b, 0, '\x58'), 'hex'))::bloomfilter FROM fgood;
SELECT ('\x' || encode(substr(b, 1, 30), 'hex'))::bloomfilter FROM fgood;
SELECT ('\x' || encode(f_patch(b, 58, '\x0010'), 'hex'))::bloomfilter FROM fgood;
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
SELECT (bloom_info(f)).element_type, convert_from(substr(f::bytea, 59, 12), 'UTF8') AS names,
	   get_byte(f::bytea, 56) AS nsp_len, get_byte(f::bytea, 57) AS typ_len
FROM fn;
SELECT bloom_contains(f, (3, 'v3')::f_pair) AS hit, bloom_contains(f, (3, 'v4')::f_pair) AS miss FROM fn;
-- another server had another OID: the name decides
SELECT (bloom_info(g)).element_type, bloom_contains(g, (3, 'v3')::f_pair),
	   substr(g::bytea, 9, 4) = substr(f::bytea, 9, 4) AS oid_is_local
FROM fn, LATERAL (SELECT f_patch(f::bytea, 8, '\x9f860100')::bloomfilter AS g) x;
-- a type of that name must exist
SELECT f_patch(f::bytea, 58 + 6, convert_to('x', 'UTF8'))::bloomfilter FROM fn;
SELECT f_patch(f::bytea, 58, convert_to('x', 'UTF8'))::bloomfilter FROM fn;

--
-- The output, text and binary, writes the element type's current schema and
-- name, looked up by its OID; the stored bytes, and the cast to bytea, keep
-- the names it had when the filter got it.  So a filter dumped after its
-- type was renamed, moved to another schema, or its schema renamed, reads
-- back where the dump is restored.  The input and output functions look
-- names up: they are stable.
--
SELECT proname, provolatile FROM pg_proc
WHERE proname IN ('bloomfilter_in', 'bloomfilter_out', 'bloomfilter_recv', 'bloomfilter_send')
ORDER BY proname;
-- "schema.type" as a filter's bytes name its type
CREATE FUNCTION f_names(b bytea) RETURNS text
LANGUAGE sql AS $$
	SELECT convert_from(substr(b, 59, get_byte(b, 56)), 'UTF8') || '.' ||
		   convert_from(substr(b, 59 + get_byte(b, 56), get_byte(b, 57)), 'UTF8')
$$;
-- the bytes of a filter's text output
CREATE FUNCTION f_out(f bloomfilter) RETURNS bytea
LANGUAGE sql AS $$ SELECT decode(substr(f::text, 3), 'hex') $$;
INSERT INTO fn SELECT bloom_agg((i, 'v' || i)::f_pair, 20, 0.01, 2) FROM generate_series(1, 100) i;
SELECT f_names(f_out(f)) AS output, bloomfilter_send(f) = f::bytea AS output_is_stored FROM fn;
ALTER TYPE f_pair RENAME TO f_pair2;
CREATE SCHEMA f_s1;
ALTER TYPE f_pair2 SET SCHEMA f_s1;
ALTER SCHEMA f_s1 RENAME TO f_s2;
SELECT (bloom_info(f)).element_type, f_names(f::bytea) AS stored, f_names(f_out(f)) AS text_output,
	   f_names(bloomfilter_send(f)) AS binary_output, f_out(f) = bloomfilter_send(f) AS same_output,
	   octet_length(f_out(f)) - octet_length(f::bytea) AS size_change
FROM fn ORDER BY 1, 2;
-- the output reads back, to a filter of that type with the same answers,
-- and has the stored bytes but the names; the stored bytes name a type that
-- no longer exists
SELECT f::text::bloomfilter::text = f::text AS text_round_trip,
	   (bloom_info(f::text::bloomfilter)).element_type,
	   (SELECT count(*) FROM generate_series(1, 200) i
		WHERE bloom_contains(f::text::bloomfilter, (i, 'v' || i)::f_s2.f_pair2)
			IS DISTINCT FROM bloom_contains(f, (i, 'v' || i)::f_s2.f_pair2)) AS other_answers,
	   substr(f::bytea, 1, 56) = substr(f_out(f), 1, 56) AS same_header,
	   substr(f::bytea, 59 + get_byte(f::bytea, 56) + get_byte(f::bytea, 57)) =
	   substr(f_out(f), 59 + get_byte(f_out(f), 56) + get_byte(f_out(f), 57)) AS same_after_names
FROM fn;
SELECT f::bytea::bloomfilter FROM fn LIMIT 1;
-- binary COPY writes and reads the same
CREATE TABLE fn_copy (f bloomfilter);
\copy fn TO 'results/filter_renamed.bin' WITH (FORMAT binary)
\copy fn_copy FROM 'results/filter_renamed.bin' WITH (FORMAT binary)
SELECT count(*) AS read_back_same FROM fn_copy c JOIN fn ON c.f::bytea = f_out(fn.f);
-- a type dropped: the output keeps the stored names
CREATE TYPE f_gone AS (a int);
CREATE TABLE fgone AS SELECT bloom_add(bloom_empty(10), ROW(1)::f_gone) AS f;
DROP TYPE f_gone;
SELECT f_names(f_out(f)) AS output, f_out(f) = f::bytea AS output_is_stored FROM fgone;
DROP TABLE fn_copy, fgone;
ALTER SCHEMA f_s2 RENAME TO f_s1;
ALTER TYPE f_s1.f_pair2 SET SCHEMA public;
ALTER TYPE f_pair2 RENAME TO f_pair;
DROP SCHEMA f_s1;
DELETE FROM fn WHERE (bloom_info(f)).variant <> 'plain';

--
-- Enums: a new filter hashes an enum value by its label, as text hashes the
-- label (hash scheme 2, byte 6), so that it answers the same in every
-- database whatever OIDs the labels have there, and records no home
-- database (bytes 40 to 55).  The other types whose values hash by OIDs
-- local to a database (reg* types, aclitem, and composites, ranges and
-- multiranges containing those or an enum) are refused: no new filter
-- answers right in one database only.
--
CREATE TYPE f_mood AS ENUM ('sad', 'ok', 'happy', 'ecstatic');
CREATE DOMAIN f_dmood AS f_mood;
CREATE DOMAIN f_amood AS f_mood[];
CREATE TYPE f_rmood AS RANGE (subtype = f_mood);
CREATE TYPE f_cmood AS (a int, m f_dmood);
CREATE TYPE f_nest AS (p f_pair, c f_cmood[]);
-- which element types hash by label, and which record a home (none)
SELECT t, (bloom_info(f)).element_type, get_byte(f::bytea, 6) AS hash_scheme,
	   substr(f::bytea, 41, 16) <> '\x00000000000000000000000000000000'::bytea AS has_home
FROM (VALUES
	('enum', bloom_add(bloom_empty(10), 'ok'::f_mood)),
	('domain over enum', bloom_add(bloom_empty(10), 'ok'::f_dmood)),
	('array of enum', bloom_add(bloom_empty(10), ARRAY['ok'::f_mood])),
	('array of domain over enum', bloom_add(bloom_empty(10), ARRAY['ok'::f_dmood])),
	('domain over array of enum', bloom_add(bloom_empty(10), ARRAY['ok']::f_amood)),
	('composite without enum', bloom_add(bloom_empty(10), (1, 'a')::f_pair)),
	('integer', bloom_add(bloom_empty(10), 1)),
	('oid', bloom_add(bloom_empty(10), 1::oid)),
	('text', bloom_add(bloom_empty(10), 'a'::text)),
	('int4range', bloom_add(bloom_empty(10), int4range(1, 5))),
	('empty', bloom_empty(10))
) v(t, f);
-- the others are refused by every constructor, at the first value
SELECT t, f_sqlstate(format('SELECT bloom_add(bloom_empty(10), %s)', v)) AS bloom_add,
	   f_sqlstate(format('SELECT bloom_add(bloom_empty(10, 0.01, ''\x000102030405060708090a0b0c0d0e0f''::bytea), %s, ''\x000102030405060708090a0b0c0d0e0f''::bytea)', v)) AS keyed,
	   f_sqlstate(format('SELECT bloom_agg(v) FROM (SELECT %s AS v) s', v)) AS agg,
	   f_sqlstate(format('SELECT bloom_agg(v, 10, 0.01) FROM (SELECT %s AS v) s', v)) AS sized,
	   f_sqlstate(format('SELECT bloom_agg(v, 10, 0.01, 2) FROM (SELECT %s AS v) s', v)) AS growing,
	   f_sqlstate(format('SELECT bloom_agg(v, bloom_empty(10, 0.01, blocked => true)) FROM (SELECT %s AS v) s', v)) AS template,
	   f_sqlstate(format('SELECT bloom_contains(bloom_empty(10), %s)', v)) AS probe_empty
FROM (VALUES
	('range over enum', 'f_rmood(''sad'', ''happy'')'),
	('multirange over enum', 'f_rmood_multirange(f_rmood(''sad'', ''happy''))'),
	('composite with enum', '(1, ''ok'')::f_cmood'),
	('array of composite with enum', 'ARRAY[(1, ''ok'')::f_cmood]'),
	('composite with array of such', '((1, ''a''), ARRAY[(1, ''ok'')::f_cmood])::f_nest'),
	('regclass', '''pg_class''::regclass'),
	('regtype[]', 'ARRAY[''int4''::regtype]'),
	('aclitem', 'makeaclitem(10, 10, ''SELECT'', false)')
) v(t, v);
SELECT bloom_add(bloom_empty(10), 'pg_class'::regclass);
SELECT bloom_agg(v) FROM (VALUES ((1, 'ok')::f_cmood)) s(v);
\set VERBOSITY default
SELECT bloom_agg(v, 10, 0.01) FROM (VALUES (f_rmood('sad', 'happy'))) s(v);
\set VERBOSITY terse
-- cast to text, they work
SELECT bloom_contains(bloom_agg(v::text), 'pg_class'::text) AS regclass_as_text,
	   bloom_contains(bloom_agg(c::text), '(1,ok)'::text) AS composite_as_text
FROM (VALUES ('pg_class'::regclass, (1, 'ok')::f_cmood)) s(v, c);
-- the cells of a format-2 filter
CREATE FUNCTION f_cells(b bytea) RETURNS bytea
LANGUAGE sql AS $$ SELECT substr(b, 59 + get_byte(b, 56) + get_byte(b, 57)) $$;
-- an enum value sets the bits of its label as text, an array of them those
-- of the array of their labels (NULLs too); every form answers alike
CREATE TABLE fe AS
	SELECT bloom_agg(m) FILTER (WHERE m <> 'ecstatic') AS f,
		   bloom_agg(m, 10, 0.01) FILTER (WHERE m <> 'ecstatic') AS sized,
		   bloom_agg(m::text) FILTER (WHERE m <> 'ecstatic') AS t,
		   bloom_agg(m::text, 10, 0.01) FILTER (WHERE m <> 'ecstatic') AS sized_t,
		   bloom_agg(m::f_dmood, 10, 0.01) FILTER (WHERE m <> 'ecstatic') AS dom,
		   bloom_agg(ARRAY[m, NULL], 10, 0.01) AS arrays,
		   bloom_agg(ARRAY[m::text, NULL], 10, 0.01) AS text_arrays,
		   bloom_agg(ARRAY[m], 10, 0.01) AS plain_arrays,
		   bloom_agg(ARRAY[m]::f_amood, 10, 0.01) AS dom_arrays
	FROM unnest(enum_range(NULL::f_mood)) m;
SELECT get_byte(f::bytea, 6) AS scheme, get_byte(t::bytea, 6) AS text_scheme,
	   f_cells(f::bytea) = f_cells(t::bytea) AS same_cells_as_text,
	   f_cells(sized::bytea) = f_cells(sized_t::bytea) AS sized_same_cells_as_text,
	   f_cells(dom::bytea) = f_cells(sized::bytea) AS domain_same_cells,
	   f_cells(arrays::bytea) = f_cells(text_arrays::bytea) AS arrays_same_cells_as_text,
	   f_cells(dom_arrays::bytea) = f_cells(plain_arrays::bytea) AS domain_arrays_same_cells,
	   f_cells(plain_arrays::bytea) <> f_cells(arrays::bytea) AS nulls_count
FROM fe;
SELECT m, bloom_contains(f, m) AS plain, bloom_contains(f::text::bloomfilter, m) AS via_text,
	   bloom_contains(sized, m) AS sized, bloom_contains(f | f, m) AS in_union,
	   bloom_contains(dom, m::f_dmood) AS domain_value, bloom_contains(arrays, ARRAY[m, NULL]) AS array_value,
	   bloom_contains(dom_arrays, ARRAY[m]::f_amood) AS domain_array_value, bloom_contains(t, m::text) AS as_text
FROM fe, unnest(enum_range(NULL::f_mood)) m ORDER BY m;
SELECT bloom_contains(f, enum_range(NULL::f_mood)), bloom_contains_any(f, ARRAY['ecstatic'::f_mood]),
	   bloom_contains_all(f, ARRAY['sad', 'ok']::f_mood[]),
	   bloom_contains(bloom_add(f, 'ecstatic'::f_mood), 'ecstatic'::f_mood),
	   bloom_contains(arrays, ARRAY[ARRAY['ok'::f_mood, NULL]]) AS array_of_arrays
FROM fe;
SELECT bloom_contains(bloom_union_agg(f), 'ok'::f_mood) FROM fe;
-- an untyped filter combines with one, either way round
SELECT get_byte((bloom_empty(10, 0.01) | sized)::bytea, 6) AS scheme,
	   bloom_contains(bloom_empty(10, 0.01) | sized, 'ok'::f_mood) AS empty_or_sized,
	   bloom_contains(sized & bloom_empty(10, 0.01), 'ok'::f_mood) AS sized_and_empty
FROM fe;
-- every variant hashes the labels
SELECT bloom_contains(g, 'ok'::f_mood) AS growing, (bloom_info(g)).layers,
	   bloom_contains(c, 'ok'::f_mood) AND NOT bloom_contains(bloom_remove(c, 'ok'::f_mood), 'ok'::f_mood) AS counting,
	   bloom_contains(b, 'happy'::f_mood) AS blocked,
	   bloom_contains(k, 'sad'::f_mood, '\x000102030405060708090a0b0c0d0e0f'::bytea) AS keyed,
	   bloom_contains(bloom_fold(r, 2), 'ok'::f_mood) AS folded,
	   get_byte(g::bytea, 6)::text || get_byte(c::bytea, 6) || get_byte(b::bytea, 6) || get_byte(k::bytea, 6) AS schemes
FROM (SELECT bloom_agg(m, 1, 0.01, 2) AS g,
			 bloom_agg(m, bloom_empty(10, 0.01, counting => true)) AS c,
			 bloom_agg(m, bloom_empty(10, 0.01, blocked => true)) AS b,
			 bloom_agg(m, bloom_empty(10, 0.01, key => '\x000102030405060708090a0b0c0d0e0f'::bytea),
					   '\x000102030405060708090a0b0c0d0e0f'::bytea) AS k,
			 bloom_agg(m, bloom_empty_raw(128, 3)) AS r
	  FROM unnest(enum_range(NULL::f_mood)) m) s;
-- parallel workers hash alike
CREATE TABLE fe_par AS
	SELECT i, (enum_range(NULL::f_mood))[1 + i % 4] AS m FROM generate_series(1, 30000) i;
ANALYZE fe_par;
CREATE TABLE fe_par_serial AS SELECT bloom_agg(m) AS a, bloom_agg(m, 100, 0.01) AS b FROM fe_par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_agg(m), bloom_agg(m, 100, 0.01) FROM fe_par;
SELECT s.a::bytea = p.a::bytea AS same_agg, s.b::bytea = p.b::bytea AS same_sized_agg,
	   bloom_contains(p.a, 'ok'::f_mood) AND bloom_contains(p.b, 'ok'::f_mood) AS contained
FROM fe_par_serial s,
	 (SELECT bloom_agg(m) AS a, bloom_agg(m, 100, 0.01) AS b FROM fe_par) p;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- a filter holds labels: a value renamed is another value to it
ALTER TYPE f_mood RENAME VALUE 'ok' TO 'fine';
SELECT m, bloom_contains(f, m) FROM fe, unnest(enum_range(NULL::f_mood)) m ORDER BY m;
ALTER TYPE f_mood RENAME VALUE 'fine' TO 'ok';
-- malformed: scheme 2 needs a type that is not built in, and no home
SELECT f_patch(b, 6, '\x0200')::bloomfilter FROM fgood;
SELECT f_patch(f_patch(b, 6, '\x0200'), 8, '\x17000000')::bloomfilter FROM fgood;
SELECT f_patch(f::bytea, 40, '\x01000000000000000100000017000000')::bloomfilter FROM fe;
SELECT f_patch(f::bytea, 6, '\x0300')::bloomfilter FROM fe;

--
-- Filters of enums built before hash scheme 2 (by bloomidx 1.0) hash the
-- labels' OIDs (scheme 1), and record their home database: the system
-- identifier, the database's OID and the type's OID there.  They still read
-- and work as before at home, and are refused anywhere else, rather than
-- answering every value as absent; and the output refuses them, so that no
-- dump carries one.
--
-- the little-endian number of len bytes at zero-based offset off, and the
-- little-endian bytes of n
CREATE FUNCTION f_le(b bytea, off int, len int) RETURNS numeric
LANGUAGE sql AS $$ SELECT sum(get_byte(b, off + i) * 256::numeric ^ i) FROM generate_series(0, len - 1) i $$;
CREATE FUNCTION f_le_bytes(n bigint, len int) RETURNS bytea
LANGUAGE sql AS $$
	SELECT decode(string_agg(lpad(to_hex((n >> (8 * i)) & 255), 2, '0'), '' ORDER BY i), 'hex')
	FROM generate_series(0, len - 1) i
$$;
-- a filter of scheme 1 of type typ, with this database as its home, from a
-- format-2 filter o of a type that hashes as typ hashed then (an enum as
-- the OIDs of its labels)
CREATE FUNCTION f_legacy(o bloomfilter, typ regtype) RETURNS bloomfilter
LANGUAGE sql AS $$
	SELECT (substr(o::bytea, 1, 8) || f_le_bytes(t.oid::bigint, 4) || substr(o::bytea, 13, 28) ||
			f_le_bytes((SELECT system_identifier FROM pg_control_system()), 8) ||
			f_le_bytes((SELECT oid::bigint FROM pg_database WHERE datname = current_database()), 4) ||
			f_le_bytes(t.oid::bigint, 4) ||
			CASE WHEN t.oid < 10000 THEN '\x0000'::bytea
				 ELSE f_le_bytes(octet_length(n.nspname::text), 1) || f_le_bytes(octet_length(t.typname::text), 1) ||
					  convert_to(n.nspname::text, 'UTF8') || convert_to(t.typname::text, 'UTF8') END ||
			substr(o::bytea, 59 + get_byte(o::bytea, 56) + get_byte(o::bytea, 57)))::bloomfilter
	FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
	WHERE t.oid = typ
$$;
CREATE TYPE f_coid AS (a int, m oid);
CREATE TABLE fl AS
	SELECT f_legacy(bloom_agg(e.oid) FILTER (WHERE e.enumlabel <> 'ecstatic'), 'f_mood') AS f,
		   f_legacy(bloom_agg(ARRAY[e.oid]), 'f_mood[]') AS arrays,
		   f_legacy(bloom_agg((1, e.oid)::f_coid), 'f_cmood') AS rows,
		   f_legacy(bloom_agg(e.oid), 'regclass') AS reg
	FROM pg_enum e WHERE e.enumtypid = 'f_mood'::regtype;
SELECT get_byte(f::bytea, 6) AS hash_scheme, (bloom_info(f)).element_type, f_names(f::bytea) AS names,
	   f_le(f::bytea, 40, 8) = (SELECT system_identifier + CASE WHEN system_identifier < 0 THEN 2::numeric ^ 64 ELSE 0 END
								FROM pg_control_system()) AS system_identifier,
	   f_le(f::bytea, 48, 4) = (SELECT oid::bigint FROM pg_database WHERE datname = current_database()) AS database_oid,
	   f_le(f::bytea, 52, 4) = 'f_mood'::regtype::oid::bigint AS type_oid
FROM fl;
-- at home, every form works as it did
SELECT m, bloom_contains(f, m) AS plain, bloom_contains(f::bytea::bloomfilter, m) AS via_bytea,
	   bloom_contains(f | f, m) AS in_union, bloom_contains(arrays, ARRAY[m]) AS array_value,
	   bloom_contains(rows, (1, m)::f_cmood) AS composite_value
FROM fl, unnest(enum_range(NULL::f_mood)) m ORDER BY m;
SELECT bloom_contains(f, enum_range(NULL::f_mood)), bloom_contains_any(f, ARRAY['ecstatic'::f_mood]),
	   bloom_contains(bloom_add(f, 'ecstatic'::f_mood), 'ecstatic'::f_mood) AS added,
	   get_byte(bloom_add(f, 'ecstatic'::f_mood)::bytea, 6) AS still_scheme
FROM fl;
SELECT bloom_contains(reg, r) AS reg_value, bloom_contains(reg, 'pg_class'::regclass) AS other_reg_value
FROM fl, (SELECT e.oid::regclass AS r FROM pg_enum e WHERE e.enumlabel = 'ok' AND e.enumtypid = 'f_mood'::regtype) x;
-- the output refuses it, text or binary; bloom_info and bytea read it
SELECT f FROM fl;
SELECT bloomfilter_send(rows) FROM fl;
SELECT (bloom_info(f)).nbits_set > 0 AS has_bits, bloom_cardinality(f) > 0 AS has_values,
	   f::bytea::bloomfilter::bytea = f::bytea AS reads_back
FROM fl;
\set VERBOSITY default
SELECT f::text FROM fl;
\set VERBOSITY terse
-- it combines with a filter of scheme 1 only
SELECT fe.f | fl.f FROM fe, fl;
SELECT bloom_union_agg(g) FROM fe, fl, LATERAL (VALUES (fl.f), (fe.f)) v(g);
\set VERBOSITY default
SELECT fl.f & fe.f FROM fe, fl;
\set VERBOSITY terse
-- another database, simulated by editing its OID or the system identifier;
-- bloom_info and bloom_cardinality still work
CREATE TABLE fe_away AS
	SELECT f_patch(f::bytea, 48, '\x01000000')::bloomfilter AS other_db,
		   f_patch(f::bytea, 40, '\x0100000000000000')::bloomfilter AS other_cluster,
		   f_patch(f::bytea, 40, '\x00000000000000000000000000000000')::bloomfilter AS no_home,
		   f_patch(f::bytea, 52, '\x01000000')::bloomfilter AS dropped_type,
		   f_patch(arrays::bytea, 48, '\x01000000')::bloomfilter AS other_db_arrays,
		   f_patch(rows::bytea, 48, '\x01000000')::bloomfilter AS other_db_rows,
		   f
	FROM fl;
SELECT bloom_contains(other_db, 'ok'::f_mood) FROM fe_away;
SELECT bloom_contains(other_cluster, 'ok'::f_mood) FROM fe_away;
SELECT bloom_contains(no_home, 'ok'::f_mood) FROM fe_away;
SELECT bloom_contains(dropped_type, 'ok'::f_mood) FROM fe_away;
SELECT bloom_contains(other_db, ARRAY['ok'::f_mood]) FROM fe_away;
SELECT bloom_contains_any(other_db, ARRAY['ok'::f_mood]) FROM fe_away;
SELECT bloom_contains_all(other_db, ARRAY['ok'::f_mood]) FROM fe_away;
SELECT bloom_contains(other_db_arrays, ARRAY['ok'::f_mood]) FROM fe_away;
SELECT bloom_contains(other_db_rows, (1, 'ok')::f_cmood) FROM fe_away;
SELECT bloom_add(other_db, 'ok'::f_mood) FROM fe_away;
SELECT other_db | other_db FROM fe_away;
SELECT f & other_db FROM fe_away;
SELECT f | no_home FROM fe_away;
SELECT bloom_union_agg(g) FROM fe_away, LATERAL (VALUES (f), (other_db)) v(g);
SELECT q, f_sqlstate(q) FROM (VALUES
	('SELECT bloom_contains(other_db, ''ok''::f_mood) FROM fe_away'),
	('SELECT bloom_contains(no_home, ''ok''::f_mood) FROM fe_away'),
	('SELECT bloom_contains(dropped_type, ''ok''::f_mood) FROM fe_away'),
	('SELECT f | no_home FROM fe_away'),
	('SELECT other_db::text FROM fe_away'),
	('SELECT f_patch(f::bytea, 48, ''\x00000000'')::bloomfilter FROM fe_away')
) v(q);
SELECT (bloom_info(other_db)).element_type, (bloom_info(other_db)).nbits_set = (bloom_info(f)).nbits_set AS same_bits,
	   bloom_cardinality(other_db) = bloom_cardinality(f) AS same_cardinality,
	   no_home::text IS NOT NULL AS no_home_outputs
FROM fe_away;
\set VERBOSITY default
SELECT bloom_contains(other_db, 'ok'::f_mood) FROM fe_away;
SELECT bloom_contains(no_home, 'ok'::f_mood) FROM fe_away;
SELECT bloom_contains(dropped_type, 'ok'::f_mood) FROM fe_away;
SELECT f | no_home FROM fe_away;
\set VERBOSITY terse
-- at home, the filter's type must be the type that built it: another type
-- of that name has other label OIDs (a filter of labels does not mind)
SELECT fl.f::bytea AS moved_f, fe.f::text AS moved_labels FROM fe, fl \gset
CREATE TYPE f_mood2 AS ENUM ('sad', 'ok', 'happy', 'ecstatic');
ALTER TYPE f_mood RENAME TO f_mood_old;
ALTER TYPE f_mood2 RENAME TO f_mood;
SELECT (bloom_info(:'moved_f'::bytea::bloomfilter)).element_type::oid = 'f_mood'::regtype::oid AS resolved_to_new_type,
	   bloom_contains(:'moved_labels'::bloomfilter, 'ok'::f_mood) AS labels_still_work;
SELECT bloom_contains(:'moved_f'::bytea::bloomfilter, 'ok'::f_mood);
DROP TYPE f_mood;
ALTER TYPE f_mood_old RENAME TO f_mood;
SELECT bloom_contains(:'moved_f'::bytea::bloomfilter, 'ok'::f_mood) AS same_type_again;
-- malformed homes are data exceptions
SELECT f_patch(b, 40, '\x01')::bloomfilter FROM fgood;
SELECT f_patch(f_patch(b, 8, '\x17000000'), 40, '\x01')::bloomfilter FROM fgood;
SELECT f_patch(f_patch(b, 8, '\x17000000'), 40, '\x010000000000000001000000')::bloomfilter FROM fgood;
SELECT f_patch(f_patch(b, 8, '\x17000000'), 40, '\x01000000000000000100000017000000')::bloomfilter IS NOT NULL AS valid_home FROM fgood;
SELECT f_patch(f_patch(b, 8, '\x17000000'), 40, '\x01000000000000000100000014000000')::bloomfilter FROM fgood;
SELECT f_patch(b, 40, '\x01000000000000000100000017000000')::bloomfilter FROM fgood;
-- a real second database, where the labels have other OIDs: a filter of
-- labels answers there as at home, and has the bits one built there has;
-- one of OIDs reads there, but is refused, and its bits are not those
SELECT current_database() AS home_db, current_database() || '_other' AS other_db,
	   (SELECT string_agg(oid::text, ',' ORDER BY enumsortorder) FROM pg_enum WHERE enumtypid = 'f_mood'::regtype) AS home_label_oids
\gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS :"other_db";
CREATE DATABASE :"other_db";
RESET client_min_messages;
\c :other_db
SET client_min_messages = warning;
CREATE EXTENSION bloomidx;
RESET client_min_messages;
\set VERBOSITY terse
CREATE TYPE f_mood AS ENUM ('sad', 'ok', 'happy', 'ecstatic');
SELECT string_agg(oid::text, ',' ORDER BY enumsortorder) <> :'home_label_oids' AS other_label_oids
FROM pg_enum WHERE enumtypid = 'f_mood'::regtype;
SELECT m, bloom_contains(:'moved_labels'::bloomfilter, m) FROM unnest(enum_range(NULL::f_mood)) m;
SELECT bloom_contains(:'moved_labels'::bloomfilter, enum_range(NULL::f_mood));
SELECT substr(:'moved_labels'::bloomfilter::bytea, 13) =
	   substr((SELECT bloom_agg(m) FILTER (WHERE m <> 'ecstatic') FROM unnest(enum_range(NULL::f_mood)) m)::bytea, 13)
	   AS same_bytes_as_built_here;
SELECT (bloom_info(:'moved_f'::bytea::bloomfilter)).element_type, (bloom_info(:'moved_f'::bytea::bloomfilter)).nbits_set > 0 AS has_bits;
SELECT m, bloom_contains(:'moved_f'::bytea::bloomfilter, m) FROM unnest(enum_range(NULL::f_mood)) m;
SELECT bloom_contains(:'moved_f'::bytea::bloomfilter, enum_range(NULL::f_mood));
SELECT bloom_add(:'moved_f'::bytea::bloomfilter, 'ok'::f_mood);
SELECT :'moved_f'::bytea::bloomfilter | :'moved_f'::bytea::bloomfilter;
SELECT substr(:'moved_f'::bytea, 71) <>
	   substr((SELECT bloom_agg(e.oid) FILTER (WHERE e.enumlabel <> 'ecstatic') FROM pg_enum e WHERE e.enumtypid = 'f_mood'::regtype)::bytea, 59)
	   AS other_bits;
\c :home_db
\set VERBOSITY terse
DROP DATABASE :"other_db";
SELECT bloom_contains(:'moved_f'::bytea::bloomfilter, 'ok'::f_mood) AS back_home;

--
-- Golden value: this filter of the integers 1 to 20 (bloom_agg(i, 20, 0.05)),
-- written on one server, reads the same on every server.  (Format version 2
-- added the home database, zero here; the bits are those version 1 had.)
--
SELECT bloom_agg(i, 20, 0.05) FROM generate_series(1, 20) i;
SELECT '\x424c4d460200010017000000040000007d0000000000000014000000000000009a9999999999a93f000000000000000000000000000000000000325f2f5918c694a9435dd8a0c6dd4306'::bloomfilter::bytea
	 = (SELECT bloom_agg(i, 20, 0.05) FROM generate_series(1, 20) i)::bytea AS golden_matches;
SELECT * FROM f_shape('\x424c4d460200010017000000040000007d0000000000000014000000000000009a9999999999a93f000000000000000000000000000000000000325f2f5918c694a9435dd8a0c6dd4306');
SELECT array_agg(i ORDER BY i) FILTER (WHERE bloom_contains(g, i)) AS contained
FROM generate_series(-10, 60) i,
	 (SELECT '\x424c4d460200010017000000040000007d0000000000000014000000000000009a9999999999a93f000000000000000000000000000000000000325f2f5918c694a9435dd8a0c6dd4306'::bloomfilter AS g) s;

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
-- a large one is moved to line-aligned cells (and huge pages): same answers
CREATE TABLE ftbig (name text, f bloomfilter);
INSERT INTO ftbig SELECT 'plain', bloom_agg(i, bloom_empty(4000000, 0.01)) FROM generate_series(1, 50000) i;
INSERT INTO ftbig SELECT 'blocked', bloom_agg(i, bloom_empty(4000000, 0.01, blocked => true)) FROM generate_series(1, 50000) i;
SELECT name, octet_length(f::bytea) > 4 * 1024 * 1024 AS big,
	   (SELECT count(*) FROM generate_series(1, 50000) i WHERE NOT bloom_contains(f, i)) AS false_negatives,
	   (SELECT count(*) FROM generate_series(1, 100000) i WHERE bloom_contains(f, i)) =
	   (SELECT count(*) FROM generate_series(1, 100000) i WHERE bloom_contains(m, i)) AS same_as_in_memory
FROM ftbig, LATERAL (SELECT f::bytea::bloomfilter AS m OFFSET 0) x ORDER BY name;
SELECT name, (SELECT count(*) FROM generate_series(1, 50000) i WHERE bloom_contains((SELECT f FROM ftbig b WHERE b.name = a.name), i)) AS contained
FROM (VALUES ('plain'), ('blocked')) a(name) ORDER BY name;
-- stored uncompressed, a large one is read from its TOAST table straight
-- into line-aligned cells, header first: same answers (a growing filter's
-- header holds its layers)
CREATE TABLE ftext (name text, f bloomfilter);
ALTER TABLE ftext ALTER COLUMN f SET STORAGE EXTERNAL;
INSERT INTO ftext SELECT name, f::bytea::bloomfilter FROM ftbig;
INSERT INTO ftext SELECT 'growing', bloom_agg(i, 500000, 0.01, 2) FROM generate_series(1, 2000000) i;
SELECT name, pg_column_size(f) >= octet_length(f::bytea) AS uncompressed,
	   octet_length(f::bytea) > 4 * 1024 * 1024 AS big,
	   (SELECT count(*) FROM generate_series(1, 50000) i WHERE NOT bloom_contains(f, i)) AS false_negatives,
	   (SELECT count(*) FROM generate_series(1, 100000) i WHERE bloom_contains(f, i)) =
	   (SELECT count(*) FROM generate_series(1, 100000) i WHERE bloom_contains(m, i)) AS same_as_in_memory,
	   (SELECT count(*) FROM generate_series(2000001, 2100000) i WHERE bloom_contains(f, i)) =
	   (SELECT count(*) FROM generate_series(2000001, 2100000) i WHERE bloom_contains(m, i)) AS same_misses
FROM ftext, LATERAL (SELECT f::bytea::bloomfilter AS m OFFSET 0) x ORDER BY name;
SELECT name, (SELECT count(*) FROM generate_series(1, 50000) i WHERE bloom_contains((SELECT f FROM ftext b WHERE b.name = a.name), i)) AS contained,
	   cardinality(array_positions(bloom_contains((SELECT f FROM ftext b WHERE b.name = a.name), ARRAY(SELECT generate_series(1, 50000))), false)) AS array_false_negatives
FROM (VALUES ('blocked'), ('growing'), ('plain')) a(name) ORDER BY name;
-- filters held in memory, one call site: same header, other cells, other shape
SELECT id, (SELECT array_agg(v ORDER BY v) FILTER (WHERE bloom_contains(g, v)) FROM unnest(ARRAY[1, 2, 3, 101, 102, 103]) v) AS contained
FROM (VALUES (1, bloom_add(bloom_empty(100, 0.001), 1)),
			 (2, bloom_add(bloom_empty(100, 0.001), 101)),
			 (3, bloom_add(bloom_empty(1000, 0.001), 2)),
			 (4, bloom_add(bloom_empty(100, 0.001), 3)),
			 (5, bloom_add(bloom_empty(100, 0.001, blocked => true), 102))) s(id, g)
ORDER BY id;
SELECT id, bloom_contains(g, v) AS contained
FROM (VALUES (1, (SELECT bloom_agg(i, 100, 0.001) FROM generate_series(1, 10) i), 5),
			 (2, (SELECT bloom_agg(i, 100, 0.001) FROM generate_series(11, 20) i), 5),
			 (3, (SELECT bloom_agg(i, 100, 0.001) FROM generate_series(11, 20) i), 15),
			 (4, (SELECT bloom_agg(i, 100, 0.001) FROM generate_series(1, 10) i), 15)) s(id, g, v)
ORDER BY id;

DROP TABLE fi, fu, fa, fp, fp_serial, ff, fb, fgood, fn, ft, ftbig, ftext, fe, fl, fe_away, fe_par, fe_par_serial;
DROP TYPE f_nest, f_cmood, f_coid, f_rmood, f_pair;
DROP DOMAIN f_dmood, f_amood;
DROP TYPE f_mood;
DROP COLLATION f_ci;
DROP DOMAIN posint;
DROP FUNCTION f_shape(bloomfilter), f_patch(bytea, int, bytea), f_sqlstate(text), f_le(bytea, int, int),
	f_names(bytea), f_out(bloomfilter), f_cells(bytea), f_legacy(bloomfilter, regtype), f_le_bytes(bigint, int);
