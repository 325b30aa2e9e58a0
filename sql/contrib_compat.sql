--
-- bloomidx as a drop-in for contrib/bloom: the behaviours contrib/bloom's
-- own regression test checks, run on bloomidx, and every option set of a
-- matrix tried on contrib/bloom and on both layouts of bloomidx, which must
-- accept and refuse the same sets (with SQLSTATE 22023) and answer every
-- query as a seq scan does.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
CREATE EXTENSION IF NOT EXISTS bloom;
RESET client_min_messages;

--
-- Part 1: contrib/bloom's test behaviours, on bloomidx
--
CREATE TABLE cc (
	i	int4,
	t	text
);
INSERT INTO cc SELECT (i * 7) % 10, to_hex(i % 13) FROM generate_series(1, 2000) i;

-- What a seq scan answers, before any index exists
CREATE TABLE cc_truth AS
	SELECT (SELECT count(*) FROM cc WHERE i = 3) AS i3,
		   (SELECT count(*) FROM cc WHERE t = 'a') AS ta,
		   (SELECT count(*) FROM cc WHERE i = 3 AND t = 'a') AS i3ta;
SELECT * FROM cc_truth;

-- contrib/bloom's option names; the length is changed afterwards
CREATE INDEX cc_idx ON cc USING bloomidx (i, t) WITH (col1 = 3);
ALTER INDEX cc_idx SET (length = 80);
SELECT reloptions FROM pg_class WHERE oid = 'cc_idx'::regclass;

SET enable_seqscan = off;
SET enable_bitmapscan = on;
SET enable_indexscan = on;

EXPLAIN (COSTS OFF) SELECT count(*) FROM cc WHERE i = 3;
EXPLAIN (COSTS OFF) SELECT count(*) FROM cc WHERE t = 'a';
EXPLAIN (COSTS OFF) SELECT count(*) FROM cc WHERE i = 3 AND t = 'a';

-- The bitmap scans answer as the seq scan did
CREATE VIEW cc_check AS
	SELECT (SELECT count(*) FROM cc WHERE i = 3) = i3 AS i3,
		   (SELECT count(*) FROM cc WHERE t = 'a') = ta AS ta,
		   (SELECT count(*) FROM cc WHERE i = 3 AND t = 'a') = i3ta AS i3ta
	FROM cc_truth;
SELECT * FROM cc_check;

-- Delete everything, insert it again, VACUUM ANALYZE
DELETE FROM cc;
INSERT INTO cc SELECT (i * 7) % 10, to_hex(i % 13) FROM generate_series(1, 2000) i;
VACUUM ANALYZE cc;
SELECT * FROM cc_check;

-- Delete most rows, VACUUM, insert again: the counts grow by what is left
DELETE FROM cc WHERE i > 1 OR t = 'a';
VACUUM cc;
INSERT INTO cc SELECT (i * 7) % 10, to_hex(i % 13) FROM generate_series(1, 2000) i;
SELECT count(*) FROM cc WHERE i = 3;
SELECT count(*) FROM cc WHERE t = 'a';
SELECT count(*) FROM cc WHERE i = 3 AND t = 'a';
SELECT count(*) FROM cc WHERE i = 1;
SET enable_bitmapscan = off;
SET enable_seqscan = on;
SELECT count(*) FROM cc WHERE i = 1;
SET enable_bitmapscan = on;
SET enable_seqscan = off;

VACUUM FULL cc;
SELECT count(*) FROM cc WHERE i = 3;
SELECT count(*) FROM cc WHERE t = 'a';
SELECT count(*) FROM cc WHERE i = 3 AND t = 'a';
SELECT count(*) FROM cc WHERE i = 1;

-- An unlogged table, with col2 given
CREATE UNLOGGED TABLE ccu (
	i	int4,
	t	text
);
INSERT INTO ccu SELECT (i * 7) % 10, to_hex(i % 13) FROM generate_series(1, 2000) i;
CREATE INDEX ccu_idx ON ccu USING bloomidx (i, t) WITH (col2 = 4);
EXPLAIN (COSTS OFF) SELECT count(*) FROM ccu WHERE i = 3;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ccu WHERE t = 'a';
EXPLAIN (COSTS OFF) SELECT count(*) FROM ccu WHERE i = 3 AND t = 'a';
SELECT (SELECT count(*) FROM ccu WHERE i = 3) = i3 AS i3,
	   (SELECT count(*) FROM ccu WHERE t = 'a') = ta AS ta,
	   (SELECT count(*) FROM ccu WHERE i = 3 AND t = 'a') = i3ta AS i3ta
FROM cc_truth;

RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;

-- The validator finds nothing wrong with the operator classes
SELECT count(*) > 30 AS many_opclasses,
	   count(*) FILTER (WHERE NOT amvalidate(opc.oid)) AS invalid
FROM pg_opclass opc JOIN pg_am am ON am.oid = opcmethod
WHERE amname = 'bloomidx';

-- A length below 16 is rounded up to 16, as contrib/bloom does
DROP INDEX cc_idx;
CREATE INDEX cc_idx ON cc USING bloomidx (i, t) WITH (length = 7, col1 = 4);
SELECT reloptions FROM pg_class WHERE oid = 'cc_idx'::regclass;
SELECT signature_bits, bits_per_column, layout FROM bloomidx_stats('cc_idx');

-- Out of range, refused with contrib/bloom's messages
\set VERBOSITY terse
CREATE INDEX cc_idx2 ON cc USING bloomidx (i, t) WITH (length = 0);
CREATE INDEX cc_idx2 ON cc USING bloomidx (i, t) WITH (col1 = 0);
-- false_positive_rate's own range: the value is printed as given
CREATE INDEX cc_idx2 ON cc USING bloomidx (i, t) WITH (false_positive_rate = 0);
CREATE INDEX cc_idx2 ON cc USING bloomidx (i, t) WITH (false_positive_rate = 0.5000001);
CREATE INDEX cc_idx2 ON cc USING bloomidx (i, t) WITH (false_positive_rate = 1e-9);
\set VERBOSITY default
CREATE INDEX cc_idx2 ON cc USING bloomidx (i, t) WITH (false_positive_rate = 0.00000099999);
CREATE INDEX cc_idx2 ON cc USING bloomidx (i, t) WITH (false_positive_rate = 0.01, col1 = 3);

--
-- Part 2: the option matrix.  Each set is tried alone on contrib/bloom, on
-- each layout of bloomidx and on bloomidx without a layout given (the
-- sliced layout, or the row layout for signatures over 1024 bits): "ok" if
-- the index was built and every query
-- below answers as a seq scan does, "WRONG" if an answer differs, else the
-- SQLSTATE of the refusal.
--
CREATE TABLE cm (id int, i int4, t text);
INSERT INTO cm SELECT g, (g * 7) % 10, to_hex(g % 13) FROM generate_series(1, 2000) g;

-- The queries, and the rows a seq scan gives for them
CREATE TABLE cm_queries AS
	SELECT format('i = %s', v) AS q FROM generate_series(0, 10) v
	UNION ALL
	SELECT format('t = %L', to_hex(v)) FROM generate_series(0, 13) v
	UNION ALL
	SELECT format('i = %s AND t = %L', v, to_hex(v + 2)) FROM generate_series(0, 9) v;
CREATE FUNCTION cm_rows(q text) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
	r int[];
BEGIN
	EXECUTE 'SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM cm WHERE ' || q INTO r;
	RETURN r;
END;
$$;
CREATE TABLE cm_truth AS SELECT q, cm_rows(q) AS rows FROM cm_queries;
SELECT count(*) AS queries, sum(cardinality(rows)) AS rows FROM cm_truth;

CREATE FUNCTION cm_try(am text, opts text, layout text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	w text := concat_ws(', ', nullif(opts, ''), 'layout = ' || quote_literal(layout));
	tq record;
	plan text;
	used boolean;
	result text := 'ok';
BEGIN
	BEGIN
		EXECUTE format('CREATE INDEX cm_idx ON cm USING %s (i, t)', am) ||
			CASE WHEN w = '' THEN '' ELSE ' WITH (' || w || ')' END;
	EXCEPTION WHEN OTHERS THEN
		RETURN SQLSTATE;
	END;
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	FOR tq IN SELECT * FROM cm_truth LOOP
		used := false;
		FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT id FROM cm WHERE ' || tq.q LOOP
			used := used OR plan LIKE '%Bitmap Index Scan on cm_idx%';
		END LOOP;
		IF NOT used THEN
			result := 'no index scan';
		ELSIF cm_rows(tq.q) IS DISTINCT FROM tq.rows THEN
			result := 'WRONG';
		END IF;
	END LOOP;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	DROP INDEX cm_idx;
	RETURN result;
END;
$$;

CREATE TABLE cm_sets (n serial, opts text);
INSERT INTO cm_sets (opts) VALUES
	(''),
	('length = 80'),
	('length = 80, col1 = 2, col2 = 2'),
	('length = 7, col1 = 4'),
	('length = 1'),
	('length = 15'),
	('length = 16'),
	('length = 1000'),
	('length = 2000'),
	('length = 4096'),
	('length = 4097'),
	('length = 0'),
	('length = -1'),
	('col1 = 0'),
	('col2 = 0'),
	('col1 = 3'),
	('col2 = 4'),
	('col1 = 4095'),
	('col1 = 4096'),
	('col3 = 2'),
	('col32 = 2'),
	('col33 = 2'),
	('length = 80, col1 = 80'),
	('length = 64, col1 = 64'),
	('length = 16, col1 = 16'),
	('length = 16, col2 = 100'),
	('length = 4096, col1 = 4095, col2 = 4095'),
	('length = 32, col1 = 1, col2 = 1'),
	('length = ''long'''),
	('colour = 2');

-- NOTICEs of the accepted sets are shown in Part 3
SET client_min_messages = warning;
CREATE TABLE cm_result AS
	SELECT n, opts,
		   cm_try('bloom', opts, NULL) AS bloom,
		   cm_try('bloomidx', opts, 'row') AS bloomidx_row,
		   cm_try('bloomidx', opts, 'sliced') AS bloomidx_sliced,
		   cm_try('bloomidx', opts, NULL) AS bloomidx_default
	FROM cm_sets;
RESET client_min_messages;
SELECT opts, bloom, bloomidx_row, bloomidx_sliced, bloomidx_default FROM cm_result ORDER BY n;

-- Both layouts, and the default, accept and refuse exactly what
-- contrib/bloom does
SELECT count(*) AS sets,
	   count(*) FILTER (WHERE bloom = bloomidx_row AND bloom = bloomidx_sliced
						AND bloom = bloomidx_default) AS same,
	   count(*) FILTER (WHERE bloom = 'ok') AS accepted
FROM cm_result;

-- bloomidx's own options: false_positive_rate (1e-06 to 0.5) and layout
SET client_min_messages = warning;
SELECT opts,
	   cm_try('bloomidx', opts, 'row') AS bloomidx_row,
	   cm_try('bloomidx', opts, 'sliced') AS bloomidx_sliced
FROM (VALUES ('false_positive_rate = 0.01'),
			 ('false_positive_rate = 0.000001'),
			 ('false_positive_rate = 0.5'),
			 ('false_positive_rate = 0'),
			 ('false_positive_rate = 0.0000009'),
			 ('false_positive_rate = 0.5000001'),
			 ('false_positive_rate = 1e-9'),
			 ('false_positive_rate = ''NaN'''),
			 ('false_positive_rate = 0.01, length = 80'),
			 ('false_positive_rate = 0.01, col3 = 2')) v(opts);
RESET client_min_messages;

--
-- Part 3: the shapes built, and the NOTICEs of legal options that build a
-- poor index or another layout than asked for
--
CREATE FUNCTION cm_shape(o text, l text)
RETURNS TABLE (signature_bits int4, bits_per_column int4[], layout text)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE 'CREATE INDEX cm_idx ON cm USING bloomidx (i, t) WITH (' ||
		concat_ws(', ', nullif(o, ''), 'layout = ' || quote_literal(l)) || ')';
	RETURN QUERY SELECT s.signature_bits, s.bits_per_column, s.layout
		FROM bloomidx_stats('cm_idx') s;
	DROP INDEX cm_idx;
END;
$$;
SELECT opts, s.*
FROM cm_result r, cm_shape(r.opts, 'row') s
WHERE r.bloomidx_row = 'ok'
ORDER BY r.n;

-- The NOTICEs
SELECT * FROM cm_shape('col3 = 2', 'row');
SELECT * FROM cm_shape('col3 = 2, col4 = 3', 'row');
CREATE TABLE cm1 (i int4);
CREATE INDEX cm1_idx ON cm1 USING bloomidx (i) WITH (col2 = 5);
DROP TABLE cm1;
SELECT * FROM cm_shape('length = 16, col1 = 16', 'row');
SELECT * FROM cm_shape('length = 16, col2 = 100', 'sliced');
-- The sliced layout takes at most 1024 bits: longer signatures get the row
-- layout, given or derived
SELECT * FROM cm_shape('length = 1024', 'sliced');
SELECT * FROM cm_shape('length = 1025', 'sliced');
SELECT * FROM cm_shape('col1 = 4095', 'sliced');
SELECT * FROM cm_shape('col1 = 4095', 'row');
-- ... and so does the default layout, with a NOTICE that says how to ask
-- for the row layout
SELECT * FROM cm_shape('length = 1024', NULL);
SELECT * FROM cm_shape('length = 4096', NULL);
SELECT * FROM cm_shape('length = 4096', 'row');

-- Rebuilding says it again; the built layout is frozen in the metapage
CREATE INDEX cm_idx ON cm USING bloomidx (i, t) WITH (length = 2000, layout = sliced);
REINDEX INDEX cm_idx;
SELECT signature_bits, layout FROM bloomidx_stats('cm_idx');
-- bloomidx_check agrees that this is how the index should be
SELECT bloomidx_check('cm_idx', true);
DROP INDEX cm_idx;

--
-- Part 4: ALTER INDEX ... SET refuses what a rebuild would refuse, and what
-- it accepts, a rebuild accepts
--
\set VERBOSITY terse
CREATE INDEX cm_idx ON cm USING bloomidx (i, t) WITH (length = 80);
ALTER INDEX cm_idx SET (length = 0);
ALTER INDEX cm_idx SET (col1 = 4096);
ALTER INDEX cm_idx SET (false_positive_rate = 0.01);
ALTER INDEX cm_idx SET (false_positive_rate = 0);
ALTER INDEX cm_idx SET (layout = columnar);
ALTER INDEX cm_idx SET (col3 = 5);
REINDEX INDEX cm_idx;
VACUUM FULL cm;
TRUNCATE cm;
SELECT reloptions FROM pg_class WHERE oid = 'cm_idx'::regclass;
\set VERBOSITY default

DROP TABLE cc, ccu, cc_truth, cm, cm_queries, cm_truth, cm_sets, cm_result CASCADE;
DROP FUNCTION cm_rows(text), cm_try(text, text, text), cm_shape(text, text);
DROP EXTENSION bloom;
