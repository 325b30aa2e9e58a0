/*-------------------------------------------------------------------------
 *
 * opclass_array.c
 *	  array_elem_ops: arrays as sets of their elements, answering @>
 *	  (every element of the query) and && (any of them).
 *
 * Each element of a stored array is one element of the signature, hashed
 * with its type's extended hash function (seed 0) under the column's
 * collation, as an equality column hashes a value; NULL elements equal
 * nothing and set no bits.  Dimensions are ignored, as @> and && ignore
 * them.  A query for "@> q" tests every element of q (an empty q is
 * contained in every array: no bit to test; a NULL element in q is
 * contained in no array: no row matches); "&& q" tests any element of q
 * (an empty q, or one of NULLs only, overlaps nothing).  Whole-array
 * equality and <@ stay with array_ops, which hashes the array as one value.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/opclass/opclass_array.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "bloomidx.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloomidx_array_extract);
PG_FUNCTION_INFO_V1(bloomidx_array_extract_query);
PG_FUNCTION_INFO_V1(bloomidx_array_options);

/*
 * The extended hash function of an array's element type, cached in
 * fn_extra for the calls of one index column or query.
 */
static FmgrInfo *
BloomArrayElementHash(FunctionCallInfo fcinfo, Oid elemtype)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	TypeCacheEntry *typentry = (TypeCacheEntry *) flinfo->fn_extra;

	if (typentry == NULL || typentry->type_id != elemtype)
	{
		typentry = lookup_type_cache(elemtype,
									 TYPECACHE_HASH_EXTENDED_PROC_FINFO);
		if (!OidIsValid(typentry->hash_extended_proc_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify an extended hash function for type %s",
							format_type_be(elemtype)),
					 errhint("array_elem_ops needs an element type with a hash operator class.")));
		flinfo->fn_extra = typentry;
	}
	return &typentry->hash_extended_proc_finfo;
}

/*
 * Give sink the hash of every non-NULL element of array; returns true if
 * the array holds a NULL.
 */
static bool
BloomArrayAddElements(FunctionCallInfo fcinfo, ArrayType *array,
					  BloomElementSink *sink)
{
	FmgrInfo   *hashFn = BloomArrayElementHash(fcinfo, ARR_ELEMTYPE(array));
	Oid			collation = PG_GET_COLLATION();
	ArrayIterator it = array_create_iterator(array, 0, NULL);
	Datum		value;
	bool		isnull;
	bool		anyNull = false;
	uint32		n = 0;

	while (array_iterate(it, &value, &isnull))
	{
		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (isnull)
		{
			anyNull = true;
			continue;
		}
		BloomAddElement(sink, BloomHashDatum(hashFn, collation, value));
	}
	array_free_iterator(it);
	return anyNull;
}

/*
 * bloomidx_array_extract(anyarray, internal): the elements of a stored
 * array (support function 2).
 */
Datum
bloomidx_array_extract(PG_FUNCTION_ARGS)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(0);
	BloomElementSink *sink = (BloomElementSink *) PG_GETARG_POINTER(1);

	(void) BloomArrayAddElements(fcinfo, array, sink);
	PG_RETURN_VOID();
}

/*
 * bloomidx_array_extract_query(anyarray, int2, internal): the elements a
 * query's array tests (support function 3).
 */
Datum
bloomidx_array_extract_query(PG_FUNCTION_ARGS)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(0);
	int16		strategy = PG_GETARG_INT16(1);
	BloomElementSink *sink = (BloomElementSink *) PG_GETARG_POINTER(2);

	switch (strategy)
	{
		case BLOOMIDX_CONTAINS_STRATEGY:
			if (array_contains_nulls(array))
			{
				/* No array contains a NULL: no element to match */
				sink->mode = BLOOM_ELEMENTS_ANY;
				break;
			}
			sink->mode = BLOOM_ELEMENTS_ALL;
			(void) BloomArrayAddElements(fcinfo, array, sink);
			break;
		case BLOOMIDX_OVERLAP_STRATEGY:
			sink->mode = BLOOM_ELEMENTS_ANY;
			(void) BloomArrayAddElements(fcinfo, array, sink);
			break;
		default:
			elog(ERROR, "array_elem_ops has no strategy %d", strategy);
	}
	PG_RETURN_VOID();
}

/*
 * bloomidx_array_options(internal): elements (default 8 a value) and
 * query_elements (default 1: a query of one element is as selective as an
 * equality) (support function 4).
 */
Datum
bloomidx_array_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	BloomSetOptionsInit(relopts, 8, 1);
	PG_RETURN_VOID();
}
