/* bloomidx--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.1'" to load this file. \quit

-- Everything below is also in bloomidx--1.1.sql, so that a fresh 1.1 install
-- and an updated 1.0 install hold the same objects.

-- 1.1: bloomidx_stats gets a cheap form (exact => false: the metapage
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

-------------------------------------------------------------------------------
-- 1.1: filter variants (src/filter_variant.c, src/filter_ops.c)
-------------------------------------------------------------------------------
-- Growing (scalable), counting and blocked filters, in format 3 of the
-- byte format; plain filters keep format 2.  bloom_empty gains options and
-- bloom_info three columns, so both are dropped and created again.
DROP FUNCTION bloom_empty(bigint, float8);
CREATE FUNCTION bloom_empty(capacity bigint, false_positive_rate float8 DEFAULT 0.01,
	growth integer DEFAULT 0, counting boolean DEFAULT false, blocked boolean DEFAULT false)
RETURNS bloomfilter
AS 'MODULE_PATHNAME', 'bloom_empty_variant'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_empty(bigint, float8, integer, boolean, boolean) IS 'empty bloom filter sized for capacity values at a false-positive rate: growing by a factor, counting or blocked';

DROP FUNCTION bloom_info(bloomfilter);
CREATE FUNCTION bloom_info(filter bloomfilter,
	OUT format_version integer,
	OUT element_type regtype,
	OUT nbits bigint,
	OUT nhashes integer,
	OUT capacity bigint,
	OUT target_false_positive_rate float8,
	OUT nbits_set bigint,
	OUT fill_ratio float8,
	OUT estimated_cardinality float8,
	OUT expected_false_positive_rate float8,
	OUT size_bytes bigint,
	OUT variant text,
	OUT layers integer,
	OUT growth integer)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_info(bloomfilter) IS 'variant, shape, fill and expected false-positive rate of a bloom filter';

CREATE FUNCTION bloom_remove(bloomfilter, anyelement)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_remove(bloomfilter, anyelement) IS 'copy of a counting bloom filter with a value removed';

CREATE FUNCTION bloom_plain(bloomfilter)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_plain(bloomfilter) IS 'plain bloom filter with the same answers as a counting one';

CREATE FUNCTION bloom_fold(bloomfilter, factor integer)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_fold(bloomfilter, integer) IS 'plain bloom filter folded to 1/factor of its bits, holding the same values';

CREATE FUNCTION bloom_agg_growing_transfn(bloomfilter, anyelement, bigint, float8, integer)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_template_transfn(bloomfilter, anyelement, bloomfilter)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- No combine function: a growing filter's layers depend on the order of the
-- values, and filters built apart merge only above their target rate.
CREATE AGGREGATE bloom_agg(anyelement, capacity bigint, false_positive_rate float8, growth integer) (
	SFUNC = bloom_agg_growing_transfn,
	STYPE = bloomfilter,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement, bigint, float8, integer) IS 'growing bloom filter of the values, first sized for capacity values, at a false-positive rate';

CREATE AGGREGATE bloom_agg(anyelement, template bloomfilter) (
	SFUNC = bloom_agg_template_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_filter_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement, bloomfilter) IS 'bloom filter of the values, in a copy of an empty filter of any variant but growing';

-------------------------------------------------------------------------------
-- 1.1: keyed filters (src/filter_keyed.c)
-------------------------------------------------------------------------------
-- Bit positions from SipHash-2-4, under a 16-byte secret key, of the value's
-- hash; the filter stores only a fingerprint of the key.
CREATE FUNCTION bloom_empty(capacity bigint, false_positive_rate float8, key bytea)
RETURNS bloomfilter
AS 'MODULE_PATHNAME', 'bloom_empty_keyed'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_empty(bigint, float8, bytea) IS 'empty keyed bloom filter: bit positions depend on a secret 16-byte key';

CREATE FUNCTION bloom_add(bloomfilter, anyelement, key bytea)
RETURNS bloomfilter
AS 'MODULE_PATHNAME', 'bloom_add_keyed'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_add(bloomfilter, anyelement, bytea) IS 'copy of a keyed bloom filter with a value added';

CREATE FUNCTION bloom_contains(bloomfilter, anynonarray, key bytea)
RETURNS boolean
AS 'MODULE_PATHNAME', 'bloom_contains_keyed'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloomfilter, anynonarray, bytea) IS 'might the keyed bloom filter contain the value?';

CREATE FUNCTION bloom_contains(bloomfilter, anyarray, key bytea)
RETURNS boolean[]
AS 'MODULE_PATHNAME', 'bloom_contains_array_keyed'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloomfilter, anyarray, bytea) IS 'for each element of the array, might the keyed bloom filter contain it?';

CREATE FUNCTION bloom_contains_any(bloomfilter, anyarray, key bytea)
RETURNS boolean
AS 'MODULE_PATHNAME', 'bloom_contains_any_keyed'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_any(bloomfilter, anyarray, bytea) IS 'might the keyed bloom filter contain any element of the array?';

CREATE FUNCTION bloom_contains_all(bloomfilter, anyarray, key bytea)
RETURNS boolean
AS 'MODULE_PATHNAME', 'bloom_contains_all_keyed'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_all(bloomfilter, anyarray, bytea) IS 'might the keyed bloom filter contain every element of the array?';

CREATE FUNCTION bloom_agg_template_transfn(bloomfilter, anyelement, bloomfilter, bytea)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE bloom_agg(anyelement, template bloomfilter, key bytea) (
	SFUNC = bloom_agg_template_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_filter_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement, bloomfilter, bytea) IS 'keyed bloom filter of the values, in a copy of an empty keyed filter';

-------------------------------------------------------------------------------
-- 1.1: typed forms of bloom_agg for distributed engines (src/filter_agg.c)
-------------------------------------------------------------------------------
-- The forms of bloom_agg that combine (sized, template, keyed template)
-- again for common element types, beside the anyelement ones: Citus'
-- worker_partial_agg runs an aggregate on the shards only if the types of
-- its arguments are those the aggregate declares, which anyelement never
-- is.  The transition functions are the same C functions, declared with the
-- type, from which they take it when called without a call expression, as
-- worker_partial_agg calls them; the filters are the same bytes.  Every
-- built-in type with an implicit cast to a type of the list and a hash
-- function is in the list, so that a call that resolved to anyelement
-- resolves to the form of its own type, not to another or ambiguously
-- (smallint: integer, bigint, numeric; varchar, char(n), name and "char":
-- text; date and timestamp: timestamptz).  A type of another extension
-- that casts implicitly to one of them takes that form (citext: text).
DO $$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['smallint', 'integer', 'bigint', 'numeric',
		'text', 'character varying', 'character', 'name', '"char"', 'bytea',
		'uuid', 'date', 'timestamp without time zone', 'timestamp with time zone']
	LOOP
		EXECUTE format($sql$
			CREATE FUNCTION bloom_agg_filter_transfn(bloomfilter, %1$s, bigint, float8)
			RETURNS bloomfilter
			AS 'MODULE_PATHNAME'
			LANGUAGE C IMMUTABLE PARALLEL SAFE
		$sql$, t);
		EXECUTE format($sql$
			CREATE AGGREGATE bloom_agg(%1$s, capacity bigint, false_positive_rate float8) (
				SFUNC = bloom_agg_filter_transfn,
				STYPE = bloomfilter,
				COMBINEFUNC = bloom_union_filter_transfn,
				PARALLEL = SAFE
			)
		$sql$, t);
		EXECUTE format($sql$
			COMMENT ON AGGREGATE bloom_agg(%1$s, bigint, float8) IS
			'bloom filter of the values, sized for capacity values at a false-positive rate'
		$sql$, t);

		EXECUTE format($sql$
			CREATE FUNCTION bloom_agg_template_transfn(bloomfilter, %1$s, bloomfilter)
			RETURNS bloomfilter
			AS 'MODULE_PATHNAME'
			LANGUAGE C IMMUTABLE PARALLEL SAFE
		$sql$, t);
		EXECUTE format($sql$
			CREATE AGGREGATE bloom_agg(%1$s, template bloomfilter) (
				SFUNC = bloom_agg_template_transfn,
				STYPE = bloomfilter,
				COMBINEFUNC = bloom_union_filter_transfn,
				PARALLEL = SAFE
			)
		$sql$, t);
		EXECUTE format($sql$
			COMMENT ON AGGREGATE bloom_agg(%1$s, bloomfilter) IS
			'bloom filter of the values, in a copy of an empty filter of any variant but growing'
		$sql$, t);

		EXECUTE format($sql$
			CREATE FUNCTION bloom_agg_template_transfn(bloomfilter, %1$s, bloomfilter, bytea)
			RETURNS bloomfilter
			AS 'MODULE_PATHNAME'
			LANGUAGE C IMMUTABLE PARALLEL SAFE
		$sql$, t);
		EXECUTE format($sql$
			CREATE AGGREGATE bloom_agg(%1$s, template bloomfilter, key bytea) (
				SFUNC = bloom_agg_template_transfn,
				STYPE = bloomfilter,
				COMBINEFUNC = bloom_union_filter_transfn,
				PARALLEL = SAFE
			)
		$sql$, t);
		EXECUTE format($sql$
			COMMENT ON AGGREGATE bloom_agg(%1$s, bloomfilter, bytea) IS
			'keyed bloom filter of the values, in a copy of an empty keyed filter'
		$sql$, t);
	END LOOP;
END
$$;

-- 1.1: the output functions of bloomfilter write the element type's
-- current schema and name, which they look up: stable, as the input
-- functions are
ALTER FUNCTION bloomfilter_out(bloomfilter) STABLE;
ALTER FUNCTION bloomfilter_send(bloomfilter) STABLE;

-- Types of later majors, where they exist: PostgreSQL 19's oid8
DO $$
BEGIN
	IF to_regtype('pg_catalog.oid8') IS NOT NULL THEN
		EXECUTE $sql$
			CREATE OPERATOR CLASS oid8_ops
			DEFAULT FOR TYPE oid8 USING bloomidx AS
				OPERATOR	1	=(oid8, oid8),
				FUNCTION	1	hashoid8extended(oid8, int8)
		$sql$;
	END IF;
END
$$;

-- Equality, ordering and hashing of filters (src/filter_compare.c): =, the
-- btree and hash operator classes that DISTINCT, GROUP BY, UNION, joins and
-- logical replication's REPLICA IDENTITY FULL need, and a bloomidx one
CREATE FUNCTION bloomfilter_eq(bloomfilter, bloomfilter) RETURNS boolean
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_ne(bloomfilter, bloomfilter) RETURNS boolean
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_lt(bloomfilter, bloomfilter) RETURNS boolean
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_le(bloomfilter, bloomfilter) RETURNS boolean
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_gt(bloomfilter, bloomfilter) RETURNS boolean
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_ge(bloomfilter, bloomfilter) RETURNS boolean
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_cmp(bloomfilter, bloomfilter) RETURNS integer
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_hash(bloomfilter) RETURNS integer
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_hash_extended(bloomfilter, bigint) RETURNS bigint
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloomfilter_eq(bloomfilter, bloomfilter) IS 'equal: the same bytes, the element type''s names aside';

CREATE OPERATOR = (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter, FUNCTION = bloomfilter_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES);
CREATE OPERATOR <> (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter, FUNCTION = bloomfilter_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter, FUNCTION = bloomfilter_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter, FUNCTION = bloomfilter_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter, FUNCTION = bloomfilter_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter, FUNCTION = bloomfilter_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS bloomfilter_ops
DEFAULT FOR TYPE bloomfilter USING btree AS
	OPERATOR	1	<,
	OPERATOR	2	<=,
	OPERATOR	3	=,
	OPERATOR	4	>=,
	OPERATOR	5	>,
	FUNCTION	1	bloomfilter_cmp(bloomfilter, bloomfilter);

CREATE OPERATOR CLASS bloomfilter_ops
DEFAULT FOR TYPE bloomfilter USING hash AS
	OPERATOR	1	=,
	FUNCTION	1	bloomfilter_hash(bloomfilter),
	FUNCTION	2	bloomfilter_hash_extended(bloomfilter, bigint);

CREATE OPERATOR CLASS bloomfilter_ops
DEFAULT FOR TYPE bloomfilter USING bloomidx AS
	OPERATOR	1	=(bloomfilter, bloomfilter),
	FUNCTION	1	bloomfilter_hash_extended(bloomfilter, bigint);
