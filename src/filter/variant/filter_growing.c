/*-------------------------------------------------------------------------
 *
 * filter_growing.c
 *	  The growing (scalable) bloomfilter variant: a layer added whenever the
 *	  last one is full, so that a filter holds more values than it was
 *	  sized for.
 *
 * Growing filters follow Almeida et al., "Scalable Bloom Filters" (2007):
 * layer i holds capacity * growth^i values at rate p0 * r^i, where p0 =
 * p * (1 - r), so that the rates of all the layers sum to at most the
 * target p however many layers are added.  A value already in the filter
 * is not added again (as RedisBloom does), so duplicates do not fill it.
 * The layers' cells are those of the filter's other variants (plain or
 * blocked).  The transition of bloom_agg(value, capacity,
 * false_positive_rate, growth), which fills a growing filter, is here.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/variant/filter_growing.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "filter_variant.h"

PG_FUNCTION_INFO_V1(bloom_agg_growing_transfn);

/* Ratio r of the rates of successive layers of a growing filter */
#define BLOOM_GROWING_TIGHTENING	0.8

/*
 * Was a growing filter asked for?  Errors out on a growth out of range.
 */
static bool
BloomGrowingChosen(const BloomVariantOptions *opts)
{
	if (opts->growth < 0 || opts->growth > BLOOM_FILTER_MAX_GROWTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("growth must be between 0 and %d", BLOOM_FILTER_MAX_GROWTH),
				 errhint("Use 0 for a filter of a fixed size, or a growth factor between 1 and %d, such as 2.",
						 BLOOM_FILTER_MAX_GROWTH)));
	return opts->growth > 0;
}

/*
 * The growth factor and tightening ratio of a new growing filter.
 */
static void
BloomGrowingInitHeader(BloomFilterHeader *hdr, const BloomVariantOptions *opts)
{
	hdr->growth = opts->growth;
	hdr->tightening = BLOOM_GROWING_TIGHTENING;
}

/*
 * Capacity of layer i of a growing filter: capacity * growth^i, capped at
 * 2^40 (more than any filter of 256 MB holds).
 */
static uint64
BloomLayerCapacity(const BloomFilterHeader *hdr, int i)
{
	uint64		cap = hdr->capacity;

	while (i-- > 0 && cap < (UINT64CONST(1) << 40))
		cap *= hdr->growth;
	return Min(cap, UINT64CONST(1) << 40);
}

/*
 * Target rate of layer i of a growing filter: p * (1 - r) * r^i.
 */
static double
BloomGrowingLayerRate(const BloomFilterHeader *hdr, int i)
{
	return hdr->target_fpr * (1.0 - hdr->tightening) * pow(hdr->tightening, i);
}

/*
 * Values added to a growing filter (the sum of its layers' counts).
 */
static uint64
BloomFilterValues(const BloomFilterHeader *hdr)
{
	uint64		n = 0;
	uint32		i;

	for (i = 0; i < hdr->nlayers; i++)
		n += hdr->layers[i].count;
	return n;
}

/*
 * Write the count of layer i into the filter's layer table.
 */
static void
BloomStoreLayerCount(BloomFilterData *f, int i)
{
	uint8	   *p = f->data + f->hdr.bits_offset -
		(size_t) (f->hdr.nlayers - i) * BLOOM_FILTER_LAYER_SIZE + 16;
	uint64		v = f->hdr.layers[i].count;
	int			b;

	for (b = 0; b < 8; b++)
		p[b] = (uint8) (v >> (8 * b));
}

/*
 * A copy of a growing filter in cxt with one more, empty layer, sized with
 * the filter's routines v.
 */
static bytea *
BloomAddLayer(MemoryContext cxt, const BloomFilterData *f,
			  const BloomVariantRoutine *v)
{
	BloomFilterHeader hdr = f->hdr;
	BloomFilterLayer *layer;
	uint64		nbits;
	int			nhashes;
	bytea	   *result;
	uint32		i;

	if (hdr.nlayers >= BLOOM_FILTER_MAX_LAYERS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("growing bloom filter cannot have more than %d layers",
						BLOOM_FILTER_MAX_LAYERS),
				 errhint("Create the filter with a larger capacity or growth factor.")));
	BloomChooseSizeFor(BloomLayerCapacity(&hdr, hdr.nlayers),
					   BloomGrowingLayerRate(&hdr, hdr.nlayers), v,
					   &nbits, &nhashes);
	layer = &hdr.layers[hdr.nlayers++];
	layer->nbits = nbits;
	layer->nhashes = nhashes;
	layer->count = 0;
	BloomFilterLayoutLayers(&hdr);
	if (hdr.nbytes > BLOOM_FILTER_NBYTES(BLOOM_FILTER_MAX_NBITS))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("growing bloom filter cannot grow beyond 256 MB"),
				 errdetail("It holds " UINT64_FORMAT " values in %u layers.",
						   BloomFilterValues(&f->hdr), f->hdr.nlayers),
				 errhint("Create the filter with a larger false-positive rate, or split the values over several filters.")));

	result = BloomFilterAllocate(cxt, &hdr);
	for (i = 0; i < f->hdr.nlayers; i++)
		memcpy((uint8 *) VARDATA(result) + hdr.layers[i].offset,
			   f->data + f->hdr.layers[i].offset, f->hdr.layers[i].nbytes);
	return result;
}

/*
 * Add the value of hash to a growing filter, unless some layer has it
 * already: into the last layer, or into a new one if the last is full.
 */
static bytea *
BloomGrowingAdd(MemoryContext cxt, BloomFilterData *f,
				const BloomVariantRoutine *v, uint64 hash)
{
	uint32		last;
	uint32		i;

	/* a value already in the filter does not take room in a layer */
	if (f->hdr.elemtype != 0)
	{
		for (i = 0; i < f->hdr.nlayers; i++)
		{
			if (v->test(f->data + f->hdr.layers[i].offset, &f->hdr.layers[i],
						hash))
				return f->datum;
		}
	}
	last = f->hdr.nlayers - 1;
	if (f->hdr.layers[last].count >= BloomLayerCapacity(&f->hdr, last))
	{
		BloomFilterOpen(BloomAddLayer(cxt, f, v), f);
		last++;
	}
	v->set(f->data + f->hdr.layers[last].offset, &f->hdr.layers[last], hash);
	f->hdr.layers[last].count++;
	BloomStoreLayerCount(f, last);
	return f->datum;
}

/*
 * Error out unless two growing filters were created with the same
 * parameters, and are not to be intersected.
 */
static void
BloomGrowingCheckCombine(const BloomFilterHeader *a, const BloomFilterHeader *b,
						 bool intersect)
{
	if (a->growth != b->growth || a->tightening != b->tightening ||
		a->capacity != b->capacity || a->target_fpr != b->target_fpr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine growing bloom filters created with different parameters"),
				 errhint("Combine growing filters created with the same capacity, false-positive rate and growth.")));
	if (intersect)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot intersect growing bloom filters"),
				 errdetail("A value may be in different layers of the two filters."),
				 errhint("Intersect filters of a fixed size.")));
}

const BloomVariantRoutine BloomGrowingVariant = {
	.name = "growing",
	.flag = BLOOM_VARIANT_GROWING,
	.chosen = BloomGrowingChosen,
	.initheader = BloomGrowingInitHeader,
	.layerrate = BloomGrowingLayerRate,
	.checkcombine = BloomGrowingCheckCombine,
	.add = BloomGrowingAdd,
};

/*
 * An empty growing filter of the element type, from the arguments capacity,
 * rate and growth of bloom_agg.
 */
static bytea *
BloomAggMakeGrowing(FunctionCallInfo fcinfo, BloomFnCache *cache)
{
	BloomFilterHeader hdr;
	BloomVariantOptions opts = {0};

	opts.growth = PG_GETARG_INT32(4);
	BloomHeaderInitVariant(&hdr, PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3),
						   &opts);
	BloomHeaderSetType(&hdr, cache->elemtype, cache->hashing);
	return BloomFilterAllocate(CurrentMemoryContext, &hdr);
}

/*
 * bloom_agg(value, capacity, false_positive_rate, growth) transition: add
 * the value to a growing filter.  The aggregate has no combine function: a
 * growing filter's layers depend on the order values came in, and filters
 * built apart merge only layer by layer, above their target rate.
 */
Datum
bloom_agg_growing_transfn(PG_FUNCTION_ARGS)
{
	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_growing_transfn called in non-aggregate context");
	if (PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("capacity, false_positive_rate and growth of bloom_agg must not be null"),
				 errhint("Omit all three to size the filter for the distinct values seen.")));
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	return BloomAggAddValue(fcinfo, BloomAggMakeGrowing, false);
}
