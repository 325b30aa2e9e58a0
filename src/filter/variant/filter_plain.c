/*-------------------------------------------------------------------------
 *
 * filter_plain.c
 *	  The plain bloomfilter variant: one layer of bits, k of them a value
 *	  anywhere in the layer.  The other variants take from it what they do
 *	  not change (filter_variant.h).  bloom_fold, which folds plain filters
 *	  only, is here.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/variant/filter_plain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "miscadmin.h"

#include "filter_variant.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloom_fold);

/*
 * Bits per value and number of hash functions of a plain filter at
 * false-positive rate fpr: k near log2(1/p), which minimizes m, and then
 * the m that makes (1-e^(-kn/m))^k = p.
 */
void
BloomPlainBitsPerValue(double fpr, double *per_value, int *nhashes)
{
	double		k = rint(-log2(fpr));

	k = Max(k, 1);
	k = Min(k, BLOOM_FILTER_MAX_NHASHES);
	*per_value = -k / log1p(-pow(fpr, 1.0 / k));
	*nhashes = (int) k;
}

/*
 * Target rate of a layer: the filter's.
 */
static double
BloomPlainLayerRate(const BloomFilterHeader *hdr, int i)
{
	return hdr->target_fpr;
}

/*
 * Set the k bits of hash in a layer.
 */
static void
BloomPlainSet(uint8 *cells, const BloomFilterLayer *layer, uint64 hash)
{
	BloomSetBits(cells, layer->nbits, hash, BLOOM_FILTER_SALT, layer->nhashes);
}

/*
 * Is the value of hash in a layer?
 */
static bool
BloomPlainTest(const uint8 *cells, const BloomFilterLayer *layer, uint64 hash)
{
	return BloomTestBits(cells, layer->nbits, hash, BLOOM_FILTER_SALT,
						 layer->nhashes);
}

/*
 * Test a batch of values in a layer: first a prefetch of the line of every
 * bit the probes will read, then the probes, so that their cache misses
 * overlap rather than follow one another.
 */
static int
BloomPlainTestBatch(const uint8 *cells, const BloomFilterLayer *layer,
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
			BloomPrefetch(cells + (BloomProbeNext(&probe) >> 3));
	}
	for (j = 0; j < ntodo; j++)
	{
		if (BloomPlainTest(cells, layer, hashes[todo[j]]))
			found[todo[j]] = true;
		else
			todo[left++] = todo[j];
	}
	return left;
}

/*
 * Combine the bits of src into dst: OR or AND.
 */
static void
BloomPlainCombine(uint8 *dst, const uint8 *src, size_t nbytes, bool intersect)
{
	size_t		i;

	if (intersect)
		for (i = 0; i < nbytes; i++)
			dst[i] &= src[i];
	else
		for (i = 0; i < nbytes; i++)
			dst[i] |= src[i];
}

/*
 * Bits set in a layer.
 */
static uint64
BloomPlainCountSet(const uint8 *cells, size_t nbytes)
{
	return BloomCountBits(cells, nbytes);
}

/*
 * Expected false-positive rate of a layer of which nset bits are set.
 */
static double
BloomPlainRate(const BloomFilterLayer *layer, uint64 nset, double nvalues)
{
	return BloomFalsePositiveRate((double) nset / layer->nbits, layer->nhashes);
}

const BloomVariantRoutine BloomPlainVariant = {
	.name = "plain",
	.flag = 0,
	.layerrate = BloomPlainLayerRate,
	.cellbits = 1,
	.blockbits = 1,
	.bitspervalue = BloomPlainBitsPerValue,
	.set = BloomPlainSet,
	.test = BloomPlainTest,
	.testbatch = BloomPlainTestBatch,
	.combine = BloomPlainCombine,
	.countset = BloomPlainCountSet,
	.rate = BloomPlainRate,
};

/*
 * bloom_fold(filter, factor): a plain filter folded to nbits / factor bits.
 *
 * A value's positions are multiply-shift images of 64-bit numbers onto
 * [0, m), and the image onto [0, m / f) of the same number is the image
 * onto [0, m) divided by f (when f divides m): so bit p of the folded
 * filter is the OR of bits p * f .. p * f + f - 1, and the folded filter
 * holds every value the original held.  Its fill is about 1 - (1 - fill)^f,
 * so its rate rises; capacity and target rate no longer describe it and
 * are cleared (bloom_info reports the expected rate).
 */
Datum
bloom_fold(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	int32		factor = PG_GETARG_INT32(1);
	BloomFilterData f;
	BloomFilterData r;
	BloomFilterHeader hdr;
	bytea	   *out;
	uint64		p;

	BloomFilterOpen(in, &f);
	if (f.hdr.flags != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot fold a %s bloom filter", BloomVariantName(f.hdr.flags)),
				 errhint("Only plain filters can be folded.")));
	if (factor < 1 || (factor & (factor - 1)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fold factor must be a power of two"),
				 errhint("Use 1, 2, 4, 8 or another power of two that divides the filter's " UINT64_FORMAT " bits.",
						 f.hdr.nbits)));
	if (f.hdr.nbits % factor != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot fold a bloom filter of " UINT64_FORMAT " bits by %d",
						f.hdr.nbits, factor),
				 errdetail("The factor must divide the number of bits."),
				 errhint("Fold by a power of two that divides " UINT64_FORMAT ", or create the filters with bloom_empty_raw and a number of bits divisible by the factors to come.",
						 f.hdr.nbits)));
	if (factor == 1)
		PG_RETURN_BYTEA_P(in);

	hdr = f.hdr;
	hdr.nbits = f.hdr.nbits / factor;
	hdr.layers[0].nbits = hdr.nbits;
	hdr.capacity = 0;
	hdr.target_fpr = 0;
	out = BloomFilterAllocate(CurrentMemoryContext, &hdr);
	BloomFilterOpen(out, &r);
	for (p = 0; p < f.hdr.nbits; p++)
	{
		if ((p & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (BloomTestBit(f.bits, p))
			BloomSetBit(r.bits, p / factor);
	}
	PG_RETURN_BYTEA_P(out);
}
