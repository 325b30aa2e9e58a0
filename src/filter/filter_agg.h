/*-------------------------------------------------------------------------
 *
 * filter_agg.h
 *	  The transition state of bloom_agg and bloom_union_agg, shared by the
 *	  aggregates' functions (filter_agg.c) and their combine, serial and
 *	  deserial functions (filter_agg_combine.c).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_agg.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_FILTER_AGG_H
#define BLOOMIDX_FILTER_AGG_H

#include "filter_variant.h"

/* Initial number of slots of bloom_agg's hash set; a power of two */
#define BLOOM_SET_INITIAL_SLOTS	1024

/* Most bytes of bloom_agg's hash set, whatever work_mem is (BloomSetLimit) */
#define BLOOM_SET_MAX_BYTES		((Size) 256 * 1024 * 1024)

/* Growth factor of the filter a hash set turns into beyond work_mem */
#define BLOOM_SET_OVERFLOW_GROWTH	2

/* Hashes bloom_agg buffers to insert together, prefetching their slots */
#define BLOOM_SET_BATCH			64
#define BLOOM_SET_PREFETCH		8

/* Transition state of bloom_agg and bloom_union_agg */
typedef struct BloomAggState
{
	Oid			elemtype;		/* 0 for bloom_union_agg of untyped filters */
	Oid			collation;
	bool		sized;			/* a filter (true) or a set of hashes */
	/* sized: the filter, in the aggregate context, and its shape */
	bytea	   *filter;
	uint8	   *bits;
	uint64		nbits;
	int			nhashes;
	/*
	 * not sized: open-addressing set of nonzero hashes, and the zero hash;
	 * after bloom_agg_deserialfn, slots is a plain list of nslots hashes
	 */
	uint64	   *slots;
	uint64		nslots;
	uint64		nused;
	uint64		grow_at;
	int			shift;
	bool		has_zero;
	int			nbuffered;		/* hashes in buffered, not yet in slots */
	uint64		buffered[BLOOM_SET_BATCH];
	MemoryContext cxt;
} BloomAggState;

/* filter_agg.c */
extern void BloomSetAllocate(BloomAggState *state, uint64 nslots);
extern Size BloomSetLimit(void);
extern void BloomSetToFilter(BloomAggState *state);
extern void BloomSetFlush(BloomAggState *state);
extern void BloomAggStateSetFilter(BloomAggState *state, bytea *filter);
extern void BloomAggAddToFilter(BloomAggState *state, uint64 hash);
extern BloomAggState *BloomAggStateCreate(MemoryContext cxt, Oid elemtype,
										  Oid collation, bytea *filter);
extern MemoryContext BloomAggContext(FunctionCallInfo fcinfo, const char *fname);

/*
 * Add a hash to an aggregate state's set, through the batch buffer.
 */
static inline void
BloomSetAdd(BloomAggState *state, uint64 hash)
{
	state->buffered[state->nbuffered++] = hash;
	if (state->nbuffered == BLOOM_SET_BATCH)
		BloomSetFlush(state);
}

#endif							/* BLOOMIDX_FILTER_AGG_H */
