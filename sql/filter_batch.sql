--
-- The array forms of bloom_contains probe in batches (of 16 values, the
-- lines of each batch prefetched first): they must answer exactly as
-- bloom_contains does for each element, on every variant and layer, for
-- arrays shorter and longer than a batch, of lengths not a multiple of it,
-- with NULLs, and in two dimensions.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

-- the odd numbers 1 .. 999 in every variant; a few removed from the
-- counting filter
CREATE TABLE bf (name text, f bloomfilter);
INSERT INTO bf
	SELECT 'plain', bloom_agg(i, bloom_empty(500, 0.05)) FROM generate_series(1, 999, 2) i
	UNION ALL
	SELECT 'raw', bloom_agg(i, bloom_empty_raw(4000, 3)) FROM generate_series(1, 999, 2) i
	UNION ALL
	SELECT 'blocked', bloom_agg(i, bloom_empty(500, 0.05, blocked => true)) FROM generate_series(1, 999, 2) i
	UNION ALL
	SELECT 'growing', bloom_agg(i, 40, 0.05, 2) FROM generate_series(1, 999, 2) i
	UNION ALL
	SELECT 'counting', bloom_agg(i, bloom_empty(500, 0.05, counting => true)) FROM generate_series(1, 999, 2) i
	UNION ALL
	SELECT 'untyped', bloom_empty(500, 0.05);
UPDATE bf SET f = bloom_remove(bloom_remove(bloom_remove(f, 1), 501), 999)
WHERE name = 'counting';
SELECT name, variant, layers FROM bf, bloom_info(f) ORDER BY name;

-- arrays of every shape
CREATE TABLE ba (arr_name text, arr int[]);
INSERT INTO ba VALUES
	('mixed1000', (SELECT array_agg(CASE WHEN i % 7 = 0 THEN NULL ELSE i END ORDER BY i)
				   FROM generate_series(1, 1000) i)),
	('present37', (SELECT array_agg(i ORDER BY i) FROM generate_series(3, 75, 2) i)),
	('present16', (SELECT array_agg(i ORDER BY i) FROM generate_series(101, 131, 2) i)),
	('present_null40', (SELECT array_agg(i ORDER BY i) FROM generate_series(201, 277, 2) i) || NULL::int),
	('absent33', (SELECT array_agg(i ORDER BY i) FROM generate_series(100001, 100033) i)),
	('absent_null17', NULL::int || (SELECT array_agg(i ORDER BY i) FROM generate_series(200001, 200016) i)),
	('single', ARRAY[5]),
	('empty', '{}'),
	('all_null20', array_fill(NULL::int, ARRAY[20])),
	('two_dim', (SELECT array_agg(ARRAY[i, i + 1, CASE WHEN i % 3 <> 0 THEN i + 2 END, i + 1000] ORDER BY i)
				 FROM generate_series(1, 60, 3) i));

-- each element's answer from the array form against bloom_contains on it
CREATE TABLE bres AS
	SELECT name, arr_name, arr, bloom_contains(f, arr) AS res,
		   bloom_contains_any(f, arr) AS any_answer,
		   bloom_contains_all(f, arr) AS all_answer,
		   (SELECT array_agg(bloom_contains(f, v) ORDER BY o)
			FROM unnest(arr) WITH ORDINALITY u(v, o)) AS one_by_one
	FROM bf, ba;

-- per filter: mismatches over all arrays (must be 0), trues of the array
-- form, and the values added that it found (every one, all but the three
-- removed from the counting filter)
SELECT name,
	   sum((SELECT count(*) FROM ROWS FROM (unnest(res), unnest(one_by_one)) r(a, b)
			WHERE a IS DISTINCT FROM b)) AS mismatches,
	   bool_and(array_dims(res) IS NOT DISTINCT FROM array_dims(arr)) AS same_dims,
	   sum(cardinality(res)) AS answers,
	   sum((SELECT count(*) FROM unnest(res) x WHERE x)) AS trues,
	   sum((SELECT count(*) FROM ROWS FROM (unnest(arr), unnest(res)) r(v, a)
			WHERE v % 2 = 1 AND v < 1000 AND a)) AS added_found,
	   sum((SELECT count(*) FROM unnest(arr) v WHERE v % 2 = 1 AND v < 1000)) AS added
FROM bres GROUP BY name ORDER BY name;

-- bloom_contains_any and bloom_contains_all against the per-element
-- answers, with the NULL rules of = ANY and = ALL
SELECT name, arr_name, any_answer, all_answer
FROM bres
WHERE any_answer IS DISTINCT FROM
		(SELECT CASE WHEN bool_or(b) THEN true WHEN bool_or(b IS NULL) THEN NULL ELSE false END
		 FROM unnest(one_by_one) b)
   OR all_answer IS DISTINCT FROM
		(SELECT CASE WHEN NOT bool_and(coalesce(b, true)) THEN false WHEN bool_or(b IS NULL) THEN NULL ELSE true END
		 FROM unnest(one_by_one) b);
SELECT arr_name, any_answer, all_answer, res
FROM bres WHERE name = 'blocked' AND cardinality(arr) <= 20 ORDER BY arr_name;
SELECT arr_name, count(*) FILTER (WHERE any_answer) AS any_true,
	   count(*) FILTER (WHERE any_answer IS NULL) AS any_null,
	   count(*) FILTER (WHERE all_answer) AS all_true,
	   count(*) FILTER (WHERE all_answer IS NULL) AS all_null
FROM bres WHERE name <> 'untyped' GROUP BY arr_name ORDER BY arr_name;

-- text elements (by reference, unaligned) in arrays longer than a batch
SELECT count(*) FILTER (WHERE a IS DISTINCT FROM bloom_contains(f, v)) AS mismatches,
	   count(*) FILTER (WHERE a) AS trues,
	   count(*) FILTER (WHERE a AND v LIKE 'v%' AND substr(v, 2)::int <= 200) AS added_found,
	   count(*) FILTER (WHERE v LIKE 'v%' AND substr(v, 2)::int <= 200) AS added
FROM (SELECT bloom_agg('v' || i, bloom_empty(200, 0.05, blocked => true)) AS f
	  FROM generate_series(1, 200) i) s,
	 LATERAL (SELECT array_agg(CASE WHEN i % 11 = 0 THEN NULL
							  WHEN i % 2 = 0 THEN 'v' || i ELSE 'w' || i END ORDER BY i) AS arr
			  FROM generate_series(1, 301) i) t,
	 ROWS FROM (unnest(arr), unnest(bloom_contains(f, arr))) r(v, a);

-- keyed filters have no array forms: refused as before
SELECT bloom_contains(bloom_agg(i, bloom_empty(100, 0.05, key => '\x000102030405060708090a0b0c0d0e0f'::bytea),
								'\x000102030405060708090a0b0c0d0e0f'::bytea), ARRAY[1, 2, 3])
FROM generate_series(1, 10) i;
SELECT bloom_contains_any(bloom_empty(100, 0.05, key => '\x000102030405060708090a0b0c0d0e0f'::bytea), ARRAY[1]);

DROP TABLE bres, ba, bf;
