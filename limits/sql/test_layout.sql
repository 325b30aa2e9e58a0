--
-- The throwaway third layout of a build with -DBLOOMIDX_TEST_LAYOUT
-- (src/layout/test/, which scripts/test-major.sh's limits build adds): it
-- stores nothing and answers "maybe" for every row, through the same shells
-- as the real layouts.  sql/queries.sql's differential queries, on an index
-- of that layout: every answer through the forced index equals the seq
-- scan's, also after DELETE, VACUUM, reinserts and updates.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

-- The table: seeded random values with 10% NULLs in every column
CREATE FUNCTION q_load() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	DROP TABLE IF EXISTS q;
	PERFORM setseed(0.42);
	CREATE TABLE q (
		id int PRIMARY KEY,
		a int, b text, c bigint, d uuid, e numeric, f date
	) WITH (autovacuum_enabled = off);
	INSERT INTO q
	SELECT i,
		   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 200)::int END,
		   CASE WHEN random() < 0.1 THEN NULL ELSE 'b' || (random() * 50)::int END,
		   CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 1000)::bigint END,
		   CASE WHEN random() < 0.1 THEN NULL ELSE md5(((random() * 100)::int)::text)::uuid END,
		   CASE WHEN random() < 0.1 THEN NULL ELSE round((random() * 30)::numeric, 1) END,
		   CASE WHEN random() < 0.1 THEN NULL ELSE date '2024-01-01' + (random() * 90)::int END
	FROM generate_series(1, 20000) i;
END;
$$;

SELECT q_load();
-- An index of the test layout, of the same shape as sql/queries.sql's
CREATE INDEX q_bix ON q USING bloomidx (a, b, c, d, e, f) WITH (layout = 'test', length = 48, col1 = 2, col2 = 2, col3 = 2, col4 = 2, col5 = 2, col6 = 2);
ANALYZE q;

-- A random condition on one column, drawn from the table's own values
-- (present) or not (absent): =, = ANY (with NULLs and duplicates), IS NULL.
CREATE FUNCTION q_condition(col text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r float8 := random();
	v text;
	vs text;
BEGIN
	IF r < 0.15 THEN
		RETURN col || ' IS NULL';
	END IF;
	EXECUTE format('SELECT quote_literal(%I) FROM q WHERE %I IS NOT NULL OFFSET %s LIMIT 1',
				   col, col, (random() * 1000)::int) INTO v;
	IF r < 0.25 THEN
		-- absent value of the right type
		v := CASE col WHEN 'a' THEN '100000' WHEN 'b' THEN '''nope''' WHEN 'c' THEN '-5'
			 WHEN 'd' THEN quote_literal(md5('absent')) WHEN 'e' THEN '31.55'
			 ELSE '''2030-01-01''' END;
	END IF;
	IF r < 0.65 THEN
		RETURN format('%I = %s', col, v);
	END IF;
	EXECUTE format('SELECT string_agg(quote_literal(%I), '','') FROM (SELECT %I FROM q WHERE %I IS NOT NULL ORDER BY random() LIMIT %s) s',
				   col, col, col, 1 + (random() * 12)::int) INTO vs;
	IF r < 0.75 THEN
		vs := vs || ', NULL';
	ELSIF r < 0.8 THEN
		vs := vs || ',' || v;
	END IF;
	RETURN format('%I = ANY (ARRAY[%s]::%s[])', col, vs,
				  (SELECT atttypid::regtype FROM pg_attribute WHERE attrelid = 'q'::regclass AND attname = col));
END;
$$;

-- Run n random queries of 1 to 4 columns; count those whose forced index
-- answer differs from the seq scan's, and those that used the index.
CREATE FUNCTION q_differential(n int,
	OUT queries int, OUT mismatches int, OUT used_index int, OUT rows_seen bigint)
LANGUAGE plpgsql AS $$
DECLARE
	cols text[] := ARRAY['a', 'b', 'c', 'd', 'e', 'f'];
	cond text;
	qtext text;
	line text;
	idx_ids int[];
	seq_ids int[];
	ncols int;
	uses boolean;
BEGIN
	queries := 0; mismatches := 0; used_index := 0; rows_seen := 0;
	FOR i IN 1..n LOOP
		ncols := 1 + (random() * 3)::int;
		SELECT string_agg(q_condition(c), ' AND ') INTO cond
		FROM (SELECT c FROM unnest(cols) c ORDER BY random() LIMIT ncols) s;
		qtext := 'SELECT array_agg(id ORDER BY id) FROM q WHERE ' || cond;

		SET LOCAL enable_seqscan = off;
		SET LOCAL enable_indexscan = off;
		SET LOCAL enable_bitmapscan = on;
		uses := false;
		FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || qtext LOOP
			uses := uses OR line LIKE '%Bitmap Index Scan on q_bix%';
		END LOOP;
		EXECUTE qtext INTO idx_ids;

		SET LOCAL enable_seqscan = on;
		SET LOCAL enable_bitmapscan = off;
		EXECUTE qtext INTO seq_ids;

		queries := queries + 1;
		IF uses THEN
			used_index := used_index + 1;
		END IF;
		IF idx_ids IS DISTINCT FROM seq_ids THEN
			mismatches := mismatches + 1;
			RAISE NOTICE 'mismatch: %', cond;
		END IF;
		rows_seen := rows_seen + coalesce(cardinality(seq_ids), 0);
	END LOOP;
END;
$$;

SELECT queries, mismatches, used_index = queries AS all_used_index, rows_seen > 0 AS found_rows
FROM q_differential(300);

-- Delete a third, vacuum, reinsert different rows: still exact
DELETE FROM q WHERE id % 3 = 0;
VACUUM q;
INSERT INTO q
SELECT i, (random() * 200)::int, 'b' || (random() * 50)::int, NULL,
	   md5(((random() * 100)::int)::text)::uuid, NULL, date '2024-01-01' + (random() * 90)::int
FROM generate_series(20001, 27000) i;
SELECT queries, mismatches, used_index = queries AS all_used_index, rows_seen > 0 AS found_rows
FROM q_differential(200);

-- Updates, including to and from NULL
UPDATE q SET a = NULL, b = 'b7' WHERE id % 7 = 1;
UPDATE q SET a = 42 WHERE id % 11 = 2 AND a IS NULL;
SELECT queries, mismatches, used_index = queries AS all_used_index, rows_seen > 0 AS found_rows
FROM q_differential(200);

-- Edge cases of the query forms
SET enable_seqscan = off;
SELECT count(*) FROM q WHERE a = ANY ('{}'::int[]);
SELECT count(*) FROM q WHERE a = ANY (NULL::int[]);
SELECT count(*) FROM q WHERE a = ANY ('{NULL}'::int[]);
SELECT count(*) FROM q WHERE a = NULL::int;
SELECT count(*) = (SELECT count(*) FROM q WHERE a IS NOT NULL) AS same FROM q WHERE a IS NOT NULL AND b IS NOT NULL OR a IS NOT NULL;
RESET enable_seqscan;

DROP TABLE q;
DROP FUNCTION q_differential(int);
DROP FUNCTION q_condition(text);
DROP FUNCTION q_load();
