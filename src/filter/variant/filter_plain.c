/*-------------------------------------------------------------------------
 *
 * filter_plain.c
 *	  The plain bloomfilter variant: one layer of bits, k of them a value
 *	  anywhere in the layer.  The other variants take from it what they do
 *	  not change (filter_variant.h).
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

#include "filter_variant.h"
#include "signature.h"

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
