/*-------------------------------------------------------------------------
 *
 * filter_agg.c
 *	  Aggregates of the bloomfilter type: bloom_agg and bloom_union_agg.
 *
 * bloom_agg without a capacity collects the distinct 64-bit hashes of its
 * input in an open-addressing hash set, and sizes the filter for their
 * number when it finishes.  A set that would outgrow work_mem becomes a
 * growing filter, which then takes the values that follow.  The sized
 * forms, bloom_agg(value, capacity, rate) and bloom_union_agg, have the
 * filter itself as transition state, updated in place, so that partial
 * aggregation can run anywhere the type can travel (parallel workers, or
 * the shards of a distributed table).  The combine, serial and deserial
 * functions of the state are in filter_agg_combine.c.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_agg.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "filter_agg.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloom_agg_transfn);
PG_FUNCTION_INFO_V1(bloom_agg_sized_transfn);
PG_FUNCTION_INFO_V1(bloom_union_agg_transfn);
PG_FUNCTION_INFO_V1(bloom_agg_finalfn);
PG_FUNCTION_INFO_V1(bloom_agg_filter_transfn);
PG_FUNCTION_INFO_V1(bloom_union_filter_transfn);
PG_FUNCTION_INFO_V1(bloom_agg_template_transfn);

/*
 * Set up the hash set of an aggregate state with room for nslots hashes
 * (a power of two).
 */
void
BloomSetAllocate(BloomAggState *state, uint64 nslots)
{
	state->slots = (uint64 *) MemoryContextAllocExtended(state->cxt,
														 nslots * sizeof(uint64),
														 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	state->nslots = nslots;
	state->shift = 64 - pg_leftmost_one_pos64(nslots);
	state->grow_at = nslots / 2 + nslots / 4;
	state->nused = 0;
}

/*
 * Most bytes the hash set of bloom_agg without a capacity takes: work_mem,
 * and at most BLOOM_SET_MAX_BYTES, so that a parallel worker's state (8
 * bytes a hash, at most 3/4 of the slots used) serializes within 1 GB.
 */
Size
BloomSetLimit(void)
{
	return Min((Size) work_mem * 1024, (Size) BLOOM_SET_MAX_BYTES);
}

/*
 * Slot where the search for hash starts.
 */
static inline uint64
BloomSetHome(const BloomAggState *state, uint64 hash)
{
	return (hash * UINT64CONST(0x9e3779b97f4a7c15)) >> state->shift;
}

static void BloomSetInsert(BloomAggState *state, uint64 hash);

/*
 * Double the hash set of an aggregate state, or turn it into a growing
 * filter if the doubled set would exceed work_mem.
 */
static void
BloomSetGrow(BloomAggState *state)
{
	uint64	   *old = state->slots;
	uint64		oldn = state->nslots;
	uint64		i;

	/* beyond work_mem, go on in a growing filter */
	if (oldn * 2 * sizeof(uint64) > BloomSetLimit())
	{
		BloomSetToFilter(state);
		return;
	}

	BloomSetAllocate(state, oldn * 2);
	for (i = 0; i < oldn; i++)
	{
		/* a set of work_mem = 1GB takes seconds to rehash */
		if ((i & 65535) == 65535)
			CHECK_FOR_INTERRUPTS();
		if (old[i] != 0)
			BloomSetInsert(state, old[i]);
	}
	pfree(old);
}

/*
 * Add a hash to the hash set of an aggregate state (linear probing,
 * Fibonacci hashing of the 64-bit hash to a slot).
 */
static inline void
BloomSetInsert(BloomAggState *state, uint64 hash)
{
	uint64		mask = state->nslots - 1;
	uint64		i;

	if (hash == 0)
	{
		state->has_zero = true;
		return;
	}
	i = BloomSetHome(state, hash);
	for (;;)
	{
		uint64		cur = state->slots[i];

		if (cur == hash)
			return;
		if (cur == 0)
			break;
		i = (i + 1) & mask;
	}
	state->slots[i] = hash;
	if (++state->nused > state->grow_at)
		BloomSetGrow(state);
}

/*
 * Make filter (in the state's context) the filter of a sized state.
 */
void
BloomAggStateSetFilter(BloomAggState *state, bytea *filter)
{
	BloomFilterData f;

	BloomFilterOpen(filter, &f);
	state->filter = filter;
	state->bits = f.bits;
	state->nbits = f.hdr.nbits;
	state->nhashes = f.hdr.nhashes;
	state->elemtype = f.hdr.elemtype;
}

/*
 * Add a hash to the growing filter of a state that outgrew work_mem.
 */
void
BloomAggAddToFilter(BloomAggState *state, uint64 hash)
{
	BloomFilterData f;
	bytea	   *result;

	BloomFilterOpen(state->filter, &f);
	result = BloomFilterAddHash(state->cxt, &f, hash);
	if (result != state->filter)
	{
		pfree(state->filter);
		BloomAggStateSetFilter(state, result);
	}
}

/*
 * Turn the hash set of a state into a growing filter holding its hashes,
 * first sized for as many values as the largest set work_mem holds (the
 * same in every parallel worker, so that their filters combine), at the
 * default rate, growing by BLOOM_SET_OVERFLOW_GROWTH.
 */
void
BloomSetToFilter(BloomAggState *state)
{
	BloomFilterHeader hdr;
	BloomVariantOptions opts = {0};
	uint64	   *slots = state->slots;
	uint64		nslots = state->nslots;
	bool		has_zero = state->has_zero;
	uint64		i;

	opts.growth = BLOOM_SET_OVERFLOW_GROWTH;
	BloomHeaderInitVariant(&hdr, (int64) (nslots / 2 + nslots / 4),
						   BLOOM_DEFAULT_FPR, &opts);
	BloomHeaderSetType(&hdr, state->elemtype,
					   BloomTypeHashingOf(state->elemtype));
	state->sized = true;
	state->slots = NULL;
	state->nslots = state->nused = 0;
	state->has_zero = false;
	BloomAggStateSetFilter(state, BloomFilterAllocate(state->cxt, &hdr));
	if (has_zero)
		BloomAggAddToFilter(state, 0);
	for (i = 0; i < nslots; i++)
	{
		if ((i & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		if (slots[i] != 0)
			BloomAggAddToFilter(state, slots[i]);
	}
	pfree(slots);
}

/*
 * Insert the buffered hashes of an aggregate state into its hash set,
 * prefetching the slots of the hashes a few places ahead, so that the
 * cache misses of a large set overlap.
 */
void
BloomSetFlush(BloomAggState *state)
{
	int			n = state->nbuffered;
	int			i;

	state->nbuffered = 0;
	for (i = 0; i < n; i++)
	{
		/* the set may have become a filter on the way */
		if (state->sized)
		{
			BloomAggAddToFilter(state, state->buffered[i]);
			continue;
		}
		if (i + BLOOM_SET_PREFETCH < n)
			BloomPrefetchWrite(&state->slots[BloomSetHome(state, state->buffered[i + BLOOM_SET_PREFETCH])]);
		BloomSetInsert(state, state->buffered[i]);
	}
}

/*
 * A new aggregate state in cxt: a set of hashes, or with filter (already
 * in cxt) a sized filter.
 */
BloomAggState *
BloomAggStateCreate(MemoryContext cxt, Oid elemtype, Oid collation,
					bytea *filter)
{
	BloomAggState *state = MemoryContextAllocZero(cxt, sizeof(BloomAggState));

	state->cxt = cxt;
	state->elemtype = elemtype;
	state->collation = collation;
	state->sized = (filter != NULL);
	if (state->sized)
		BloomAggStateSetFilter(state, filter);
	else
		BloomSetAllocate(state, BLOOM_SET_INITIAL_SLOTS);
	return state;
}

/*
 * The aggregate memory context of a transition or combine function.
 */
MemoryContext
BloomAggContext(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "%s called in non-aggregate context", fname);
	return aggcxt;
}

/*
 * bloom_agg(value) transition: add the value's hash to the set.
 */
Datum
bloom_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = BloomAggContext(fcinfo, "bloom_agg_transfn");
	BloomAggState *state = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomFnCache *cache;
	uint64		hash;

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}

	cache = BloomGetFnCache(fcinfo, 1, false);
	if (state == NULL)
	{
		/* refuse the type at the first value, not when the set is done */
		BloomCheckNewType(cache->elemtype, cache->hashing);
		state = BloomAggStateCreate(aggcxt, cache->elemtype, cache->collation,
									NULL);
	}
	hash = BloomValueHash(cache, BloomSchemeFor(cache->hashing),
						  PG_GETARG_DATUM(1));
	if (state->sized)
		BloomAggAddToFilter(state, hash);
	else
		BloomSetAdd(state, hash);
	PG_RETURN_POINTER(state);
}

/*
 * bloom_agg(value, capacity, false_positive_rate) transition: set the
 * value's bits in a filter sized on the first value.
 */
Datum
bloom_agg_sized_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = BloomAggContext(fcinfo, "bloom_agg_sized_transfn");
	BloomAggState *state = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomFnCache *cache;

	if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("capacity and false_positive_rate of bloom_agg must not be null"),
				 errhint("Omit both to size the filter for the distinct values seen.")));
	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}

	cache = BloomGetFnCache(fcinfo, 1, false);
	if (state == NULL)
	{
		BloomFilterHeader hdr;
		uint64		nbits;
		int			nhashes;

		BloomChooseSize(PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3),
						&nbits, &nhashes);
		BloomHeaderInit(&hdr, nbits, nhashes, PG_GETARG_INT64(2),
						PG_GETARG_FLOAT8(3));
		BloomHeaderSetType(&hdr, cache->elemtype, cache->hashing);
		state = BloomAggStateCreate(aggcxt, cache->elemtype, cache->collation,
									BloomFilterAllocate(aggcxt, &hdr));
	}

	/* the state is a filter this function built, of the type's scheme */
	BloomSetBits(state->bits, state->nbits,
				 BloomValueHash(cache, BloomSchemeFor(cache->hashing),
								PG_GETARG_DATUM(1)),
				 BLOOM_FILTER_SALT, state->nhashes);
	PG_RETURN_POINTER(state);
}

/*
 * bloom_union_agg(filter) transition: OR the filter into the state.
 */
Datum
bloom_union_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = BloomAggContext(fcinfo, "bloom_union_agg_transfn");
	BloomAggState *state = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	bytea	   *in;
	BloomFilterData f;

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}

	in = PG_GETARG_BYTEA_PP(1);
	if (state == NULL)
	{
		BloomFilterOpen(in, &f);
		state = BloomAggStateCreate(aggcxt, f.hdr.elemtype, InvalidOid,
									BloomFilterCopy(aggcxt, in));
	}
	else
		BloomAggStateSetFilter(state,
							   BloomCombineInto(aggcxt, state->filter, in, false));
	PG_RETURN_POINTER(state);
}

/*
 * Final function of the aggregates: the filter, or NULL if no non-NULL
 * value came.  Without a capacity, the filter is sized here for the number
 * of distinct hashes seen, at the default rate.
 */
Datum
bloom_agg_finalfn(PG_FUNCTION_ARGS)
{
	BloomAggState *state;
	BloomFilterHeader hdr;
	BloomFilterData f;
	bytea	   *result;
	uint64		ndistinct;
	uint64		nbits;
	int			nhashes;
	uint64		i;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_finalfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (BloomAggState *) PG_GETARG_POINTER(0);

	/* the set does not change, only where some of its hashes are */
	if (!state->sized)
		BloomSetFlush(state);
	if (state->sized)
		PG_RETURN_BYTEA_P(BloomFilterCopy(CurrentMemoryContext, state->filter));

	ndistinct = state->nused + state->has_zero;
	BloomChooseSize((int64) ndistinct, BLOOM_DEFAULT_FPR, &nbits, &nhashes);
	BloomHeaderInit(&hdr, nbits, nhashes, ndistinct, BLOOM_DEFAULT_FPR);
	BloomHeaderSetType(&hdr, state->elemtype,
					   BloomTypeHashingOf(state->elemtype));
	result = BloomFilterAllocate(CurrentMemoryContext, &hdr);
	BloomFilterOpen(result, &f);

	if (state->has_zero)
		BloomSetBits(f.bits, nbits, 0, BLOOM_FILTER_SALT, nhashes);
	for (i = 0; i < state->nslots; i++)
	{
		if ((i & 65535) == 65535)
			CHECK_FOR_INTERRUPTS();
		if (state->slots[i] != 0)
			BloomSetBits(f.bits, nbits, state->slots[i], BLOOM_FILTER_SALT,
						 nhashes);
	}
	PG_RETURN_BYTEA_P(result);
}

/*
 * The aggregates whose transition state is the filter itself (1.1): the
 * sized bloom_agg and bloom_union_agg.  A transition function receives the
 * state the executor keeps for it, in the aggregate's memory context, and
 * changes it in place; a new state is built in the current (per-row)
 * context and the executor copies it into its own.  As the state is a
 * bloomfilter, no serial or deserial function is needed: partial states
 * travel as values of the type, from parallel workers or from the shards of
 * a distributed table, and bloom_union_filter_transfn combines them.
 */

/*
 * The state argument argno, writable in place.  A state this code built
 * is a plain 4-byte-header value; anything else (a packed or toasted value
 * the executor took as it came) is copied into the current context.
 */
static bytea *
BloomAggWritableState(FunctionCallInfo fcinfo, int argno)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);

	if (VARATT_IS_EXTENDED(raw))
		return BloomFilterCopy(CurrentMemoryContext,
							   (bytea *) PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(argno)));
	return (bytea *) raw;
}

/*
 * bloom_agg(value, capacity, false_positive_rate) transition, with the
 * filter as state: set the value's bits, in a filter sized on the first
 * non-NULL value.
 */
Datum
bloom_agg_filter_transfn(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache;
	BloomFilterData f PG_USED_FOR_ASSERTS_ONLY;
	bytea	   *state;
	const uint8 *data;
	uint64		nbits;
	uint32		nhashes;
	int			i;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_filter_transfn called in non-aggregate context");
	if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("capacity and false_positive_rate of bloom_agg must not be null"),
				 errhint("Omit both to size the filter for the distinct values seen.")));
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}

	cache = BloomGetFnCache(fcinfo, 1, false);
	if (PG_ARGISNULL(0))
	{
		BloomFilterHeader hdr;
		uint64		sizeBits;
		int			sizeHashes;

		BloomChooseSize(PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3),
						&sizeBits, &sizeHashes);
		BloomHeaderInit(&hdr, sizeBits, sizeHashes, PG_GETARG_INT64(2),
						PG_GETARG_FLOAT8(3));
		BloomHeaderSetType(&hdr, cache->elemtype, cache->hashing);
		state = BloomFilterAllocate(CurrentMemoryContext, &hdr);
	}
	else
		state = BloomAggWritableState(fcinfo, 0);

	/*
	 * The state is a plain format-2 filter this function built: read its
	 * shape directly rather than decode the header for every value.
	 */
	data = (const uint8 *) VARDATA(state);
	Assert(BloomFilterDecodeHeader(data, VARSIZE(state) - VARHDRSZ, &f.hdr,
								   false) == BLOOM_FORMAT_OK &&
		   f.hdr.version == BLOOM_FILTER_FORMAT_VERSION);
	nhashes = (uint32) data[12] | ((uint32) data[13] << 8) |
		((uint32) data[14] << 16) | ((uint32) data[15] << 24);
	nbits = 0;
	for (i = 7; i >= 0; i--)
		nbits = (nbits << 8) | data[16 + i];
	BloomSetBits((uint8 *) data + BLOOM_FILTER_FIXED_HEADER_SIZE + data[56] + data[57],
				 nbits,
				 BloomValueHash(cache, (uint16) (data[6] | (data[7] << 8)),
								PG_GETARG_DATUM(1)),
				 BLOOM_FILTER_SALT, (int) nhashes);
	PG_RETURN_BYTEA_P(state);
}

/*
 * bloom_union_agg(filter) transition, and the combine function of both
 * aggregates: OR the filter into the state, or make a copy of it the state.
 */
Datum
bloom_union_filter_transfn(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	BloomFilterData f;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_union_filter_transfn called in non-aggregate context");
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}

	in = PG_GETARG_BYTEA_PP(1);
	if (PG_ARGISNULL(0))
	{
		BloomFilterOpen(in, &f);
		PG_RETURN_BYTEA_P(BloomFilterCopy(CurrentMemoryContext, in));
	}
	PG_RETURN_BYTEA_P(BloomCombineInto(CurrentMemoryContext,
									   BloomAggWritableState(fcinfo, 0),
									   in, false));
}

/*
 * Add the value argument 1 to the filter state argument 0 (built by make
 * when NULL); returns the state, changed in place or new.
 */
Datum
BloomAggAddValue(FunctionCallInfo fcinfo, bytea *(*make) (FunctionCallInfo, BloomFnCache *),
				 bool keyed)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	BloomFilterData f;
	bytea	   *state;
	uint64		hash;

	/* the secret (argument key, the last), derived for each row: may change */
	if (keyed)
		BloomSecretFromBytea(PG_GETARG_BYTEA_PP(fcinfo->nargs - 1), &cache->secret);

	if (PG_ARGISNULL(0))
		state = make(fcinfo, cache);
	else
		state = BloomAggWritableState(fcinfo, 0);
	BloomFilterOpen(state, &f);
	hash = BloomValueHash(cache, f.hdr.hash_scheme, PG_GETARG_DATUM(1));
	if (keyed)
	{
		BloomCheckSecret(&f.hdr, &cache->secret);
		BloomFilterSecretHashes(&f.hdr, &cache->secret, &hash, 1);
	}
	PG_RETURN_BYTEA_P(BloomFilterAddHash(CurrentMemoryContext, &f, hash));
}

/*
 * A typed copy of the template argument 2 of bloom_agg, which must be an
 * empty filter of a fixed size.
 */
static bytea *
BloomAggMakeFromTemplate(FunctionCallInfo fcinfo, BloomFnCache *cache)
{
	BloomFilterData t;

	BloomFilterOpen(PG_GETARG_BYTEA_PP(2), &t);
	BloomCheckSecret(&t.hdr, fcinfo->nargs == 4 ? &cache->secret : NULL);
	if (t.hdr.growth != 0)		/* growing */
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloom_agg cannot fill a growing filter given as template"),
				 errhint("Use bloom_agg(value, capacity, false_positive_rate, growth).")));
	if (t.hdr.elemtype != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the template filter of bloom_agg must be empty"),
				 errhint("Create the template with bloom_empty; to add to a filter that holds values, combine it with the aggregate's result by bloom_union.")));
	return BloomFilterTyped(CurrentMemoryContext, &t, cache);
}

/*
 * bloom_agg(value, template) transition, and bloom_agg(value, template,
 * key) for a keyed template: add the value to a copy of the template, an
 * empty filter of any variant but growing.  Partial states combine with
 * bloom_union_filter_transfn.
 */
Datum
bloom_agg_template_transfn(PG_FUNCTION_ARGS)
{
	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_template_transfn called in non-aggregate context");
	if (fcinfo->nargs == 4 && PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the key of bloom_agg must not be null"),
				 errhint("Pass the key the template filter was created with.")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the template filter of bloom_agg must not be null"),
				 errhint("Pass an empty filter, such as bloom_empty(1000, 0.01, blocked => true).")));
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	return BloomAggAddValue(fcinfo, BloomAggMakeFromTemplate,
							fcinfo->nargs == 4);
}
