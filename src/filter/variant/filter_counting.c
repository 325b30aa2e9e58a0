/*-------------------------------------------------------------------------
 *
 * filter_counting.c
 *	  The counting bloomfilter variant: 4-bit counters in place of bits,
 *	  so that values can be removed.
 *
 * Counter c of a layer is in byte c / 2, the low nibble for even c.  A
 * counter stays at BLOOM_COUNTER_MAX once there, so that removing never
 * clears a position another value still needs.  A counting filter has one
 * layer and is neither growing nor blocked.  bloom_remove and bloom_plain,
 * the SQL functions for counting filters, are here.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/variant/filter_counting.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "filter_variant.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloom_remove);
PG_FUNCTION_INFO_V1(bloom_plain);

/*
 * The counter at position pos of a layer.
 */
static inline int
BloomCounter(const uint8 *cells, uint64 pos)
{
	return (cells[pos >> 1] >> ((pos & 1) << 2)) & 0x0F;
}

/*
 * Was a counting filter asked for?
 */
static bool
BloomCountingChosen(const BloomVariantOptions *opts)
{
	return opts->counting;
}

/*
 * Error out if a counting filter is to be growing or blocked too.
 */
static void
BloomCountingCheckFlags(uint16 flags)
{
	if (flags & (BLOOM_VARIANT_GROWING | BLOOM_VARIANT_BLOCKED))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a counting bloom filter can be neither growing nor blocked"),
				 errhint("Create a counting filter with growth 0 and blocked false.")));
}

/*
 * Increment the counters of hash in a layer; they stick at
 * BLOOM_COUNTER_MAX.
 */
static void
BloomCountingSet(uint8 *cells, const BloomFilterLayer *layer, uint64 hash)
{
	BloomProbe	probe;
	int			k = layer->nhashes;

	BloomProbeInit(&probe, hash, BLOOM_FILTER_SALT, layer->nbits);
	while (k-- > 0)
	{
		uint64		pos = BloomProbeNext(&probe);
		int			shift = (pos & 1) << 2;
		int			c = (cells[pos >> 1] >> shift) & 0x0F;

		if (c < BLOOM_COUNTER_MAX)
			cells[pos >> 1] += (uint8) (1 << shift);
	}
}

/*
 * Remove the value of hash from a layer: decrement its counters, except
 * those stuck at the maximum.  Errors out, changing nothing, unless every
 * counter of the value is set.
 */
static void
BloomCountingRemove(uint8 *cells, const BloomFilterLayer *layer, uint64 hash)
{
	uint64		pos[BLOOM_FILTER_MAX_NHASHES];
	BloomProbe	probe;
	int			k = layer->nhashes;
	int			nshort;
	int			i;
	int			j;

	BloomProbeInit(&probe, hash, BLOOM_FILTER_SALT, layer->nbits);
	for (i = 0; i < k; i++)
		pos[i] = BloomProbeNext(&probe);

	/* a position probed n times was incremented n times */
	nshort = 0;
	for (i = 0; i < k; i++)
	{
		int			c = BloomCounter(cells, pos[i]);
		int			times = 0;

		for (j = 0; j < k; j++)
			times += (pos[j] == pos[i]);
		if (c < BLOOM_COUNTER_MAX && c < times)
			nshort++;
	}
	if (nshort > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot remove a value that is not in the counting bloom filter"),
				 errdetail_plural("%d of its %d counters is too low.",
								  "%d of its %d counters are too low.",
								  nshort, nshort, k),
				 errhint("Remove only values that were added, once for each time they were added.")));
	for (i = 0; i < k; i++)
	{
		int			shift = (pos[i] & 1) << 2;
		int			c = (cells[pos[i] >> 1] >> shift) & 0x0F;

		if (c < BLOOM_COUNTER_MAX)
			cells[pos[i] >> 1] -= (uint8) (1 << shift);
	}
}

/*
 * Is the value of hash in a layer (all its counters nonzero)?
 */
static bool
BloomCountingTest(const uint8 *cells, const BloomFilterLayer *layer,
				  uint64 hash)
{
	BloomProbe	probe;
	int			k = layer->nhashes;

	BloomProbeInit(&probe, hash, BLOOM_FILTER_SALT, layer->nbits);
	while (k-- > 0)
	{
		if (BloomCounter(cells, BloomProbeNext(&probe)) == 0)
			return false;
	}
	return true;
}

/*
 * Test a batch of values in a layer: first a prefetch of the line of every
 * counter the probes will read, then the probes.
 */
static int
BloomCountingTestBatch(const uint8 *cells, const BloomFilterLayer *layer,
					   const uint64 *hashes, int *todo, int ntodo, bool *found)
{
	int			left = 0;
	int			j;

	for (j = 0; j < ntodo; j++)
	{
		BloomProbe	probe;
		int			k = layer->nhashes;

		BloomProbeInit(&probe, hashes[todo[j]], BLOOM_FILTER_SALT, layer->nbits);
		while (k-- > 0)
			BloomPrefetch(cells + (BloomProbeNext(&probe) >> 1));
	}
	for (j = 0; j < ntodo; j++)
	{
		if (BloomCountingTest(cells, layer, hashes[todo[j]]))
			found[todo[j]] = true;
		else
			todo[left++] = todo[j];
	}
	return left;
}

/*
 * Combine the counters of src into dst: saturating addition (union) or
 * minimum (intersection).
 */
static void
BloomCountingCombine(uint8 *dst, const uint8 *src, size_t nbytes,
					 bool intersect)
{
	size_t		i;

	for (i = 0; i < nbytes; i++)
	{
		int			lo1 = dst[i] & 0x0F,
					hi1 = dst[i] >> 4,
					lo2 = src[i] & 0x0F,
					hi2 = src[i] >> 4;
		int			lo,
					hi;

		if ((i & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		if (intersect)
		{
			lo = Min(lo1, lo2);
			hi = Min(hi1, hi2);
		}
		else
		{
			lo = Min(lo1 + lo2, BLOOM_COUNTER_MAX);
			hi = Min(hi1 + hi2, BLOOM_COUNTER_MAX);
		}
		dst[i] = (uint8) (lo | (hi << 4));
	}
}

/*
 * Set in bits the bit of every nonzero counter of a layer.
 */
static void
BloomCountingToPlain(const uint8 *cells, const BloomFilterLayer *layer,
					 uint8 *bits)
{
	uint64		p;

	for (p = 0; p < layer->nbits; p++)
	{
		if ((p & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (BloomCounter(cells, p))
			BloomSetBit(bits, p);
	}
}

/*
 * Nonzero counters of a layer.
 */
static uint64
BloomCountingCountSet(const uint8 *cells, size_t nbytes)
{
	uint64		nset = 0;
	size_t		b;

	for (b = 0; b < nbytes; b++)
	{
		if ((b & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		nset += ((cells[b] & 0x0F) != 0) + ((cells[b] >> 4) != 0);
	}
	return nset;
}

const BloomVariantRoutine BloomCountingVariant = {
	.name = "counting",
	.flag = BLOOM_VARIANT_COUNTING,
	.chosen = BloomCountingChosen,
	.checkflags = BloomCountingCheckFlags,
	.cellbits = 4,
	.set = BloomCountingSet,
	.remove = BloomCountingRemove,
	.test = BloomCountingTest,
	.testbatch = BloomCountingTestBatch,
	.combine = BloomCountingCombine,
	.toplain = BloomCountingToPlain,
	.countset = BloomCountingCountSet,
};

/*
 * bloom_remove(filter, value): a copy of a counting filter with the value
 * removed.
 */
Datum
bloom_remove(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	BloomFilterData f;
	bytea	   *out;

	BloomFilterOpen(PG_GETARG_BYTEA_PP(0), &f);
	BloomCheckSecret(&f.hdr, NULL);
	if (!BloomVariantCanRemove(f.hdr.flags))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot remove a value from a %s bloom filter",
						BloomVariantName(f.hdr.flags)),
				 errhint("Only counting filters, created with bloom_empty(..., counting => true), can forget values.")));
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f.hdr, cache->hashing);
	if (f.hdr.elemtype == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot remove a value that is not in the counting bloom filter"),
				 errdetail("The filter is empty."),
				 errhint("Remove only values that were added, once for each time they were added.")));

	out = BloomFilterCopy(CurrentMemoryContext, f.datum);
	BloomFilterOpen(out, &f);
	BloomFilterRemoveHash(&f, BloomValueHash(cache, f.hdr.hash_scheme,
										  PG_GETARG_DATUM(1)));
	PG_RETURN_BYTEA_P(out);
}

/*
 * bloom_plain(filter): a plain filter with the same answers.  A counting
 * filter gives the filter of its nonzero counters, of the same shape; a
 * plain filter is returned as it is.
 */
Datum
bloom_plain(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	BloomFilterData f;
	BloomFilterData r;
	BloomFilterHeader hdr;
	bytea	   *out;
	const BloomVariantRoutine *v;

	BloomFilterOpen(in, &f);
	if (f.hdr.flags == 0)
		PG_RETURN_BYTEA_P(in);
	v = BloomGetVariant(f.hdr.flags);
	if (v->toplain == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot convert a %s bloom filter to a plain one",
						BloomVariantName(f.hdr.flags)),
				 errhint("Only counting filters convert to plain filters.")));

	hdr = f.hdr;
	hdr.version = BLOOM_FILTER_FORMAT_VERSION;
	hdr.flags = 0;
	out = BloomFilterAllocate(CurrentMemoryContext, &hdr);
	BloomFilterOpen(out, &r);
	v->toplain(f.data + f.hdr.layers[0].offset, &f.hdr.layers[0], r.bits);
	PG_RETURN_BYTEA_P(out);
}
