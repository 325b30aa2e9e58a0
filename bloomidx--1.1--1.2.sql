/* bloomidx--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.2'" to load this file. \quit

-- 1.2: operator classes whose values are sets of elements, each element
-- setting its bits in the row's signature (src/elements.c): substrings of
-- text (LIKE, ILIKE), elements of arrays (@>, &&), paths of jsonb (@>).
-- There is no full 1.2 script: CREATE EXTENSION installs 1.1 and runs this
-- one, so this is the one place these objects are written.  Existing
-- indexes are untouched.

-- text_trgm_ops: pg_trgm's trigrams
CREATE FUNCTION bloomidx_trgm_extract(text, internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomidx_trgm_extract_query(text, int2, internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomidx_trgm_options(internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OPERATOR CLASS text_trgm_ops
FOR TYPE text USING bloomidx AS
	OPERATOR	1	=(text, text),
	OPERATOR	4	~~(text, text),
	OPERATOR	5	~~*(text, text),
	FUNCTION	1	hashtextextended(text, int8),
	FUNCTION	2	bloomidx_trgm_extract(text, internal),
	FUNCTION	3	bloomidx_trgm_extract_query(text, int2, internal),
	FUNCTION	4	bloomidx_trgm_options(internal);

-- array_elem_ops: the elements of arrays
CREATE FUNCTION bloomidx_array_extract(anyarray, internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomidx_array_extract_query(anyarray, int2, internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomidx_array_options(internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OPERATOR CLASS array_elem_ops
FOR TYPE anyarray USING bloomidx AS
	OPERATOR	2	@>(anyarray, anyarray),
	OPERATOR	3	&&(anyarray, anyarray),
	FUNCTION	1	hash_array_extended(anyarray, int8),
	FUNCTION	2	bloomidx_array_extract(anyarray, internal),
	FUNCTION	3	bloomidx_array_extract_query(anyarray, int2, internal),
	FUNCTION	4	bloomidx_array_options(internal);

-- jsonb_path_ops: the paths to the values of jsonb documents
CREATE FUNCTION bloomidx_jsonb_extract(jsonb, internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomidx_jsonb_extract_query(jsonb, int2, internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomidx_jsonb_options(internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OPERATOR CLASS jsonb_path_ops
FOR TYPE jsonb USING bloomidx AS
	OPERATOR	2	@>(jsonb, jsonb),
	FUNCTION	1	jsonb_hash_extended(jsonb, int8),
	FUNCTION	2	bloomidx_jsonb_extract(jsonb, internal),
	FUNCTION	3	bloomidx_jsonb_extract_query(jsonb, int2, internal),
	FUNCTION	4	bloomidx_jsonb_options(internal);

-- What the cost model expects of a query that tests a given number of
-- elements in each column of sets it names
CREATE FUNCTION bloomidx_estimate(index regclass, columns text[], elements int4,
	OUT false_positive_rate float8,
	OUT false_positive_rows float8,
	OUT true_rows float8,
	OUT candidate_rows float8,
	OUT fill float8,
	OUT index_pages bigint)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT STABLE PARALLEL SAFE;
COMMENT ON FUNCTION bloomidx_estimate(regclass, text[], int4) IS
'false positives, true matches and pages the planner expects of a query testing a number of elements in each column of sets named';

COMMENT ON OPERATOR CLASS text_trgm_ops USING bloomidx IS
	'trigrams of text: LIKE and ILIKE with a pattern of three or more characters, and =';
COMMENT ON OPERATOR CLASS array_elem_ops USING bloomidx IS
	'elements of arrays: @> (contains) and && (overlaps)';
COMMENT ON OPERATOR CLASS jsonb_path_ops USING bloomidx IS
	'paths to values of jsonb documents: @> (contains)';
