--
-- bloomidx_stats and bloomidx_check on sound indexes: after a build,
-- inserts, deletes, VACUUM, page reuse and updates; with expressions,
-- predicates, NULLs, no rows, unlogged and temporary tables; and every
-- error they raise.  Corrupted indexes are checked by t/005_corruption.pl.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE insp (id int, a int, b text, c uuid, d numeric);
INSERT INTO insp
SELECT i, i % 100, 'b' || (i % 37), md5((i % 1000)::text)::uuid, (i % 50) / 4.0
FROM generate_series(1, 10000) i;
-- insp_abc has the row layout, whose pages VACUUM frees and inserts reuse
-- (the sliced layout's are checked by sliced and sliced_small)
CREATE INDEX insp_abc ON insp USING bloomidx (a, b, c) WITH (layout = 'row');
CREATE INDEX insp_d ON insp USING bloomidx (d) WITH (length = 128, col1 = 4);

-- What bloomidx_stats says, beside what the catalogs and the table say.
-- The rates are those of the first 1, 2, 3 columns at the measured fill.
CREATE FUNCTION insp_stats(idx regclass) RETURNS TABLE (
	version int, meta_pages bigint, data_pages bigint, free_pages bigint,
	live_tuples bigint, tuples_per_page int, signature_bits int,
	bits_per_column int[], pages_add_up boolean, fill numeric,
	fpr_1col_ok boolean, fpr_2col_ok boolean, fpr_3col_ok boolean,
	bytes_per_row_ok boolean)
LANGUAGE sql AS $$
	SELECT version, meta_pages, data_pages, free_pages, live_tuples,
		tuples_per_page, signature_bits, bits_per_column,
		meta_pages + data_pages + free_pages =
			pg_relation_size(idx) / current_setting('block_size')::int,
		round(fill::numeric, 2),
		abs(fpr_1col - fill ^ bits_per_column[1]) < 1e-12,
		CASE WHEN cardinality(bits_per_column) >= 2
			THEN abs(fpr_2col - fpr_1col * fill ^ bits_per_column[2]) < 1e-12
			ELSE fpr_2col IS NULL END,
		CASE WHEN cardinality(bits_per_column) >= 3
			THEN abs(fpr_3col - fpr_2col * fill ^ bits_per_column[3]) < 1e-12
			ELSE fpr_3col IS NULL END,
		bytes_per_row = pg_relation_size(idx)::float8 / live_tuples
	FROM bloomidx_stats(idx)
$$;

SELECT * FROM insp_stats('insp_abc');
SELECT * FROM insp_stats('insp_d');
SELECT count(*) FROM insp;

-- A sound index passes quietly, with or without the heap pass
SELECT bloomidx_check('insp_abc');
SELECT bloomidx_check('insp_abc', heapallindexed => true);
SELECT bloomidx_check('insp_d', true);

-- Deleting half and vacuuming: emptied pages become free pages
DELETE FROM insp WHERE id <= 5000;
VACUUM insp;
SELECT live_tuples, data_pages, free_pages, pages_add_up FROM insp_stats('insp_abc');
SELECT bloomidx_check('insp_abc', true), bloomidx_check('insp_d', true);

-- Reinserting: free pages are reused, the index does not grow
INSERT INTO insp
SELECT i, i % 100, 'b' || (i % 37), md5((i % 1000)::text)::uuid, (i % 50) / 4.0
FROM generate_series(1, 5000) i;
SELECT live_tuples, data_pages, free_pages, pages_add_up FROM insp_stats('insp_abc');
SELECT bloomidx_check('insp_abc', true), bloomidx_check('insp_d', true);

-- Updates, HOT (column id is not indexed) and not, then VACUUM
UPDATE insp SET id = id + 100000 WHERE id % 10 = 1;
UPDATE insp SET a = a + 1 WHERE id % 10 = 2;
SELECT bloomidx_check('insp_abc', true), bloomidx_check('insp_d', true);
VACUUM insp;
SELECT live_tuples FROM bloomidx_stats('insp_abc');
SELECT bloomidx_check('insp_abc', true), bloomidx_check('insp_d', true);

-- Rows inserted by the current transaction are checked, rows it deleted not
BEGIN;
INSERT INTO insp VALUES (-1, -1, 'new', NULL, NULL);
DELETE FROM insp WHERE id = 9999;
SELECT bloomidx_check('insp_abc', true);
ROLLBACK;

-- At REPEATABLE READ the transaction's snapshot is used
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM insp;
SELECT bloomidx_check('insp_abc', true);
COMMIT;

-- Expressions and a predicate: the heap pass computes them as the build does
CREATE INDEX insp_expr ON insp USING bloomidx (lower(b), (a * 2)) WHERE a < 50;
SELECT live_tuples, bits_per_column FROM bloomidx_stats('insp_expr');
SELECT count(*) FROM insp WHERE a < 50;
SELECT bloomidx_check('insp_expr', true);

-- After ALTER INDEX ... SET the index keeps its shape until REINDEX
ALTER INDEX insp_d SET (col1 = 5);
SELECT bloomidx_check('insp_d');
SELECT bits_per_column FROM bloomidx_stats('insp_d');
REINDEX INDEX insp_d;
SELECT bloomidx_check('insp_d', true);
SELECT bits_per_column FROM bloomidx_stats('insp_d');

-- No rows: fill and bytes per row are NULL, rates are the planner's
CREATE TABLE insp_empty (a int, b text);
CREATE INDEX insp_empty_ab ON insp_empty USING bloomidx (a, b);
SELECT data_pages, free_pages, live_tuples, fill IS NULL AS no_fill,
	fpr_1col > 0 AND fpr_2col < fpr_1col AS rates_ok, fpr_3col IS NULL AS no_3col,
	bytes_per_row IS NULL AS no_bytes_per_row
FROM bloomidx_stats('insp_empty_ab');
SELECT bloomidx_check('insp_empty_ab', true);

-- Only NULLs
INSERT INTO insp_empty SELECT NULL, NULL FROM generate_series(1, 1000);
SELECT live_tuples, round(fill::numeric, 2) AS fill FROM bloomidx_stats('insp_empty_ab');
SELECT bloomidx_check('insp_empty_ab', true);

-- Unlogged and temporary tables
CREATE UNLOGGED TABLE insp_unlogged AS SELECT i AS a FROM generate_series(1, 1000) i;
CREATE INDEX insp_unlogged_a ON insp_unlogged USING bloomidx (a);
SELECT live_tuples FROM bloomidx_stats('insp_unlogged_a');
SELECT bloomidx_check('insp_unlogged_a', true);
CREATE TEMP TABLE insp_temp AS SELECT i AS a FROM generate_series(1, 1000) i;
CREATE INDEX insp_temp_a ON insp_temp USING bloomidx (a);
SELECT live_tuples FROM bloomidx_stats('insp_temp_a');
SELECT bloomidx_check('insp_temp_a', true);

-- Errors: not a bloomidx index, not an index, partitioned, not valid
CREATE INDEX insp_btree ON insp (a);
SELECT bloomidx_check('insp_btree');
SELECT * FROM bloomidx_stats('insp_btree');
SELECT bloomidx_check('insp');
SELECT * FROM bloomidx_stats('insp');
CREATE TABLE insp_part (a int) PARTITION BY RANGE (a);
CREATE TABLE insp_part1 PARTITION OF insp_part FOR VALUES FROM (0) TO (100);
CREATE INDEX insp_part_a ON insp_part USING bloomidx (a);
SELECT bloomidx_check('insp_part_a');
-- (bloomidx_stats gives a partitioned index a row that says what it is)
SELECT layout, data_pages, live_tuples FROM bloomidx_stats('insp_part_a');
SELECT bloomidx_check(indexrelid) FROM pg_index WHERE indrelid = 'insp_part1'::regclass;
CREATE TABLE insp_bad AS SELECT i AS a FROM generate_series(0, 10) i;
CREATE INDEX CONCURRENTLY insp_bad_expr ON insp_bad USING bloomidx ((10 / (a - 5)));
SELECT bloomidx_check('insp_bad_expr');
SELECT bloomidx_check(NULL), bloomidx_check('insp_abc', NULL);

-- Privileges: stats for pg_stat_scan_tables, check for superusers
CREATE ROLE regress_bloomidx_inspect;
SET ROLE regress_bloomidx_inspect;
SELECT live_tuples FROM bloomidx_stats('insp_abc');
SELECT bloomidx_check('insp_abc');
RESET ROLE;
GRANT pg_stat_scan_tables TO regress_bloomidx_inspect;
SET ROLE regress_bloomidx_inspect;
SELECT live_tuples FROM bloomidx_stats('insp_abc');
SELECT bloomidx_check('insp_abc');
RESET ROLE;
DROP ROLE regress_bloomidx_inspect;

DROP TABLE insp, insp_empty, insp_unlogged, insp_temp, insp_part, insp_bad;
DROP FUNCTION insp_stats(regclass);
