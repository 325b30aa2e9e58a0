--
-- The sized aggregates keep the filter itself as their transition state, so
-- that distributed engines can push their partial step down (an aggregate
-- whose state is a pseudo-type is gathered whole), with the same bytes as
-- before and the same bytes in parallel as serially.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

-- every aggregate of the extension but the typed forms (below), its
-- transition type, and whether partial aggregation can push it down
SELECT p.oid::regprocedure AS aggregate, a.aggtranstype::regtype AS state,
	   t.typtype = 'p' AS pseudo_state, a.aggcombinefn <> 0 AS combines,
	   a.aggserialfn <> 0 AS serializes, a.aggfinalfn <> 0 AS finalizes
FROM pg_aggregate a
	 JOIN pg_proc p ON p.oid = a.aggfnoid
	 JOIN pg_type t ON t.oid = a.aggtranstype
	 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
WHERE p.proargtypes[0] IN ('anyelement'::regtype, 'bloomfilter'::regtype)
ORDER BY p.oid::regprocedure::text COLLATE "C";
-- only bloom_agg(value), which counts distinct hashes, has a pseudo-type state
SELECT count(*) AS sized_with_pseudo_state
FROM pg_aggregate a
	 JOIN pg_type t ON t.oid = a.aggtranstype
	 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = a.aggfnoid AND d.deptype = 'e'
	 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
WHERE t.typtype = 'p' AND a.aggfnoid::regprocedure <> 'bloom_agg(anyelement)'::regprocedure;

-- the transition functions refuse to run outside an aggregate
SELECT bloom_agg_filter_transfn(NULL, 1, 10, 0.01);
SELECT bloom_union_filter_transfn(bloom_empty(10), bloom_empty(10));

--
-- Same bytes as the golden filter of version 1.0 (also in filter.sql)
--
SELECT bloom_agg(i, 20, 0.05)::bytea = '\x424c4d460200010017000000040000007d0000000000000014000000000000009a9999999999a93f000000000000000000000000000000000000325f2f5918c694a9435dd8a0c6dd4306'::bytea AS golden
FROM generate_series(1, 20) i;

--
-- Per group, in hash and sorted aggregation, and as a window aggregate: a
-- state changed in place must not change a result already returned
--
CREATE TABLE fg AS SELECT i, i % 37 AS g FROM generate_series(1, 20000) i;
ANALYZE fg;
SET enable_sort = off;
CREATE TABLE fg_hash AS SELECT g, bloom_agg(i, 1000, 0.01) AS f FROM fg GROUP BY g;
RESET enable_sort;
SET enable_hashagg = off;
CREATE TABLE fg_sort AS SELECT g, bloom_agg(i, 1000, 0.01) AS f FROM fg GROUP BY g;
RESET enable_hashagg;
SELECT count(*) AS groups, bool_and(h.f::bytea = s.f::bytea) AS same_bytes
FROM fg_hash h JOIN fg_sort s USING (g);
SELECT count(*) FILTER (WHERE NOT bloom_contains(f, i)) AS false_negatives
FROM fg JOIN fg_hash USING (g);
-- running filters: row n holds 1 .. n and was not changed by later rows
SELECT i, bloom_contains(f, i) AS has_own, bloom_contains(f, 1) AS has_first,
	   bloom_contains_any(f, ARRAY[i + 1, i + 2, i + 3]) AS has_later,
	   (bloom_info(f)).nbits_set
FROM (SELECT i, bloom_agg(i, 1000, 0.0001) OVER (ORDER BY i) AS f
	  FROM generate_series(1, 6) i) s
ORDER BY i;
SELECT i, (bloom_info(f)).nbits_set
FROM (SELECT i, bloom_union_agg(bloom_add(bloom_empty(1000, 0.0001), i)) OVER (ORDER BY i) AS f
	  FROM generate_series(1, 4) i) s
ORDER BY i;

--
-- bloom_union_agg over stored filters: small ones stored with a short
-- header, large ones out of line; the inputs are left as they were
--
CREATE TABLE fs (id int, f bloomfilter);
INSERT INTO fs SELECT i % 5, bloom_agg(i, 20, 0.1) FROM generate_series(1, 60) i GROUP BY i % 5;
INSERT INTO fs SELECT 10 + i % 2, bloom_agg(i, 100000, 0.01) FROM generate_series(1, 1000) i GROUP BY i % 2;
CREATE TABLE fs_before AS SELECT id, md5(f::bytea) AS h FROM fs;
SELECT id < 10 AS small, pg_column_size(f) < octet_length(f::bytea) + 4 AS stored_smaller
FROM fs ORDER BY id;
SELECT (SELECT count(*) FROM generate_series(1, 60) i WHERE NOT bloom_contains(u, i)) AS false_negatives
FROM (SELECT bloom_union_agg(f) AS u FROM fs WHERE id < 10) s;
SELECT (SELECT count(*) FROM generate_series(1, 1000) i WHERE NOT bloom_contains(u, i)) AS false_negatives
FROM (SELECT bloom_union_agg(f) AS u FROM fs WHERE id >= 10) s;
SELECT count(*) AS unchanged FROM fs JOIN fs_before USING (id) WHERE md5(f::bytea) = h;

--
-- Parallel aggregation gives the serial bytes, per group too
--
CREATE TABLE fpar AS SELECT i, (i * 7919) % 100003 AS v, i % 3 AS g FROM generate_series(1, 200000) i;
ANALYZE fpar;
CREATE TABLE fpar_serial AS
	SELECT bloom_agg(v, 100000, 0.01) AS b,
		   bloom_union_agg(bloom_add(bloom_empty(64), i % 50)) AS c
	FROM fpar;
CREATE TABLE fpar_serial_g AS SELECT g, bloom_agg(v, 50000, 0.02) AS b FROM fpar GROUP BY g;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
	SELECT bloom_agg(v, 100000, 0.01), bloom_union_agg(bloom_add(bloom_empty(64), i % 50)) FROM fpar;
SELECT s.b::bytea = p.b::bytea AS same_sized_agg, s.c::bytea = p.c::bytea AS same_union_agg
FROM fpar_serial s,
	 (SELECT bloom_agg(v, 100000, 0.01) AS b,
			 bloom_union_agg(bloom_add(bloom_empty(64), i % 50)) AS c
	  FROM fpar) p;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT g, bloom_agg(v, 50000, 0.02) FROM fpar GROUP BY g;
SELECT count(*) AS groups, bool_and(s.b::bytea = p.b::bytea) AS same_per_group
FROM fpar_serial_g s
	 JOIN (SELECT g, bloom_agg(v, 50000, 0.02) AS b FROM fpar GROUP BY g) p USING (g);
RESET enable_sort;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

--
-- Typed forms: the sized, template and keyed forms of bloom_agg again for
-- every type with a hash function, beside the anyelement ones, for Citus
-- (its worker_partial_agg runs an aggregate on the shards only if the
-- argument types are those the aggregate declares).  Their transition
-- functions are the anyelement forms' C functions, declared with the type.
--
-- per element type: its forms, all with a bloomfilter state that
-- bloom_union_filter_transfn combines, a transition function declared with
-- the type and running the anyelement form's C function, and the
-- anyelement form's argument names, properties and comment; listed for
-- some types, and the number of types where any of it fails
CREATE TEMP VIEW fa_typed_forms AS
SELECT p.proargtypes[0]::regtype AS element_type,
	   string_agg(CASE WHEN p.pronargs = 2 THEN 'template'
					   WHEN p.proargtypes[1] = 'bigint'::regtype THEN 'sized'
					   ELSE 'keyed' END, ', ' ORDER BY p.pronargs, p.proargtypes[1]) AS forms,
	   bool_and(a.aggtranstype = 'bloomfilter'::regtype
				AND a.aggcombinefn = 'bloom_union_filter_transfn'::regproc
				AND a.aggfinalfn = 0 AND ga.aggcombinefn = a.aggcombinefn) AS combines,
	   bool_and(t.proargtypes[1] = p.proargtypes[0] AND t.prosrc = gt.prosrc
				AND t.probin = gt.probin AND t.proisstrict = gt.proisstrict
				AND t.provolatile = gt.provolatile) AS typed_transfn,
	   bool_and(p.proargnames IS NOT DISTINCT FROM g.proargnames
				AND p.proparallel = g.proparallel
				AND obj_description(p.oid, 'pg_proc') = obj_description(g.oid, 'pg_proc')) AS as_anyelement_form
FROM pg_aggregate a
	 JOIN pg_proc p ON p.oid = a.aggfnoid
	 JOIN pg_proc t ON t.oid = a.aggtransfn
	 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
	 JOIN pg_proc g ON g.proname = p.proname AND g.pronamespace = p.pronamespace
		AND g.pronargs = p.pronargs AND g.proargtypes[0] = 'anyelement'::regtype
		AND g.proargtypes[1] = p.proargtypes[1]
		AND g.proargtypes[2] IS NOT DISTINCT FROM p.proargtypes[2]
	 JOIN pg_aggregate ga ON ga.aggfnoid = g.oid
	 JOIN pg_proc gt ON gt.oid = ga.aggtransfn
WHERE p.proargtypes[0] NOT IN ('anyelement'::regtype, 'bloomfilter'::regtype)
GROUP BY p.proargtypes[0];
SELECT * FROM fa_typed_forms
WHERE element_type IN ('smallint', 'integer', 'bigint', 'numeric', 'text',
	'character varying', 'character', 'name', '"char"', 'bytea', 'uuid', 'date',
	'timestamp', 'timestamptz', 'float8', 'float4', 'jsonb', 'integer[]',
	'text[]', 'int4range', 'int4multirange', 'inet', 'interval', 'boolean')
ORDER BY element_type::text COLLATE "C";
SELECT count(*) > 100 AS many_types,
	   count(*) FILTER (WHERE forms <> 'template, sized, keyed' OR NOT combines
						OR NOT typed_transfn OR NOT as_anyelement_form) AS failing
FROM fa_typed_forms;

-- The element type of the form of bloom_agg a query calls, or the SQLSTATE
-- of its error: the query is made a view, whose dependencies name the
-- aggregate
CREATE FUNCTION fa_resolved(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	EXECUTE 'CREATE TEMP VIEW fa_resolve_v AS ' || q;
	SELECT string_agg(p.proargtypes[0]::regtype::text, ', ') INTO r
	FROM pg_rewrite w
		 JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
			AND d.refclassid = 'pg_proc'::regclass
		 JOIN pg_proc p ON p.oid = d.refobjid AND p.proname = 'bloom_agg'
	WHERE w.ev_class = 'fa_resolve_v'::regclass;
	DROP VIEW fa_resolve_v;
	RETURN r;
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE;
END $$;
CREATE DOMAIN fa_posint AS integer CHECK (VALUE > 0);
CREATE DOMAIN fa_code AS varchar(8);
CREATE TYPE fa_mood AS ENUM ('sad', 'ok');
CREATE TYPE fa_pair AS (a integer, b text);
CREATE TYPE fa_bad AS (a integer, p point);

-- bloom_hashable: whether bloom filters can hash a type's values
SELECT t AS type, bloom_hashable(t)
FROM (VALUES ('integer'::regtype), ('float8'), ('jsonb'), ('integer[]'),
			 ('point'), ('point[]'), ('json'), ('fa_mood'), ('fa_mood[]'),
			 ('fa_posint'), ('fa_code'), ('int4range'), ('fa_pair'), ('fa_bad'),
			 ('anyelement'), ('record')) v(t);
-- bloom_agg_add_type: the three forms for a type made after the extension,
-- once; a type without a hash function is refused
SELECT bloom_agg_add_type('fa_mood') AS made, bloom_agg_add_type('fa_mood') AS made_again,
	   bloom_agg_add_type('fa_pair') AS made_pair;
SELECT bloom_agg_add_type('fa_bad');
SELECT bloom_agg_add_type('anyelement');
SELECT bloom_agg_add_type('float8') AS float8_has_them;
-- The forms it made are not members of the extension but depend on it
-- (DROP EXTENSION drops them without CASCADE); the forms the extension's
-- scripts made are members
SELECT t AS type, d.deptype, count(*) AS forms
FROM (VALUES ('fa_mood'::regtype), ('fa_pair'), ('float8')) v(t)
JOIN pg_proc p ON p.proargtypes[CASE WHEN p.proname = 'bloom_agg' THEN 0 ELSE 1 END] = t
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
	 AND d.refclassid = 'pg_extension'::regclass
WHERE p.proname IN ('bloom_agg', 'bloom_agg_filter_transfn', 'bloom_agg_template_transfn')
GROUP BY 1, 2 ORDER BY 1::text COLLATE "C", 2;

-- Which form a call takes: its own type's, else anyelement's, as before
-- the typed forms, never another type's or an ambiguous choice (smallint
-- has a form of its own, or integer, bigint and numeric would tie).  A
-- domain takes its base type's form.  An untyped literal now takes the text
-- form, as a function with a text overload takes it (bloom_agg('a') and
-- bloom_contains(f, 'a') have no typed form and still refuse it, 42804).
-- pg_node_tree, castable to text and with no hash function, is ambiguous
-- (42725), where no filter of it could be built before either.  An enum
-- or a composite type takes its own form once bloom_agg_add_type made it;
-- an anonymous ROW(...) can then be that composite or anyelement, and is
-- ambiguous (42725): cast it.
SELECT arg,
	   fa_resolved(format('SELECT bloom_agg(%s, 10, 0.01)', arg)) AS sized,
	   fa_resolved(format('SELECT bloom_agg(%s, bloom_empty(10))', arg)) AS template,
	   fa_resolved(format('SELECT bloom_agg(%s, bloom_empty(10, 0.01, ''\x000102030405060708090a0b0c0d0e0f''::bytea), ''\x000102030405060708090a0b0c0d0e0f''::bytea)', arg)) AS keyed,
	   fa_resolved(format('SELECT bloom_agg(%s)', arg)) AS unsized,
	   fa_resolved(format('SELECT bloom_agg(%s, 10, 0.01, 2)', arg)) AS growing
FROM (VALUES ('1::smallint'), ('1'), ('1::bigint'), ('1.5'), ('''a''::text'),
			 ('''a''::varchar(4)'), ('''a''::char(3)'), ('''a''::name'),
			 ('''a''::"char"'), ('''\x01''::bytea'),
			 ('''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11''::uuid'),
			 ('''2024-01-01''::date'), ('''2024-01-01''::timestamp'),
			 ('''2024-01-01 00:00+00''::timestamptz'), ('1::fa_posint'),
			 ('''a''::fa_code'), ('1.5::float8'), ('''{}''::jsonb'),
			 ('''ok''::fa_mood'), ('ARRAY[1, 2]'), ('ROW(1, 2)'), ('''a'''),
			 ('NULL'), ('NULL::pg_node_tree')) v(arg);
SELECT bloom_contains(bloom_agg(x, 10, 0.01), 'a') FROM (VALUES ('a'::text)) v(x);

-- Over every type of the catalog: a call of each form takes the form of
-- its own type or the anyelement one, unless the type has no hash function
-- (directly or through a binary-coercible cast, as varchar's is text's)
SELECT ty, sized, template, keyed
FROM (SELECT t.oid::regtype::text AS ty,
			 fa_resolved(format('SELECT bloom_agg(NULL::%s, 10, 0.01)', t.oid::regtype)) AS sized,
			 fa_resolved(format('SELECT bloom_agg(NULL::%s, NULL::bloomfilter)', t.oid::regtype)) AS template,
			 fa_resolved(format('SELECT bloom_agg(NULL::%s, NULL::bloomfilter, NULL::bytea)', t.oid::regtype)) AS keyed,
			 EXISTS (SELECT 1 FROM pg_opclass o JOIN pg_am m ON m.oid = o.opcmethod
					 WHERE m.amname = 'hash' AND o.opcdefault
					   AND (o.opcintype = t.oid
							OR EXISTS (SELECT 1 FROM pg_cast c
									   WHERE c.castsource = t.oid AND c.casttarget = o.opcintype
										 AND c.castmethod = 'b' AND c.castcontext = 'i'))) AS hashable
	  FROM pg_type t
	  WHERE t.typtype IN ('b', 'e', 'r', 'm') AND t.typisdefined
		AND (t.typelem = 0 OR t.typname = 'name')) s
WHERE hashable
  AND (sized NOT IN (ty, 'anyelement') OR template NOT IN (ty, 'anyelement')
	   OR keyed NOT IN (ty, 'anyelement'))
ORDER BY ty COLLATE "C";
-- and every type of the catalog that bloom filters can hash, and arrays of
-- them, takes a form of its own (but the catalogs' row types and internal
-- types of category Z, which take text's)
SELECT t.oid::regtype AS type_without_own_form
FROM pg_type t
	 LEFT JOIN pg_type e ON e.oid = t.typelem
		AND t.typsubscript = 'array_subscript_handler'::regproc
WHERE t.typnamespace = 'pg_catalog'::regnamespace AND t.typisdefined
  AND t.typtype IN ('b', 'r', 'm')
  AND (t.typcategory <> 'Z' OR t.oid = '"char"'::regtype)
  AND coalesce(e.typtype <> 'c' AND (e.typcategory <> 'Z' OR e.oid = '"char"'::regtype), true)
  AND bloom_hashable(t.oid)
  AND fa_resolved(format('SELECT bloom_agg(NULL::%s, 10, 0.01)', t.oid::regtype)) <> t.oid::regtype::text;

-- The typed forms give the bytes of the anyelement forms, whose transition
-- functions these aggregates of the test call
CREATE AGGREGATE fa_sized_any(anyelement, bigint, float8) (
	SFUNC = bloom_agg_filter_transfn, STYPE = bloomfilter);
CREATE AGGREGATE fa_template_any(anyelement, bloomfilter) (
	SFUNC = bloom_agg_template_transfn, STYPE = bloomfilter);
CREATE AGGREGATE fa_keyed_any(anyelement, bloomfilter, bytea) (
	SFUNC = bloom_agg_template_transfn, STYPE = bloomfilter);
SELECT a.aggfnoid::regproc AS test_aggregate, a.aggtransfn::regprocedure AS transfn
FROM pg_aggregate a WHERE a.aggfnoid::regproc::text LIKE 'fa\_%\_any'
ORDER BY a.aggfnoid::regproc::text COLLATE "C";
CREATE TABLE fty AS
	SELECT i, i::int2 AS i2, i * 1000003::bigint AS i8, i / 7.0 AS n, 't' || i AS t,
		   ('v' || i)::varchar(12) AS vc, ('c' || i % 99)::char(5) AS c,
		   ('n' || i)::name AS nm, chr(65 + i % 26)::"char" AS ch,
		   decode(md5(i::text), 'hex') AS b, md5(i::text)::uuid AS u,
		   date '2000-01-01' + i AS d, timestamp '2000-01-01' + i * interval '1 minute' AS ts,
		   timestamptz '2000-01-01 00:00+00' + i * interval '1 second' AS tz,
		   i / 3.0::float8 AS f8, jsonb_build_object('k', i, 'v', i % 7) AS j,
		   ARRAY[i, i % 7] AS ia, (ARRAY['sad', 'ok'])[1 + i % 2]::fa_mood AS mo,
		   int4range(i, i + 10) AS r, ROW(i, 't' || i)::fa_pair AS pr
	FROM generate_series(1, 3000) i;
CREATE FUNCTION fa_same_bytes(col text) RETURNS TABLE (sized boolean, template boolean, keyed boolean, typed_form text)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format($q$
		SELECT bloom_agg(%1$I, 5000, 0.01)::bytea = fa_sized_any(%1$I, 5000, 0.01)::bytea,
			   bloom_agg(%1$I, bloom_empty(5000, 0.01, blocked => true))::bytea
				   = fa_template_any(%1$I, bloom_empty(5000, 0.01, blocked => true))::bytea,
			   bloom_agg(%1$I, bloom_empty(5000, 0.01, %2$L::bytea), %2$L::bytea)::bytea
				   = fa_keyed_any(%1$I, bloom_empty(5000, 0.01, %2$L::bytea), %2$L::bytea)::bytea,
			   fa_resolved('SELECT bloom_agg(%1$I, 5000, 0.01) FROM fty')
		FROM fty$q$, col, '\x000102030405060708090a0b0c0d0e0f');
END $$;
SELECT c.attname AS col, s.*
FROM pg_attribute c, fa_same_bytes(c.attname) s
WHERE c.attrelid = 'fty'::regclass AND c.attnum > 0
ORDER BY c.attnum;
-- the element type of a typed form's filter is the value's (base) type
SELECT (bloom_info(bloom_agg(i2, 10, 0.01))).element_type AS smallint_column,
	   (bloom_info(bloom_agg(i::fa_posint, 10, 0.01))).element_type AS domain_over_integer,
	   (bloom_info(bloom_agg(vc::fa_code, 10, 0.01))).element_type AS domain_over_varchar,
	   (bloom_info(bloom_agg(c, 10, 0.01))).element_type AS char_n
FROM fty;
-- the same bytes in parallel and per group, in hash and sorted aggregation
CREATE TABLE fty_serial AS
	SELECT i % 5 AS g, bloom_agg(t, 5000, 0.01) AS t, bloom_agg(u, bloom_empty(5000, 0.01)) AS u
	FROM fty GROUP BY 1;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET enable_sort = off;
EXPLAIN (COSTS OFF)
	SELECT i % 5 AS g, bloom_agg(t, 5000, 0.01), bloom_agg(u, bloom_empty(5000, 0.01)) FROM fty GROUP BY 1;
SELECT count(*) AS groups, bool_and(s.t::bytea = p.t::bytea AND s.u::bytea = p.u::bytea) AS same_bytes
FROM fty_serial s
	 JOIN (SELECT i % 5 AS g, bloom_agg(t, 5000, 0.01) AS t, bloom_agg(u, bloom_empty(5000, 0.01)) AS u
		   FROM fty GROUP BY 1) p USING (g);
RESET enable_sort;
SET enable_hashagg = off;
SELECT count(*) AS groups, bool_and(s.t::bytea = p.t::bytea AND s.u::bytea = p.u::bytea) AS same_bytes
FROM fty_serial s
	 JOIN (SELECT i % 5 AS g, bloom_agg(t, 5000, 0.01) AS t, bloom_agg(u, bloom_empty(5000, 0.01)) AS u
		   FROM fty GROUP BY 1) p USING (g);
RESET enable_hashagg;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- a typed form refuses a NULL capacity, rate, template or key, and a
-- growing template, as the anyelement one does
CREATE FUNCTION fa_error(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT fa_resolved(q) AS form, fa_error(q) AS error
FROM (VALUES ('SELECT bloom_agg(i, NULL, 0.01) FROM fty'),
			 ('SELECT bloom_agg(t, 10, NULL) FROM fty'),
			 ('SELECT bloom_agg(t, NULL::bloomfilter) FROM fty'),
			 ('SELECT bloom_agg(u, bloom_empty(10, 0.01, ''\x000102030405060708090a0b0c0d0e0f''::bytea), NULL) FROM fty'),
			 ('SELECT bloom_agg(d, bloom_empty(10, 0.01, growth => 2)) FROM fty')) v(q);

--
-- An updated 1.0 install holds the same aggregates as a fresh 1.1 install,
-- and gives the same bytes before and after the update
--
SELECT current_database() AS home_db, current_database() || '_upgrade' AS upgrade_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS :"upgrade_db";
CREATE DATABASE :"upgrade_db";
RESET client_min_messages;
\c :upgrade_db
\set VERBOSITY terse
CREATE EXTENSION bloomidx VERSION '1.0';
CREATE TABLE before_update AS
	SELECT bloom_agg(i, 1000, 0.01) AS b, bloom_union_agg(bloom_add(bloom_empty(64), i % 50)) AS c
	FROM generate_series(1, 2000) i;
SELECT a.aggtranstype::regtype AS state_in_1_0 FROM pg_aggregate a
WHERE a.aggfnoid = 'bloom_agg(anyelement, bigint, float8)'::regprocedure;
ALTER EXTENSION bloomidx UPDATE TO '1.1';
-- (after the update bloom_agg(i, 1000, 0.01) takes the integer form)
SELECT b::bytea = (SELECT bloom_agg(i, 1000, 0.01) FROM generate_series(1, 2000) i)::bytea AS same_sized_agg,
	   c::bytea = (SELECT bloom_union_agg(bloom_add(bloom_empty(64), i % 50)) FROM generate_series(1, 2000) i)::bytea AS same_union_agg
FROM before_update;
SELECT p.oid::regprocedure AS aggregate, a.aggtranstype::regtype AS state,
	   a.aggtransfn::regprocedure AS transfn, a.aggcombinefn::regprocedure AS combinefn,
	   a.aggserialfn <> 0 AS serializes, a.aggfinalfn <> 0 AS finalizes
FROM pg_aggregate a
	 JOIN pg_proc p ON p.oid = a.aggfnoid
	 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
WHERE p.proargtypes[0] IN ('anyelement'::regtype, 'bloomfilter'::regtype)
ORDER BY p.oid::regprocedure::text COLLATE "C";
SELECT count(*) AS typed_forms, count(DISTINCT p.proargtypes[0]) AS element_types
FROM pg_aggregate a
	 JOIN pg_proc p ON p.oid = a.aggfnoid
	 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
WHERE p.proargtypes[0] NOT IN ('anyelement'::regtype, 'bloomfilter'::regtype);
\c :home_db
\set VERBOSITY terse
SET client_min_messages = warning;
DROP DATABASE :"upgrade_db";
RESET client_min_messages;
SELECT p.oid::regprocedure AS aggregate, a.aggtranstype::regtype AS state,
	   a.aggtransfn::regprocedure AS transfn, a.aggcombinefn::regprocedure AS combinefn,
	   a.aggserialfn <> 0 AS serializes, a.aggfinalfn <> 0 AS finalizes
FROM pg_aggregate a
	 JOIN pg_proc p ON p.oid = a.aggfnoid
	 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
WHERE p.proargtypes[0] IN ('anyelement'::regtype, 'bloomfilter'::regtype)
ORDER BY p.oid::regprocedure::text COLLATE "C";

DROP TABLE fg, fg_hash, fg_sort, fs, fs_before, fpar, fpar_serial, fpar_serial_g, fty, fty_serial;
DROP AGGREGATE fa_sized_any(anyelement, bigint, float8), fa_template_any(anyelement, bloomfilter),
	fa_keyed_any(anyelement, bloomfilter, bytea);
DROP FUNCTION fa_resolved(text), fa_same_bytes(text), fa_error(text);
DROP DOMAIN fa_posint, fa_code;
-- the forms bloom_agg_add_type made go with their types
SET client_min_messages = warning;
DROP TYPE fa_mood, fa_pair CASCADE;
RESET client_min_messages;
DROP TYPE fa_bad;
SELECT count(*) AS forms_left FROM pg_proc WHERE proname = 'bloom_agg' AND proargtypes[0] = 0;
