/* bloomidx--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.1'" to load this file. \quit

-- Everything below is also in bloomidx--1.1.sql, so that a fresh 1.1 install
-- and an updated 1.0 install hold the same objects.

-------------------------------------------------------------------------------
-- 1.1: aggregates that distributed engines can push down (src/filter_agg.c)
-------------------------------------------------------------------------------
-- The sized bloom_agg and bloom_union_agg keep the filter itself as their
-- transition state (1.0: internal), updated in place; partial states are
-- bloomfilter values, which Citus and parallel workers move as they are.
-- The results are the same bytes as 1.0's.
DROP AGGREGATE bloom_agg(anyelement, bigint, float8);
DROP AGGREGATE bloom_union_agg(bloomfilter);
DROP FUNCTION bloom_agg_sized_transfn(internal, anyelement, bigint, float8);
DROP FUNCTION bloom_union_agg_transfn(internal, bloomfilter);

CREATE FUNCTION bloom_agg_filter_transfn(bloomfilter, anyelement, bigint, float8)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_union_filter_transfn(bloomfilter, bloomfilter)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE bloom_agg(anyelement, capacity bigint, false_positive_rate float8) (
	SFUNC = bloom_agg_filter_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_filter_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement, bigint, float8) IS 'bloom filter of the values, sized for capacity values at a false-positive rate';

CREATE AGGREGATE bloom_union_agg(bloomfilter) (
	SFUNC = bloom_union_filter_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_filter_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_union_agg(bloomfilter) IS 'union of bloom filters';
