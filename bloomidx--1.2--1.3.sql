/* bloomidx--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.3'" to load this file. \quit

-- 1.3: typed forms of bloom_agg for every type with a hash function, so
-- that Citus computes the sized, template and keyed forms on the shards
-- for any value.  Citus' worker_partial_agg runs an aggregate on a shard
-- only if the types of its arguments are the very types the aggregate
-- declares, which anyelement never is (1.1 added forms for fourteen common
-- types).  Here: bloom_hashable, which says whether bloom_agg can hash a
-- type's values; bloom_agg_add_type, which adds the typed forms for one
-- type (an enum, a composite, an array or a range of them, made after the
-- extension); and the forms for every type of pg_catalog with a hash
-- function and the arrays, ranges and multiranges of them.  The transition
-- functions are the C functions of the anyelement forms, declared with the
-- type, from which they take it when worker_partial_agg calls them without
-- a call expression (src/filter_hash.c): the filters are the same bytes.
-- There is no full 1.3 script: CREATE EXTENSION installs 1.1 and runs the
-- updates.

-- Whether the values of a type have the hash function bloom filters use:
-- the default hash operator class of the type, of a type it is
-- binary-coercible to, or, for arrays, enums, ranges, multiranges and
-- composites, the one of anyarray etc. with hashable elements, as
-- PostgreSQL's type cache finds it.
CREATE FUNCTION bloom_hashable(element_type regtype)
RETURNS boolean
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	todo oid[] := ARRAY[element_type::oid];
	t oid;
	typ record;
BEGIN
	WHILE cardinality(todo) > 0 LOOP
		t := todo[1];
		todo := todo[2:];
		SELECT typtype, typbasetype, typelem, typsubscript, typrelid
		INTO typ FROM pg_type WHERE oid = t;
		IF NOT FOUND OR typ.typtype = 'p' THEN
			RETURN false;
		END IF;
		IF typ.typtype = 'd' THEN
			todo := todo || typ.typbasetype;
			CONTINUE;
		END IF;
		IF EXISTS (
			SELECT FROM pg_opclass o JOIN pg_am a ON a.oid = o.opcmethod
			WHERE a.amname = 'hash' AND o.opcdefault
			  AND (o.opcintype = t OR EXISTS (
				SELECT FROM pg_cast c
				WHERE c.castsource = t AND c.casttarget = o.opcintype
				  AND c.castmethod = 'b' AND c.castcontext = 'i'))) THEN
			CONTINUE;
		END IF;
		IF typ.typsubscript = 'array_subscript_handler'::regproc THEN
			todo := todo || typ.typelem;
		ELSIF typ.typtype = 'e' THEN
			NULL;
		ELSIF typ.typtype = 'r' THEN
			todo := todo || (SELECT rngsubtype FROM pg_range WHERE rngtypid = t);
		ELSIF typ.typtype = 'm' THEN
			todo := todo || (SELECT rngsubtype FROM pg_range WHERE rngmultitypid = t);
		ELSIF typ.typtype = 'c' THEN
			todo := todo || ARRAY(SELECT atttypid FROM pg_attribute
				WHERE attrelid = typ.typrelid AND attnum > 0 AND NOT attisdropped);
		ELSE
			RETURN false;
		END IF;
	END LOOP;
	RETURN true;
END
$$;

COMMENT ON FUNCTION bloom_hashable(regtype) IS 'whether bloom filters can hash values of the type';

-- The sized, template and keyed template forms of bloom_agg for one type,
-- in the extension's schema, where missing; returns how many it made.
-- Made by a user, the forms are not members of the extension: pg_dump
-- dumps them after their type, and DROP TYPE ... CASCADE drops them alone
-- (with a member it would drop the whole extension).  They depend on the
-- extension (DEPENDS ON EXTENSION), so that DROP EXTENSION drops them
-- without CASCADE, but where Citus distributed them (it refuses that
-- dependency there).  Made by the extension's scripts, they are members.
CREATE FUNCTION bloom_agg_add_type(element_type regtype)
RETURNS integer
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	nsp text;
	typ text := element_type::text;	-- qualified where not in pg_catalog
	made integer := 0;
	hashable boolean;
	forms regprocedure[] := '{}';
	distributed regprocedure[] := '{}';
	form regprocedure;
BEGIN
	SELECT quote_ident(n.nspname) INTO nsp
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'bloomidx';
	EXECUTE format('SELECT %s.bloom_hashable($1)', nsp) INTO hashable USING element_type;
	IF NOT hashable THEN
		RAISE EXCEPTION 'could not identify an extended hash function for type %', typ
			USING ERRCODE = 'undefined_function',
			HINT = 'Bloom filters hash values with the default hash operator class of their type.';
	END IF;

	IF to_regprocedure(format('%s.bloom_agg(%s, bigint, float8)', nsp, typ)) IS NULL THEN
		EXECUTE format($sql$
			CREATE FUNCTION %1$s.bloom_agg_filter_transfn(%1$s.bloomfilter, %2$s, bigint, float8)
			RETURNS %1$s.bloomfilter
			AS 'MODULE_PATHNAME'
			LANGUAGE C IMMUTABLE PARALLEL SAFE
		$sql$, nsp, typ);
		EXECUTE format($sql$
			CREATE AGGREGATE %1$s.bloom_agg(%2$s, capacity bigint, false_positive_rate float8) (
				SFUNC = %1$s.bloom_agg_filter_transfn,
				STYPE = %1$s.bloomfilter,
				COMBINEFUNC = %1$s.bloom_union_filter_transfn,
				PARALLEL = SAFE
			)
		$sql$, nsp, typ);
		EXECUTE format($sql$
			COMMENT ON AGGREGATE %1$s.bloom_agg(%2$s, bigint, float8) IS
			'bloom filter of the values, sized for capacity values at a false-positive rate'
		$sql$, nsp, typ);
		forms := forms || format('%1$s.bloom_agg_filter_transfn(%1$s.bloomfilter, %2$s, bigint, float8)', nsp, typ)::regprocedure
			|| format('%1$s.bloom_agg(%2$s, bigint, float8)', nsp, typ)::regprocedure;
		made := made + 1;
	END IF;

	IF to_regprocedure(format('%1$s.bloom_agg(%2$s, %1$s.bloomfilter)', nsp, typ)) IS NULL THEN
		EXECUTE format($sql$
			CREATE FUNCTION %1$s.bloom_agg_template_transfn(%1$s.bloomfilter, %2$s, %1$s.bloomfilter)
			RETURNS %1$s.bloomfilter
			AS 'MODULE_PATHNAME'
			LANGUAGE C IMMUTABLE PARALLEL SAFE
		$sql$, nsp, typ);
		EXECUTE format($sql$
			CREATE AGGREGATE %1$s.bloom_agg(%2$s, template %1$s.bloomfilter) (
				SFUNC = %1$s.bloom_agg_template_transfn,
				STYPE = %1$s.bloomfilter,
				COMBINEFUNC = %1$s.bloom_union_filter_transfn,
				PARALLEL = SAFE
			)
		$sql$, nsp, typ);
		EXECUTE format($sql$
			COMMENT ON AGGREGATE %1$s.bloom_agg(%2$s, %1$s.bloomfilter) IS
			'bloom filter of the values, in a copy of an empty filter of any variant but growing'
		$sql$, nsp, typ);
		forms := forms || format('%1$s.bloom_agg_template_transfn(%1$s.bloomfilter, %2$s, %1$s.bloomfilter)', nsp, typ)::regprocedure
			|| format('%1$s.bloom_agg(%2$s, %1$s.bloomfilter)', nsp, typ)::regprocedure;
		made := made + 1;
	END IF;

	IF to_regprocedure(format('%1$s.bloom_agg(%2$s, %1$s.bloomfilter, bytea)', nsp, typ)) IS NULL THEN
		EXECUTE format($sql$
			CREATE FUNCTION %1$s.bloom_agg_template_transfn(%1$s.bloomfilter, %2$s, %1$s.bloomfilter, bytea)
			RETURNS %1$s.bloomfilter
			AS 'MODULE_PATHNAME'
			LANGUAGE C IMMUTABLE PARALLEL SAFE
		$sql$, nsp, typ);
		EXECUTE format($sql$
			CREATE AGGREGATE %1$s.bloom_agg(%2$s, template %1$s.bloomfilter, key bytea) (
				SFUNC = %1$s.bloom_agg_template_transfn,
				STYPE = %1$s.bloomfilter,
				COMBINEFUNC = %1$s.bloom_union_filter_transfn,
				PARALLEL = SAFE
			)
		$sql$, nsp, typ);
		EXECUTE format($sql$
			COMMENT ON AGGREGATE %1$s.bloom_agg(%2$s, %1$s.bloomfilter, bytea) IS
			'keyed bloom filter of the values, in a copy of an empty keyed filter'
		$sql$, nsp, typ);
		forms := forms || format('%1$s.bloom_agg_template_transfn(%1$s.bloomfilter, %2$s, %1$s.bloomfilter, bytea)', nsp, typ)::regprocedure
			|| format('%1$s.bloom_agg(%2$s, %1$s.bloomfilter, bytea)', nsp, typ)::regprocedure;
		made := made + 1;
	END IF;

	-- Citus refuses a dependency on an extension to a function it has
	-- distributed (created on the workers itself): those go without it
	IF to_regclass('pg_catalog.pg_dist_object') IS NOT NULL THEN
		EXECUTE 'SELECT coalesce(array_agg(objid::regprocedure), ''{}'')
				 FROM pg_catalog.pg_dist_object
				 WHERE classid = ''pg_proc''::regclass AND objid = ANY ($1)'
			INTO distributed USING forms::oid[];
	END IF;
	FOREACH form IN ARRAY forms LOOP
		IF NOT EXISTS (SELECT FROM pg_depend
					   WHERE classid = 'pg_proc'::regclass AND objid = form
						 AND refclassid = 'pg_extension'::regclass AND deptype = 'e')
		   AND NOT form = ANY (distributed) THEN
			EXECUTE format('ALTER ROUTINE %s DEPENDS ON EXTENSION bloomidx', form);
		END IF;
	END LOOP;
	RETURN made;
END
$$;

COMMENT ON FUNCTION bloom_agg_add_type(regtype) IS 'add the typed forms of bloom_agg, which Citus computes on the shards, for a type';

-- The forms for every type of pg_catalog that bloom filters can hash and
-- arrays of them, but the catalogs' row types and internal types (category
-- Z but "char": pg_node_tree, ..., which resolve to text's); the ones 1.1
-- made are kept.  No call that resolved before becomes ambiguous
-- (sql/filter_agg_forms checks every type of pg_catalog).  Every such type has its own, so a call that
-- resolved to anyelement resolves to the form of its own type.
DO $$
DECLARE
	t regtype;
BEGIN
	FOR t IN
		SELECT t.oid::regtype FROM pg_type t
		LEFT JOIN pg_type e ON e.oid = t.typelem
			AND t.typsubscript = 'array_subscript_handler'::regproc
		WHERE t.typnamespace = 'pg_catalog'::regnamespace AND t.typisdefined
		  AND t.typtype IN ('b', 'r', 'm')
		  AND (t.typcategory <> 'Z' OR t.oid = '"char"'::regtype)
		  AND coalesce(e.typtype <> 'c' AND (e.typcategory <> 'Z' OR e.oid = '"char"'::regtype), true)
		ORDER BY t.oid
	LOOP
		IF bloom_hashable(t) THEN
			PERFORM bloom_agg_add_type(t);
		END IF;
	END LOOP;
END
$$;

-- 1.3: bloomidx_stats reports the sliced layout's stripe summaries (format
-- 4): the bits a key they were sized at (NULL without summaries); the
-- summary pages of the stripes listed and the stripes with a complete
-- summary, which a scan may skip (0 without summaries); and for each column
-- the fraction of the bits set in those summaries and the mean of their
-- estimated false-positive rates, the chance that a stripe's summary lets
-- through a value the stripe lacks (NULL for a column of sets, which has
-- none, and when no stripe has a complete summary).  All NULL for the row
-- layout; with exact => false all but summary_bits_per_key are NULL.
DROP FUNCTION bloomidx_stats(regclass, boolean);
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
	OUT target_false_positive_rate float8,
	OUT summary_bits_per_key int4,
	OUT summary_pages int8,
	OUT summarized_stripes int8,
	OUT summary_fill float8[],
	OUT summary_fpr float8[])
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION bloomidx_stats(regclass, boolean) IS
'size, shape, fill and false-positive rates of a bloomidx index; exact => false reads the metapage only';

-- As pgstattuple's pgstatindex: reads every page of the index
REVOKE EXECUTE ON FUNCTION bloomidx_stats(regclass, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bloomidx_stats(regclass, boolean) TO pg_stat_scan_tables;
