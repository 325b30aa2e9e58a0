/*-------------------------------------------------------------------------
 *
 * filter_blocked.c
 *	  The blocked bloomfilter variant: all the bits of a value in one
 *	  512-bit block, a 64-byte cache line.
 *
 * A probe reads one line where a plain filter's reads k bits anywhere; the
 * price is a higher rate at the same size, as the blocks' loads vary, so a
 * blocked filter is sized by its own model of the rate (BloomBlockedRate).
 * Its layers' sizes are multiples of 512 bits.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/variant/filter_blocked.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "filter_variant.h"
#include "signature.h"

/*
 * Expected false-positive rate of a blocked filter of bits_per_value bits
 * per value and k positions a value: the blocks' loads are Poisson with
 * mean 512 / bits_per_value, and a block of j values answers a false
 * positive with probability (1 - (1 - 1/512)^(k j))^k.
 */
static double
BloomBlockedRate(double bits_per_value, int k)
{
	double		lambda = (double) BLOOM_BLOCK_BITS / bits_per_value;
	double		logp = -lambda;		/* log of Poisson(0) */
	double		rate = 0.0;
	double		q = log1p(-1.0 / BLOOM_BLOCK_BITS);
	int			jmax = (int) (lambda + 12.0 * sqrt(lambda) + 30.0);
	int			j;

	for (j = 0; j <= jmax; j++)
	{
		if (j > 0)
			logp += log(lambda) - log((double) j);
		rate += exp(logp) * pow(-expm1(k * j * q), k);
	}
	return rate;
}

/*
 * Was a blocked filter asked for?
 */
static bool
BloomBlockedChosen(const BloomVariantOptions *opts)
{
	return opts->blocked;
}

/*
 * Bits per value and number of hash functions of a blocked filter at
 * false-positive rate fpr: the least bits per value, over k near the plain
 * filter's k, for which BloomBlockedRate meets fpr.
 */
static void
BloomBlockedBitsPerValue(double fpr, double *per_value, int *nhashes)
{
	double		best = 0;
	int			bestk = 0;
	int			k;
	int			kk;

	if (fpr < 1e-6)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a blocked bloom filter cannot reach false-positive rate %g", fpr),
				 errhint("Use a rate of at least 1e-6 for a blocked filter, or a filter that is not blocked.")));

	BloomPlainBitsPerValue(fpr, per_value, &k);
	for (kk = Max(1, k - 3); kk <= Min(k + 2, BLOOM_FILTER_MAX_NHASHES); kk++)
	{
		double		lo = *per_value,
					hi = *per_value * 4;
		int			iter;

		if (BloomBlockedRate(hi, kk) > fpr)
			continue;
		for (iter = 0; iter < 40; iter++)
		{
			double		mid = (lo + hi) / 2;

			if (BloomBlockedRate(mid, kk) > fpr)
				lo = mid;
			else
				hi = mid;
		}
		if (bestk == 0 || hi < best)
		{
			best = hi;
			bestk = kk;
		}
	}
	if (bestk == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a blocked bloom filter cannot reach false-positive rate %g", fpr),
				 errhint("Use a rate of at least 1e-6 for a blocked filter, or a filter that is not blocked.")));
	*per_value = best;
	*nhashes = bestk;
}

/*
 * Set the bits of hash in its block of a layer.
 */
static void
BloomBlockedSet(uint8 *cells, const BloomFilterLayer *layer, uint64 hash)
{
	BloomSetBitsBlocked(cells, layer->nbits, hash, BLOOM_FILTER_SALT,
						layer->nhashes);
}

/*
 * Is the value of hash in a layer?
 */
static bool
BloomBlockedTest(const uint8 *cells, const BloomFilterLayer *layer,
				 uint64 hash)
{
	return BloomTestBitsBlocked(cells, layer->nbits, hash, BLOOM_FILTER_SALT,
								layer->nhashes);
}

/*
 * Test a batch of values in a layer: each value's block, found once, asked
 * for, then tested.
 */
static int
BloomBlockedTestBatch(const uint8 *cells, const BloomFilterLayer *layer,
					  const uint64 *hashes, int *todo, int ntodo, bool *found)
{
	const uint8 *blocks[BLOOM_PROBE_BATCH];
	int			left = 0;
	int			j;

	for (j = 0; j < ntodo; j++)
	{
		blocks[j] = cells + (BloomBlockStart(hashes[todo[j]], BLOOM_FILTER_SALT,
											 layer->nbits) >> 3);
		BloomPrefetch(blocks[j]);
	}
	for (j = 0; j < ntodo; j++)
	{
		if (BloomTestBlockBits(blocks[j], hashes[todo[j]], BLOOM_FILTER_SALT,
							   layer->nhashes))
			found[todo[j]] = true;
		else
			todo[left++] = todo[j];
	}
	return left;
}

/*
 * Expected false-positive rate of a layer that holds about nvalues values.
 */
static double
BloomBlockedLayerFpr(const BloomFilterLayer *layer, uint64 nset,
					 double nvalues)
{
	return BloomBlockedRate((double) layer->nbits / nvalues, layer->nhashes);
}

const BloomVariantRoutine BloomBlockedVariant = {
	.name = "blocked",
	.flag = BLOOM_VARIANT_BLOCKED,
	.chosen = BloomBlockedChosen,
	.blockbits = BLOOM_BLOCK_BITS,
	.bitspervalue = BloomBlockedBitsPerValue,
	.set = BloomBlockedSet,
	.test = BloomBlockedTest,
	.testbatch = BloomBlockedTestBatch,
	.rate = BloomBlockedLayerFpr,
};
