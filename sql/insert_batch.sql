--
-- Rows a statement inserts into a sliced index are gathered in the backend
-- and added to the pending pages a page at a time (src/sliced_batch.c).
-- Every query must find them in the index as soon as it could see them in
-- the table: later in the transaction, in triggers of the same statement,
-- after COPY, TRUNCATE and REINDEX; and rows of an aborted statement or
-- subtransaction must never reach the index.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE ib (a int, b int, c text);
CREATE INDEX ib_i ON ib USING bloomidx (a, b, c);

-- Rows matching cond, counted through the index and through a seq scan
CREATE FUNCTION ib_via_index(cond text) RETURNS bigint
LANGUAGE plpgsql SET enable_seqscan = off SET enable_bitmapscan = on AS $$
DECLARE n bigint;
BEGIN
	EXECUTE 'SELECT count(*) FROM ib WHERE ' || cond INTO n;
	RETURN n;
END $$;
CREATE FUNCTION ib_via_seqscan(cond text) RETURNS bigint
LANGUAGE plpgsql SET enable_seqscan = on SET enable_bitmapscan = off AS $$
DECLARE n bigint;
BEGIN
	EXECUTE 'SELECT count(*) FROM ib WHERE ' || cond INTO n;
	RETURN n;
END $$;
CREATE FUNCTION ib_counts(cond text, OUT via_index bigint, OUT via_seqscan bigint)
LANGUAGE sql AS $$ SELECT ib_via_index(cond), ib_via_seqscan(cond) $$;
-- Rows in the index (pending and merged) against rows in the table
CREATE FUNCTION ib_index_rows(OUT index_rows bigint, OUT table_rows bigint)
LANGUAGE sql AS $$
	SELECT (bloomidx_stats('ib_i')).live_tuples, (SELECT count(*) FROM ib)
$$;

-- The counts go through the index
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ib WHERE b = 3;
RESET enable_seqscan;

-- Later in the same transaction, and after it
BEGIN;
INSERT INTO ib SELECT g, g % 7, 'r' || g FROM generate_series(1, 1000) g;
SELECT * FROM ib_counts('b = 3');
SELECT * FROM ib_counts('a = 999 AND c = ''r999''');
INSERT INTO ib VALUES (2000, 3, 'one');
SELECT * FROM ib_counts('b = 3');
COMMIT;
SELECT * FROM ib_counts('b = 3');
SELECT * FROM ib_index_rows();

-- More rows than a pending page holds, in one statement
INSERT INTO ib SELECT g, g % 7, 's' || g FROM generate_series(1, 3000) g;
SELECT * FROM ib_counts('b = 4');
SELECT * FROM ib_counts('c = ''s2999''');
SELECT * FROM ib_index_rows();

-- A count run by a parallel worker (see the trigger test below); the
-- setting that forces one is debug_parallel_query from PostgreSQL 16 on,
-- force_parallel_mode before
SELECT CASE WHEN current_setting('server_version_num')::int >= 160000
	THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END AS force_parallel \gset
CREATE FUNCTION ib_via_worker(cond text) RETURNS bigint
LANGUAGE plpgsql SET enable_seqscan = off SET enable_bitmapscan = on
	SET :force_parallel = on SET max_parallel_workers_per_gather = 2
	SET parallel_leader_participation = off AS $$
DECLARE n bigint;
BEGIN
	EXECUTE 'SELECT count(*) FROM ib WHERE ' || cond INTO n;
	RETURN n;
END $$;

-- Triggers of the statement see the rows inserted before theirs (with the
-- argument 'worker', counted by a parallel worker)
CREATE FUNCTION ib_check_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	i bigint := CASE TG_ARGV[0]
		WHEN 'worker' THEN ib_via_worker('b = ' || NEW.b)
		ELSE ib_via_index('b = ' || NEW.b) END;
	s bigint := ib_via_seqscan('b = ' || NEW.b);
BEGIN
	IF i <> s THEN
		RAISE EXCEPTION '% trigger, row %: % rows through the index%, % through a seq scan',
			TG_WHEN, NEW.a, i,
			CASE TG_ARGV[0] WHEN 'worker' THEN ' in a worker' ELSE '' END, s;
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER ib_before BEFORE INSERT ON ib FOR EACH ROW EXECUTE FUNCTION ib_check_row();
CREATE TRIGGER ib_after AFTER INSERT ON ib FOR EACH ROW EXECUTE FUNCTION ib_check_row();
INSERT INTO ib SELECT 5000 + g, 100 + g % 3, 't' FROM generate_series(1, 200) g;
DROP TRIGGER ib_before ON ib;
DROP TRIGGER ib_after ON ib;
SELECT * FROM ib_counts('b = 101');

-- A trigger's query run by a parallel worker, which cannot see the rows the
-- leader gathered: they are written when the query starts (every row has
-- the same value, so each trigger must find the row before its own)
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL :force_parallel = on;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ib WHERE b = 110;
COMMIT;
CREATE TRIGGER ib_worker BEFORE INSERT ON ib FOR EACH ROW EXECUTE FUNCTION ib_check_row('worker');
INSERT INTO ib SELECT 6000 + g, 110, 'w' FROM generate_series(1, 30) g;
DROP TRIGGER ib_worker ON ib;
SELECT * FROM ib_counts('b = 110');

-- A statement that fails: none of its rows reach the index
INSERT INTO ib SELECT g, 200, 'lost' FROM generate_series(1, 50) g WHERE 1 / (50 - g) >= 0;
SELECT * FROM ib_counts('b = 200');
SELECT * FROM ib_index_rows();

-- A subtransaction that fails: none of its rows either; the others do
BEGIN;
INSERT INTO ib SELECT g, 201, 'kept' FROM generate_series(1, 10) g;
DO $$
BEGIN
	INSERT INTO ib SELECT g, 201, 'kept too' FROM generate_series(1, 5) g;
	BEGIN
		INSERT INTO ib SELECT g, 201, 'lost' FROM generate_series(1, 50) g
		WHERE 1 / (50 - g) >= 0;
	EXCEPTION WHEN division_by_zero THEN
		INSERT INTO ib VALUES (6, 201, 'after the error');
	END;
END $$;
SAVEPOINT s1;
INSERT INTO ib SELECT g, 201, 'lost' FROM generate_series(1, 20) g WHERE 1 / (20 - g) >= 0;
ROLLBACK TO s1;
INSERT INTO ib VALUES (7, 201, 'after the savepoint');
SELECT * FROM ib_counts('b = 201');
COMMIT;
SELECT * FROM ib_counts('b = 201');
SELECT * FROM ib_index_rows();

-- COPY, then a query in the same transaction
BEGIN;
COPY ib FROM STDIN;
1	300	copied
2	300	copied
3	300	copied
\.
SELECT * FROM ib_counts('b = 300');
COMMIT;

-- TRUNCATE and REINDEX after rows were added in the transaction
BEGIN;
INSERT INTO ib SELECT g, 400, 'gone' FROM generate_series(1, 30) g;
TRUNCATE ib;
INSERT INTO ib SELECT g, 400, 'new' FROM generate_series(1, 3) g;
SELECT * FROM ib_counts('b = 400');
INSERT INTO ib SELECT g, 401, 'reindexed' FROM generate_series(1, 4) g;
REINDEX INDEX ib_i;
INSERT INTO ib SELECT g, 401, 'after' FROM generate_series(1, 2) g;
SELECT * FROM ib_counts('b = 401');
COMMIT;
SELECT * FROM ib_counts('b IN (400, 401)');
SELECT * FROM ib_index_rows();
SELECT bloomidx_check('ib_i', true);

-- A partitioned table: one batch per partition's index, more of them than
-- work_mem holds (the batches are written and freed when it is full)
CREATE TABLE ibp (a int, b int) PARTITION BY HASH (a);
DO $$
BEGIN
	FOR i IN 0..15 LOOP
		EXECUTE format('CREATE TABLE ibp%s PARTITION OF ibp FOR VALUES WITH (MODULUS 16, REMAINDER %s)', i, i);
	END LOOP;
END $$;
CREATE INDEX ON ibp USING bloomidx (a, b);
BEGIN;
SET LOCAL work_mem = '64kB';
INSERT INTO ibp SELECT g, g % 5 FROM generate_series(0, 19999) g;
SET LOCAL enable_seqscan = off;
SELECT count(*) FROM ibp WHERE b = 2;
SELECT count(*) FROM ibp WHERE a = 777 AND b = 2;
COMMIT;
SET enable_seqscan = off;
SELECT count(*) FROM ibp WHERE b = 2;
RESET enable_seqscan;

DROP TABLE ib, ibp;
DROP FUNCTION ib_counts, ib_via_index, ib_via_seqscan, ib_via_worker, ib_index_rows,
	ib_check_row;
