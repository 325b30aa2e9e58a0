/* bloomidx--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bloomidx" to load this file. \quit

-------------------------------------------------------------------------------
-- Section: index access method (src/build.c ... src/validate.c)
-------------------------------------------------------------------------------

CREATE FUNCTION bloomidx_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE ACCESS METHOD bloomidx TYPE INDEX HANDLER bloomidx_handler;
COMMENT ON ACCESS METHOD bloomidx IS 'bloom signature index: equality on any subset of its columns';

-- Merge the pending rows of an index WITH (layout = sliced) into its slices
CREATE FUNCTION bloomidx_merge(index regclass)
RETURNS bigint
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION bloomidx_merge(regclass) IS
'merge the pending rows of a sliced bloomidx index into its slices; returns the rows merged';

-- What the cost model expects of an equality on a typical value of each of
-- some columns of an index: false positives (rows the recheck removes), true
-- matches (from the table's statistics), candidates (both)
CREATE FUNCTION bloomidx_estimate(index regclass, columns text[],
	OUT false_positive_rate float8,
	OUT false_positive_rows float8,
	OUT true_rows float8,
	OUT candidate_rows float8,
	OUT fill float8,
	OUT index_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT STABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloomidx_estimate(regclass, text[]) IS
'false positives, true matches and pages the planner expects of an equality on some columns of a bloomidx index';

-- Operator classes: one DEFAULT class for every type with a default hash
-- operator class, hashed with the same 64-bit extended hash function, so
-- that the index's notion of equality is the type's own.  As in the hash
-- access method, integer, float and text/name types share families with
-- cross-type equalities (int4_col = 42::int8 can use the index).

CREATE OPERATOR FAMILY integer_ops USING bloomidx;
CREATE OPERATOR FAMILY float_ops USING bloomidx;
CREATE OPERATOR FAMILY text_ops USING bloomidx;

CREATE OPERATOR CLASS aclitem_ops
DEFAULT FOR TYPE aclitem USING bloomidx AS
	OPERATOR	1	=(aclitem, aclitem),
	FUNCTION	1	hash_aclitem_extended(aclitem, int8);

CREATE OPERATOR CLASS array_ops
DEFAULT FOR TYPE anyarray USING bloomidx AS
	OPERATOR	1	=(anyarray, anyarray),
	FUNCTION	1	hash_array_extended(anyarray, int8);

CREATE OPERATOR CLASS bool_ops
DEFAULT FOR TYPE bool USING bloomidx AS
	OPERATOR	1	=(bool, bool),
	FUNCTION	1	hashcharextended("char", int8);

CREATE OPERATOR CLASS bpchar_ops
DEFAULT FOR TYPE bpchar USING bloomidx AS
	OPERATOR	1	=(bpchar, bpchar),
	FUNCTION	1	hashbpcharextended(bpchar, int8);

CREATE OPERATOR CLASS bytea_ops
DEFAULT FOR TYPE bytea USING bloomidx AS
	OPERATOR	1	=(bytea, bytea),
	FUNCTION	1	hashvarlenaextended(internal, int8);

CREATE OPERATOR CLASS char_ops
DEFAULT FOR TYPE "char" USING bloomidx AS
	OPERATOR	1	=("char", "char"),
	FUNCTION	1	hashcharextended("char", int8);

CREATE OPERATOR CLASS cid_ops
DEFAULT FOR TYPE cid USING bloomidx AS
	OPERATOR	1	=(cid, cid),
	FUNCTION	1	hashint4extended(int4, int8);

CREATE OPERATOR CLASS date_ops
DEFAULT FOR TYPE date USING bloomidx AS
	OPERATOR	1	=(date, date),
	FUNCTION	1	hashint4extended(int4, int8);

CREATE OPERATOR CLASS enum_ops
DEFAULT FOR TYPE anyenum USING bloomidx AS
	OPERATOR	1	=(anyenum, anyenum),
	FUNCTION	1	hashenumextended(anyenum, int8);

CREATE OPERATOR CLASS float4_ops
DEFAULT FOR TYPE float4 USING bloomidx FAMILY float_ops AS
	OPERATOR	1	=(float4, float4),
	FUNCTION	1	hashfloat4extended(float4, int8);

CREATE OPERATOR CLASS float8_ops
DEFAULT FOR TYPE float8 USING bloomidx FAMILY float_ops AS
	OPERATOR	1	=(float8, float8),
	FUNCTION	1	hashfloat8extended(float8, int8);

CREATE OPERATOR CLASS int2_ops
DEFAULT FOR TYPE int2 USING bloomidx FAMILY integer_ops AS
	OPERATOR	1	=(int2, int2),
	FUNCTION	1	hashint2extended(int2, int8);

CREATE OPERATOR CLASS int4_ops
DEFAULT FOR TYPE int4 USING bloomidx FAMILY integer_ops AS
	OPERATOR	1	=(int4, int4),
	FUNCTION	1	hashint4extended(int4, int8);

CREATE OPERATOR CLASS int8_ops
DEFAULT FOR TYPE int8 USING bloomidx FAMILY integer_ops AS
	OPERATOR	1	=(int8, int8),
	FUNCTION	1	hashint8extended(int8, int8);

CREATE OPERATOR CLASS interval_ops
DEFAULT FOR TYPE interval USING bloomidx AS
	OPERATOR	1	=(interval, interval),
	FUNCTION	1	interval_hash_extended(interval, int8);

CREATE OPERATOR CLASS jsonb_ops
DEFAULT FOR TYPE jsonb USING bloomidx AS
	OPERATOR	1	=(jsonb, jsonb),
	FUNCTION	1	jsonb_hash_extended(jsonb, int8);

CREATE OPERATOR CLASS macaddr8_ops
DEFAULT FOR TYPE macaddr8 USING bloomidx AS
	OPERATOR	1	=(macaddr8, macaddr8),
	FUNCTION	1	hashmacaddr8extended(macaddr8, int8);

CREATE OPERATOR CLASS macaddr_ops
DEFAULT FOR TYPE macaddr USING bloomidx AS
	OPERATOR	1	=(macaddr, macaddr),
	FUNCTION	1	hashmacaddrextended(macaddr, int8);

CREATE OPERATOR CLASS multirange_ops
DEFAULT FOR TYPE anymultirange USING bloomidx AS
	OPERATOR	1	=(anymultirange, anymultirange),
	FUNCTION	1	hash_multirange_extended(anymultirange, int8);

CREATE OPERATOR CLASS inet_ops
DEFAULT FOR TYPE inet USING bloomidx AS
	OPERATOR	1	=(inet, inet),
	FUNCTION	1	hashinetextended(inet, int8);

CREATE OPERATOR CLASS numeric_ops
DEFAULT FOR TYPE numeric USING bloomidx AS
	OPERATOR	1	=(numeric, numeric),
	FUNCTION	1	hash_numeric_extended(numeric, int8);

CREATE OPERATOR CLASS oid_ops
DEFAULT FOR TYPE oid USING bloomidx AS
	OPERATOR	1	=(oid, oid),
	FUNCTION	1	hashoidextended(oid, int8);

CREATE OPERATOR CLASS oidvector_ops
DEFAULT FOR TYPE oidvector USING bloomidx AS
	OPERATOR	1	=(oidvector, oidvector),
	FUNCTION	1	hashoidvectorextended(oidvector, int8);

CREATE OPERATOR CLASS pg_lsn_ops
DEFAULT FOR TYPE pg_lsn USING bloomidx AS
	OPERATOR	1	=(pg_lsn, pg_lsn),
	FUNCTION	1	pg_lsn_hash_extended(pg_lsn, int8);

CREATE OPERATOR CLASS range_ops
DEFAULT FOR TYPE anyrange USING bloomidx AS
	OPERATOR	1	=(anyrange, anyrange),
	FUNCTION	1	hash_range_extended(anyrange, int8);

CREATE OPERATOR CLASS record_ops
DEFAULT FOR TYPE record USING bloomidx AS
	OPERATOR	1	=(record, record),
	FUNCTION	1	hash_record_extended(record, int8);

CREATE OPERATOR CLASS name_ops
DEFAULT FOR TYPE name USING bloomidx FAMILY text_ops AS
	OPERATOR	1	=(name, name),
	FUNCTION	1	hashnameextended(name, int8);

CREATE OPERATOR CLASS text_ops
DEFAULT FOR TYPE text USING bloomidx FAMILY text_ops AS
	OPERATOR	1	=(text, text),
	FUNCTION	1	hashtextextended(text, int8);

CREATE OPERATOR CLASS tid_ops
DEFAULT FOR TYPE tid USING bloomidx AS
	OPERATOR	1	=(tid, tid),
	FUNCTION	1	hashtidextended(tid, int8);

CREATE OPERATOR CLASS time_ops
DEFAULT FOR TYPE time USING bloomidx AS
	OPERATOR	1	=(time, time),
	FUNCTION	1	time_hash_extended(time, int8);

CREATE OPERATOR CLASS timestamp_ops
DEFAULT FOR TYPE timestamp USING bloomidx AS
	OPERATOR	1	=(timestamp, timestamp),
	FUNCTION	1	timestamp_hash_extended(timestamp, int8);

CREATE OPERATOR CLASS timestamptz_ops
DEFAULT FOR TYPE timestamptz USING bloomidx AS
	OPERATOR	1	=(timestamptz, timestamptz),
	FUNCTION	1	timestamp_hash_extended(timestamp, int8);

CREATE OPERATOR CLASS timetz_ops
DEFAULT FOR TYPE timetz USING bloomidx AS
	OPERATOR	1	=(timetz, timetz),
	FUNCTION	1	timetz_hash_extended(timetz, int8);

CREATE OPERATOR CLASS uuid_ops
DEFAULT FOR TYPE uuid USING bloomidx AS
	OPERATOR	1	=(uuid, uuid),
	FUNCTION	1	uuid_hash_extended(uuid, int8);

CREATE OPERATOR CLASS xid8_ops
DEFAULT FOR TYPE xid8 USING bloomidx AS
	OPERATOR	1	=(xid8, xid8),
	FUNCTION	1	hashint8extended(int8, int8);

CREATE OPERATOR CLASS xid_ops
DEFAULT FOR TYPE xid USING bloomidx AS
	OPERATOR	1	=(xid, xid),
	FUNCTION	1	hashint4extended(int4, int8);

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

ALTER OPERATOR FAMILY integer_ops USING bloomidx ADD
	OPERATOR	1	=(int2, int4),
	OPERATOR	1	=(int2, int8),
	OPERATOR	1	=(int4, int2),
	OPERATOR	1	=(int4, int8),
	OPERATOR	1	=(int8, int2),
	OPERATOR	1	=(int8, int4);

ALTER OPERATOR FAMILY float_ops USING bloomidx ADD
	OPERATOR	1	=(float4, float8),
	OPERATOR	1	=(float8, float4);

ALTER OPERATOR FAMILY text_ops USING bloomidx ADD
	OPERATOR	1	=(name, text),
	OPERATOR	1	=(text, name);

-------------------------------------------------------------------------------
-- Section: ad hoc bloom filters (src/filter_io.c, src/filter_probe.c,
-- src/filter_ops.c, src/filter_agg.c)
-------------------------------------------------------------------------------

-- The bloomfilter type: a varlena holding the portable byte format of
-- src/filter_format.h, written in text as \x and hex digits, like bytea.

CREATE TYPE bloomfilter;

CREATE FUNCTION bloomfilter_in(cstring)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

CREATE FUNCTION bloomfilter_out(bloomfilter)
RETURNS cstring
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

CREATE FUNCTION bloomfilter_recv(internal)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

CREATE FUNCTION bloomfilter_send(bloomfilter)
RETURNS bytea
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

CREATE TYPE bloomfilter (
	INPUT = bloomfilter_in,
	OUTPUT = bloomfilter_out,
	RECEIVE = bloomfilter_recv,
	SEND = bloomfilter_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = extended
);
COMMENT ON TYPE bloomfilter IS 'bloom filter of values of one type, for approximate membership tests';

-- Casts: to bytea the bytes are the same; from bytea they are validated
CREATE FUNCTION bloomfilter(bytea)
RETURNS bloomfilter
AS 'MODULE_PATHNAME', 'bloomfilter_from_bytea'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

CREATE CAST (bytea AS bloomfilter) WITH FUNCTION bloomfilter(bytea);
CREATE CAST (bloomfilter AS bytea) WITHOUT FUNCTION;

-- Constructors.  A plain filter keeps format 2 of the byte format (1.0's);
-- the growing (scalable), counting and blocked variants use format 3.
CREATE FUNCTION bloom_empty(capacity bigint, false_positive_rate float8 DEFAULT 0.01,
	growth integer DEFAULT 0, counting boolean DEFAULT false, blocked boolean DEFAULT false)
RETURNS bloomfilter
AS 'MODULE_PATHNAME', 'bloom_empty_variant'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_empty(bigint, float8, integer, boolean, boolean) IS 'empty bloom filter sized for capacity values at a false-positive rate: growing by a factor, counting or blocked';

CREATE FUNCTION bloom_empty_raw(nbits bigint, nhashes int)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_empty_raw(bigint, int) IS 'empty bloom filter of nbits bits and nhashes hash functions';

CREATE FUNCTION bloom_add(bloomfilter, anyelement)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_add(bloomfilter, anyelement) IS 'copy of a bloom filter with a value added';

-- Probes.  The one-value form takes anynonarray: with anyelement beside
-- anyarray, PostgreSQL could not choose between the two for an array.
CREATE FUNCTION bloom_contains(bloomfilter, anynonarray)
RETURNS boolean
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloomfilter, anynonarray) IS 'might the bloom filter contain the value?';

CREATE FUNCTION bloom_contains(bloomfilter, anyarray)
RETURNS boolean[]
AS 'MODULE_PATHNAME', 'bloom_contains_array'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloomfilter, anyarray) IS 'for each element of the array, might the bloom filter contain it?';

CREATE FUNCTION bloom_contains_any(bloomfilter, anyarray)
RETURNS boolean
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_any(bloomfilter, anyarray) IS 'might the bloom filter contain any element of the array?';

CREATE FUNCTION bloom_contains_all(bloomfilter, anyarray)
RETURNS boolean
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_all(bloomfilter, anyarray) IS 'might the bloom filter contain every element of the array?';

-- Set operations
CREATE FUNCTION bloom_union(bloomfilter, bloomfilter)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_union(bloomfilter, bloomfilter) IS 'bloom filter of the values of either filter';

CREATE FUNCTION bloom_intersect(bloomfilter, bloomfilter)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_intersect(bloomfilter, bloomfilter) IS 'bloom filter that may contain the values of both filters';

CREATE OPERATOR | (
	LEFTARG = bloomfilter,
	RIGHTARG = bloomfilter,
	FUNCTION = bloom_union,
	COMMUTATOR = |
);

CREATE OPERATOR & (
	LEFTARG = bloomfilter,
	RIGHTARG = bloomfilter,
	FUNCTION = bloom_intersect,
	COMMUTATOR = &
);

-- Inspection
CREATE FUNCTION bloom_cardinality(bloomfilter)
RETURNS float8
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_cardinality(bloomfilter) IS 'estimated number of distinct values added to the bloom filter';

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

-- Aggregates.  bloom_agg without a capacity keeps an internal state: a set
-- of distinct hashes while it fits in work_mem, else a growing filter.
CREATE FUNCTION bloom_agg_transfn(internal, anyelement)
RETURNS internal
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_finalfn(internal)
RETURNS bloomfilter
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_combinefn(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_serialfn(internal)
RETURNS bytea
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_deserialfn(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE bloom_agg(anyelement) (
	SFUNC = bloom_agg_transfn,
	STYPE = internal,
	FINALFUNC = bloom_agg_finalfn,
	COMBINEFUNC = bloom_agg_combinefn,
	SERIALFUNC = bloom_agg_serialfn,
	DESERIALFUNC = bloom_agg_deserialfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement) IS 'bloom filter of the values, sized for the distinct values seen at a false-positive rate of 0.01';

-- The sized bloom_agg and bloom_union_agg keep the filter itself as their
-- transition state, updated in place; partial states are bloomfilter
-- values, which Citus and parallel workers move as they are.
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
-- Section: inspection and verification (src/inspect.c)
-------------------------------------------------------------------------------

-- One record describing an index: its format version; its pages (the
-- metapage, data pages, and free pages: deleted or never initialized);
-- live index tuples and slots per page; the signature length and the bits
-- each column sets; the measured fraction of signature bits set (NULL when
-- empty); the false-positive rate expected of an equality on the first 1,
-- 2 and 3 columns at that fill (NULL beyond the index's columns; for an
-- empty index, at the fill the planner assumes); bytes per live tuple; the
-- layout, and for the sliced layout its stripes in use, pending pages, and
-- the row numbers its stripes span, first_row to next_row - 1 (NULL for
-- the row layout); the false-positive rate the index was built for (NULL
-- when length or colN were given).  With exact => false it reads the
-- metapage only.  A partitioned index gives a row of layout 'partitioned'.
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
COMMENT ON FUNCTION bloomidx_stats(regclass, boolean) IS
'size, shape, fill and false-positive rates of a bloomidx index; exact => false reads the metapage only';

-- As pgstattuple's pgstatindex: reads every page of the index
REVOKE EXECUTE ON FUNCTION bloomidx_stats(regclass, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bloomidx_stats(regclass, boolean) TO pg_stat_scan_tables;

-- Verify an index: its metapage, every page's header, special space and
-- tuples, the free list, that no tuple points past the end of the table,
-- and with heapallindexed that every row of the table has its signature in
-- the index.  Raises ERRCODE_INDEX_CORRUPTED (XX002) at the first problem,
-- returns quietly otherwise.  Holds AccessShareLock only.
CREATE FUNCTION bloomidx_check(index regclass,
	heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloomidx_check(regclass, boolean) IS
'verify a bloomidx index, and with heapallindexed that every table row is in it';

-- As amcheck: only superusers, unless they grant it
REVOKE EXECUTE ON FUNCTION bloomidx_check(regclass, boolean) FROM PUBLIC;

-------------------------------------------------------------------------------
-- Section: filter variants (src/filter_variant.c and the variants' files,
-- src/filter_ops.c)
-------------------------------------------------------------------------------
-- Counting filters, folding, and the growing and template forms of
-- bloom_agg; bloom_empty's options make the variants.

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
-- Section: keyed filters (src/filter_keyed.c, src/filter_probe.c,
-- src/filter_ops.c)
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
-- Section: typed forms of bloom_agg for distributed engines (src/filter_agg.c)
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
