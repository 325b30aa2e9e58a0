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

-- every aggregate of the extension, its transition type, and whether partial
-- aggregation can push it down
SELECT p.oid::regprocedure AS aggregate, a.aggtranstype::regtype AS state,
	   t.typtype = 'p' AS pseudo_state, a.aggcombinefn <> 0 AS combines,
	   a.aggserialfn <> 0 AS serializes, a.aggfinalfn <> 0 AS finalizes
FROM pg_aggregate a
	 JOIN pg_proc p ON p.oid = a.aggfnoid
	 JOIN pg_type t ON t.oid = a.aggtranstype
	 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
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
ORDER BY p.oid::regprocedure::text COLLATE "C";
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
ORDER BY p.oid::regprocedure::text COLLATE "C";

DROP TABLE fg, fg_hash, fg_sort, fs, fs_before, fpar, fpar_serial, fpar_serial_g;
