/*-------------------------------------------------------------------------
 *
 * filter_probe.c
 *	  SQL functions that add values to a bloomfilter and probe it: bloom_add
 *	  and bloom_contains, and the array forms of bloom_contains,
 *	  bloom_contains_any and bloom_contains_all (which the keyed forms of
 *	  filter_keyed.c share).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_probe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "filter_variant.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloom_add);
PG_FUNCTION_INFO_V1(bloom_contains);
PG_FUNCTION_INFO_V1(bloom_contains_array);
PG_FUNCTION_INFO_V1(bloom_contains_any);
PG_FUNCTION_INFO_V1(bloom_contains_all);

/*
 * bloom_add(filter, value): a copy of the filter with the value added.
 */
Datum
bloom_add(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	BloomFilterData f;
	bytea	   *out;
	uint64		hash;

	BloomFilterOpen(in, &f);
	BloomCheckSecret(&f.hdr, NULL);
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, true);
	BloomCheckHome(&f.hdr, cache->hashing);

	out = BloomFilterTyped(CurrentMemoryContext, &f, cache);
	BloomFilterOpen(out, &f);
	hash = BloomValueHash(cache, f.hdr.hash_scheme, PG_GETARG_DATUM(1));
	out = BloomFilterAddHash(CurrentMemoryContext, &f, hash);
	PG_RETURN_BYTEA_P(out);
}

/*
 * bloom_contains(filter, value): might the filter contain the value?
 */
Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	BloomFilterData local;
	const BloomFilterData *f;
	uint64		hash;

	f = BloomOpenFilterArg(fcinfo, 0, cache, &local);
	BloomCheckSecret(&f->hdr, NULL);
	BloomCheckValueType(f->hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f->hdr, cache->hashing);
	if (f->hdr.elemtype == 0)
		PG_RETURN_BOOL(false);

	hash = BloomValueHash(cache, f->hdr.hash_scheme, PG_GETARG_DATUM(1));
	PG_RETURN_BOOL(BloomFilterTestHash(f, hash));
}

/*
 * How the array forms hash an element: int4 and int8 (and domains over
 * them) without a function call per element, with what their extended
 * hash functions, hashint4extended and hashint8extended, compute; any
 * other type through its function.
 */
typedef enum BloomArrayHash
{
	BLOOM_ARRAY_HASH_FMGR,
	BLOOM_ARRAY_HASH_INT4,
	BLOOM_ARRAY_HASH_INT8
} BloomArrayHash;

static BloomArrayHash
BloomArrayHashKind(const BloomFnCache *cache)
{
	Oid			fn = cache->typentry->hash_extended_proc_finfo.fn_oid;

	if (fn == F_HASHINT4EXTENDED && cache->elmbyval && cache->elmlen == 4)
		return BLOOM_ARRAY_HASH_INT4;
	if (fn == F_HASHINT8EXTENDED && cache->elmbyval && cache->elmlen == 8)
		return BLOOM_ARRAY_HASH_INT8;
	return BLOOM_ARRAY_HASH_FMGR;
}

static inline uint64
BloomArrayElemHash(BloomFnCache *cache, BloomArrayHash kind, uint16 scheme,
				   Datum value)
{
	switch (kind)
	{
		case BLOOM_ARRAY_HASH_INT4:
			return hash_bytes_uint32_extended((uint32) DatumGetInt32(value),
											  BLOOM_HASH_SEED);
		case BLOOM_ARRAY_HASH_INT8:
			{
				int64		val = DatumGetInt64(value);
				uint32		lohalf = (uint32) val;
				uint32		hihalf = (uint32) (val >> 32);

				lohalf ^= (val >= 0) ? hihalf : ~hihalf;
				return hash_bytes_uint32_extended(lohalf, BLOOM_HASH_SEED);
			}
		case BLOOM_ARRAY_HASH_FMGR:
			break;
	}
	return BloomValueHash(cache, scheme, value);
}

/*
 * Probe each element of the array argument (or the whole array, if the
 * filter holds arrays of that type) and answer as mode asks, with SQL's
 * NULL semantics of = ANY and = ALL for the aggregate answers; under
 * secret (keyed a batch of hashes at a time), or none for an unkeyed
 * filter.
 */
Datum
BloomContainsArray(FunctionCallInfo fcinfo, BloomArrayProbe mode,
				   const BloomSecret *secret)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, true);
	void	   *array_alloc = NULL;
	ArrayType  *array;
	BloomFilterData f;
	ArrayMetaState mstate = {0};
	ArrayIterator iterator = NULL;
	bool		direct;
	char	   *ptr;
	BloomArrayHash hashkind;
	Datum		value = (Datum) 0;
	bool		isnull;
	int			ndims;
	int			nelems;
	ArrayType  *result = NULL;
	uint8	   *bitmap = NULL;
	char	   *data = NULL;
	bool		any_null = false;
	uint64		hashes[BLOOM_PROBE_BATCH];
	bool		found[BLOOM_PROBE_BATCH];
	int			nbatch = 0;
	bool		more = true;
	int			i;
	int			j;

	/* a large stored array is read onto huge pages, any other as usual */
	array = (ArrayType *) BloomDetoastLarge((struct varlena *) PG_GETARG_POINTER(1),
											&array_alloc);
	if (array == NULL)
		array = PG_GETARG_ARRAYTYPE_P(1);

	BloomFilterOpen(BloomGetFilterArg(fcinfo, 0, cache), &f);
	BloomCheckSecret(&f.hdr, secret);

	/* a filter of arrays: the array is one value */
	if (f.hdr.elemtype != 0 && f.hdr.elemtype == cache->arraytype &&
		f.hdr.elemtype != cache->elemtype)
	{
		bool		found;
		uint64		hash;

		BloomCheckHome(&f.hdr, cache->hashing);
		if (f.hdr.hash_scheme == BLOOM_FILTER_HASH_SCHEME_LABELS &&
			cache->hashing == BLOOM_HASH_LABELS)
			hash = BloomLabelHash(cache->arraytype, PointerGetDatum(array));
		else
		{
			if (cache->arrayentry == NULL)
				cache->arrayentry = BloomLookupHash(cache->arraytype);
			hash = BloomHashDatum(&cache->arrayentry->hash_extended_proc_finfo,
								  cache->collation, PointerGetDatum(array));
		}
		if (secret != NULL)
			BloomFilterSecretHashes(&f.hdr, secret, &hash, 1);
		found = BloomFilterTestHash(&f, hash);
		if (mode == BLOOM_PROBE_EACH)
		{
			Datum		d = BoolGetDatum(found);

			PG_RETURN_ARRAYTYPE_P(construct_array(&d, 1, BOOLOID, 1, true,
												  TYPALIGN_CHAR));
		}
		PG_RETURN_BOOL(found);
	}
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f.hdr, cache->hashing);

	/*
	 * Walk the array with an iterator, and build the array of answers
	 * directly, rather than through deconstruct_array and
	 * construct_md_array: on a large array each of those is a pass with no
	 * interrupt check, of about a second for 5 million elements on a
	 * loaded machine.
	 */
	ndims = ARR_NDIM(array);
	nelems = ArrayGetNItems(ndims, ARR_DIMS(array));
	if (mode == BLOOM_PROBE_EACH)
	{
		Size		dataoffset;

		if (ndims == 0)
			PG_RETURN_ARRAYTYPE_P(construct_empty_array(BOOLOID));
		/* NULL elements answer NULL: a bitmap only if there are some */
		dataoffset = array_contains_nulls(array) ?
			ARR_OVERHEAD_WITHNULLS(ndims, nelems) : 0;
		result = palloc0((dataoffset != 0 ? dataoffset :
						  ARR_OVERHEAD_NONULLS(ndims)) + nelems);
		result->ndim = ndims;
		result->dataoffset = dataoffset;
		result->elemtype = BOOLOID;
		memcpy(ARR_DIMS(result), ARR_DIMS(array), sizeof(int) * ndims);
		memcpy(ARR_LBOUND(result), ARR_LBOUND(array), sizeof(int) * ndims);
		bitmap = ARR_NULLBITMAP(result);
		data = ARR_DATA_PTR(result);
	}

	/*
	 * An array without NULLs of a fixed-width type is walked by pointer, as
	 * array_iterate would walk it but without a call for every element;
	 * any other with an iterator.
	 */
	direct = !ARR_HASNULL(array) && cache->elmlen > 0;
	ptr = ARR_DATA_PTR(array);
	if (!direct)
	{
		mstate.element_type = ARR_ELEMTYPE(array);
		mstate.typlen = cache->elmlen;
		mstate.typbyval = cache->elmbyval;
		mstate.typalign = cache->elmalign;
		iterator = array_create_iterator(array, 0, &mstate);
	}
	hashkind = BloomArrayHashKind(cache);

	/*
	 * Hash the non-NULL elements in batches, and probe each batch at once
	 * (BloomFilterTestHashes), so that the cache misses of its probes
	 * overlap.  The answers are written in order, as they come.
	 */
	for (i = 0; more; i++)
	{
		if ((i % BLOOM_PROBE_BATCH) == 0)
			CHECK_FOR_INTERRUPTS();
		if (direct)
		{
			more = i < nelems;
			isnull = false;
			if (more)
			{
				value = fetch_att(ptr, cache->elmbyval, cache->elmlen);
				ptr = att_addlength_pointer(ptr, cache->elmlen, ptr);
				ptr = (char *) att_align_nominal(ptr, cache->elmalign);
			}
		}
		else
			more = array_iterate(iterator, &value, &isnull);
		if (more)
		{
			if (isnull)
			{
				any_null = true;
				continue;
			}
			if (bitmap != NULL)
				bitmap[i / 8] |= 1 << (i % 8);
			hashes[nbatch] = f.hdr.elemtype != 0 ?
				BloomArrayElemHash(cache, hashkind, f.hdr.hash_scheme, value) : 0;
			nbatch++;
			if (nbatch < BLOOM_PROBE_BATCH)
				continue;
		}
		if (nbatch == 0)
			continue;
		if (secret != NULL)
			BloomFilterSecretHashes(&f.hdr, secret, hashes, nbatch);
		BloomFilterTestHashes(&f, hashes, nbatch, found);
		for (j = 0; j < nbatch; j++)
		{
			if (mode == BLOOM_PROBE_ANY && found[j])
				PG_RETURN_BOOL(true);
			if (mode == BLOOM_PROBE_ALL && !found[j])
				PG_RETURN_BOOL(false);
			if (mode == BLOOM_PROBE_EACH)
				*data++ = found[j] ? 1 : 0;
		}
		nbatch = 0;
	}
	if (!direct)
		array_free_iterator(iterator);
	if (array_alloc != NULL)
		pfree(array_alloc);

	if (mode == BLOOM_PROBE_EACH)
	{
		SET_VARSIZE(result, data - (char *) result);
		PG_RETURN_ARRAYTYPE_P(result);
	}
	if (any_null)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(mode == BLOOM_PROBE_ALL);
}

/*
 * bloom_contains(filter, array): for each element, might the filter
 * contain it?  NULL elements answer NULL.
 */
Datum
bloom_contains_array(PG_FUNCTION_ARGS)
{
	return BloomContainsArray(fcinfo, BLOOM_PROBE_EACH, NULL);
}

/*
 * bloom_contains_any(filter, array): might the filter contain any element?
 */
Datum
bloom_contains_any(PG_FUNCTION_ARGS)
{
	return BloomContainsArray(fcinfo, BLOOM_PROBE_ANY, NULL);
}

/*
 * bloom_contains_all(filter, array): might the filter contain every
 * element?
 */
Datum
bloom_contains_all(PG_FUNCTION_ARGS)
{
	return BloomContainsArray(fcinfo, BLOOM_PROBE_ALL, NULL);
}
