--
-- text_trgm_ops under ICU collations, whose lower() depends on context
-- (final sigma) and locale (Turkish dotted I), and under nondeterministic
-- collations, which it refuses.  Every query through the index returns
-- exactly the rows a sequential scan returns, on both layouts.  Needs ICU:
-- without it the test says so (expected/set_opclasses_collation_1.out).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

SELECT count(*) = 2 AS have_icu FROM pg_collation
WHERE collname IN ('und-x-icu', 'tr-x-icu') \gset
\if :have_icu
\else
\echo 'skipped: this server has no ICU collations'
\quit
\endif

-- Compare a condition on table ct through the index (forced) and by a
-- sequential scan, with the plan's index use.
CREATE FUNCTION ct_compare(cond text,
	OUT nrows bigint, OUT same boolean, OUT used_index boolean)
LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT count(*), md5(coalesce(string_agg(i::text, '','' ORDER BY i), '''')) FROM ct WHERE ' || cond;
	line text;
	idx_n bigint; idx_h text; seq_n bigint; seq_h text;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_bitmapscan = on;
	used_index := false;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		used_index := used_index OR line LIKE '%Bitmap Index Scan on ct_%';
	END LOOP;
	EXECUTE q INTO idx_n, idx_h;
	SET LOCAL enable_seqscan = on;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE q INTO seq_n, seq_h;
	nrows := seq_n;
	same := idx_n = seq_n AND idx_h = seq_h;
END $$;

-- The same strings under the ICU root collation, Turkish and C
CREATE TABLE ct (i int, u text COLLATE "und-x-icu", tr text COLLATE "tr-x-icu",
	c text COLLATE "C");
INSERT INTO ct
SELECT i, s, s, s
FROM (SELECT i, CASE i % 20
		WHEN 0 THEN 'ΟΔΟΣΑ'
		WHEN 1 THEN 'ΟΔΟΣ.Α'
		WHEN 2 THEN 'ΚΟΣ ' || i
		WHEN 3 THEN 'ΚΟΣΜΟΣ'
		WHEN 4 THEN 'I' || U&'\0307' || 'xyz'
		WHEN 5 THEN U&'\0130' || 'xyz'
		WHEN 6 THEN U&'\0131' || 'xyz'
		WHEN 7 THEN 'Ixyz'
		WHEN 8 THEN 'ixyz'
		WHEN 9 THEN 'Straße'
		WHEN 10 THEN 'STRA' || U&'\1E9E' || 'E'
		WHEN 11 THEN 'οδος'
		WHEN 12 THEN 'Résumé'
		WHEN 13 THEN 'ab' || U&'\00AD' || 'cd'
		WHEN 14 THEN 'ΟΔΟΣ'
		ELSE 'filler ' || i
	END AS s FROM generate_series(1, 400) i) v;

CREATE TEMP TABLE ct_conds (n serial, cond text);
INSERT INTO ct_conds (cond) VALUES
	('u LIKE ''%ΟΔΟΣ%'''),
	('u LIKE ''ΟΔΟΣ_'''),
	('u LIKE ''ΟΔΟΣ'''),
	('u ILIKE ''%οδοσ.α%'''),
	('u ILIKE ''%ΟΔΟΣ%'''),
	('u LIKE ''%ΟΔΟΣ.%'''),
	('u ILIKE ''%ΟΔΟΣ'''),
	('u ILIKE ''οδος%'''),
	('u ILIKE ''%κοσμος%'''),
	('u = ''ΟΔΟΣ'''),
	('tr LIKE ''%ΚΟΣ%'''),
	('tr ILIKE ''%κοσ%'''),
	('tr ILIKE ''κοσμοσ'''),
	('tr LIKE ''I%'''),
	('tr LIKE ''I_xyz'''),
	('tr ILIKE ''i%xyz'''),
	('tr ILIKE ''ixyz'''),
	('tr ILIKE ''ıxyz'''),
	('tr ILIKE ''İxyz'''),
	('u ILIKE ''ixyz'''),
	('u ILIKE ''İ%'''),
	('tr ILIKE ''strasse'''),
	('tr ILIKE ''%straße%'''),
	('u ILIKE ''stra' || U&'\1E9E' || 'e'''),
	('tr = U&''I\0307xyz'''),
	('c LIKE ''I%xyz'''),
	('c ILIKE ''%ΟΔΟΣ%'''),
	('u ILIKE ''résumé'''),
	('u LIKE U&''ab\00ADcd''');

-- Row layout, then sliced
CREATE INDEX ct_row ON ct USING bloomidx (u text_trgm_ops, tr text_trgm_ops,
	c text_trgm_ops) WITH (layout = 'row');
SELECT n, cond, (ct_compare(cond)).* FROM ct_conds ORDER BY n;
DROP INDEX ct_row;
CREATE INDEX ct_sliced ON ct USING bloomidx (u text_trgm_ops, tr text_trgm_ops,
	c text_trgm_ops);
SELECT n, cond, (ct_compare(cond)).* FROM ct_conds ORDER BY n;
EXPLAIN (COSTS OFF) SELECT i FROM ct WHERE u LIKE '%ΟΔΟΣ%';
EXPLAIN (COSTS OFF) SELECT i FROM ct WHERE tr ILIKE 'İxyz';

-- Nondeterministic collations: = and (on PostgreSQL 18 and later) LIKE
-- match strings whose trigrams differ, so the index is refused
CREATE COLLATION ct_ai (provider = icu, locale = 'und-u-ks-level1',
	deterministic = false);
CREATE TABLE ct_nd (t text COLLATE ct_ai);
INSERT INTO ct_nd VALUES ('Résumé'), ('ab' || U&'\00AD' || 'cd'), ('other');
SELECT t FROM ct_nd WHERE t = 'resume';
SELECT count(*) FROM ct_nd WHERE t = 'abcd';
\set VERBOSITY terse
CREATE INDEX ct_nd_idx ON ct_nd USING bloomidx (t text_trgm_ops);
CREATE INDEX ct_nd_idx ON ct_nd USING bloomidx (t text_trgm_ops) WITH (layout = 'row');
CREATE INDEX ct_nd_idx ON ct USING bloomidx ((u COLLATE ct_ai) text_trgm_ops);
\set VERBOSITY default
CREATE INDEX ct_nd_idx ON ct_nd USING bloomidx (t text_trgm_ops);
-- Under a deterministic collation the column can be indexed, for queries
-- under that collation
CREATE INDEX ct_nd_c ON ct_nd USING bloomidx ((t COLLATE "C") text_trgm_ops);
SET enable_seqscan = off;
SELECT t FROM ct_nd WHERE t COLLATE "C" LIKE 'R%sum_';
RESET enable_seqscan;

DROP TABLE ct, ct_nd;
DROP COLLATION ct_ai;
DROP FUNCTION ct_compare;
