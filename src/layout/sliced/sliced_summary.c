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
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "utils/hsearch.h"
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
	return (uint32) (BloomColumnMix(columnHash, col) >> 32);
}

/*
 * The summary keys of one row from its columns' salted mixes, as
 * BloomFormSignatureWordsMixed gives them with the row's signature (the
 * key is the mix's high half): what BloomFormSummaryKeys gives, without
 * hashing the values again.
 */
void
BloomSummaryKeysFromMixed(const BloomShape *shape, const uint64 *mixed,
						  uint32 *keys)
{
	int			i;

	if (shape->setColumns == 0)
	{
		for (i = 0; i < shape->nColumns; i++)
			keys[i] = (uint32) (mixed[i] >> 32);
		return;
	}
	for (i = 0; i < shape->nColumns; i++)
		keys[i] = (shape->setColumns & (1U << i)) != 0 ? 0 :
			(uint32) (mixed[i] >> 32);
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

#ifdef __SSE2__
/*
 * The bits four words of a block get from a key broadcast in k, their
 * salts in the even and odd lanes of even and odd: the products' low 32
 * bits (two 32 x 32 -> 64-bit multiplies), shifted right by 27 to n, then
 * 1 << n as the float 2^n (exponent n + 127) truncated back to an integer:
 * exact for n up to 30, and 2^31, out of range, gives 0x80000000, which is
 * 1 << 31.
 */
static inline __m128i
BloomSummaryBits4(__m128i k, __m128i even, __m128i odd)
{
	__m128i		pe = _mm_mul_epu32(k, even);
	__m128i		po = _mm_mul_epu32(k, odd);
	__m128i		p = _mm_unpacklo_epi32(_mm_shuffle_epi32(pe, _MM_SHUFFLE(0, 0, 2, 0)),
									   _mm_shuffle_epi32(po, _MM_SHUFFLE(0, 0, 2, 0)));
	__m128i		n = _mm_srli_epi32(p, 27);

	return _mm_cvttps_epi32(_mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)),
														23)));
}
#endif

/*
 * Add a key to a column's summary of nblocks blocks: one bit in each word
 * of its block (a build adds a key per row and column): with SSE2, four
 * words at a time; else the words written out, each salt a constant.
 */
static inline void
BloomSummaryAddKey(uint32 *blocks, int nblocks, uint32 key)
{
	uint32	   *block = blocks + (Size) BloomSummaryBlockOf(key, nblocks) *
		BLOOMIDX_SUMMARY_BLOCK_WORDS;

	StaticAssertStmt(BLOOMIDX_SUMMARY_BLOCK_WORDS == 8,
					 "a summary block is not eight words");
#ifdef __SSE2__
	{
		__m128i		k = _mm_set1_epi32((int) key);
		__m128i    *half = (__m128i *) block;

#define BLOOM_SUMMARY_SALTS(a, b) \
	_mm_set_epi32(0, (int) BloomSummarySalt[b], 0, (int) BloomSummarySalt[a])
		_mm_storeu_si128(half,
						 _mm_or_si128(_mm_loadu_si128(half),
									  BloomSummaryBits4(k, BLOOM_SUMMARY_SALTS(0, 2),
														BLOOM_SUMMARY_SALTS(1, 3))));
		_mm_storeu_si128(half + 1,
						 _mm_or_si128(_mm_loadu_si128(half + 1),
									  BloomSummaryBits4(k, BLOOM_SUMMARY_SALTS(4, 6),
														BLOOM_SUMMARY_SALTS(5, 7))));
#undef BLOOM_SUMMARY_SALTS
	}
#else
#define BLOOM_SUMMARY_SET(i) \
	(block[i] |= ((uint32) 1) << ((key * BloomSummarySalt[i]) >> 27))
	BLOOM_SUMMARY_SET(0);
	BLOOM_SUMMARY_SET(1);
	BLOOM_SUMMARY_SET(2);
	BLOOM_SUMMARY_SET(3);
	BLOOM_SUMMARY_SET(4);
	BLOOM_SUMMARY_SET(5);
	BLOOM_SUMMARY_SET(6);
	BLOOM_SUMMARY_SET(7);
#undef BLOOM_SUMMARY_SET
#endif
}

/* Add a key to a column's summary of nblocks blocks */
void
BloomSummaryAdd(uint32 *blocks, int nblocks, uint32 key)
{
	BloomSummaryAddKey(blocks, nblocks, key);
}

/*
 * Add a key to one block (the one BloomSummaryBlockFor gave); returns the
 * bytes of the block it changed, bit j for byte j in memory (0 if the
 * block held its bits).
 */
uint32
BloomSummaryAddToBlock(uint32 *block, uint32 key)
{
	uint32		changed = 0;
	int			i;

	for (i = 0; i < BLOOMIDX_SUMMARY_BLOCK_WORDS; i++)
	{
		int			b = (key * BloomSummarySalt[i]) >> 27;
		uint32		bit = ((uint32) 1) << b;

		if ((block[i] & bit) == 0)
		{
			/* The byte of the word that holds the bit, in memory order */
#ifdef WORDS_BIGENDIAN
			int			byte = 3 - b / 8;
#else
			int			byte = b / 8;
#endif

			block[i] |= bit;
			changed |= ((uint32) 1) << (4 * i + byte);
		}
	}
	return changed;
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
 * The rate at which a split-block filter of bitsPerKey bits a key lets
 * through a key it does not hold: a block holds a Poisson number of keys,
 * BLOOMIDX_SUMMARY_BLOCK_WORDS * 32 / bitsPerKey on average, each setting
 * one bit in each of the block's words, and a key passes if its bit is set
 * in every word.
 */
double
BloomSummaryFpr(int bitsPerKey)
{
	double		lambda = (double) BLOOMIDX_SUMMARY_BLOCK_WORDS * 32 / bitsPerKey;
	double		term = exp(-lambda);
	double		fpr = 0;
	int			n;

	for (n = 0; n < 4 * lambda + 40; n++)
	{
		if (n > 0)
			term *= lambda / n;
		fpr += term * pow(-expm1(n * log1p(-1.0 / 32)),
						  BLOOMIDX_SUMMARY_BLOCK_WORDS);
	}
	return Min(fpr, 1.0);
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

/* Bits of the bitmap that BloomSummaryCountDistinct counts keys in */
#define BLOOM_COUNT_BITS_LOG2	18
StaticAssertDecl((1 << BLOOM_COUNT_BITS_LOG2) / 32 <= BLOOMIDX_STRIPE_ROWS,
				 "scratch too small for the bitmap");

/*
 * Distinct keys of column col among n rows' keys (nColumns a row), for
 * sizing a stripe's summary: linear counting (Whang et al., 1990) in a
 * bitmap of 2^18 bits, within about 1% for a stripe's 65,280 keys and much
 * faster than sorting them.  scratch holds BLOOMIDX_STRIPE_ROWS words (the
 * bitmap takes 8,192 of them).
 */
int
BloomSummaryCountDistinct(const uint32 *keys, int n, int nColumns, int col,
						  uint32 *scratch)
{
	const int	nwords = (1 << BLOOM_COUNT_BITS_LOG2) / 32;
	uint32	   *bitmap = scratch;
	int			zero;
	int			i;

	if (n == 0)
		return 0;
	memset(bitmap, 0, sizeof(uint32) * nwords);
	for (i = 0; i < n; i++)
	{
		uint32		x = keys[(Size) i * nColumns + col] >> (32 - BLOOM_COUNT_BITS_LOG2);

		bitmap[x / 32] |= (uint32) 1 << (x % 32);
	}
	zero = nwords * 32 - (int) pg_popcount((const char *) bitmap,
										   sizeof(uint32) * nwords);
	if (zero == 0)
		return n;
	return (int) Min((double) n,
					 ceil(-(double) (nwords * 32) * log((double) zero / (nwords * 32))));
}

/*
 * Scale a stripe's blocks per column down, in proportion, to fit
 * BLOOMIDX_SUMMARY_MAX_PAGES pages, if their total does not
 */
static void
BloomSummaryCapBlocks(int nColumns, uint16 *blocks, int total)
{
	int			limit = BLOOMIDX_SUMMARY_MAX_PAGES * BLOOMIDX_SUMMARY_PAGE_BLOCKS;
	int			c;

	if (total <= limit)
		return;
	for (c = 0; c < nColumns; c++)
		if (blocks[c] > 0)
			blocks[c] = Max(1, (int) ((double) blocks[c] * limit / total) - 1);
}

/*
 * Size a stripe's summary from its rows' keys (nrows rows of nColumns
 * keys): each column of an equality class gets blocks for its distinct
 * keys at bitsPerKey bits a key, all of them within
 * BLOOMIDX_SUMMARY_MAX_PAGES pages; a column of sets none.  scratch holds
 * BLOOMIDX_STRIPE_ROWS words.
 */
void
BloomSummarySizeBlocks(const BloomShape *shape, int bitsPerKey,
					   const uint32 *keys, int nrows, uint16 *blocks,
					   uint32 *scratch)
{
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
	BloomSummaryCapBlocks(shape->nColumns, blocks, total);
}

/*
 * Distinct keys a column is given room for at least when sized from a
 * merge's rows (32 blocks, 1 kB): those rows may be few, and a stripe
 * holds many more
 */
#define BLOOM_SUMMARY_MIN_ESTIMATE	1024.0

/*
 * Size the summary of a stripe from the first nrows rows written to it
 * (keys as for BloomSummarySizeBlocks), when no full stripe was measured:
 * a column's distinct keys d among the n rows are extrapolated to a
 * stripe's rows as d * (stripe rows / n)^(d / n), which keeps d for a
 * column whose values repeat within the rows (a tenant in insertion order,
 * a status) and grows to the stripe's rows for one whose values do not (a
 * random key), and at least BLOOM_SUMMARY_MIN_ESTIMATE.  Too small a
 * summary only lets more stripes through.
 */
void
BloomSummarySizeBlocksFromRows(const BloomShape *shape, int bitsPerKey,
							   const uint32 *keys, int nrows, uint16 *blocks,
							   uint32 *scratch)
{
	int			total = 0;
	int			c;

	for (c = 0; c < shape->nColumns; c++)
	{
		double		d,
					est;

		blocks[c] = 0;
		if ((shape->setColumns & (1U << c)) != 0 || nrows <= 0)
			continue;
		d = BloomSummaryCountDistinct(keys, nrows, shape->nColumns, c, scratch);
		est = d * pow((double) BLOOMIDX_STRIPE_ROWS / nrows, d / nrows);
		est = Min(Max(est, Max(d, BLOOM_SUMMARY_MIN_ESTIMATE)),
				  (double) BLOOMIDX_STRIPE_ROWS);
		blocks[c] = BloomSummaryBlocksFor(est, bitsPerKey);
		total += blocks[c];
	}
	BloomSummaryCapBlocks(shape->nColumns, blocks, total);
}

/*
 * Size the summaries of an index's stripes from the keys of nrows pending
 * rows, a stripe's worth or most of one (see BloomMergeMeasureSummaries):
 * as the build does from a full stripe's (BloomSummarySizeBlocks), else
 * extrapolated to a stripe from how a column's distinct keys grow from
 * the first half of the rows to all of them, d(n) = d(n/2) * 2^g, as
 * d(n) * (stripe rows / n)^g: linear (g = 1) for a column whose values
 * come in runs (a tenant in insertion order) or never repeat (a random
 * key), flat for one whose values all recur (a status).
 */
void
BloomSummaryMeasureBlocks(const BloomShape *shape, int bitsPerKey,
						  const uint32 *keys, int nrows, uint16 *blocks,
						  uint32 *scratch)
{
	int			total = 0;
	int			c;

	if (nrows >= BLOOMIDX_STRIPE_ROWS)
	{
		BloomSummarySizeBlocks(shape, bitsPerKey, keys, BLOOMIDX_STRIPE_ROWS,
							   blocks, scratch);
		return;
	}
	for (c = 0; c < shape->nColumns; c++)
	{
		double		d,
					half,
					g = 0,
					est;

		blocks[c] = 0;
		if ((shape->setColumns & (1U << c)) != 0 || nrows <= 0)
			continue;
		d = BloomSummaryCountDistinct(keys, nrows, shape->nColumns, c, scratch);
		half = BloomSummaryCountDistinct(keys, nrows / 2, shape->nColumns, c, scratch);
		if (half > 0 && d > half)
			g = Min(1.0, log(d / half) / log(2.0));
		est = d * pow((double) BLOOMIDX_STRIPE_ROWS / nrows, g);
		est = Min(Max(est, d), (double) BLOOMIDX_STRIPE_ROWS);
		blocks[c] = BloomSummaryBlocksFor(est, bitsPerKey);
		total += blocks[c];
	}
	BloomSummaryCapBlocks(shape->nColumns, blocks, total);
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
				BloomSummaryAddKey(col, blocks[c], keys[(Size) r * nColumns + c]);
		start += blocks[c];
	}
}

/*
 * What the cost model needs of an index's summaries, from its metapage:
 * the bits a key, the stripes listed and those of them with a complete
 * summary, the blocks per column of a stripe as the build sized them, the
 * stripes sealed in summary groups and those groups.
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
		for (c = 0; c < BLOOMIDX_GROUP_SLOTS; c++)
		{
			const BloomSlicedGroupSlot *slot = &BloomSlicedGroupMeta(meta)->slots[c];
			uint64		sealed = slot->sealed;
			uint32		first;

			if (slot->groupPlus1 == 0)
				continue;
			info->summaryPages += slot->npages;
			first = BloomGroupFirstStripe(slot);
			if (first < firstStripe)
				sealed &= firstStripe - first >= 64 ? 0 :
					~((UINT64CONST(1) << (firstStripe - first)) - 1);
			if (sealed != 0)
			{
				info->sealedStripes += pg_popcount64(sealed);
				info->sealedGroups++;
			}
		}
		info->sealedStripes = Min(info->sealedStripes, info->stripes);
		info->summaryPages += (info->stripes - info->sealedStripes) *
			ceil(total / BLOOMIDX_SUMMARY_PAGE_BLOCKS);
	}
	UnlockReleaseBuffer(metabuf);
}

/* A row of a stripe with a complete summary, for BloomSummaryCheckRow */
typedef struct BloomSummaryCheckEntry
{
	ItemPointerData tid;		/* the key */
	int			stripe;			/* index into BloomSummaryCheckData.stripes */
} BloomSummaryCheckEntry;

/* A stripe with a complete summary, as bloomidx_check reads it */
typedef struct BloomSummaryCheckStripe
{
	uint32		s;
	BlockNumber stripeBlkno;
	uint16		blocks[BLOOMIDX_MAX_COLUMNS];
	int			nPages;
	BlockNumber pages[BLOOMIDX_SUMMARY_MAX_PAGES];
	bool		sealed;			/* in its group's region, slot */
	BloomSlicedGroupSlot slot;
} BloomSummaryCheckStripe;

/* State of bloomidx_check's check of the summaries against the table */
typedef struct BloomSummaryCheckData
{
	Relation	index;
	BloomState	state;
	HTAB	   *rows;
	int			nstripes;
	BloomSummaryCheckStripe *stripes;
	uint32	   *keys;
} BloomSummaryCheckData;

/*
 * Begin bloomidx_check's check that every row of the table in a stripe
 * with a complete summary has its values' keys in the summary (for
 * BloomSlicedHeapCheckBegin): the TIDs of those stripes' rows, as many as
 * maintenance_work_mem holds (the stripes past them are not checked).
 * Returns NULL if the index has no summaries.  A stripe VACUUM
 * empties meanwhile is skipped (its pages no longer carry its number).
 */
void *
BloomSlicedSummaryCheckBegin(Relation index, BloomState state)
{
	BloomSummaryCheckData *sc;
	BloomSlicedSnapshot *snap;
	BloomStripePages *pages;
	ItemPointerData *tids;
	HASHCTL		ctl;
	double		maxRows;
	double		nrows = 0;
	uint32		s;

	if (!state->shape.summaries)
		return NULL;
	sc = palloc0(sizeof(BloomSummaryCheckData));
	sc->index = index;
	sc->state = state;
	sc->keys = palloc(sizeof(uint32) * BLOOMIDX_MAX_COLUMNS);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(ItemPointerData);
	ctl.entrysize = sizeof(BloomSummaryCheckEntry);
	ctl.hcxt = CurrentMemoryContext;
	sc->rows = hash_create("bloomidx summary check", 1024, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	maxRows = (double) maintenance_work_mem * 1024.0 /
		(2 * sizeof(BloomSummaryCheckEntry) + 16);

	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap, true);
	sc->stripes = palloc(sizeof(BloomSummaryCheckStripe) *
						 Max(snap->nStripes - snap->firstStripe, 1));
	pages = palloc(sizeof(BloomStripePages));
	tids = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		BlockNumber blkno = BloomSnapStripe(snap, s);
		int			rows = BloomStripeRows(snap->mergedRows, s);
		BloomSummaryCheckStripe *cs;
		int			t;

		CHECK_FOR_INTERRUPTS();
		if (blkno == InvalidBlockNumber || rows == 0)
			continue;
		if (nrows + rows > maxRows)
			break;
		if (!BloomReadStripe(index, s, blkno, state->shape.sigBits, pages))
			continue;
		if (pages->summaryColumns != state->shape.nColumns ||
			(pages->flags & BLOOMIDX_STRIPE_SUMMARY_INCOMPLETE) != 0)
			continue;
		cs = &sc->stripes[sc->nstripes];
		cs->sealed = (pages->flags & BLOOMIDX_STRIPE_SUMMARY_GROUPED) != 0;
		if (cs->sealed)
		{
			const BloomSlicedGroupSlot *slot = BloomSnapGroup(snap, s);

			/* A stripe its group does not seal: see BloomSlicedForEachRow */
			if (slot == NULL ||
				((slot->sealed >> (s % BLOOMIDX_GROUP_STRIPES)) & 1) == 0 ||
				memcmp(pages->summaryBlocks, snap->groupBlocks,
					   sizeof(uint16) * state->shape.nColumns) != 0)
				continue;
			cs->slot = *slot;
		}
		cs->s = s;
		cs->stripeBlkno = blkno;
		memcpy(cs->blocks, pages->summaryBlocks, sizeof(cs->blocks));
		cs->nPages = pages->nSummaryPages;
		memcpy(cs->pages, pages->summaryPages, sizeof(BlockNumber) * cs->nPages);
		for (t = 0; t < pages->nTidPages; t++)
		{
			Buffer		buffer = ReadBuffer(index, pages->tidPages[t]);
			Page		page;
			int			first,
						n,
						i;

			LockBuffer(buffer, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buffer);
			if (!BloomPageIsSliced(page, BLOOMIDX_TIDMAP, s))
			{
				UnlockReleaseBuffer(buffer);
				continue;
			}
			first = BloomTidMapGetFirstRow(page);
			n = BloomTidMapUnpack(page, tids);
			UnlockReleaseBuffer(buffer);
			for (i = 0; i < n && first + i < rows; i++)
			{
				BloomSummaryCheckEntry *e;

				if (!ItemPointerIsValid(&tids[i]))
					continue;
				e = hash_search(sc->rows, &tids[i], HASH_ENTER, NULL);
				e->stripe = sc->nstripes;
			}
		}
		sc->nstripes++;
		nrows += rows;
	}
	pfree(tids);
	pfree(pages);
	BloomFreeSnapshot(snap);
	return sc;
}

/*
 * Report a row of the table whose value of column c the summary of its
 * stripe lacks; detail says which summary block said so.
 */
pg_noreturn static void
BloomSummaryMissing(BloomSummaryCheckData *sc, Relation heap, ItemPointer tid,
					int c, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" lacks the value of column %d of row (%u,%u) of table \"%s\" in the summary of its stripe",
					RelationGetRelationName(sc->index), c + 1,
					ItemPointerGetBlockNumber(tid),
					ItemPointerGetOffsetNumber(tid),
					RelationGetRelationName(heap)),
			 errdetail_internal("%s", detail),
			 errhint("REINDEX the index.")));
}

/*
 * Complain unless the block of its group's region that holds column c of
 * the sealed stripe cs may hold the key of the row's value (in sc->keys)
 */
static void
BloomSummaryCheckSealed(BloomSummaryCheckData *sc, Relation heap,
						ItemPointer tid, const BloomSummaryCheckStripe *cs, int c)
{
	int			at;
	BlockNumber blkno = BloomGroupBlockPage(&cs->slot, cs->blocks, c,
											BloomSummaryBlockFor(sc->keys[c],
																 cs->blocks[c]),
											cs->s % BLOOMIDX_GROUP_STRIPES, &at);
	Buffer		buffer;
	Page		page;
	bool		maybe;

	buffer = ReadBuffer(sc->index, blkno);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (!BloomPageIsSliced(page, BLOOMIDX_GROUP, BloomGroupFirstStripe(&cs->slot)))
	{
		/*
		 * A VACUUM that moved the region since the check read the slot
		 * (asked with no page locked: VACUUM locks the metapage first)
		 */
		UnlockReleaseBuffer(buffer);
		if (!BloomGroupStillHeld(sc->index, cs->slot.groupPlus1 - 1, cs->slot.first))
			return;
		BloomReportCorruption(sc->index, blkno,
							  psprintf("Page %u of the region of summary group %u is not a page of the group.",
									   blkno - cs->slot.first,
									   cs->slot.groupPlus1 - 1));
	}
	maybe = BloomSummaryTestBlock(BloomSummaryPageBlocks(page) +
								  (Size) at * BLOOMIDX_SUMMARY_BLOCK_WORDS,
								  sc->keys[c]);
	UnlockReleaseBuffer(buffer);
	if (!maybe)
		BloomSummaryMissing(sc, heap, tid, c,
							psprintf("Page %u of summary group %u says no row of stripe %u has the value.",
									 blkno, cs->slot.groupPlus1 - 1, cs->s));
}

/*
 * Complain unless the summary of the stripe holding a row of the table
 * (if a stripe with a complete summary does) may hold its values' keys
 * (for BloomSlicedHeapCheckRow).
 */
void
BloomSlicedSummaryCheckRow(void *arg, Relation heap, ItemPointer tid,
						   Datum *values, bool *isnull)
{
	BloomSummaryCheckData *sc = (BloomSummaryCheckData *) arg;
	const BloomShape *shape = &sc->state->shape;
	BloomSummaryCheckEntry *e;
	BloomSummaryCheckStripe *cs;
	int			start = 0;
	int			c;

	e = hash_search(sc->rows, tid, HASH_FIND, NULL);
	if (e == NULL)
		return;
	cs = &sc->stripes[e->stripe];
	BloomFormSummaryKeys(sc->state, values, isnull, sc->keys);
	for (c = 0; c < shape->nColumns; start += cs->blocks[c], c++)
	{
		int			g,
					p;
		Buffer		buffer;
		Page		page;
		bool		maybe;

		if (cs->blocks[c] == 0)
			continue;
		if (cs->sealed)
		{
			BloomSummaryCheckSealed(sc, heap, tid, cs, c);
			continue;
		}
		g = start + BloomSummaryBlockFor(sc->keys[c], cs->blocks[c]);
		p = g / BLOOMIDX_SUMMARY_PAGE_BLOCKS;
		if (p >= cs->nPages)
			BloomReportCorruption(sc->index, cs->stripeBlkno,
								  psprintf("The summary of stripe %u has %d pages, not enough for its %d blocks.",
										   cs->s, cs->nPages, g + 1));
		buffer = ReadBuffer(sc->index, cs->pages[p]);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!BloomPageIsSliced(page, BLOOMIDX_SUMMARY, cs->s))
		{
			/* VACUUM emptied the stripe since (its rows went elsewhere) */
			UnlockReleaseBuffer(buffer);
			return;
		}
		maybe = BloomSummaryTestBlock(BloomSummaryPageBlocks(page) +
									  (Size) (g % BLOOMIDX_SUMMARY_PAGE_BLOCKS) *
									  BLOOMIDX_SUMMARY_BLOCK_WORDS, sc->keys[c]);
		UnlockReleaseBuffer(buffer);
		if (!maybe)
			BloomSummaryMissing(sc, heap, tid, c,
								psprintf("Summary page %u of stripe %u says no row of the stripe has the value.",
										 cs->pages[p], cs->s));
	}
}
