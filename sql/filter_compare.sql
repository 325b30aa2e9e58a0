--
-- Equality, ordering and hashing of bloomfilter values: =, <>, IS DISTINCT
-- FROM, DISTINCT, GROUP BY, UNION and the set operations, sorts, hash and
-- merge joins, btree, hash and bloomidx indexes on a filter column.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE fc (id int, g int, f bloomfilter);
-- Ten filters, each built twice over the same values, and two NULLs
INSERT INTO fc
SELECT k * 10 + copy, k,
	   (SELECT bloom_agg(i * k, 1000, 0.01) FROM generate_series(1, 50 + k) i)
FROM generate_series(1, 10) k, generate_series(1, 2) copy;
INSERT INTO fc VALUES (1000, NULL, NULL), (1001, NULL, NULL);

-- Equal filters: the same values added, same shape; different values or
-- another shape are not
SELECT a.f = b.f AS same_values, a.f <> b.f AS ne
FROM fc a, fc b WHERE a.id = 11 AND b.id = 12;
SELECT a.f = b.f AS other_values FROM fc a, fc b WHERE a.id = 11 AND b.id = 21;
SELECT bloom_agg(i, 1000, 0.01) = bloom_agg(i, 1001, 0.01) AS other_capacity
FROM generate_series(1, 10) i;
SELECT bloom_empty(100) = bloom_empty(100) AS empty_equal,
	   bloom_empty(100) = bloom_empty(100, 0.02) AS other_rate;
SELECT f = NULL AS with_null, f IS DISTINCT FROM NULL AS distinct_from_null,
	   NULL::bloomfilter IS NOT DISTINCT FROM NULL AS null_not_distinct
FROM fc WHERE id = 11;
-- A growing, a counting, a blocked and a keyed filter each equal their copy
SELECT v, f1 = f2 AS equal, f1 = bloom_add(f2, 0) AS after_add
FROM (VALUES
	('growing', (SELECT bloom_agg(i, 50, 0.01, 2) FROM generate_series(1, 500) i),
				(SELECT bloom_agg(i, 50, 0.01, 2) FROM generate_series(1, 500) i)),
	('counting', (SELECT bloom_agg(i, bloom_empty(1000, 0.01, counting => true)) FROM generate_series(1, 50) i),
				 (SELECT bloom_agg(i, bloom_empty(1000, 0.01, counting => true)) FROM generate_series(1, 50) i)),
	('blocked', (SELECT bloom_agg(i, bloom_empty(1000, 0.01, blocked => true)) FROM generate_series(1, 50) i),
				(SELECT bloom_agg(i, bloom_empty(1000, 0.01, blocked => true)) FROM generate_series(1, 50) i))
) AS t(v, f1, f2);
SELECT bloom_agg(i, bloom_empty(1000, 0.01, key => '\x000102030405060708090a0b0c0d0e0f'::bytea),
				 '\x000102030405060708090a0b0c0d0e0f'::bytea)
	 = bloom_agg(i, bloom_empty(1000, 0.01, key => '\x000102030405060708090a0b0c0d0e0f'::bytea),
				 '\x000102030405060708090a0b0c0d0e0f'::bytea) AS keyed_equal
FROM generate_series(1, 50) i;

-- DISTINCT, GROUP BY, UNION, INTERSECT, EXCEPT: by hashing and by sorting
SELECT count(DISTINCT f) AS distinct_filters, count(*) AS rows FROM fc;
SET enable_hashagg = off;
SELECT count(*) AS sorted_groups FROM (SELECT f, count(*) FROM fc GROUP BY f) s;
RESET enable_hashagg;
SET enable_sort = off;
SELECT count(*) AS hashed_groups FROM (SELECT f, count(*) FROM fc GROUP BY f) s;
RESET enable_sort;
SELECT count(*) AS groups_of_two FROM (SELECT f FROM fc GROUP BY f HAVING count(*) = 2) s;
SELECT count(*) AS union_rows FROM (SELECT f FROM fc UNION SELECT f FROM fc) s;
SELECT count(*) AS intersect_rows FROM (SELECT f FROM fc WHERE g <= 6 INTERSECT SELECT f FROM fc WHERE g >= 5) s;
SELECT count(*) AS except_rows FROM (SELECT f FROM fc EXCEPT SELECT f FROM fc WHERE g > 3) s;

-- Joins on a filter: hash, merge and nested loop give the same pairs
CREATE FUNCTION fc_join(method text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text;
	plan text := '';
	line text;
BEGIN
	PERFORM set_config('enable_hashjoin', CASE method WHEN 'Hash' THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_mergejoin', CASE method WHEN 'Merge' THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_nestloop', CASE method WHEN 'Nested Loop' THEN 'on' ELSE 'off' END, true);
	FOR line IN EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM fc a JOIN fc b ON a.f = b.f LOOP
		plan := plan || line;
	END LOOP;
	SELECT count(*) || ' pairs ' || md5(string_agg(a.id || '-' || b.id, ',' ORDER BY a.id, b.id))
	INTO r FROM fc a JOIN fc b ON a.f = b.f;
	RETURN CASE WHEN plan LIKE '%' || method || '%' THEN r ELSE 'no ' || method || ' join: ' || plan END;
END;
$$;
SELECT fc_join('Hash') = fc_join('Merge') AS hash_eq_merge,
	   fc_join('Merge') = fc_join('Nested Loop') AS merge_eq_nestloop,
	   fc_join('Hash') LIKE '40 pairs %' AS forty_pairs;

-- Sorting: a total order consistent with equality
SELECT count(*) AS out_of_order FROM (
	SELECT f, lag(f) OVER (ORDER BY f) AS prev FROM fc WHERE f IS NOT NULL) s
WHERE prev > f;
SELECT count(*) AS equal_neighbours FROM (
	SELECT f, lag(f) OVER (ORDER BY f) AS prev FROM fc WHERE f IS NOT NULL) s
WHERE prev = f;

-- Indexes on a filter column: btree, hash, bloomidx answer as a seq scan
CREATE INDEX fc_btree ON fc USING btree (f);
CREATE INDEX fc_hash ON fc USING hash (f);
CREATE INDEX fc_bx ON fc USING bloomidx (f);
CREATE FUNCTION fc_lookup(idx text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text;
	plan text := '';
	line text;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT id FROM fc WHERE f = (SELECT f FROM fc WHERE id = 31)' LOOP
		plan := plan || line;
	END LOOP;
	SELECT string_agg(id::text, ',' ORDER BY id) INTO r FROM fc WHERE f = (SELECT f FROM fc WHERE id = 31);
	RETURN CASE WHEN plan LIKE '%' || idx || '%' THEN r ELSE 'not through ' || idx END;
END;
$$;
BEGIN;
DROP INDEX fc_hash, fc_bx;
SELECT fc_lookup('fc_btree') AS by_btree;
ROLLBACK;
BEGIN;
DROP INDEX fc_btree, fc_bx;
SELECT fc_lookup('fc_hash') AS by_hash;
ROLLBACK;
BEGIN;
DROP INDEX fc_btree, fc_hash;
SELECT fc_lookup('fc_bx') AS by_bloomidx;
ROLLBACK;
SELECT string_agg(id::text, ',' ORDER BY id) AS by_seqscan FROM fc WHERE f = (SELECT f FROM fc WHERE id = 31);
SELECT opc.opcname, am.amname, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE opc.opcintype = 'bloomfilter'::regtype ORDER BY am.amname;

-- A filter of a composite type keeps the name the type had when it was
-- written; after a rename it equals (and hashes as) a filter built since,
-- whose bytes carry the new name
CREATE TYPE fc_pt AS (a int, b text);
CREATE TABLE fc_named AS
	SELECT bloom_agg((i, 'x')::fc_pt, 100, 0.01) AS f FROM generate_series(1, 20) i;
ALTER TYPE fc_pt RENAME TO fc_pt2;
SELECT n.f = s.f AS equal, n.f::bytea = s.f::bytea AS same_bytes,
	   bloomfilter_hash(n.f) = bloomfilter_hash(s.f) AS same_hash,
	   bloomfilter_hash_extended(n.f, 7) = bloomfilter_hash_extended(s.f, 7) AS same_hash_extended
FROM fc_named n,
	 (SELECT bloom_agg((i, 'x')::fc_pt2, 100, 0.01) AS f FROM generate_series(1, 20) i) s;
-- the 32-bit hash is the low half of the extended one with seed 0
SELECT bool_and(bloomfilter_hash(f) = (bloomfilter_hash_extended(f, 0) & x'ffffffff'::bigint)::bit(32)::int)
	AS hash_is_low_half
FROM fc WHERE f IS NOT NULL;

DROP TABLE fc, fc_named;
DROP TYPE fc_pt2;
DROP FUNCTION fc_join(text), fc_lookup(text);
