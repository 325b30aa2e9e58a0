/*-------------------------------------------------------------------------
 *
 * sliced_build.c
 *	  Building an index of the sliced layout, serially or in parallel: the
 *	  rows' signatures are transposed 64 rows at a time into the slices of
 *	  full stripes, the rows short of one in a partial last stripe (or in
 *	  pending pages if there is no full one).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_build.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"
#include "sliced.h"

/*
 * The summary groups of a build (see sliced.h): the index-wide blocks,
 * those the first full stripe measured, and the slots of the regions
 * allocated so far.  In a parallel build, in shared memory under the
 * mutex; a slot whose region is being allocated has first invalid (its
 * allocation holds the relation extension lock).
 */
typedef struct BloomBuildGroups
{
	bool		haveWide;
	uint16		wide[BLOOMIDX_MAX_COLUMNS];
	int			nslots;
	BloomSlicedGroupSlot slots[BLOOMIDX_GROUP_SLOTS];
} BloomBuildGroups;

/*
 * Shared state of a parallel sliced build: the full stripes the
 * participants wrote, by number, then (see BloomSlicedSharedSize) each
 * participant's leftover rows.
 */
typedef struct BloomSlicedShared
{
	BloomBuildGroups groups;
	slock_t		mutex;
	int			nparticipants;
	int			sigWords;
	int			nKeys;			/* summary keys a row: nColumns, or 0 */
	bool		haveBlocks;		/* lastBlocks is set, under mutex */
	uint16		lastBlocks[BLOOMIDX_MAX_COLUMNS];	/* of a stripe written */
	uint32		nStripes;		/* stripe numbers taken, under mutex */
	BlockNumber stripes[BLOOMIDX_MAX_STRIPES];	/* their stripe pages */
	int			leftovers[FLEXIBLE_ARRAY_MEMBER];	/* rows left, per participant */
} BloomSlicedShared;


typedef struct BloomSlicedBuildState
{
	BloomStateData state;
	Relation	index;
	MemoryContext tmpCtx;		/* reset after every row */
	uint64	   *slices;			/* sigBits * BLOOMIDX_STRIPE_WORDS words */
	bool	   *sliceUsed;		/* any bit set in each slice */
	uint64	   *block;			/* signatures of up to 64 rows, not yet in slices */
	int			nblock;			/* rows in block */
	ItemPointerData *tids;		/* BLOOMIDX_STRIPE_ROWS */
	int			nrows;			/* rows in the stripe being filled */
	double		indtuples;
	uint64		bitsSet;
	uint32		nStripes;		/* stripes written (serial build) */
	uint32		maxStripes;		/* room in stripes */
	BlockNumber *stripes;		/* their stripe pages */

	/* Summaries (nKeys 0: none): the stripe's rows' keys, and scratch */
	int			nKeys;
	uint32	   *keys;			/* BLOOMIDX_STRIPE_ROWS * nKeys */
	uint32	   *scratch;		/* BLOOMIDX_STRIPE_ROWS */
	uint32	   *summary;		/* a stripe's summary's blocks */
	bool		haveBlocks;
	uint16		lastBlocks[BLOOMIDX_MAX_COLUMNS];	/* of the last stripe */
	BloomBuildGroups *groups;	/* localGroups, or the shared ones */
	BloomBuildGroups localGroups;
	double		expectedStripes;	/* full stripes the table should give */
	BlockNumber heapBlocks;		/* the table's, when expectedStripes is to be
								 * measured (serial build, no statistics) */

	/* In a parallel build: full stripes go to the shared list */
	BloomSlicedShared *shared;
	BloomBuildProgress *progress;	/* rows indexed, for the progress report */
} BloomSlicedBuildState;

static void BloomSlicedFlushBlock(BloomSlicedBuildState *bs);
static void BloomSlicedKeepBlocks(BloomSlicedBuildState *bs, const uint16 *blocks);
static void BloomBuildGroupsToMeta(BloomSlicedBuildState *bs, BloomMetaPage meta);

/*
 * Write a page image to a new block of the index being built.
 */
static BlockNumber
BloomBuildWritePage(Relation index, Page image, bool parallel)
{
	Buffer		buffer;
	BlockNumber blkno;

	if (parallel)
		LockRelationForExtension(index, ExclusiveLock);
	buffer = ReadBuffer(index, P_NEW);
	if (parallel)
		UnlockRelationForExtension(index, ExclusiveLock);
	blkno = BufferGetBlockNumber(buffer);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(buffer), image, BLCKSZ);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);
	return blkno;
}

/*
 * Full stripes the table should give, from its estimated size, for
 * sizing the regions of the summary groups
 */
static double
BloomBuildExpectedStripes(Relation heap)
{
	BlockNumber pages;
	double		tuples;
	double		allvisfrac;

	estimate_rel_size(heap, NULL, &pages, &tuples, &allvisfrac);
	return Max(tuples, 0.0) / BLOOMIDX_STRIPE_ROWS;
}

/* Index of group g's slot among a build's groups, or -1 */
static int
BloomBuildFindGroup(BloomBuildGroups *groups, uint32 g)
{
	int			i;

	for (i = 0; i < groups->nslots; i++)
		if (groups->slots[i].groupPlus1 == g + 1)
			return i;
	return -1;
}

/*
 * The slot of group g, its region allocated if it has none yet, for the
 * stripe at position pos; returns its index, a copy in *slot, or -1 if no
 * slot is left.  The region is a run of new pages at the end of the
 * index, each a group page of no block set; in a parallel build, added
 * under the relation extension lock that every participant takes to
 * extend the index, so that the run is contiguous.
 */
static int
BloomBuildGroupSlot(BloomSlicedBuildState *bs, uint32 g, int pos,
					const uint16 *wide, BloomSlicedGroupSlot *slot)
{
	BloomBuildGroups *groups = bs->groups;
	bool		parallel = bs->shared != NULL;
	const BloomShape *shape = &bs->state.shape;
	PGAlignedBlock image;
	BlockNumber first = InvalidBlockNumber;
	int			perStripe,
				npages,
				idx,
				j;

	if (parallel)
		SpinLockAcquire(&bs->shared->mutex);
	idx = BloomBuildFindGroup(groups, g);
	if (idx >= 0 && groups->slots[idx].first != InvalidBlockNumber)
		*slot = groups->slots[idx];
	else
		idx = -1;
	if (parallel)
		SpinLockRelease(&bs->shared->mutex);
	if (idx >= 0)
		return idx;

	/* Allocate it, unless another participant did meanwhile */
	if (parallel)
	{
		LockRelationForExtension(bs->index, ExclusiveLock);
		SpinLockAcquire(&bs->shared->mutex);
	}
	idx = BloomBuildFindGroup(groups, g);
	if (idx >= 0 || groups->nslots == BLOOMIDX_GROUP_SLOTS)
	{
		if (idx >= 0)
			*slot = groups->slots[idx];
		if (parallel)
		{
			SpinLockRelease(&bs->shared->mutex);
			UnlockRelationForExtension(bs->index, ExclusiveLock);
		}
		return idx;
	}
	idx = groups->nslots++;
	memset(&groups->slots[idx], 0, sizeof(BloomSlicedGroupSlot));
	groups->slots[idx].groupPlus1 = g + 1;
	groups->slots[idx].first = InvalidBlockNumber;
	if (parallel)
		SpinLockRelease(&bs->shared->mutex);

	perStripe = BloomGroupPerStripe(bs->expectedStripes -
									(double) g * BLOOMIDX_GROUP_STRIPES);
	perStripe = Min(perStripe, BLOOMIDX_SUMMARY_PAGE_BLOCKS / (pos + 1));
	npages = BloomGroupRegionPages(wide, shape->nColumns, perStripe);
	BloomInitSlicedPage(image.data, BLOOMIDX_GROUP, shape->sigBits,
						g * BLOOMIDX_GROUP_STRIPES);
	for (j = 0; j < npages; j++)
	{
		Buffer		buffer = ReadBuffer(bs->index, P_NEW);

		if (j == 0)
			first = BufferGetBlockNumber(buffer);
		else if (BufferGetBlockNumber(buffer) != first + j)
			elog(ERROR, "bloomidx index \"%s\": page %u of a summary group's region is block %u, not %u",
				 RelationGetRelationName(bs->index), j,
				 BufferGetBlockNumber(buffer), first + j);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		memcpy(BufferGetPage(buffer), image.data, BLCKSZ);
		MarkBufferDirty(buffer);
		UnlockReleaseBuffer(buffer);
	}

	if (parallel)
		SpinLockAcquire(&bs->shared->mutex);
	groups->slots[idx].first = first;
	groups->slots[idx].perStripe = perStripe;
	groups->slots[idx].npages = npages;
	*slot = groups->slots[idx];
	if (parallel)
	{
		SpinLockRelease(&bs->shared->mutex);
		UnlockRelationForExtension(bs->index, ExclusiveLock);
	}
	return idx;
}

/*
 * Seal the full stripe being built, whose summary measured blocks: write
 * its summary, of the index-wide blocks, into its group's region instead
 * of summary pages of its own, and flag its stripe page so.  The first full
 * stripe's blocks become the index-wide ones.  Returns false, leaving the
 * stripe to its own summary pages, if the stripe's values need more than
 * twice the index-wide blocks in some column (its summary would let too
 * many values through), no slot is left, or its group's region does not
 * hold its position.
 */
static bool
BloomSlicedSealStripe(BloomSlicedBuildState *bs, Page stripeImage, uint32 s,
					  const uint16 *blocks)
{
	const BloomShape *shape = &bs->state.shape;
	BloomBuildGroups *groups = bs->groups;
	bool		parallel = bs->shared != NULL;
	uint16		wide[BLOOMIDX_MAX_COLUMNS];
	BloomSlicedGroupSlot slot;
	uint32		g = s / BLOOMIDX_GROUP_STRIPES;
	int			pos = s % BLOOMIDX_GROUP_STRIPES;
	int			start = 0;
	int			idx,
				c,
				b;

	if (parallel)
		SpinLockAcquire(&bs->shared->mutex);
	if (!groups->haveWide)
	{
		memcpy(groups->wide, blocks, sizeof(uint16) * shape->nColumns);
		groups->haveWide = true;
	}
	memcpy(wide, groups->wide, sizeof(uint16) * shape->nColumns);
	if (parallel)
		SpinLockRelease(&bs->shared->mutex);

	for (c = 0; c < shape->nColumns; c++)
		if (blocks[c] > 2 * wide[c])
			return false;
	if (BloomSummaryTotalBlocks(wide, shape->nColumns) == 0 ||
		(idx = BloomBuildGroupSlot(bs, g, pos, wide, &slot)) < 0 ||
		pos >= BloomGroupPositions(slot.perStripe))
		return false;

	/* The stripe's blocks, then each page's share of them */
	memset(bs->summary, 0, (Size) BloomSummaryTotalBlocks(wide, shape->nColumns) *
		   BLOOMIDX_SUMMARY_BLOCK_BYTES);
	BloomSummaryFill(wide, shape->nColumns, bs->keys, bs->nrows, bs->summary);
	for (c = 0; c < shape->nColumns; start += wide[c], c++)
	{
		for (b = 0; b < wide[c]; b += slot.perStripe)
		{
			int			index;
			BlockNumber blkno = BloomGroupBlockPage(&slot, wide, c, b, pos, &index);
			Buffer		buffer = ReadBuffer(bs->index, blkno);

			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			memcpy(BloomSummaryPageBlocks(BufferGetPage(buffer)) +
				   (Size) index * BLOOMIDX_SUMMARY_BLOCK_WORDS,
				   bs->summary + (Size) (start + b) * BLOOMIDX_SUMMARY_BLOCK_WORDS,
				   (Size) Min(slot.perStripe, wide[c] - b) * BLOOMIDX_SUMMARY_BLOCK_BYTES);
			MarkBufferDirty(buffer);
			UnlockReleaseBuffer(buffer);
		}
	}
	BloomStripeSetSummary(stripeImage, shape->sigBits, shape->nColumns, wide,
						  &slot.first, 0);
	BloomStripeSetFlags(stripeImage, BloomStripeGetFlags(stripeImage) |
						BLOOMIDX_STRIPE_SUMMARY_GROUPED);

	if (parallel)
		SpinLockAcquire(&bs->shared->mutex);
	groups->slots[idx].sealed |= UINT64CONST(1) << pos;
	if (parallel)
		SpinLockRelease(&bs->shared->mutex);
	return true;
}

/*
 * Write the summary of the stripe being built into summary pages, and list
 * them in its stripe page (see page.h), or seal it in its group's region
 * (a full stripe).
 */
static void
BloomSlicedFlushSummary(BloomSlicedBuildState *bs, Page stripeImage, uint32 s)
{
	const BloomShape *shape = &bs->state.shape;
	bool		parallel = bs->shared != NULL;
	uint16		blocks[BLOOMIDX_MAX_COLUMNS];
	BlockNumber pages[BLOOMIDX_SUMMARY_MAX_PAGES];
	PGAlignedBlock image;
	int			total,
				npages,
				p;

	/* A partial stripe, which merges fill, sized as a full one when known */
	if (bs->nrows < BLOOMIDX_STRIPE_ROWS && bs->haveBlocks)
		memcpy(blocks, bs->lastBlocks, sizeof(uint16) * shape->nColumns);
	else
	{
		BloomSummarySizeBlocks(shape, BLOOMIDX_SUMMARY_DEFAULT_BITS_PER_KEY,
							   bs->keys, bs->nrows, blocks, bs->scratch);
		BloomSlicedKeepBlocks(bs, blocks);
	}
	if (bs->nrows == BLOOMIDX_STRIPE_ROWS &&
		BloomSlicedSealStripe(bs, stripeImage, s, blocks))
		return;
	total = BloomSummaryTotalBlocks(blocks, shape->nColumns);
	npages = (total + BLOOMIDX_SUMMARY_PAGE_BLOCKS - 1) / BLOOMIDX_SUMMARY_PAGE_BLOCKS;
	memset(bs->summary, 0, (Size) npages * BLOOMIDX_SUMMARY_PAGE_BLOCKS *
		   BLOOMIDX_SUMMARY_BLOCK_BYTES);
	BloomSummaryFill(blocks, shape->nColumns, bs->keys, bs->nrows, bs->summary);
	for (p = 0; p < npages; p++)
	{
		BloomInitSlicedPage(image.data, BLOOMIDX_SUMMARY, shape->sigBits, s);
		memcpy(BloomSummaryPageBlocks(image.data),
			   bs->summary + (Size) p * BLOOMIDX_SUMMARY_PAGE_BLOCKS *
			   BLOOMIDX_SUMMARY_BLOCK_WORDS,
			   BLOOMIDX_SUMMARY_PAGE_BLOCKS * BLOOMIDX_SUMMARY_BLOCK_BYTES);
		pages[p] = BloomBuildWritePage(bs->index, image.data, parallel);
	}
	BloomStripeSetSummary(stripeImage, shape->sigBits, shape->nColumns, blocks,
						  pages, npages);
}

/*
 * A full stripe's sizes are those merges give their new stripes, unless
 * the summary groups' index-wide ones are set (BloomBuildGroupsToMeta)
 */
static void
BloomSlicedKeepBlocks(BloomSlicedBuildState *bs, const uint16 *blocks)
{
	const BloomShape *shape = &bs->state.shape;
	bool		parallel = bs->shared != NULL;

	if (bs->nrows == BLOOMIDX_STRIPE_ROWS || !bs->haveBlocks)
	{
		memcpy(bs->lastBlocks, blocks, sizeof(uint16) * shape->nColumns);
		bs->haveBlocks = true;
		if (parallel)
		{
			SpinLockAcquire(&bs->shared->mutex);
			memcpy(bs->shared->lastBlocks, blocks, sizeof(uint16) * shape->nColumns);
			bs->shared->haveBlocks = true;
			SpinLockRelease(&bs->shared->mutex);
		}
	}
}

/*
 * Write the stripe being built: its slices, TID maps, summary and stripe
 * page.
 */
static void
BloomSlicedFlushStripe(BloomSlicedBuildState *bs)
{
	int			sigBits = bs->state.shape.sigBits;
	bool		parallel = bs->shared != NULL;
	PGAlignedBlock stripeImage;
	PGAlignedBlock image;
	uint16		firstRows[BLOOMIDX_STRIPE_TIDPAGES];
	BlockNumber blkno;
	uint32		s;
	int			b,
				t,
				first;

	if (bs->nblock > 0)
		BloomSlicedFlushBlock(bs);

	/* The stripe's number */
	if (parallel)
	{
		SpinLockAcquire(&bs->shared->mutex);
		s = bs->shared->nStripes;
		if (s < BLOOMIDX_MAX_STRIPES)
			bs->shared->nStripes++;
		SpinLockRelease(&bs->shared->mutex);
	}
	else
		s = bs->nStripes;
	if (s >= BLOOMIDX_MAX_STRIPES)
		BloomTooManyRows(bs->index);

	BloomInitSlicedPage(stripeImage.data, BLOOMIDX_STRIPE, sigBits, s);

	for (b = 0; b < sigBits; b++)
	{
		if (!bs->sliceUsed[b])
			continue;
		BloomInitSlicedPage(image.data, BLOOMIDX_SLICE, sigBits, s);
		BloomSliceSetWords(image.data, bs->slices + (Size) b * BLOOMIDX_STRIPE_WORDS);
		BloomStripeSetLink(stripeImage.data, BLOOMIDX_SLICE, b,
						   BloomBuildWritePage(bs->index, image.data, parallel));
	}

	for (t = 0, first = 0; first < bs->nrows; t++)
	{
		BloomInitSlicedPage(image.data, BLOOMIDX_TIDMAP, sigBits, s);
		firstRows[t] = first;
		first += BloomTidMapPack(image.data, first, bs->tids + first,
								 bs->nrows - first);
		BloomStripeSetLink(stripeImage.data, BLOOMIDX_TIDMAP, t,
						   BloomBuildWritePage(bs->index, image.data, parallel));
	}
	BloomStripeSetTidPages(stripeImage.data, t, 0, firstRows);
	BloomStripeSetLive(stripeImage.data, bs->nrows);
	if (bs->nKeys > 0)
	{
		/*
		 * A table without statistics (never vacuumed or analyzed, as right
		 * after a load) has its rows estimated from its columns' typical
		 * widths, which can be far off: before the first stripe's region
		 * is sized, measure its rows a block instead, from the blocks its
		 * rows came from (a serial scan's, which may start mid-table).
		 */
		if (s == 0 && bs->heapBlocks > 0 && bs->nrows > 0)
		{
			BlockNumber firstBlk = ItemPointerGetBlockNumber(&bs->tids[0]);
			BlockNumber lastBlk = ItemPointerGetBlockNumber(&bs->tids[bs->nrows - 1]);
			double		spanned = (double) ((lastBlk + bs->heapBlocks - firstBlk) %
											bs->heapBlocks) + 1;

			bs->expectedStripes = (double) bs->heapBlocks * bs->nrows / spanned /
				BLOOMIDX_STRIPE_ROWS;
		}
		BloomSlicedFlushSummary(bs, stripeImage.data, s);
	}

	blkno = BloomBuildWritePage(bs->index, stripeImage.data, parallel);
	if (parallel)
		bs->shared->stripes[s] = blkno;
	else
	{
		if (bs->nStripes == bs->maxStripes)
		{
			bs->maxStripes *= 2;
			bs->stripes = repalloc(bs->stripes, sizeof(BlockNumber) * bs->maxStripes);
		}
		bs->stripes[bs->nStripes++] = blkno;
	}

	memset(bs->slices, 0, sizeof(uint64) * BLOOMIDX_STRIPE_WORDS * sigBits);
	memset(bs->sliceUsed, 0, sizeof(bool) * sigBits);
	bs->nrows = 0;
}

/*
 * Move the rows of the block into the slices: for each 64 bits of the
 * signatures, one transposition gives the word of 64 rows of each slice.
 * The block starts at a multiple of 64 rows.
 */
static void
BloomSlicedFlushBlock(BloomSlicedBuildState *bs)
{
	int			sigBits = bs->state.shape.sigBits;
	int			sigWords = bs->state.shape.sigWords;
	int			word = (bs->nrows - bs->nblock) / 64;
	uint64		m[64];
	int			i,
				w;

	Assert((bs->nrows - bs->nblock) % 64 == 0);
	for (w = 0; w < sigWords; w++)
	{
		for (i = 0; i < 64; i++)
			m[i] = i < bs->nblock ? bs->block[i * sigWords + w] : 0;
		BloomTranspose64(m);
		for (i = 0; i < 64 && w * 64 + i < sigBits; i++)
		{
			if (m[i] == 0)
				continue;
			bs->slices[(Size) (w * 64 + i) * BLOOMIDX_STRIPE_WORDS + word] = m[i];
			bs->sliceUsed[w * 64 + i] = true;
		}
	}
	bs->nblock = 0;
}

/*
 * The signature words (sigWords each) of the rows of the partial stripe
 * being built, back from its slices.
 */
static void
BloomSlicedPartialWords(BloomSlicedBuildState *bs, uint64 *words)
{
	const BloomShape *shape = &bs->state.shape;
	int			b,
				r;

	if (bs->nblock > 0)
		BloomSlicedFlushBlock(bs);
	memset(words, 0, sizeof(uint64) * shape->sigWords * bs->nrows);
	for (b = 0; b < shape->sigBits; b++)
	{
		const uint64 *slice = bs->slices + (Size) b * BLOOMIDX_STRIPE_WORDS;

		if (!bs->sliceUsed[b])
			continue;
		for (r = 0; r < bs->nrows; r++)
		{
			if (slice[r / 64] & (UINT64CONST(1) << (r % 64)))
				words[(Size) r * shape->sigWords + b / 64] |= UINT64CONST(1) << (b % 64);
		}
	}
}

/*
 * Write the rows of the partial stripe being built to pending pages, as
 * inserts would have, if they fit in fewer than BLOOMIDX_PENDING_CROWDED
 * pages: a stripe's slices are written only for a full stripe, so that a
 * small table's index is as small as the row layout's (see sliced.h).
 * Returns the number of pending pages written into pending, or -1 if the
 * rows do not fit (long signatures), for a partial stripe.
 */
static int
BloomSlicedBuildPending(BloomSlicedBuildState *bs, BlockNumber *pending)
{
	const BloomShape *shape = &bs->state.shape;
	int			perPage = bs->state.tuplesPerPage;
	int			npages = (bs->nrows + perPage - 1) / perPage;
	uint64	   *words;
	PGAlignedBlock image;
	int			p,
				r;

	if (npages > BLOOMIDX_PENDING_CROWDED)
		return -1;
	words = palloc(sizeof(uint64) * shape->sigWords * Max(bs->nrows, 1));
	BloomSlicedPartialWords(bs, words);
	for (p = 0, r = 0; p < npages; p++)
	{
		/* With their summary keys, in format 4 */
		BloomPendingInitPage(&bs->state, image.data, false);
		for (; r < bs->nrows; r++)
		{
			uint8		slot[BLOOMIDX_SLICED_MAX_SLOT];

			BloomPendingFormSlot(&bs->state, slot, words + (Size) r * shape->sigWords,
								 bs->nKeys > 0 ? bs->keys + (Size) r * bs->nKeys : NULL);
			if (!BloomPageAddTuple(image.data, BloomSlicedSlotBytes(&bs->state),
								   slot, &bs->tids[r]))
				break;
		}
		pending[p] = BloomBuildWritePage(bs->index, image.data, false);
	}
	Assert(r == bs->nrows);
	pfree(words);
	bs->nrows = 0;
	return npages;
}

/*
 * Add a row, given its signature words and summary keys (if the index has
 * summaries), to the stripe being built.
 */
static void
BloomSlicedAddRow(BloomSlicedBuildState *bs, const uint64 *words,
				  const uint32 *keys, ItemPointer tid)
{
	int			sigWords = bs->state.shape.sigWords;

	if (bs->nKeys > 0 && keys != bs->keys + (Size) bs->nrows * bs->nKeys)
		memcpy(bs->keys + (Size) bs->nrows * bs->nKeys, keys,
			   sizeof(uint32) * bs->nKeys);
	memcpy(bs->block + bs->nblock * sigWords, words, sizeof(uint64) * sigWords);
	bs->nblock++;
	bs->tids[bs->nrows++] = *tid;
	if (bs->nblock == 64)
		BloomSlicedFlushBlock(bs);
	if (bs->nrows == BLOOMIDX_STRIPE_ROWS)
		BloomSlicedFlushStripe(bs);
}

/*
 * Add one heap row to the sliced index being built.
 */
static void
BloomSlicedBuildCallback(Relation index, ItemPointer tid, Datum *values,
						 bool *isnull, bool tupleIsAlive, void *state)
{
	BloomSlicedBuildState *bs = (BloomSlicedBuildState *) state;
	uint64		words[BLOOMIDX_SLICED_MAX_LENGTH / 64];
	uint64		mixed[BLOOMIDX_MAX_COLUMNS];
	uint32	   *keys = NULL;
	MemoryContext oldCtx;

	/*
	 * The summary keys from the hashes the signature took, straight into
	 * the stripe's keys
	 */
	oldCtx = MemoryContextSwitchTo(bs->tmpCtx);
	bs->bitsSet += BloomFormSignatureWordsMixed(&bs->state, values, isnull, words,
												bs->nKeys > 0 ? mixed : NULL);
	if (bs->nKeys > 0)
	{
		keys = bs->keys + (Size) bs->nrows * bs->nKeys;
		BloomSummaryKeysFromMixed(&bs->state.shape, mixed, keys);
	}
	MemoryContextSwitchTo(oldCtx);
	MemoryContextReset(bs->tmpCtx);

	BloomSlicedAddRow(bs, words, keys, tid);
	bs->indtuples += 1;

	if (((uint64) bs->indtuples % BLOOMIDX_PROGRESS_ROWS) == 0 &&
		bs->progress != NULL)
		BloomBuildProgressAdd(bs->progress, BLOOMIDX_PROGRESS_ROWS);
}

/*
 * Set up the state of a sliced build (or of one participant).
 */
static BloomSlicedBuildState *
BloomSlicedBuildStateCreate(Relation index, const BloomShape *shape,
							BloomSlicedShared *shared)
{
	BloomSlicedBuildState *bs = palloc0(sizeof(BloomSlicedBuildState));

	BloomSlicedCheckSigBits(index, shape->sigBits);
	BloomInitState(&bs->state, index, shape);
	bs->index = index;
	bs->tmpCtx = AllocSetContextCreate(CurrentMemoryContext,
									   "bloomidx sliced build temporary context",
									   ALLOCSET_DEFAULT_SIZES);
	bs->slices = palloc0(sizeof(uint64) * BLOOMIDX_STRIPE_WORDS * shape->sigBits);
	bs->sliceUsed = palloc0(sizeof(bool) * shape->sigBits);
	bs->block = palloc(sizeof(uint64) * 64 * shape->sigWords);
	bs->tids = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	bs->maxStripes = 64;
	bs->stripes = palloc(sizeof(BlockNumber) * bs->maxStripes);
	bs->shared = shared;
	bs->groups = shared != NULL ? &shared->groups : &bs->localGroups;
	if (shape->summaries)
	{
		bs->nKeys = shape->nColumns;
		bs->keys = palloc(sizeof(uint32) * BLOOMIDX_STRIPE_ROWS * bs->nKeys);
		bs->scratch = palloc(sizeof(uint32) * BLOOMIDX_STRIPE_ROWS);
		bs->summary = palloc((Size) BLOOMIDX_SUMMARY_MAX_PAGES *
							 BLOOMIDX_SUMMARY_PAGE_BLOCKS * BLOOMIDX_SUMMARY_BLOCK_BYTES);
	}
	return bs;
}

/*
 * Size of the shared state of a parallel sliced build with nparticipants
 * participants (leader included): the list of full stripes, then each
 * participant's leftover rows (a partial stripe, as signature words and
 * TIDs).
 */
Size
BloomSlicedSharedSize(const BloomShape *shape, int nparticipants)
{
	Size		perParticipant = MAXALIGN(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS) +
		sizeof(uint64) * shape->sigWords * BLOOMIDX_STRIPE_ROWS +
		(shape->summaries ? sizeof(uint32) * shape->nColumns * BLOOMIDX_STRIPE_ROWS : 0);

	return add_size(MAXALIGN(offsetof(BloomSlicedShared, leftovers) +
							 sizeof(int) * nparticipants),
					mul_size(perParticipant, nparticipants));
}

/* Leftover TIDs and signature words of participant p */
static ItemPointer
BloomLeftoverTids(BloomSlicedShared *shared, int p)
{
	Size		perParticipant = MAXALIGN(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS) +
		sizeof(uint64) * shared->sigWords * BLOOMIDX_STRIPE_ROWS +
		sizeof(uint32) * shared->nKeys * BLOOMIDX_STRIPE_ROWS;

	return (ItemPointer) ((char *) shared +
						  MAXALIGN(offsetof(BloomSlicedShared, leftovers) +
								   sizeof(int) * shared->nparticipants) +
						  perParticipant * p);
}

static uint64 *
BloomLeftoverWords(BloomSlicedShared *shared, int p)
{
	return (uint64 *) ((char *) BloomLeftoverTids(shared, p) +
					   MAXALIGN(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS));
}

/* Leftover summary keys of participant p (nKeys a row) */
static uint32 *
BloomLeftoverKeys(BloomSlicedShared *shared, int p)
{
	return (uint32 *) (BloomLeftoverWords(shared, p) +
					   (Size) shared->sigWords * BLOOMIDX_STRIPE_ROWS);
}

/*
 * Initialize the shared state of a parallel sliced build.
 */
void
BloomSlicedSharedInit(void *sharedSpace, const BloomShape *shape,
					  int nparticipants)
{
	BloomSlicedShared *shared = (BloomSlicedShared *) sharedSpace;

	memset(shared, 0, offsetof(BloomSlicedShared, leftovers) +
		   sizeof(int) * nparticipants);
	SpinLockInit(&shared->mutex);
	shared->nparticipants = nparticipants;
	shared->sigWords = shape->sigWords;
	shared->nKeys = shape->summaries ? shape->nColumns : 0;
}

/*
 * One participant's share of a parallel sliced build: its part of the
 * heap scan, written as full stripes; its last, partial stripe is left in
 * shared memory, as signatures and TIDs, for the leader to combine.
 */
void
BloomSlicedBuildParticipant(Relation heap, Relation index, IndexInfo *indexInfo,
							const BloomShape *shape, TableScanDesc scan,
							BloomBuildProgress *progress, void *sharedSpace,
							int participant, BloomBuildCounts *counts)
{
	BloomSlicedShared *shared = (BloomSlicedShared *) sharedSpace;
	BloomSlicedBuildState *bs = BloomSlicedBuildStateCreate(index, shape, shared);
	ItemPointer tids = BloomLeftoverTids(shared, participant);
	uint64	   *words = BloomLeftoverWords(shared, participant);

	bs->progress = progress;
	bs->expectedStripes = BloomBuildExpectedStripes(heap);
	counts->reltuples = table_index_build_scan(heap, index, indexInfo, true,
											   progress->report,
											   BloomSlicedBuildCallback, bs, scan);

	/* The rows of the partial stripe, for the leader */
	memcpy(tids, bs->tids, sizeof(ItemPointerData) * bs->nrows);
	BloomSlicedPartialWords(bs, words);
	if (bs->nKeys > 0)
		memcpy(BloomLeftoverKeys(shared, participant), bs->keys,
			   sizeof(uint32) * bs->nKeys * bs->nrows);
	shared->leftovers[participant] = bs->nrows;
	counts->indtuples = bs->indtuples;
	counts->bitsSet = bs->bitsSet;
	MemoryContextDelete(bs->tmpCtx);
}

/*
 * Build a sliced index: the rows of the table, in table order, become the
 * first row numbers; the metapage is block 0.  With a parallel build's
 * shared state, the full stripes the participants wrote come first, then
 * their leftover rows, combined into the last stripes.
 */
static void
BloomSlicedBuildComplete(Relation heap, Relation index, IndexInfo *indexInfo,
						 const BloomShape *shape, BloomSlicedShared *shared,
						 BloomBuildCounts *counts)
{
	BloomSlicedBuildState *bs = BloomSlicedBuildStateCreate(index, shape, NULL);
	Buffer		metabuf;
	BloomMetaPage meta;
	uint64		rows;
	uint32		k;
	BlockNumber pending[BLOOMIDX_PENDING_CROWDED];
	int			npending = 0;

	bs->expectedStripes = BloomBuildExpectedStripes(heap);
	if (shared == NULL && heap->rd_rel->reltuples < 0)
		bs->heapBlocks = RelationGetNumberOfBlocks(heap);
	if (shared != NULL)
		memcpy(bs->groups, &shared->groups, sizeof(BloomBuildGroups));
	if (shared == NULL)
	{
		BloomBuildProgress progress = {true, NULL, 0};

		bs->progress = &progress;
		counts->reltuples = table_index_build_scan(heap, index, indexInfo,
												   true, true,
												   BloomSlicedBuildCallback,
												   bs, NULL);
		counts->indtuples = bs->indtuples;
		counts->bitsSet = bs->bitsSet;
		rows = 0;
	}
	else
	{
		int			p,
					r;

		/* The full stripes the participants wrote, then their leftovers */
		if (shared->nStripes > bs->maxStripes)
		{
			bs->maxStripes = shared->nStripes;
			bs->stripes = repalloc(bs->stripes, sizeof(BlockNumber) * bs->maxStripes);
		}
		memcpy(bs->stripes, shared->stripes, sizeof(BlockNumber) * shared->nStripes);
		if (shared->haveBlocks && !bs->haveBlocks)
		{
			memcpy(bs->lastBlocks, shared->lastBlocks, sizeof(bs->lastBlocks));
			bs->haveBlocks = true;
		}
		bs->nStripes = shared->nStripes;
		rows = (uint64) shared->nStripes * BLOOMIDX_STRIPE_ROWS;
		for (p = 0; p < shared->nparticipants; p++)
		{
			ItemPointer tids = BloomLeftoverTids(shared, p);
			uint64	   *words = BloomLeftoverWords(shared, p);
			uint32	   *keys = BloomLeftoverKeys(shared, p);

			for (r = 0; r < shared->leftovers[p]; r++)
				BloomSlicedAddRow(bs, words + (Size) r * shape->sigWords,
								  keys + (Size) r * shared->nKeys, &tids[r]);
			rows += shared->leftovers[p];
		}
	}
	/*
	 * The rows short of a full stripe: pending pages if the build wrote no
	 * stripe (a table smaller than a stripe) or the stripe lists have no
	 * room for another, else, or if they do not fit in pending pages, a
	 * partial stripe that merges fill up (scans read every pending page,
	 * see sliced.h)
	 */
	if (bs->nrows > 0 &&
		(bs->nStripes == 0 || bs->nStripes >= BLOOMIDX_MAX_STRIPES))
		npending = BloomSlicedBuildPending(bs, pending);
	if (bs->nrows > 0 && npending <= 0)
		BloomSlicedFlushStripe(bs);
	if (shared == NULL)
		rows = (uint64) counts->indtuples;
	if (npending > 0)
		rows = (uint64) bs->nStripes * BLOOMIDX_STRIPE_ROWS;

	/* The stripe lists, then the metapage */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	for (k = 0; k * BLOOMIDX_STRIPELIST_ENTRIES < bs->nStripes; k++)
	{
		PGAlignedBlock image;
		uint32		n = Min(bs->nStripes - k * BLOOMIDX_STRIPELIST_ENTRIES,
							BLOOMIDX_STRIPELIST_ENTRIES);

		BloomInitSlicedPage(image.data, BLOOMIDX_STRIPELIST, shape->sigBits, k);
		BloomStripeListFill(image.data, bs->stripes + k * BLOOMIDX_STRIPELIST_ENTRIES, n);
		BloomSlicedMeta(meta)->stripeLists[k] = BloomBuildWritePage(index, image.data, false);
	}
	BloomSlicedMeta(meta)->mergedRows = rows;
	BloomSlicedMeta(meta)->nStripes = bs->nStripes;
	if (bs->nKeys > 0)
	{
		BloomSlicedSummaryMeta(meta)->completeBelow = bs->nStripes;
		if (bs->haveBlocks)
		{
			memcpy(BloomSlicedSummaryMeta(meta)->blocks, bs->lastBlocks,
				   sizeof(uint16) * shape->nColumns);
			BloomSlicedSummaryMeta(meta)->flags |= BLOOMIDX_SUMMARY_MEASURED;
		}
		BloomBuildGroupsToMeta(bs, meta);
	}
	if (npending > 0)
	{
		memcpy(BloomSlicedMeta(meta)->pendingPages, pending, sizeof(BlockNumber) * npending);
		BloomSlicedMeta(meta)->nPending = npending;
	}
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	pfree(bs->stripes);
	MemoryContextDelete(bs->tmpCtx);
}

/*
 * The build's summary groups into the metapage: the index-wide blocks, as
 * the sizes merges give their new stripes, and the slots
 */
static void
BloomBuildGroupsToMeta(BloomSlicedBuildState *bs, BloomMetaPage meta)
{
	BloomBuildGroups *groups = bs->groups;

	if (!groups->haveWide)
		return;
	memcpy(BloomSlicedSummaryMeta(meta)->blocks, groups->wide,
		   sizeof(uint16) * bs->state.shape.nColumns);
	BloomSlicedSummaryMeta(meta)->flags |= BLOOMIDX_SUMMARY_MEASURED;
	memcpy(BloomSlicedGroupMeta(meta)->slots, groups->slots,
		   sizeof(BloomSlicedGroupSlot) * groups->nslots);
}

/*
 * Build a sliced index serially (the routine table's build).
 */
void
BloomSlicedBuild(Relation heap, Relation index, IndexInfo *indexInfo,
				 const BloomShape *shape, BloomBuildCounts *counts)
{
	BloomSlicedBuildComplete(heap, index, indexInfo, shape, NULL, counts);
}

/*
 * Complete a parallel sliced build in the leader, once every participant
 * is done: the participants' leftover rows, the stripe lists and the
 * metapage (the routine table's buildfinish).
 */
void
BloomSlicedBuildFinish(Relation heap, Relation index, IndexInfo *indexInfo,
					   const BloomShape *shape, void *shared)
{
	BloomBuildCounts counts;

	BloomSlicedBuildComplete(heap, index, indexInfo, shape,
							 (BloomSlicedShared *) shared, &counts);
}
