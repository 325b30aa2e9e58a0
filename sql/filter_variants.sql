--
-- Filter variants (format 3): growing (scalable), counting and blocked
-- filters; bloom_fold; bloom_agg with a template; format-2 filters written
-- before the variants still read and answer the same; a filter naming a
-- built-in type is refused at input.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

--
-- Format-2 filters captured from version 1.0 read back byte for byte and
-- answer as they did
--
CREATE TYPE cap_pair AS (a int, b text);
CREATE TABLE f2 (name text, lit text);
INSERT INTO f2 VALUES
	('text', '\x424c4d460200010019000000070000001d0000000000000003000000000000007b14ae47e17a843f0000000000000000000000000000000000000998361e'),
	('int8', '\x424c4d46020001001400000006000000f5000000000000001e000000000000007b14ae47e17a943f0000000000000000000000000000000000004ccfbd8bddb4e588ed410af844e091f127664c073d0ac0c67a5f16ad443109'),
	('raw', '\x424c4d460200010019000000030000004000000000000000000000000000000000000000000000000000000000000000000000000000000000002100808200000000');
SELECT name, lit::bloomfilter::text = lit AS reads_back, format_version, variant, layers, growth
FROM f2, bloom_info(lit::bloomfilter) ORDER BY name;
SELECT bloom_contains_all(lit::bloomfilter, ARRAY['apple', 'pear', 'plum']) AS all_in,
	   bloom_contains(lit::bloomfilter, ARRAY['apple', 'fig', 'kiwi', 'lime']) AS answers
FROM f2 WHERE name = 'text';
SELECT lit::bloomfilter::bytea = (SELECT bloom_agg(x) FROM (VALUES ('apple'::text), ('pear'), ('plum')) v(x))::bytea AS same_as_now
FROM f2 WHERE name = 'text';
SELECT lit::bloomfilter::bytea = (SELECT bloom_agg(i::bigint, 30, 0.02) FROM generate_series(1, 25) i)::bytea AS same_as_now,
	   (SELECT count(*) FROM generate_series(1, 25) i WHERE bloom_contains(lit::bloomfilter, i::bigint)) AS contained
FROM f2 WHERE name = 'int8';
SELECT bloom_contains(lit::bloomfilter, ARRAY['a', 'b', 'c']) FROM f2 WHERE name = 'raw';
-- a non-built-in type, by name: this database gives cap_pair another OID
SELECT (bloom_info(g)).element_type, bloom_contains(g, (3, 'v3')::cap_pair) AS hit,
	   g::text::bloomfilter::bytea = g::bytea AS reads_back
FROM (SELECT '\x424c4d46020001004d4600000300000031000000000000000a000000000000009a9999999999b93f0000000000000000000000000000000006087075626c69636361705f706169729074106400a400'::bloomfilter AS g) s;

--
-- A filter whose header names a built-in type under a non-built-in OID
-- would be stored but never read back: refused at input, from every form
--
CREATE FUNCTION f_patch(f bytea, off int, b bytea) RETURNS bytea
LANGUAGE sql AS $$ SELECT overlay(f PLACING b FROM off + 1 FOR length(b)) $$;
CREATE TABLE fbuiltin AS
	SELECT f_patch(f_patch(substr(r, 1, 58), 8, '\x10270000'), 56, '\x0a04')
		   || convert_to('pg_catalogint4', 'UTF8') || substr(r, 59) AS b
	FROM (SELECT bloom_empty_raw(16, 2)::bytea AS r) s;
SELECT b::bloomfilter FROM fbuiltin;
SELECT ('\x' || encode(b, 'hex'))::bloomfilter FROM fbuiltin;
SELECT f_patch(b, 8, '\x11270000')::bloomfilter FROM fbuiltin;
-- a non-built-in type of that name is fine
SELECT (bloom_info((f_patch(substr(b, 1, 58), 56, '\x0608') || convert_to('publiccap_pair', 'UTF8')
					|| substr(b, 59 + 14))::bloomfilter)).element_type
FROM fbuiltin;

--
-- Growing filters: layer i holds capacity * growth^i values at rate
-- p * (1 - 0.8) * 0.8^i
--
SELECT format_version, variant, layers, growth, nhashes, capacity, target_false_positive_rate
FROM bloom_info(bloom_empty(1000, 0.01, growth => 2));
CREATE TABLE fgrow AS
	SELECT bloom_agg(i, 1000, 0.01, 2) AS f FROM generate_series(1, 100000) i;
-- 100 times the first capacity: 7 layers, no false negatives, a measured
-- rate at most 1.2 times the target, and the size against a filter sized
-- for 100,000 values up front
SELECT layers, growth, size_bytes,
	   round(size_bytes::numeric / (SELECT size_bytes FROM bloom_info(bloom_empty(100000, 0.01))), 2) AS size_ratio,
	   round(expected_false_positive_rate::numeric, 4) AS expected_rate
FROM fgrow, bloom_info(f);
SELECT false_negatives, false_positives_in_300k, false_positives_in_300k <= 3600 AS within_1_2_target
FROM fgrow,
	 LATERAL (SELECT count(*) AS false_negatives FROM generate_series(1, 100000) i WHERE NOT bloom_contains(f, i)) n,
	 LATERAL (SELECT count(*) AS false_positives_in_300k FROM generate_series(100001, 400000) i WHERE bloom_contains(f, i)) p;
-- bloom_add grows it too; a value already in it takes no room
SELECT (bloom_info(f)).layers AS one_layer_at_capacity,
	   (bloom_info(bloom_add(f, 1001))).layers AS two_layers_past_it,
	   bloom_add(f, 5)::bytea = f::bytea AS duplicate_changes_nothing
FROM (SELECT bloom_agg(i, 1000, 0.01, 2) AS f FROM generate_series(1, 1000) i) s;
-- union of growing filters of the same parameters, layer by layer
SELECT (SELECT count(*) FROM generate_series(1, 6000) i WHERE NOT bloom_contains(a | b, i)) AS false_negatives,
	   (bloom_info(a | b)).layers, (bloom_info(a | b)).growth
FROM (SELECT bloom_agg(i, 1000, 0.01, 2) FILTER (WHERE i <= 1500) AS a,
			 bloom_agg(i, 1000, 0.01, 2) FILTER (WHERE i > 1500) AS b
	  FROM generate_series(1, 6000) i) s;
SELECT bloom_empty(1000, 0.01, growth => 2) | bloom_empty(1000, 0.01, growth => 3);
SELECT bloom_empty(1000, 0.01, growth => 2) | bloom_empty(1000, 0.01);
SELECT bloom_empty(1000, 0.01, growth => 2) & bloom_empty(1000, 0.01, growth => 2);
SELECT bloom_empty(1000, 0.01, growth => 17);
SELECT bloom_empty(1000, 0.01, growth => -1);
SELECT bloom_agg(i, 10, 0.01, NULL) FROM generate_series(1, 3) i;
-- reaching the largest number of layers
SELECT bloom_agg(i, 1, 0.5, 1) FROM generate_series(1, 1000) i;

--
-- Counting filters: 4-bit counters, bloom_remove, saturation, bloom_plain
--
SELECT format_version, variant, nbits, nhashes, size_bytes
FROM bloom_info(bloom_empty(1000, 0.01, counting => true));
CREATE TABLE fcount AS
	SELECT bloom_agg(i, bloom_empty(1000, 0.01, counting => true)) AS f FROM generate_series(1, 500) i;
-- remove the even values: the odd ones stay, most even ones go
CREATE TABLE fcount_odd AS
	SELECT f AS f FROM fcount;
DO $$
DECLARE g bloomfilter;
BEGIN
	SELECT f INTO g FROM fcount_odd;
	FOR i IN 2..500 BY 2 LOOP
		g := bloom_remove(g, i);
	END LOOP;
	UPDATE fcount_odd SET f = g;
END $$;
SELECT (SELECT count(*) FROM generate_series(1, 500, 2) i WHERE NOT bloom_contains(f, i)) AS odd_missing,
	   (SELECT count(*) FROM generate_series(2, 500, 2) i WHERE bloom_contains(f, i)) < 25 AS few_even_left
FROM fcount_odd;
-- removing a value never added is an error when a counter is zero
SELECT bloom_remove(f, 100000) FROM fcount_odd;
SELECT bloom_remove(bloom_empty(10, 0.01, counting => true), 1);
SELECT bloom_remove(bloom_add(bloom_empty(10), 1), 1);
-- a counter sticks at 15: adding one value 20 times and removing it 20
-- times leaves it contained, never a false negative
DO $$
DECLARE g bloomfilter := bloom_empty(10, 0.01, counting => true);
BEGIN
	FOR i IN 1..20 LOOP g := bloom_add(g, 7); END LOOP;
	FOR i IN 1..20 LOOP g := bloom_remove(g, 7); END LOOP;
	RAISE NOTICE 'after 20 adds and 20 removes: contained %', bloom_contains(g, 7);
	FOR i IN 1..3 LOOP g := bloom_add(g, 8); END LOOP;
	FOR i IN 1..3 LOOP g := bloom_remove(g, 8); END LOOP;
	RAISE NOTICE 'after 3 adds and 3 removes: contained %', bloom_contains(g, 8);
END $$;
-- union adds counters (saturating); the plain filter of the same shape
-- gives the same answers
SELECT (SELECT count(*) FROM generate_series(1, 2000) i
		WHERE bloom_contains(f, i) <> bloom_contains(bloom_plain(f), i)) AS answers_differ,
	   (bloom_info(bloom_plain(f))).variant, (bloom_info(bloom_plain(f))).nbits = (bloom_info(f)).nbits AS same_nbits,
	   bloom_plain(f)::bytea = (SELECT bloom_agg(i, 1000, 0.01) FROM generate_series(1, 500) i)::bytea AS same_as_plain_agg
FROM fcount;
SELECT (bloom_info(f | f)).nbits_set = (bloom_info(f)).nbits_set AS same_cells_set,
	   (SELECT count(*) FROM generate_series(1, 500) i WHERE NOT bloom_contains(bloom_remove(f | f, i), i)) AS false_negatives_after_one_remove
FROM fcount;
SELECT bloom_empty(10, 0.01, counting => true) | bloom_empty(10, 0.01);
SELECT bloom_empty(10, 0.01, counting => true, growth => 2);
SELECT bloom_plain(bloom_empty(10, 0.01, growth => 2));
SELECT bloom_empty(600000000, 0.01, counting => true);

--
-- Blocked filters: all of a value's bits in one 512-bit block; sized up
-- to meet the target rate
--
SELECT format_version, variant, nbits % 512 AS partial_block, nhashes,
	   nbits > (SELECT nbits FROM bloom_info(bloom_empty(100000, 0.01))) AS larger_than_plain
FROM bloom_info(bloom_empty(100000, 0.01, blocked => true));
CREATE TABLE fblock AS
	SELECT 0.01::float8 AS p, bloom_agg(i, bloom_empty(20000, 0.01, blocked => true)) AS f
	FROM generate_series(1, 20000) i
	UNION ALL
	SELECT 0.001, bloom_agg(i, bloom_empty(20000, 0.001, blocked => true))
	FROM generate_series(1, 20000) i;
SELECT p, (SELECT count(*) FROM generate_series(1, 20000) i WHERE NOT bloom_contains(f, i)) AS false_negatives,
	   (SELECT count(*) FROM generate_series(20001, 320000) i WHERE bloom_contains(f, i)) / 300000.0 <= p * 1.2 AS rate_on_target
FROM fblock ORDER BY p;
SELECT bloom_empty(10, 1e-7, blocked => true);

--
-- bloom_agg with a template: any variant but growing; parallel gives the
-- serial bytes
--
SELECT bloom_agg(i, bloom_empty(10, 0.01, growth => 2)) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, bloom_add(bloom_empty(10), 1)) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, NULL::bloomfilter) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, bloom_empty(100000, 0.01))::bytea = bloom_agg(i, 100000, 0.01)::bytea AS plain_template_same
FROM generate_series(1, 5000) i;
CREATE TABLE fvp AS SELECT i, (i * 7919) % 100003 AS v FROM generate_series(1, 200000) i;
ANALYZE fvp;
CREATE TABLE fvp_serial AS
	SELECT bloom_agg(v, bloom_empty(100000, 0.01, counting => true)) AS c,
		   bloom_agg(v, bloom_empty(100000, 0.01, blocked => true)) AS b
	FROM fvp;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
	SELECT bloom_agg(v, bloom_empty(100000, 0.01, counting => true)) FROM fvp;
SELECT s.c::bytea = p.c::bytea AS same_counting, s.b::bytea = p.b::bytea AS same_blocked
FROM fvp_serial s,
	 (SELECT bloom_agg(v, bloom_empty(100000, 0.01, counting => true)) AS c,
			 bloom_agg(v, bloom_empty(100000, 0.01, blocked => true)) AS b
	  FROM fvp) p;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

--
-- bloom_fold: OR of adjacent groups of factor bits, no false negatives
--
CREATE TABLE ffold AS
	SELECT bloom_agg(i, bloom_empty_raw(65536, 7)) AS f FROM generate_series(1, 2000) i;
SELECT factor, nbits, capacity, (SELECT count(*) FROM generate_series(1, 2000) i WHERE NOT bloom_contains(g, i)) AS false_negatives,
	   round(expected_false_positive_rate::numeric, 4) AS expected_rate,
	   round((SELECT count(*) FROM generate_series(10001, 110000) i WHERE bloom_contains(g, i)) / 100000.0, 4) AS measured_rate
FROM ffold, (VALUES (1), (2), (4), (8)) t(factor),
	 LATERAL (SELECT bloom_fold(f, factor) AS g) x, bloom_info(g)
ORDER BY factor;
-- different sizes union once folded to the same size
SELECT (SELECT count(*) FROM generate_series(1, 3000) i WHERE NOT bloom_contains(bloom_fold(a, 4) | bloom_fold(b, 2), i)) AS false_negatives
FROM (SELECT bloom_agg(i, bloom_empty_raw(65536, 7)) FILTER (WHERE i <= 1500) AS a,
			 bloom_agg(i, bloom_empty_raw(32768, 7)) FILTER (WHERE i > 1500) AS b
	  FROM generate_series(1, 3000) i) s;
SELECT bloom_fold(f, 3) FROM ffold;
SELECT bloom_fold(bloom_empty_raw(100, 2), 8);
SELECT bloom_fold(bloom_empty(10, 0.01, blocked => true), 2);

--
-- The variants' bytes read back from text, bytea and binary COPY
--
CREATE TABLE fround (name text, f bloomfilter);
INSERT INTO fround
	SELECT 'growing', f FROM fgrow
	UNION ALL SELECT 'counting', f FROM fcount
	UNION ALL SELECT 'blocked', f FROM fblock WHERE p = 0.01
	UNION ALL SELECT 'growing empty', bloom_empty(10, 0.1, growth => 3)
	UNION ALL SELECT 'folded', bloom_fold(f, 2) FROM ffold;
SELECT name, f::text::bloomfilter::bytea = f::bytea AS text_round_trip,
	   f::bytea::bloomfilter::bytea = f::bytea AS bytea_round_trip
FROM fround ORDER BY name;
CREATE TABLE fround_copy (LIKE fround);
\copy fround TO 'results/filter_variants.bin' WITH (FORMAT binary)
\copy fround_copy FROM 'results/filter_variants.bin' WITH (FORMAT binary)
SELECT count(*) AS same_after_binary_copy FROM fround JOIN fround_copy c USING (name) WHERE c.f::bytea = fround.f::bytea;
-- malformed variant parts are data exceptions
SELECT f_patch(f::bytea, 58, '\x0000')::bloomfilter FROM fround WHERE name = 'growing empty';
SELECT f_patch(f::bytea, 58, '\x0300')::bloomfilter FROM fround WHERE name = 'growing empty';
SELECT f_patch(f::bytea, 60, '\x1100')::bloomfilter FROM fround WHERE name = 'growing empty';
SELECT f_patch(f::bytea, 62, '\x02000000')::bloomfilter FROM fround WHERE name = 'growing empty';
SELECT f_patch(f::bytea, 82, '\x01')::bloomfilter FROM fround WHERE name = 'growing empty';
SELECT f_patch(f::bytea, 4, '\x0300')::bloomfilter FROM fround WHERE name = 'folded';

--
-- bloom_agg(value) beyond work_mem: its hash set (8 bytes a distinct value,
-- at most 3/4 full) becomes a growing filter first sized for the largest set
-- work_mem holds; serial and parallel plans both finish, with no false
-- negatives and the rate on target
--
CREATE TABLE fwm AS SELECT i FROM generate_series(1, 60000) i;
ANALYZE fwm;
SET work_mem = '64kB';
CREATE TABLE fwm_serial AS SELECT bloom_agg(i) AS f FROM fwm;
SELECT variant, layers, growth, capacity, target_false_positive_rate FROM fwm_serial, bloom_info(f);
SELECT (SELECT count(*) FROM generate_series(1, 60000) i WHERE NOT bloom_contains(f, i)) AS false_negatives,
	   (SELECT count(*) FROM generate_series(60001, 260000) i WHERE bloom_contains(f, i)) <= 2400 AS rate_on_target
FROM fwm_serial;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_agg(i) FROM fwm;
SELECT variant, (SELECT count(*) FROM generate_series(1, 60000) i WHERE NOT bloom_contains(f, i)) AS false_negatives
FROM (SELECT bloom_agg(i) AS f FROM fwm) s, bloom_info(f);
-- a filter and sets from other workers combine
SELECT (SELECT count(*) FROM generate_series(1, 60000) i
		WHERE (i <= 5000 OR i > 20000) AND NOT bloom_contains(f, i)) AS false_negatives
FROM (SELECT bloom_agg(i) FILTER (WHERE i <= 5000 OR i > 20000) AS f FROM fwm) s;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET work_mem;
-- within work_mem, the exact size as before
SELECT variant, capacity FROM bloom_info((SELECT bloom_agg(i) FROM fwm));
DROP TABLE fwm, fwm_serial;

DROP TABLE f2, fbuiltin, fgrow, fcount, fcount_odd, fblock, fvp, fvp_serial, ffold, fround, fround_copy;
DROP FUNCTION f_patch(bytea, int, bytea);
DROP TYPE cap_pair;
