--
-- Parallel builds of both layouts plan their workers as B-trees do: the
-- DEBUG line of bloomidx says how many.  PostgreSQL 15 and 16 let the
-- access method plan them, and core's own line says "serially"; from 17 on
-- core plans them (amcanbuildparallel) and says so
-- (parallel_build_1.out).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;

CREATE TABLE pb (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
INSERT INTO pb SELECT i, i % 100, 'b' || i % 37, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 13 END
FROM generate_series(1, 140000) i;

SET min_parallel_table_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
SET parallel_setup_cost = 0;
SET client_min_messages = debug1;
CREATE INDEX pb_row ON pb USING bloomidx (a, b, c) WITH (layout = 'row');
CREATE INDEX pb_sliced ON pb USING bloomidx (a, b, c) WITH (layout = sliced);
RESET client_min_messages;
-- max_parallel_maintenance_workers = 0: serial
SET max_parallel_maintenance_workers = 0;
SET client_min_messages = debug1;
CREATE INDEX pb_serial ON pb USING bloomidx (a, b, c);
RESET client_min_messages;
RESET min_parallel_table_scan_size;
RESET max_parallel_maintenance_workers;
RESET parallel_setup_cost;

-- Every row, once, in each
SELECT s.live_tuples = (SELECT count(*) FROM pb) AS one_tuple_per_row
FROM unnest(ARRAY['pb_row', 'pb_sliced', 'pb_serial']) i, bloomidx_stats(i::regclass) s;
SELECT bloomidx_check('pb_row', heapallindexed => true);
SELECT bloomidx_check('pb_sliced', heapallindexed => true);
DROP TABLE pb;
