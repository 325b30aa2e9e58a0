--
-- Every default operator class: equality, = ANY and IS NULL through the
-- index return exactly the rows a sequential scan returns, and the plan
-- really uses the index.  Equality follows the type's own "=": numeric
-- 1.0 = 1.00, float -0 = 0, interval '1 day' = '24 hours', bpchar trailing
-- blanks, case-insensitive collations.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

-- Run a condition over table tt with the index forced, and with a seq scan;
-- return the row count, whether both row sets are equal, and whether the
-- forced plan used the index.
CREATE FUNCTION bix_compare(cond text,
	OUT nrows bigint, OUT same boolean, OUT used_index boolean)
LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT count(*), md5(string_agg(i::text, '','' ORDER BY i)) FROM tt WHERE ' || cond;
	line text;
	idx_n bigint; idx_h text; seq_n bigint; seq_h text;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_bitmapscan = on;
	used_index := false;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		used_index := used_index OR line LIKE '%Bitmap Index Scan on tt_idx%';
	END LOOP;
	EXECUTE q INTO idx_n, idx_h;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE q INTO seq_n, seq_h;
	nrows := seq_n;
	same := idx_n = seq_n AND idx_h IS NOT DISTINCT FROM seq_h;
END;
$$;

-- Build table tt(i, v) with v = expr (NULL for every tenth row) of type typ,
-- index it with the type's default bloomidx operator class, and compare
-- "v = probe", "v = ANY (probes)" (or "v IN (...)" when probes starts with
-- IN) and "v IS NULL".
CREATE FUNCTION bix_check_type(typ text, expr text, probe text, probes text,
	OUT eq_rows bigint, OUT any_rows bigint, OUT null_rows bigint,
	OUT correct boolean, OUT index_eq boolean, OUT index_any boolean,
	OUT index_null boolean)
LANGUAGE plpgsql AS $$
DECLARE
	r1 record; r2 record; r3 record;
BEGIN
	DROP TABLE IF EXISTS tt;
	EXECUTE format('CREATE TABLE tt AS SELECT i, CASE WHEN i %% 10 = 0 THEN NULL ELSE (%s)::%s END AS v FROM generate_series(1, 3000) i',
				   expr, typ);
	CREATE INDEX tt_idx ON tt USING bloomidx (v);
	ANALYZE tt;
	r1 := bix_compare('v = ' || probe);
	r2 := bix_compare(CASE WHEN probes LIKE 'IN %' THEN 'v ' || probes
						   ELSE 'v = ANY (' || probes || ')' END);
	r3 := bix_compare('v IS NULL');
	eq_rows := r1.nrows;
	any_rows := r2.nrows;
	null_rows := r3.nrows;
	correct := r1.same AND r2.same AND r3.same;
	index_eq := r1.used_index;
	index_any := r2.used_index;
	index_null := r3.used_index;
END;
$$;

-- "bool_col = true" becomes "bool_col", which the planner of PostgreSQL 15
-- matches to btree and hash indexes only, and from 16 on to any index whose
-- operator family has bool's "=": for bool, index_eq below says whether the
-- plan is the one the major allows.  No planner uses an index but btree's
-- for "row IS NULL" on a composite column: index_null = f, with correct
-- results.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE pair AS (a int, b text);
CREATE COLLATION case_insensitive (provider = icu, locale = 'und-u-ks-level2', deterministic = false);

SELECT typ, eq_rows, any_rows, null_rows, correct,
	CASE WHEN typ = 'bool'
		THEN index_eq = (current_setting('server_version_num')::int >= 160000)
		ELSE index_eq END AS index_eq,
	index_any, index_null
FROM (SELECT typ, (bix_check_type(typ, expr, probe, probes)).*
FROM (VALUES
	('int2', 'i % 100', '7::int2', 'ARRAY[7, 8, 1000]::int2[]'),
	('int4', 'i % 100', '7', 'ARRAY[7, 8, 1000]'),
	('int8', '(i % 100) * 10000000000', '70000000000', 'ARRAY[70000000000, 1]::int8[]'),
	('oid', 'i % 100', '7::oid', 'ARRAY[7, 8]::oid[]'),
	('float4', '(i % 50) / 4.0', '1.25::float4', 'ARRAY[1.25, 2.5, 99]::float4[]'),
	('float8', 'CASE WHEN i % 7 = 0 THEN ''-0''::float8 ELSE (i % 50) / 4.0 END', '0::float8', 'ARRAY[0, 0.25, ''NaN'']::float8[]'),
	('numeric', '(i % 50) / 4.0', '1.2500::numeric', 'ARRAY[1.25, 2.50000, 99]::numeric[]'),
	('bool', 'i % 3 = 0', 'true', 'ARRAY[false]'),
	('"char"', 'chr(65 + i % 26)', '''C''::"char"', 'ARRAY[''C'', ''D'']::"char"[]'),
	('name', '''n'' || i % 30', '''n7''::name', 'ARRAY[''n7'', ''n8'']::name[]'),
	('text', '''t'' || i % 30', '''t7''', 'ARRAY[''t7'', ''nope'']'),
	('varchar(10)', '''v'' || i % 30', '''v7''', 'ARRAY[''v7'', ''v8'']'),
	('char(6)', '''c'' || i % 30', '''c7    ''::char(6)', 'ARRAY[''c7'', ''c8'']::char(6)[]'),
	('bytea', 'decode(md5((i % 40)::text), ''hex'')', 'decode(md5(''7''), ''hex'')', 'ARRAY[decode(md5(''7''), ''hex''), ''\x00''::bytea]'),
	('uuid', 'md5((i % 40)::text)::uuid', 'md5(''7'')::uuid', 'ARRAY[md5(''7'')::uuid, md5(''8'')::uuid]'),
	('date', '''2024-01-01''::date + i % 60', '''2024-01-08''::date', 'ARRAY[''2024-01-08'', ''2024-01-09'']::date[]'),
	('time', '''00:00''::time + (i % 60) * interval ''1 minute''', '''00:07''::time', 'ARRAY[''00:07'', ''00:08'']::time[]'),
	('timetz', '(''00:00''::time + (i % 60) * interval ''1 minute'')::text || ''+02''', '''00:07+02''::timetz', 'ARRAY[''00:07+02'', ''22:07+00'']::timetz[]'),
	('timestamp', '''2024-01-01''::timestamp + (i % 60) * interval ''1 hour''', '''2024-01-01 07:00''::timestamp', 'ARRAY[''2024-01-01 07:00'', ''2024-01-01 08:00'']::timestamp[]'),
	('timestamptz', '''2024-01-01 00:00+00''::timestamptz + (i % 60) * interval ''1 hour''', '''2024-01-01 09:00+02''::timestamptz', 'ARRAY[''2024-01-01 07:00+00'', ''2024-01-01 08:00+00'']::timestamptz[]'),
	('interval', '(i % 30) * interval ''1 hour''', 'interval ''1 day''', 'ARRAY[''24 hours'', ''7 hours'']::interval[]'),
	('inet', '(''10.0.0.'' || i % 50)::inet', '''10.0.0.7''::inet', 'ARRAY[''10.0.0.7'', ''::1'']::inet[]'),
	('cidr', '(''10.0.'' || i % 50 || ''.0/24'')::cidr', '''10.0.7.0/24''::cidr', 'ARRAY[''10.0.7.0/24'', ''10.0.8.0/24'']::cidr[]'),
	('macaddr', '(''08:00:2b:01:02:'' || lpad(to_hex(i % 50), 2, ''0''))::macaddr', '''08:00:2b:01:02:07''::macaddr', 'ARRAY[''08:00:2b:01:02:07'']::macaddr[]'),
	('macaddr8', '(''08:00:2b:01:02:03:04:'' || lpad(to_hex(i % 50), 2, ''0''))::macaddr8', '''08:00:2b:01:02:03:04:07''::macaddr8', 'ARRAY[''08:00:2b:01:02:03:04:07'']::macaddr8[]'),
	('pg_lsn', '(''0/'' || to_hex(i % 50))::pg_lsn', '''0/7''::pg_lsn', 'ARRAY[''0/7'', ''0/8'']::pg_lsn[]'),
	('jsonb', 'jsonb_build_object(''k'', i % 30, ''a'', 1)', '''{"a": 1, "k": 7}''::jsonb', 'ARRAY[''{"k": 7, "a": 1}'', ''{}'']::jsonb[]'),
	('xid8', '(i % 50)::text::xid8', '''7''::xid8', 'ARRAY[''7'', ''8'']::xid8[]'),
	('xid', '(i % 50)::text::xid', '''7''::xid', 'ARRAY[''7'', ''8'']::xid[]'),
	('cid', '(i % 50)::text::cid', '''7''::cid', 'ARRAY[''7'', ''8'']::cid[]'),
	('tid', 'format(''(%s,%s)'', i % 5, i % 7)::tid', '''(2,3)''::tid', 'ARRAY[''(2,3)'', ''(0,0)'']::tid[]'),
	('oidvector', '(i % 20 || '' '' || i % 3)::oidvector', '''7 1''::oidvector', 'ARRAY[''7 1'', ''8 2'']::oidvector[]'),
	('mood', '(ARRAY[''sad'', ''ok'', ''happy''])[1 + i % 3]::mood', '''ok''::mood', 'ARRAY[''ok'', ''sad'']::mood[]'),
	('int4[]', 'ARRAY[i % 20, i % 3]', 'ARRAY[7, 1]', 'IN (ARRAY[7, 1], ARRAY[8, 2])'),
	('int4range', 'int4range(i % 20, i % 20 + 5)', 'int4range(7, 12)', 'ARRAY[int4range(7, 12), ''empty'']'),
	('int4multirange', 'int4multirange(int4range(i % 20, i % 20 + 5))', 'int4multirange(int4range(7, 12))', 'ARRAY[int4multirange(int4range(7, 12))]'),
	('pair', 'ROW(i % 20, ''x'')::pair', 'ROW(7, ''x'')::pair', 'ARRAY[ROW(7, ''x''), ROW(8, ''y'')]::pair[]'),
	('text COLLATE case_insensitive', '''Word'' || i % 30', '''WORD7''', 'ARRAY[''word7'', ''WoRd8'']')
) AS t(typ, expr, probe, probes)) c
ORDER BY typ;

-- Cross-type equalities within the integer, float and text families
DROP TABLE tt;
CREATE TABLE tt AS
	SELECT i, (i % 100)::int2 AS s, (i % 100)::int4 AS n, (i % 100)::int8 AS b,
		   (i % 50) / 4.0::float4 AS f, 'n' || i % 30 AS t, ('n' || i % 30)::name AS nm
	FROM generate_series(1, 3000) i;
CREATE INDEX tt_idx ON tt USING bloomidx (s, n, b, f, t, nm);
SELECT cond, (bix_compare(cond)).*
FROM (VALUES ('s = 7::int4'), ('s = 7::int8'), ('n = 7::int2'), ('n = 7::int8'),
			 ('b = 7::int2'), ('b = 7::int4'), ('n = ANY (ARRAY[7, 8]::int8[])'),
			 ('f = 1.25::float8'), ('t = (''n7''::name COLLATE "default")'), ('nm = ''n7''::text'),
			 ('s = 7::int8 AND t = ''n7''::name'), ('n = 40000000000::int8')) AS c(cond);

-- Negative integers, int8 beyond 32 bits and oid: a build hashes these
-- types' values directly, as their hash functions do, and a query's keys,
-- hashed through the functions (of the key's type), must find them
DROP TABLE tt;
CREATE TABLE tt AS
	SELECT i, (i % 100 - 50)::int2 AS s, (i % 100 - 50)::int4 AS n,
		   (i % 100 - 50)::int8 * 10000000000 + i % 3 AS b, (i % 100)::oid AS o
	FROM generate_series(1, 3000) i;
CREATE INDEX tt_idx ON tt USING bloomidx (s, n, b, o);
SELECT cond, (bix_compare(cond)).*
FROM (VALUES ('s = -7::int2'), ('s = -7::int8'), ('n = -7'), ('n = -7::int8'),
			 ('b = -69999999999'), ('b = ANY (ARRAY[-69999999999, 10000000002])'),
			 ('b = 0'), ('o = 7::oid')) AS c(cond);

-- Every operator class passes the validator (those of types that only
-- later majors have are checked below)
SELECT opc.opcname, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE am.amname = 'bloomidx' AND opc.opcname NOT IN ('oid8_ops')
ORDER BY 1;

-- Types of later majors (PostgreSQL 19's oid8): where the type exists, its
-- operator class is there, valid, and answers as a seq scan does
SELECT t.typ,
	CASE WHEN to_regtype(t.typ) IS NULL THEN true
	ELSE (SELECT amvalidate(opc.oid)
		  FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
		  WHERE am.amname = 'bloomidx' AND opc.opcdefault
			AND opc.opcintype = to_regtype(t.typ)) END AS valid,
	CASE WHEN to_regtype(t.typ) IS NULL THEN true
	ELSE (SELECT correct AND index_eq AND index_any AND index_null
		  FROM bix_check_type(t.typ, t.expr, t.probe, t.probes)) END AS answers
FROM (VALUES ('oid8', '(i % 50)::text::oid8', '''7''::oid8', 'ARRAY[''7'', ''8'']::oid8[]'))
	AS t(typ, expr, probe, probes);

-- Every type with a default hash operator class has a default bloomidx one
SELECT h.opcintype::regtype AS missing
FROM pg_opclass h JOIN pg_am ha ON ha.oid = h.opcmethod AND ha.amname = 'hash'
WHERE h.opcdefault AND NOT EXISTS (
	SELECT 1 FROM pg_opclass b JOIN pg_am ba ON ba.oid = b.opcmethod AND ba.amname = 'bloomidx'
	WHERE b.opcdefault AND b.opcintype = h.opcintype);

DROP TABLE tt;
DROP FUNCTION bix_check_type(text, text, text, text);
DROP TYPE pair;
DROP TYPE mood;
DROP COLLATION case_insensitive;
