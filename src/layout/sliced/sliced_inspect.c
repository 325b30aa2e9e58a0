/*-------------------------------------------------------------------------
 *
 * sliced_inspect.c
 *	  The sliced layout's part of bloomidx_stats and bloomidx_check past
 *	  the page checks: what the stripe summaries hold (the routine table's
 *	  summarystats: their pages, the stripes they cover, their fill,
 *	  false-positive rates and load), and the heapallindexed pass over the
 *	  keys the index keeps of the rows' values (heapcheckbegin and
 *	  heapcheckrow: the summaries', and the pending rows' keys).  See
 *	  src/README, "Stripe summaries".
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_inspect.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/hsearch.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "sliced.h"

/*
 * Keys a summary of nblocks blocks holds, as the bits set of its
 * nblocks * 256 imply: each key sets one bit in each of a block's words,
 * so a word of a block that took x keys has (31/32)^x of its bits clear.
 * A summary with every bit set counts as one with one bit clear (a lower
 * bound).
 */
static double
BloomSummaryImpliedKeys(double bitsSet, int nblocks)
{
	double		bits = (double) nblocks * BLOOMIDX_SUMMARY_BLOCK_WORDS * 32;
	double		clear = Max(bits - bitsSet, 1.0);

	return nblocks * log(clear / bits) / log(31.0 / 32.0);
}

/*
 * Add to out the summary of stripe s, whose columns' blocks (nblocks of
 * them, per column) have colSet bits set and colFpr summed rates: its
 * bits, its rate, its load.  capped: its blocks were scaled down to fit a
 * stripe's most summary pages, so that a load over its sizing is no sign
 * the data has changed.
 */
static void
BloomSummaryStatsAdd(uint32 s, const uint16 *blocks, const double *colSet,
					 const double *colFpr, bool capped, int nColumns,
					 int bitsPerKey, double overload,
					 BloomSummaryStatsData *out)
{
	int			c;

	out->stripes++;
	for (c = 0; c < nColumns; c++)
	{
		int			nblocks = blocks[c];
		double		keys,
					sized,
					load;

		if (nblocks == 0)
			continue;
		out->bits[c] += (double) nblocks * BLOOMIDX_SUMMARY_BLOCK_WORDS * 32;
		out->bitsSet[c] += colSet[c];
		out->fprSum[c] += colFpr[c] / nblocks;
		keys = BloomSummaryImpliedKeys(colSet[c], nblocks);
		sized = (double) nblocks * BLOOMIDX_SUMMARY_BLOCK_WORDS * 32 / bitsPerKey;
		load = keys / sized;
		if (capped)
			continue;
		if (load > overload)
			out->overloaded[c]++;
		if (load > out->worstLoad[c])
		{
			out->worstLoad[c] = load;
			out->worstKeys[c] = keys;
			out->worstSized[c] = sized;
			out->worstFpr[c] = colFpr[c] / nblocks;
			out->worstFull[c] = colSet[c] >= (double) nblocks * BLOOMIDX_SUMMARY_BLOCK_WORDS * 32;
			out->worstStripe[c] = s;
		}
	}
}

/* Bits set in a summary block, and the rate at which it lets a key through */
static int
BloomSummaryBlockStats(const uint32 *block, double *rate)
{
	int			set = 0;
	int			w;

	*rate = 1.0;
	for (w = 0; w < BLOOMIDX_SUMMARY_BLOCK_WORDS; w++)
	{
		int			n = pg_popcount32(block[w]);

		set += n;
		*rate *= n / 32.0;
	}
	return set;
}

/*
 * Add the summary of stripe s (of a complete summary, as pages lists it)
 * to out (BloomSummaryStatsAdd).  False if a summary page is not
 * the stripe's (the stripe was emptied, or the index is corrupted: the
 * checks say which).
 */
static bool
BloomSummaryStatsStripe(Relation index, const BloomStripePages *pages,
						int nColumns, int bitsPerKey, double overload,
						BufferAccessStrategy bas, BloomSummaryStatsData *out)
{
	double		colSet[BLOOMIDX_MAX_COLUMNS];
	double		colFpr[BLOOMIDX_MAX_COLUMNS];
	int			total = BloomSummaryTotalBlocks(pages->summaryBlocks, nColumns);
	int			limit = BLOOMIDX_SUMMARY_MAX_PAGES * BLOOMIDX_SUMMARY_PAGE_BLOCKS;
	bool		capped = total >= limit - 2 * nColumns;
	int			c = 0;
	int			end = pages->summaryBlocks[0];
	int			g = 0;
	int			p;

	if (total == 0 ||
		pages->nSummaryPages < (total + BLOOMIDX_SUMMARY_PAGE_BLOCKS - 1) /
		BLOOMIDX_SUMMARY_PAGE_BLOCKS)
		return false;
	memset(colSet, 0, sizeof(colSet));
	memset(colFpr, 0, sizeof(colFpr));
	for (p = 0; g < total; p++)
	{
		Buffer		buffer;
		Page		page;
		const uint32 *words;
		int			last = Min(total, (p + 1) * BLOOMIDX_SUMMARY_PAGE_BLOCKS);

		CHECK_FOR_INTERRUPTS();
		buffer = ReadBufferExtended(index, MAIN_FORKNUM, pages->summaryPages[p],
									RBM_NORMAL, bas);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!BloomPageIsSliced(page, BLOOMIDX_SUMMARY, pages->stripe))
		{
			UnlockReleaseBuffer(buffer);
			return false;
		}
		words = BloomSummaryPageBlocks(page);
		for (; g < last; g++)
		{
			const uint32 *block = words + (Size) (g % BLOOMIDX_SUMMARY_PAGE_BLOCKS) *
				BLOOMIDX_SUMMARY_BLOCK_WORDS;
			double		rate;

			while (g >= end)
				end += pages->summaryBlocks[++c];
			colSet[c] += BloomSummaryBlockStats(block, &rate);
			colFpr[c] += rate;
		}
		UnlockReleaseBuffer(buffer);
	}

	out->pages += pages->nSummaryPages;
	BloomSummaryStatsAdd(pages->stripe, pages->summaryBlocks, colSet, colFpr,
						 capped, nColumns, bitsPerKey, overload, out);
	return true;
}

/*
 * Add to out the summaries of the stripes sealed in a group's region
 * (sliced.h), each page of the region read once; those of stripes the
 * snapshot does not list are left out.  False if a page of the region is
 * not the group's (the region was freed, or the index is corrupted: the
 * checks say which).
 */
static bool
BloomSummaryStatsGroup(Relation index, const BloomSlicedSnapshot *snap,
					   const BloomSlicedGroupSlot *slot, int nColumns,
					   int bitsPerKey, double overload,
					   BufferAccessStrategy bas, BloomSummaryStatsData *out)
{
	const uint16 *blocks = snap->groupBlocks;
	uint32		first = BloomGroupFirstStripe(slot);
	int			positions = BloomGroupPositions(slot->perStripe);
	int			total = BloomSummaryTotalBlocks(blocks, nColumns);
	int			limit = BLOOMIDX_SUMMARY_MAX_PAGES * BLOOMIDX_SUMMARY_PAGE_BLOCKS;
	bool		capped = total >= limit - 2 * nColumns;
	double	   *colSet = palloc0(sizeof(double) * positions * nColumns);
	double	   *colFpr = palloc0(sizeof(double) * positions * nColumns);
	bool		sound = true;
	int			c;
	int			p;

	for (c = 0; c < nColumns && sound; c++)
	{
		int			b;

		for (b = 0; b < blocks[c]; b += slot->perStripe)
		{
			int			index0;
			BlockNumber blkno = BloomGroupBlockPage(slot, blocks, c, b, 0, &index0);
			Buffer		buffer;
			Page		page;
			const uint32 *words;

			CHECK_FOR_INTERRUPTS();
			if (blkno >= slot->first + slot->npages)
			{
				sound = false;
				break;
			}
			buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, bas);
			LockBuffer(buffer, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buffer);
			if (!BloomPageIsSliced(page, BLOOMIDX_GROUP, first))
			{
				UnlockReleaseBuffer(buffer);
				sound = false;
				break;
			}
			words = BloomSummaryPageBlocks(page);
			for (p = 0; p < positions; p++)
			{
				int			bb;

				if ((slot->sealed & ((uint64) 1 << p)) == 0)
					continue;
				for (bb = b; bb < Min(b + slot->perStripe, blocks[c]); bb++)
				{
					double		rate;

					colSet[p * nColumns + c] +=
						BloomSummaryBlockStats(words + (Size) (p * slot->perStripe + bb % slot->perStripe) *
											   BLOOMIDX_SUMMARY_BLOCK_WORDS, &rate);
					colFpr[p * nColumns + c] += rate;
				}
			}
			UnlockReleaseBuffer(buffer);
		}
	}

	if (sound)
	{
		out->pages += slot->npages;
		for (p = 0; p < positions; p++)
		{
			uint32		s = first + p;
			BlockNumber blkno = BloomSnapStripe(snap, s);

			if ((slot->sealed & ((uint64) 1 << p)) == 0 ||
				blkno == InvalidBlockNumber ||
				BloomStripeRows(snap->mergedRows, s) == 0)
				continue;
			BloomSummaryStatsAdd(s, blocks, colSet + p * nColumns,
								 colFpr + p * nColumns, capped, nColumns,
								 bitsPerKey, overload, out);
		}
	}
	pfree(colSet);
	pfree(colFpr);
	return sound;
}

/*
 * What the stripe summaries of a sliced index hold (the routine table's
 * summarystats): with exact, every listed stripe's summary pages and the
 * summary groups' regions are read, under the merge lock so that stripes
 * stay; else the metapage alone.
 */
void
BloomSlicedSummaryStats(Relation index, bool exact, double overload,
						BloomSummaryStatsData *out)
{
	Buffer		metabuf;
	BloomMetaPage meta;
	BloomSlicedSnapshot *snap;
	BloomStripePages *pages;
	BufferAccessStrategy bas;
	int			nColumns;
	int			sigBits;
	int			g;
	uint32		s;

	memset(out, 0, sizeof(BloomSummaryStatsData));
	if (exact)
		LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	if (meta->version >= BLOOMIDX_FORMAT_SUMMARIES &&
		meta->layout == BLOOMIDX_LAYOUT_SLICED)
		out->bitsPerKey = Min(BloomSlicedSummaryMeta(meta)->bitsPerKey,
							  BLOOMIDX_SUMMARY_MAX_BITS_PER_KEY);
	nColumns = Min(meta->nColumns, BLOOMIDX_MAX_COLUMNS);
	sigBits = meta->sigBits;
	UnlockReleaseBuffer(metabuf);
	if (out->bitsPerKey > 0)
		out->designedFpr = BloomSummaryFpr(out->bitsPerKey);
	if (!exact)
		return;
	out->counted = true;
	if (out->bitsPerKey == 0)
	{
		UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
		return;
	}

	snap = palloc(sizeof(BloomSlicedSnapshot));
	pages = palloc(sizeof(BloomStripePages));
	bas = GetAccessStrategy(BAS_BULKREAD);
	BloomTakeSnapshot(index, snap, true);
	for (g = 0; g < snap->nGroups; g++)
		BloomSummaryStatsGroup(index, snap, &snap->groups[g], nColumns,
							   out->bitsPerKey, overload, bas, out);
	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		BlockNumber blkno = BloomSnapStripe(snap, s);

		CHECK_FOR_INTERRUPTS();
		if (blkno == InvalidBlockNumber ||
			BloomStripeRows(snap->mergedRows, s) == 0 ||
			!BloomReadStripe(index, s, blkno, sigBits, pages) ||
			pages->summaryColumns == 0 ||
			(pages->flags & BLOOMIDX_STRIPE_SUMMARY_GROUPED) != 0)
			continue;
		if (pages->summaryColumns != nColumns ||
			(pages->flags & BLOOMIDX_STRIPE_SUMMARY_INCOMPLETE) != 0 ||
			!BloomSummaryStatsStripe(index, pages, nColumns, out->bitsPerKey,
									 overload, bas, out))
			out->pages += pages->nSummaryPages;
	}
	FreeAccessStrategy(bas);
	pfree(pages);
	BloomFreeSnapshot(snap);
	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
}

/* A pending row's keys, for BloomSlicedHeapCheckRow */
typedef struct BloomPendingKeysEntry
{
	ItemPointerData tid;		/* the key */
	BlockNumber blkno;			/* its pending page */
	uint32		keys[FLEXIBLE_ARRAY_MEMBER];	/* nColumns */
} BloomPendingKeysEntry;

/* State of bloomidx_check's heapallindexed pass over the keys */
typedef struct BloomSlicedHeapCheckData
{
	Relation	index;
	BloomState	state;
	void	   *summaryCheck;	/* BloomSlicedSummaryCheckBegin's, or NULL */
	HTAB	   *pending;		/* BloomPendingKeysEntry by TID */
	uint32		keys[BLOOMIDX_MAX_COLUMNS];
} BloomSlicedHeapCheckData;

/*
 * Begin bloomidx_check's check of the keys the index keeps of the rows'
 * values (the routine table's heapcheckbegin): the summaries of complete
 * stripes (BloomSlicedSummaryCheckBegin), and the keys the rows of the
 * pending pages carry (format 4: those a merge will add to a summary),
 * read under the merge lock so that no merge takes them meanwhile, as many
 * as maintenance_work_mem holds.  Rows of pages flagged BLOOMIDX_KEYLESS
 * have none.  Returns NULL if the index keeps no keys.
 */
void *
BloomSlicedHeapCheckBegin(Relation index, BloomState state)
{
	BloomSlicedHeapCheckData *hc;
	BloomSlicedSnapshot *snap;
	HASHCTL		ctl;
	Size		entrySize;
	double		maxRows;
	double		nrows = 0;
	int			slotBytes = BloomSlicedSlotBytes(state);
	int			i;

	if (!BloomSlicedPendingHasKeys(state))
		return NULL;
	hc = palloc0(sizeof(BloomSlicedHeapCheckData));
	hc->index = index;
	hc->state = state;
	hc->summaryCheck = BloomSlicedSummaryCheckBegin(index, state);

	entrySize = MAXALIGN(offsetof(BloomPendingKeysEntry, keys) +
						 sizeof(uint32) * state->shape.nColumns);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(ItemPointerData);
	ctl.entrysize = entrySize;
	ctl.hcxt = CurrentMemoryContext;
	hc->pending = hash_create("bloomidx pending keys check", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	maxRows = (double) maintenance_work_mem * 1024.0 / (2 * entrySize + 16);

	LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap, false);
	for (i = 0; i < snap->nPending; i++)
	{
		Buffer		buffer;
		Page		page;
		int			ntuples,
					t;

		CHECK_FOR_INTERRUPTS();
		buffer = ReadBuffer(index, snap->pending[i]);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!BloomSlicedPageIsData(index, page, snap->pending[i],
								   state->tuplesPerPage) ||
			BloomPageHasFlag(page, BLOOMIDX_KEYLESS))
		{
			UnlockReleaseBuffer(buffer);
			continue;
		}
		ntuples = BloomPageGetNTuples(page);
		if (nrows + ntuples > maxRows)
		{
			UnlockReleaseBuffer(buffer);
			break;
		}
		for (t = 0; t < ntuples; t++)
		{
			BloomPendingKeysEntry *e;
			ItemPointer tid = BloomPageGetTid(page, slotBytes, t);

			if (!ItemPointerIsValid(tid))
				continue;
			e = hash_search(hc->pending, tid, HASH_ENTER, NULL);
			e->blkno = snap->pending[i];
			BloomPendingGetKeys(state, BloomPageGetSignature(page, slotBytes, t),
								e->keys);
		}
		nrows += ntuples;
		UnlockReleaseBuffer(buffer);
	}
	BloomFreeSnapshot(snap);
	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	return hc;
}

/*
 * Complain unless the index keeps the keys of a row of the table's values
 * (the routine table's heapcheckrow): in its stripe's summary, if the
 * stripe's is complete, or on its pending page, where a wrong key would
 * leave its value out of the summary of the stripe a merge writes it to.
 */
void
BloomSlicedHeapCheckRow(void *arg, Relation heap, ItemPointer tid,
						Datum *values, bool *isnull)
{
	BloomSlicedHeapCheckData *hc = (BloomSlicedHeapCheckData *) arg;
	const BloomShape *shape = &hc->state->shape;
	BloomPendingKeysEntry *e;
	int			c;

	if (hc->summaryCheck != NULL)
		BloomSlicedSummaryCheckRow(hc->summaryCheck, heap, tid, values, isnull);
	e = hash_search(hc->pending, tid, HASH_FIND, NULL);
	if (e == NULL)
		return;
	BloomFormSummaryKeys(hc->state, values, isnull, hc->keys);
	for (c = 0; c < shape->nColumns; c++)
	{
		if ((shape->setColumns & (1U << c)) != 0 || e->keys[c] == hc->keys[c])
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a wrong key for column %d of row (%u,%u) of table \"%s\"",
						RelationGetRelationName(hc->index), c + 1,
						ItemPointerGetBlockNumber(tid),
						ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(heap)),
				 errdetail("Pending page %u holds key %08X for the row, where its value gives %08X: a merge would leave the value out of its stripe's summary.",
						   e->blkno, e->keys[c], hc->keys[c]),
				 errhint("REINDEX the index.")));
	}
}
