--
-- Operator classes whose values are sets of elements (1.2): text_trgm_ops
-- (LIKE, ILIKE, =), array_elem_ops (@>, &&) and jsonb_path_ops (@>), in
-- one index with equality columns, on both layouts.  Every query through
-- the index returns exactly the rows a sequential scan returns.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

-- Compare a condition on table st through the index (forced) and by a
-- sequential scan: mismatches are returned, with the plan's index use.
CREATE FUNCTION st_compare(cond text,
	OUT nrows bigint, OUT same boolean, OUT used_index boolean)
LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT count(*), md5(coalesce(string_agg(i::text, '','' ORDER BY i), '''')) FROM st WHERE ' || cond;
	line text;
	idx_n bigint; idx_h text; seq_n bigint; seq_h text;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_bitmapscan = on;
	used_index := false;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		used_index := used_index OR line LIKE '%Bitmap Index Scan on st_%';
	END LOOP;
	EXECUTE q INTO idx_n, idx_h;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE q INTO seq_n, seq_h;
	nrows := seq_n;
	same := idx_n = seq_n AND idx_h = seq_h;
END $$;

-- Strings: words of ASCII, accented and CJK letters, digits, case,
-- punctuation, the LIKE metacharacters and backslashes, empty strings and
-- NULLs
SELECT setseed(0.26);
CREATE TABLE st (i int, sec int, s text, a int[], t text[], j jsonb);
INSERT INTO st
SELECT i, i % 5,
	CASE WHEN i % 97 = 0 THEN NULL
		 WHEN i % 89 = 0 THEN ''
		 ELSE (SELECT string_agg(w, (ARRAY[' ', '/', '-', '_', '%', '\', '.', ''])[1 + (random() * 7)::int])
			   FROM (SELECT (ARRAY['lib', 'SSL', 'ssl', 'crypto', 'Straße', 'éte', 'ÉTÉ',
									'日本語', 'x', 'ab', 'a_b', '100%', 'c:\dir', 'usr', 'share',
									'doc', 'Debian', 'gz', '1.2.3', 'q'])[1 + (random() * 19)::int] AS w
					 FROM generate_series(1, 1 + (random() * 6)::int) g WHERE i > 0) ws)
	END,
	CASE WHEN i % 53 = 0 THEN NULL
		 WHEN i % 47 = 0 THEN '{}'
		 WHEN i % 43 = 0 THEN ARRAY[NULL, i % 7]
		 ELSE ARRAY(SELECT (random() * 40)::int FROM generate_series(1, (random() * 8)::int) g WHERE i > 0)
	END,
	CASE WHEN i % 61 = 0 THEN NULL
		 ELSE ARRAY['tag' || i % 13, 'Tag' || i % 7, 'é' || i % 3]
	END,
	CASE WHEN i % 71 = 0 THEN NULL
		 WHEN i % 67 = 0 THEN '{}'
		 WHEN i % 59 = 0 THEN to_jsonb(i % 10)
		 WHEN i % 41 = 0 THEN jsonb_build_array(i % 10, 'x', jsonb_build_array(i % 4))
		 ELSE jsonb_build_object('k', i % 10, 'n', (i % 4)::numeric / 2,
								 'o', jsonb_build_object('p', i % 6, 'q', ARRAY['a' || i % 5, 'b']),
								 'b', i % 2 = 0, 'z', NULL)
	END
FROM generate_series(1, 3000) i;

-- Patterns: substrings of stored strings (present), with wildcards, case
-- changed and escapes; and strings that no row holds
CREATE TABLE st_patterns (p text);
INSERT INTO st_patterns
SELECT DISTINCT p FROM (
	SELECT '%' || substr(s, 1 + (random() * length(s))::int, 1 + (random() * 11)::int) || '%' AS p
	FROM st WHERE s <> '' AND i % 19 = 0
	UNION ALL
	SELECT substr(s, 1, 1 + (random() * 8)::int) || '%' FROM st WHERE s <> '' AND i % 61 = 0
	UNION ALL
	SELECT '%' || right(s, 1 + (random() * 8)::int) FROM st WHERE s <> '' AND i % 73 = 0
	UNION ALL
	SELECT '%' || replace(substr(s, 2, 6), substr(s, 4, 1), '_') || '%' FROM st WHERE length(s) > 6 AND i % 59 = 0
	UNION ALL
	SELECT upper('%' || substr(s, 2, 5) || '%') FROM st WHERE length(s) > 6 AND i % 47 = 0
	UNION ALL
	SELECT s FROM st WHERE s <> '' AND i % 151 = 0
	UNION ALL
	SELECT unnest(ARRAY['%', '%%', '', '_', '%a%', '%ab%', '%lib%', '%xyzzy%', 'lib%', '%gz',
						'%\%%', '%100\%%', '%\_%', '%a\_b%', '%c:\\dir%', '%c:\dir%', '%ssl.cr%',
						'%STRASSE%', '%straße%', '%日本%', '%本語%', '%éte%', '%été%', 'q', 'x',
						'%q', '%1.2.3%', '%.2.%', '%usr/share/doc%', '%doc-debian%', '\', '%\'])
) ps WHERE p IS NOT NULL;
-- (a pattern that ends in a lone backslash is an error, with or without
-- the index)
CREATE FUNCTION st_valid_like(p text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 'x' LIKE p;
	RETURN true;
EXCEPTION WHEN invalid_escape_sequence THEN
	RETURN false;
END $$;
DELETE FROM st_patterns WHERE NOT st_valid_like(p);
SELECT count(*) >= 250 AS enough_patterns FROM st_patterns;

-- Row layout, then sliced, each with equality columns beside the sets
CREATE INDEX st_row ON st USING bloomidx (sec, s text_trgm_ops, a array_elem_ops,
	t array_elem_ops, j jsonb_path_ops) WITH (layout = 'row');
SELECT signature_bits, bits_per_column, layout FROM bloomidx_stats('st_row');

-- LIKE and ILIKE on every pattern, and = on stored strings: no mismatch
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('s LIKE %L', p)) c WHERE NOT c.same;
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('s ILIKE %L', p)) c WHERE NOT c.same;
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('sec = 2 AND s ILIKE %L', p)) c WHERE NOT c.same AND length(p) > 4;
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('s = %L', p)) c WHERE NOT c.same;
-- The plans use the index, and the answers are not all empty
SELECT count(*) FILTER (WHERE c.used_index) AS used, count(*) FILTER (WHERE c.nrows > 0) AS nonempty
FROM st_patterns, LATERAL st_compare(format('s LIKE %L', p)) c;

-- Arrays: @> and && with present, absent, empty and NULL elements
CREATE TABLE st_arrays (q text);
INSERT INTO st_arrays VALUES ('{}'), ('{1}'), ('{39}'), ('{1,2}'), ('{5,5}'), ('{1,2,3,4}'),
	('{100}'), ('{NULL}'), ('{1,NULL}'), ('{{1,2},{3,4}}'), ('{40,0}');
SELECT q, c.* FROM st_arrays, LATERAL st_compare(format('a @> %L::int[]', q)) c WHERE NOT c.same;
SELECT q, c.* FROM st_arrays, LATERAL st_compare(format('a && %L::int[]', q)) c WHERE NOT c.same;
SELECT q, c.nrows, c.used_index FROM st_arrays, LATERAL st_compare(format('a @> %L::int[]', q)) c ORDER BY q;
SELECT q, c.nrows FROM st_arrays, LATERAL st_compare(format('a && %L::int[]', q)) c ORDER BY q;
SELECT c.* FROM st_compare($$t @> '{tag3, é1}'$$) c;
SELECT c.* FROM st_compare($$t && '{Tag6, nope}'$$) c;
SELECT c.* FROM st_compare($$t @> '{TAG3}'$$) c;

-- jsonb: @> with objects, nested paths, arrays, scalars, numerics written
-- two ways, null, booleans, empty containers
CREATE TABLE st_docs (q jsonb);
INSERT INTO st_docs VALUES ('{}'), ('[]'), ('{"k": 3}'), ('{"k": 3.0}'), ('{"n": 0.5}'),
	('{"n": 0.50}'), ('{"o": {"p": 2}}'), ('{"o": {"q": ["a3"]}}'), ('{"o": {"q": ["b", "a1"]}}'),
	('{"b": true}'), ('{"z": null}'), ('{"k": 3, "b": false}'), ('{"o": {}}'), ('3'), ('[3]'),
	('[[2]]'), ('["x"]'), ('{"k": "3"}'), ('{"nope": 1}'), ('{"o": {"p": 2, "q": ["b"]}, "k": 8}');
SELECT q, c.* FROM st_docs, LATERAL st_compare(format('j @> %L::jsonb', q)) c WHERE NOT c.same;
SELECT q, c.nrows, c.used_index FROM st_docs, LATERAL st_compare(format('j @> %L::jsonb', q)) c ORDER BY q::text;

-- The sliced layout answers the same
DROP INDEX st_row;
CREATE INDEX st_sliced ON st USING bloomidx (sec, s text_trgm_ops, a array_elem_ops,
	t array_elem_ops, j jsonb_path_ops);
SELECT signature_bits, bits_per_column, layout FROM bloomidx_stats('st_sliced');
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('s LIKE %L', p)) c WHERE NOT c.same;
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('s ILIKE %L', p)) c WHERE NOT c.same;
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('s = %L', p)) c WHERE NOT c.same;
SELECT q, c.* FROM st_arrays, LATERAL st_compare(format('a @> %L::int[]', q)) c WHERE NOT c.same;
SELECT q, c.* FROM st_arrays, LATERAL st_compare(format('a && %L::int[]', q)) c WHERE NOT c.same;
SELECT q, c.* FROM st_docs, LATERAL st_compare(format('j @> %L::jsonb', q)) c WHERE NOT c.same;

-- Rows inserted and deleted after the build (pending rows, merges, VACUUM)
INSERT INTO st SELECT i + 3000, sec, upper(s), a || i, t, j FROM st WHERE i <= 1500;
DELETE FROM st WHERE i % 3 = 0;
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('s ILIKE %L', p)) c WHERE NOT c.same;
SELECT bloomidx_merge('st_sliced') >= 0 AS merged;
VACUUM st;
SELECT p, c.* FROM st_patterns, LATERAL st_compare(format('s LIKE %L', p)) c WHERE NOT c.same;
SELECT q, c.* FROM st_arrays, LATERAL st_compare(format('a && %L::int[]', q)) c WHERE NOT c.same;
SELECT q, c.* FROM st_docs, LATERAL st_compare(format('j @> %L::jsonb', q)) c WHERE NOT c.same;
SELECT bloomidx_check('st_sliced', heapallindexed => true);

-- A pattern with no trigram tests no bit: the planner does not pick the
-- index for it, and does for a selective one
ANALYZE st;
EXPLAIN (COSTS OFF) SELECT * FROM st WHERE s LIKE '%a%';
EXPLAIN (COSTS OFF) SELECT * FROM st WHERE s LIKE '%xyzzy%';

-- The model's false-positive rate of a query of m elements: the more
-- elements, the fewer false positives; an equality column is unchanged
SELECT e1.false_positive_rate > e5.false_positive_rate AS fewer_with_more_elements,
	   e5.false_positive_rate > e12.false_positive_rate AS fewer_still,
	   q.false_positive_rate = s1.false_positive_rate AS sec_unchanged
FROM bloomidx_estimate('st_sliced', '{s}', 1) e1, bloomidx_estimate('st_sliced', '{s}', 5) e5,
	 bloomidx_estimate('st_sliced', '{s}', 12) e12, bloomidx_estimate('st_sliced', '{sec}') q,
	 bloomidx_estimate('st_sliced', '{sec}', 7) s1;
\set VERBOSITY default
SELECT * FROM bloomidx_estimate('st_sliced', '{s}', 0);
\set VERBOSITY terse

-- Sizing: the options of the set operator classes
CREATE INDEX st_opts ON st USING bloomidx (s text_trgm_ops (elements = 64, query_elements = 2), a array_elem_ops (elements = 4));
SELECT signature_bits, bits_per_column FROM bloomidx_stats('st_opts');
DROP INDEX st_opts;
\set VERBOSITY default
CREATE INDEX ON st USING bloomidx (s text_trgm_ops (elements = 0));
CREATE INDEX ON st USING bloomidx (sec array_elem_ops);
\set VERBOSITY terse

-- The validator accepts the classes; a broken one is reported
SELECT opcname, amvalidate(oid) FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomidx')
  AND opcname IN ('text_trgm_ops', 'array_elem_ops', 'jsonb_path_ops') ORDER BY 1;
CREATE OPERATOR CLASS st_broken FOR TYPE text USING bloomidx AS
	OPERATOR 4 ~~(text, text),
	FUNCTION 1 hashtextextended(text, int8),
	FUNCTION 2 bloomidx_trgm_extract(text, internal);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'st_broken';
DROP OPERATOR FAMILY st_broken USING bloomidx;

DROP TABLE st, st_patterns, st_arrays, st_docs;
DROP FUNCTION st_compare, st_valid_like;
