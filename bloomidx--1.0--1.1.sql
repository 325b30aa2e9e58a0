/* bloomidx--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.1'" to load this file. \quit

-- Everything below is also in bloomidx--1.1.sql, so that a fresh 1.1 install
-- and an updated 1.0 install hold the same objects.

-- Issue 12: bloomidx_stats gets a cheap form (exact => false: the metapage
-- only), a row for a partitioned index (layout 'partitioned'), and the
-- false-positive rate the index was built for; comments for \df+
DROP FUNCTION bloomidx_stats(regclass);
CREATE FUNCTION bloomidx_stats(index regclass,
	exact boolean DEFAULT true,
	OUT version int4,
	OUT meta_pages int8,
	OUT data_pages int8,
	OUT free_pages int8,
	OUT live_tuples int8,
	OUT tuples_per_page int4,
	OUT signature_bits int4,
	OUT bits_per_column int4[],
	OUT fill float8,
	OUT fpr_1col float8,
	OUT fpr_2col float8,
	OUT fpr_3col float8,
	OUT bytes_per_row float8,
	OUT layout text,
	OUT stripes int8,
	OUT pending_pages int8,
	OUT first_row int8,
	OUT next_row int8,
	OUT target_false_positive_rate float8)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- As pgstattuple's pgstatindex
REVOKE EXECUTE ON FUNCTION bloomidx_stats(regclass, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bloomidx_stats(regclass, boolean) TO pg_stat_scan_tables;

COMMENT ON FUNCTION bloomidx_stats(regclass, boolean) IS
'size, shape, fill and false-positive rates of a bloomidx index; exact => false reads the metapage only';
COMMENT ON FUNCTION bloomidx_check(regclass, boolean) IS
'verify a bloomidx index, and with heapallindexed that every table row is in it';
COMMENT ON FUNCTION bloomidx_estimate(regclass, text[]) IS
'false positives, true matches and pages the planner expects of an equality on some columns of a bloomidx index';
COMMENT ON FUNCTION bloomidx_merge(regclass) IS
'merge the pending rows of a sliced bloomidx index into its slices; returns the rows merged';
