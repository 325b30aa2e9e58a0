--
-- Keyed filters: bit positions from SipHash-2-4, under a secret key, of the
-- value's hash.  Values crafted to land on a quarter of an unkeyed filter's
-- bits drive its false-positive rate far above target; under a key the same
-- values are ordinary.  The filter holds a fingerprint of the key, never
-- the key, and refuses any other key, or none.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse
\set key '\'\\x000102030405060708090a0b0c0d0e0f\'::bytea'
\set other_key '\'\\x0f0e0d0c0b0a09080706050403020100\'::bytea'

SELECT format_version, variant, nbits, nhashes, capacity
FROM bloom_info(bloom_empty(1000, 0.1, key => :key));
-- the key is nowhere in the filter's bytes, its text or bloom_info
SELECT position(:key IN f::bytea) AS key_in_bytes,
	   strpos(f::text, encode(:key, 'hex')) AS key_in_text,
	   strpos((SELECT i::text FROM bloom_info(f) i), encode(:key, 'hex')) AS key_in_info
FROM (SELECT bloom_add(bloom_empty(1000, 0.1, :key), 42, :key) AS f) s;

--
-- Crafting: values whose unkeyed positions all lie in the first 1,200 of
-- the bits of a filter for 1,000 values at 10% (4,809 bits, 3 positions a
-- value), found with an oracle filter whose first 1,200 bits are set
--
CREATE TABLE fk_oracle AS
	SELECT overlay(bloom_add(bloom_empty(1000, 0.1), 0)::bytea
				   PLACING decode(repeat('ff', 150), 'hex') FROM 59 FOR 150)::bloomfilter AS t;
CREATE TABLE fk_crafted AS
	SELECT row_number() OVER (ORDER BY i) AS n, i
	FROM fk_oracle, generate_series(1, 400000) i
	WHERE bloom_contains(t, i);
SELECT count(*) >= 3000 AS enough_crafted FROM fk_crafted;
-- 1,000 crafted values added, 2,000 other crafted values probed
CREATE TABLE fk AS
	SELECT bloom_agg(i, 1000, 0.1) AS plain,
		   bloom_agg(i, bloom_empty(1000, 0.1, :key), :key) AS keyed
	FROM fk_crafted WHERE n <= 1000;
SELECT plain_false_negatives, keyed_false_negatives,
	   plain_false_positives, plain_false_positives > 1000 AS plain_rate_above_half,
	   keyed_false_positives, keyed_false_positives <= 240 AS keyed_rate_on_target
FROM fk,
	 LATERAL (SELECT count(*) FILTER (WHERE n <= 1000 AND NOT bloom_contains(plain, i)) AS plain_false_negatives,
					 count(*) FILTER (WHERE n <= 1000 AND NOT bloom_contains(keyed, i, :key)) AS keyed_false_negatives,
					 count(*) FILTER (WHERE n > 1000 AND n <= 3000 AND bloom_contains(plain, i)) AS plain_false_positives,
					 count(*) FILTER (WHERE n > 1000 AND n <= 3000 AND bloom_contains(keyed, i, :key)) AS keyed_false_positives
			  FROM fk_crafted) c;
-- and for values not crafted both are on target
SELECT (SELECT count(*) FROM generate_series(1000001, 1020000) i WHERE bloom_contains(keyed, i, :key)) <= 2400 AS keyed_on_target
FROM fk;

--
-- The key must be the filter's
--
SELECT bloom_contains(keyed, 1) FROM fk;
SELECT bloom_contains(keyed, ARRAY[1]) FROM fk;
SELECT bloom_add(keyed, 1) FROM fk;
SELECT bloom_contains(keyed, 1, :other_key) FROM fk;
SELECT bloom_add(keyed, 1, :other_key) FROM fk;
SELECT bloom_contains(plain, 1, :key) FROM fk;
SELECT bloom_empty(10, 0.1, '\x0102'::bytea);
SELECT keyed | bloom_empty(1000, 0.1, :other_key) FROM fk;
SELECT keyed | plain FROM fk;
SELECT bloom_agg(i, bloom_empty(1000, 0.1, :key)) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, bloom_empty(1000, 0.1, :key), :other_key) FROM generate_series(1, 3) i;
SELECT bloom_agg(i, bloom_empty(1000, 0.1), :key) FROM generate_series(1, 3) i;
\set VERBOSITY default
SELECT bloom_contains(keyed, 1, :other_key) FROM fk;
\set VERBOSITY terse
-- same key: union, and the text form reads back
SELECT (SELECT count(*) FROM fk_crafted WHERE n <= 1000 AND NOT bloom_contains(u, i, :key)) AS false_negatives,
	   u::text::bloomfilter::bytea = u::bytea AS reads_back
FROM (SELECT keyed | bloom_add(bloom_empty(1000, 0.1, :key), 5, :key) AS u FROM fk) s;
-- parallel aggregation gives the serial bytes
CREATE TABLE fkp AS SELECT i FROM generate_series(1, 100000) i;
ANALYZE fkp;
CREATE TABLE fkp_serial AS SELECT bloom_agg(i, bloom_empty(100000, 0.01, :key), :key) AS f FROM fkp;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_agg(i, bloom_empty(100000, 0.01, :key), :key) FROM fkp;
SELECT s.f::bytea = (SELECT bloom_agg(i, bloom_empty(100000, 0.01, :key), :key) FROM fkp)::bytea AS same_bytes
FROM fkp_serial s;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- a keyed flag without a fingerprint, or the reverse, is malformed
SELECT overlay(bloom_empty(10, 0.1, :key)::bytea PLACING '\x0000000000000000'::bytea FROM 75 FOR 8)::bloomfilter;

-- Array probes of a keyed filter answer as its probes of each element:
-- bloom_contains(filter, array, key), bloom_contains_any, bloom_contains_all
CREATE TABLE fka AS
	SELECT bloom_agg(i, bloom_empty(1000, 0.01, :key), :key) AS f
	FROM generate_series(1, 500, 2) i;
SELECT bloom_contains(f, ARRAY[1, 2, 3, NULL, 499, 500], :key) AS each_element,
	   bloom_contains(f, ARRAY[1, 2, 3, NULL, 499, 500], :key) =
	   ARRAY[bloom_contains(f, 1, :key), bloom_contains(f, 2, :key), bloom_contains(f, 3, :key),
			 NULL, bloom_contains(f, 499, :key), bloom_contains(f, 500, :key)] AS as_scalars
FROM fka;
SELECT count(*) FILTER (WHERE (bloom_contains(f, ARRAY[i], :key))[1] <> bloom_contains(f, i, :key))
	AS disagreeing
FROM fka, generate_series(1, 2000) i;
SELECT bloom_contains_any(f, ARRAY[2, 4, 1], :key) AS any_one_member,
	   bloom_contains_all(f, ARRAY[1, 3, 5], :key) AS all_members,
	   bloom_contains_any(f, ARRAY[]::int[], :key) AS any_of_none,
	   bloom_contains_all(f, ARRAY[]::int[], :key) AS all_of_none,
	   bloom_contains_all(f, ARRAY[1, NULL], :key) AS all_with_null
FROM fka;
SELECT bloom_contains(f, ARRAY[1], :other_key) FROM fka;
SELECT bloom_contains_any(f, ARRAY[1]) FROM fka;
SELECT bloom_contains_all(bloom_agg(i), ARRAY[1], :key) FROM generate_series(1, 10) i;
SELECT bloom_contains(f, ARRAY['a'::text], :key) FROM fka;
-- a keyed filter of arrays takes an array as one value
SELECT bloom_contains(f, ARRAY[1, 2], :key) AS member, bloom_contains(f, ARRAY[2, 1], :key) AS other
FROM (SELECT bloom_add(bloom_empty(100, 0.001, :key), ARRAY[1, 2], :key) AS f) s;

DROP TABLE fk_oracle, fk_crafted, fk, fkp, fkp_serial, fka;
