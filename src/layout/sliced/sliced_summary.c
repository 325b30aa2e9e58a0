/*-------------------------------------------------------------------------
 *
 * sliced_summary.c
 *	  Stripe summaries of the sliced layout: the per-column keys of a row,
 *	  the split-block bloom filter that holds a stripe's keys of a column,
 *	  and its sizing (see src/README, "Stripe summaries").
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_summary.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "page.h"
#include "sliced.h"

/* Apache Parquet's eight odd salts of the split-block bloom filter */
static const uint32 BloomSummarySalt[BLOOMIDX_SUMMARY_BLOCK_WORDS] = {
	0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
	0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U
};

/*
 * The summary key of a column's value: 32 bits of the column's hash
 * (BLOOM_NULL_HASH for a NULL), salted by the column as the signature's
 * probes are, so that equal values of two columns give unrelated keys.
 */
uint32
BloomSummaryKey(uint64 columnHash, int col)
{
	return (uint32) (BloomMix64(columnHash + ((uint64) col + 1) *
								BLOOM_SALT_MULTIPLIER) >> 32);
}

/*
 * The summary keys of one row, one per column (0 for a column of sets,
 * which has no summary).
 */
void
BloomFormSummaryKeys(BloomState state, Datum *values, bool *isnull,
					 uint32 *keys)
{
	int			i;

	for (i = 0; i < state->shape.nColumns; i++)
	{
		uint64		hash;

		if ((state->shape.setColumns & (1U << i)) != 0)
		{
			keys[i] = 0;
			continue;
		}
		hash = isnull[i] ? BLOOM_NULL_HASH :
			BloomHashDatum(&state->hashFn[i], state->collations[i], values[i]);
		keys[i] = BloomSummaryKey(hash, i);
	}
}

/*
 * The block of a column's summary, of nblocks blocks, that holds a key:
 * the high half of a product, of a remix of the key (the bits within a
 * block come from the key's own products, so the block must not).
 */
static inline int
BloomSummaryBlockOf(uint32 key, int nblocks)
{
	uint32		x = key;

	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	x ^= x >> 16;
	return (int) (((uint64) x * (uint64) nblocks) >> 32);
}

/* Add a key to a column's summary of nblocks blocks */
void
BloomSummaryAdd(uint32 *blocks, int nblocks, uint32 key)
{
	uint32	   *block = blocks + (Size) BloomSummaryBlockOf(key, nblocks) *
		BLOOMIDX_SUMMARY_BLOCK_WORDS;
	int			i;

	for (i = 0; i < BLOOMIDX_SUMMARY_BLOCK_WORDS; i++)
		block[i] |= ((uint32) 1) << ((key * BloomSummarySalt[i]) >> 27);
}

/*
 * May a column's summary of nblocks blocks hold a key?  False only if no
 * key added to it was this one.
 */
bool
BloomSummaryTest(const uint32 *blocks, int nblocks, uint32 key)
{
	const uint32 *block = blocks + (Size) BloomSummaryBlockOf(key, nblocks) *
		BLOOMIDX_SUMMARY_BLOCK_WORDS;
	int			i;

	for (i = 0; i < BLOOMIDX_SUMMARY_BLOCK_WORDS; i++)
		if ((block[i] & (((uint32) 1) << ((key * BloomSummarySalt[i]) >> 27))) == 0)
			return false;
	return true;
}

/*
 * The block of a column's summary of nblocks blocks that a key tests, for
 * a scan that reads only that block's page (BloomSummaryTestBlock).
 */
int
BloomSummaryBlockFor(uint32 key, int nblocks)
{
	return BloomSummaryBlockOf(key, nblocks);
}

/* May one block (the one BloomSummaryBlockFor gave) hold a key? */
bool
BloomSummaryTestBlock(const uint32 *block, uint32 key)
{
	int			i;

	for (i = 0; i < BLOOMIDX_SUMMARY_BLOCK_WORDS; i++)
		if ((block[i] & (((uint32) 1) << ((key * BloomSummarySalt[i]) >> 27))) == 0)
			return false;
	return true;
}

/*
 * Blocks a column's summary gets for ndistinct keys at bitsPerKey bits a
 * key: at least one, at most BLOOMIDX_SUMMARY_MAX_BLOCKS.
 */
int
BloomSummaryBlocksFor(double ndistinct, int bitsPerKey)
{
	double		blocks = ceil(ndistinct * bitsPerKey /
							  (BLOOMIDX_SUMMARY_BLOCK_WORDS * 32));

	if (blocks < 1)
		return 1;
	if (blocks > BLOOMIDX_SUMMARY_MAX_BLOCKS)
		return BLOOMIDX_SUMMARY_MAX_BLOCKS;
	return (int) blocks;
}

/* An in-place sort of keys (lib/sort_template.h) */
#define ST_SORT bloom_sort_keys
#define ST_ELEMENT_TYPE uint32
#define ST_COMPARE(a, b) ((*(a) > *(b)) - (*(a) < *(b)))
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Distinct keys of column col among n rows' keys (nColumns a row), for
 * sizing a stripe's summary; scratch holds n keys.
 */
int
BloomSummaryCountDistinct(const uint32 *keys, int n, int nColumns, int col,
						  uint32 *scratch)
{
	int			nd = 0;
	int			i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		scratch[i] = keys[(Size) i * nColumns + col];
	bloom_sort_keys(scratch, n);
	nd = 1;
	for (i = 1; i < n; i++)
		if (scratch[i] != scratch[i - 1])
			nd++;
	return nd;
}

/*
 * Size a stripe's summary from its rows' keys (nrows rows of nColumns
 * keys): each column of an equality class gets blocks for its distinct
 * keys at bitsPerKey bits a key, all of them within
 * BLOOMIDX_SUMMARY_MAX_PAGES pages; a column of sets none.  scratch holds
 * nrows keys.
 */
void
BloomSummarySizeBlocks(const BloomShape *shape, int bitsPerKey,
					   const uint32 *keys, int nrows, uint16 *blocks,
					   uint32 *scratch)
{
	int			limit = BLOOMIDX_SUMMARY_MAX_PAGES * BLOOMIDX_SUMMARY_PAGE_BLOCKS;
	int			total = 0;
	int			c;

	for (c = 0; c < shape->nColumns; c++)
	{
		if ((shape->setColumns & (1U << c)) != 0)
			blocks[c] = 0;
		else
			blocks[c] = BloomSummaryBlocksFor(BloomSummaryCountDistinct(keys, nrows,
																		shape->nColumns,
																		c, scratch),
											  bitsPerKey);
		total += blocks[c];
	}
	if (total > limit)
	{
		for (c = 0; c < shape->nColumns; c++)
			if (blocks[c] > 0)
				blocks[c] = Max(1, (int) ((double) blocks[c] * limit / total) - 1);
	}
}

/* Blocks of a stripe's summary, over its columns */
int
BloomSummaryTotalBlocks(const uint16 *blocks, int nColumns)
{
	int			total = 0;
	int			c;

	for (c = 0; c < nColumns; c++)
		total += blocks[c];
	return total;
}

/* The first block of column col in a stripe's summary */
int
BloomSummaryColumnStart(const uint16 *blocks, int col)
{
	return BloomSummaryTotalBlocks(blocks, col);
}

/*
 * Add the keys of nrows rows to a stripe's summary, words holding its
 * blocks one after another (BLOOMIDX_SUMMARY_BLOCK_WORDS words each).
 */
void
BloomSummaryFill(const uint16 *blocks, int nColumns, const uint32 *keys,
				 int nrows, uint32 *words)
{
	int			start = 0;
	int			c,
				r;

	for (c = 0; c < nColumns; c++)
	{
		uint32	   *col = words + (Size) start * BLOOMIDX_SUMMARY_BLOCK_WORDS;

		if (blocks[c] > 0)
			for (r = 0; r < nrows; r++)
				BloomSummaryAdd(col, blocks[c], keys[(Size) r * nColumns + c]);
		start += blocks[c];
	}
}

/*
 * What the cost model needs of an index's summaries, from its metapage:
 * the bits a key, the stripes listed and those of them with a complete
 * summary, the blocks per column of a stripe as the build sized them.
 */
void
BloomSlicedSummaryInfo(Relation index, BloomSummaryInfoData *info)
{
	Buffer		metabuf;
	BloomMetaPage meta;
	BloomSlicedSummaryMetaData *sm;
	uint32		firstStripe,
				nStripes;
	double		total = 0;
	int			c;

	memset(info, 0, sizeof(BloomSummaryInfoData));
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	if (meta->version >= BLOOMIDX_FORMAT_SUMMARIES &&
		meta->layout == BLOOMIDX_LAYOUT_SLICED)
	{
		sm = BloomSlicedSummaryMeta(meta);
		firstStripe = BloomSlicedMeta(meta)->firstStripe;
		nStripes = BloomSlicedMeta(meta)->nStripes;
		info->bitsPerKey = sm->bitsPerKey;
		info->stripes = nStripes - firstStripe;
		info->completeStripes = sm->completeBelow > firstStripe ?
			Min(sm->completeBelow, nStripes) - firstStripe : 0;
		for (c = 0; c < meta->nColumns && c < BLOOMIDX_MAX_COLUMNS; c++)
		{
			info->meanBlocks[c] = sm->blocks[c];
			total += sm->blocks[c];
		}
		info->summaryPages = info->stripes *
			ceil(total / BLOOMIDX_SUMMARY_PAGE_BLOCKS);
	}
	UnlockReleaseBuffer(metabuf);
}
