--
-- The scan keys of "= ANY (array)" take one mask of the signature's length
-- per element; they must fit in work_mem, or the scan is refused with a
-- clear error instead of allocating without bound.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE tsm (id int, a int);
INSERT INTO tsm SELECT i, i % 1000 FROM generate_series(1, 5000) i;
-- 4096 bits: 512 bytes of mask per element, 128 elements in 64 kB
CREATE INDEX tsm_row ON tsm USING bloomidx (a) WITH (layout = 'row', length = 4096, col1 = 3);
CREATE INDEX tsm_sliced ON tsm USING bloomidx (id) WITH (layout = sliced, length = 1024, col1 = 3);
SET enable_seqscan = off;
SET enable_indexscan = off;
SET work_mem = '64kB';
SELECT array_agg(g) AS a100 FROM generate_series(1, 100) g \gset
SELECT array_agg(g) AS a120 FROM generate_series(1, 120) g \gset
SELECT array_agg(g) AS a150 FROM generate_series(50, 149) g \gset
SELECT array_agg(g) AS a200 FROM generate_series(1, 200) g \gset
SELECT array_agg(g) AS a500 FROM generate_series(1, 500) g \gset
SELECT array_agg(g) AS a1000 FROM generate_series(1, 1000) g \gset

-- Each column has one index, and only bitmap scans are allowed
-- Within work_mem: the scan answers as a seq scan does
SELECT count(*) FROM tsm WHERE a = ANY (:'a120'::int[]);
-- Beyond it: 54000, with the sizes and a hint
\set VERBOSITY default
SELECT count(*) FROM tsm WHERE a = ANY (:'a200'::int[]);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
-- The budget covers all the arrays of a scan together
SELECT count(*) FROM tsm WHERE a = ANY (:'a100'::int[])
	AND a = ANY (:'a150'::int[]);
-- The sliced layout: 128 bytes per element, 512 elements
SELECT count(*) FROM tsm WHERE id = ANY (:'a1000'::int[]);
SELECT count(*) FROM tsm WHERE id = ANY (:'a500'::int[]);

-- More work_mem, the same answers as the seq scan
SET work_mem = '4MB';
SELECT count(*) FROM tsm WHERE a = ANY (:'a200'::int[]);
SELECT count(*) FROM tsm WHERE id = ANY (:'a1000'::int[]);
SET enable_seqscan = on;
SET enable_bitmapscan = off;
SELECT count(*) FROM tsm WHERE a = ANY (:'a200'::int[]);
SELECT count(*) FROM tsm WHERE id = ANY (:'a1000'::int[]);

RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET work_mem;
DROP TABLE tsm;
