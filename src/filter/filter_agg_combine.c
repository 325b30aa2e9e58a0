/*-------------------------------------------------------------------------
 *
 * filter_agg_combine.c
 *	  Combine, serial and deserial functions of bloom_agg and
 *	  bloom_union_agg, for partial aggregation in parallel workers.
 *
 * A state is a set of hashes or a filter (filter_agg.h).  A set travels as
 * its hashes alone, and the combine function inserts them into its own
 * set; a set that meets a filter (one that outgrew work_mem) joins it.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_agg_combine.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"

#include "filter_agg.h"

/* Kinds of serialized aggregate state */
#define BLOOM_AGG_SERIAL_SET	1
#define BLOOM_AGG_SERIAL_FILTER	2

PG_FUNCTION_INFO_V1(bloom_agg_combinefn);
PG_FUNCTION_INFO_V1(bloom_agg_serialfn);
PG_FUNCTION_INFO_V1(bloom_agg_deserialfn);

/*
 * Combine function of the aggregates: merge state2 into state1, creating
 * state1 in the aggregate context when it is empty.
 */
Datum
bloom_agg_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = BloomAggContext(fcinfo, "bloom_agg_combinefn");
	BloomAggState *state1 = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomAggState *state2 = PG_ARGISNULL(1) ? NULL : (BloomAggState *) PG_GETARG_POINTER(1);
	uint64		i;

	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	if (!state2->sized)
		BloomSetFlush(state2);
	if (state1 != NULL && !state1->sized)
		BloomSetFlush(state1);

	if (state1 == NULL)
	{
		state1 = BloomAggStateCreate(aggcxt, state2->elemtype,
									 state2->collation,
									 state2->sized ? BloomFilterCopy(aggcxt, state2->filter) : NULL);
		if (state2->sized)
			PG_RETURN_POINTER(state1);

		/* room for state2's hashes without growing */
		{
			uint64		nslots = BLOOM_SET_INITIAL_SLOTS;

			while (nslots / 2 + nslots / 4 < state2->nused &&
				   nslots * 2 * sizeof(uint64) <= BloomSetLimit())
				nslots *= 2;
			if (nslots != state1->nslots)
			{
				pfree(state1->slots);
				BloomSetAllocate(state1, nslots);
			}
		}
	}

	/* a set meets a filter (one that outgrew work_mem): the set joins it */
	if (state2->sized && !state1->sized)
		BloomSetToFilter(state1);

	if (state1->sized && state2->sized)
		BloomAggStateSetFilter(state1,
							   BloomCombineInto(aggcxt, state1->filter,
												state2->filter, false));
	else if (state1->sized)
	{
		if (state2->has_zero)
			BloomAggAddToFilter(state1, 0);
		for (i = 0; i < state2->nslots; i++)
		{
			if ((i & 65535) == 0)
				CHECK_FOR_INTERRUPTS();
			if (state2->slots[i] != 0)
				BloomAggAddToFilter(state1, state2->slots[i]);
		}
	}
	else
	{
		if (state1->elemtype != state2->elemtype)
			elog(ERROR, "cannot combine bloom_agg states of types %u and %u",
				 state1->elemtype, state2->elemtype);
		/* state2 is a set, or a list from bloom_agg_deserialfn */
		if (state2->has_zero)
			state1->has_zero = true;
		for (i = 0; i < state2->nslots; i++)
		{
			if ((i & 65535) == 65535)
				CHECK_FOR_INTERRUPTS();
			if (state2->slots[i] != 0)
				BloomSetAdd(state1, state2->slots[i]);
		}
		BloomSetFlush(state1);
	}
	PG_RETURN_POINTER(state1);
}

/*
 * Serial function of the aggregates: the state as bytea, for parallel
 * workers; a set of hashes is sent as the hashes alone.
 */
Datum
bloom_agg_serialfn(PG_FUNCTION_ARGS)
{
	BloomAggState *state = (BloomAggState *) PG_GETARG_POINTER(0);
	StringInfoData buf;
	uint64		i;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_serialfn called in non-aggregate context");

	if (!state->sized)
		BloomSetFlush(state);
	pq_begintypsend(&buf);
	pq_sendbyte(&buf, state->sized ? BLOOM_AGG_SERIAL_FILTER : BLOOM_AGG_SERIAL_SET);
	pq_sendint32(&buf, state->elemtype);
	pq_sendint32(&buf, state->collation);
	if (state->sized)
		pq_sendbytes(&buf, VARDATA_ANY(state->filter),
					 VARSIZE_ANY_EXHDR(state->filter));
	else
	{
		uint64	   *out;
		uint64		n = 0;

		pq_sendbyte(&buf, state->has_zero);
		pq_sendint64(&buf, state->nused);
		enlargeStringInfo(&buf, state->nused * sizeof(uint64));
		out = (uint64 *) (buf.data + buf.len);
		for (i = 0; i < state->nslots; i++)
		{
			if ((i & 65535) == 65535)
				CHECK_FOR_INTERRUPTS();
			if (state->slots[i] != 0)
				memcpy(&out[n++], &state->slots[i], sizeof(uint64));
		}
		Assert(n == state->nused);
		buf.len += n * sizeof(uint64);
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * Deserial function of the aggregates: a state from bloom_agg_serialfn's
 * bytes, in the current memory context.
 */
Datum
bloom_agg_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;
	BloomAggState *state;
	int			kind;
	Oid			elemtype;
	Oid			collation;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_deserialfn called in non-aggregate context");

	/* read in place */
	buf.data = VARDATA_ANY(data);
	buf.len = VARSIZE_ANY_EXHDR(data);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	kind = pq_getmsgbyte(&buf);
	elemtype = pq_getmsgint(&buf, 4);
	collation = pq_getmsgint(&buf, 4);

	if (kind == BLOOM_AGG_SERIAL_FILTER)
	{
		int			len = buf.len - buf.cursor;
		bytea	   *filter = palloc(VARHDRSZ + len);

		SET_VARSIZE(filter, VARHDRSZ + len);
		memcpy(VARDATA(filter), pq_getmsgbytes(&buf, len), len);
		state = BloomAggStateCreate(CurrentMemoryContext, elemtype, collation,
									filter);
	}
	else if (kind == BLOOM_AGG_SERIAL_SET)
	{
		bool		has_zero = pq_getmsgbyte(&buf) != 0;
		uint64		n = pq_getmsgint64(&buf);
		if (n > (uint64) (buf.len - buf.cursor) / sizeof(uint64))
			elog(ERROR, "invalid bloom_agg state: " UINT64_FORMAT " hashes announced",
				 n);

		/*
		 * Only bloom_agg_combinefn reads this state: leave the hashes in a
		 * plain list, which it inserts into its own set.
		 */
		state = MemoryContextAllocZero(CurrentMemoryContext,
									   sizeof(BloomAggState));
		state->cxt = CurrentMemoryContext;
		state->elemtype = elemtype;
		state->collation = collation;
		state->has_zero = has_zero;
		state->slots = palloc(Max(n, 1) * sizeof(uint64));
		memcpy(state->slots, pq_getmsgbytes(&buf, (int) (n * sizeof(uint64))),
			   n * sizeof(uint64));
		state->nslots = n;
		state->nused = n;
	}
	else
		elog(ERROR, "invalid bloom_agg state kind %d", kind);
	pq_getmsgend(&buf);

	PG_RETURN_POINTER(state);
}
