/*-------------------------------------------------------------------------
 *
 * sliced_util.c
 *	  Helpers of the sliced layout: snapshots of the metapage's lists,
 *	  reading stripes and their rows back, transposition, the sizes and
 *	  the live rows' pages.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_util.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/instrument.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"
#include "sliced.h"

static void BloomCheckStripeSealed(Relation index, const BloomSlicedSnapshot *snap,
								   uint32 s, BlockNumber blkno,
								   const BloomStripePages *pages);
static void BloomCheckGroupRegions(Relation index, const BloomSlicedSnapshot *snap);

/*
 * Complain about a page of a sliced index that is not what its list says.
 */
void
BloomSlicedCorrupted(Relation index, BlockNumber blkno, const char *what)
{
	BloomReportCorruption(index, blkno, psprintf("A %s was expected.", what));
}

/*
 * Copy the metapage's lists; with stripes, the stripe lists too.
 */
void
BloomTakeSnapshot(Relation index, BloomSlicedSnapshot *snap, bool stripes)
{
	Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	BloomMetaPage meta;
	uint32		k;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	snap->mergedRows = BloomSlicedMeta(meta)->mergedRows;
	snap->firstStripe = BloomSlicedMeta(meta)->firstStripe;
	snap->nStripes = Max(BloomSlicedMeta(meta)->nStripes, BloomSlicedMeta(meta)->firstStripe);
	snap->nStripes = Min(snap->nStripes, BloomSlicedMeta(meta)->firstStripe + BLOOMIDX_MAX_STRIPES);
	snap->nPending = Min(BloomSlicedMeta(meta)->nPending, BLOOMIDX_PENDING_SIZE);
	memcpy(snap->pending, BloomSlicedMeta(meta)->pendingPages, sizeof(BlockNumber) * snap->nPending);
	memcpy(snap->stripeLists, BloomSlicedMeta(meta)->stripeLists, sizeof(snap->stripeLists));
	snap->summariesSized = BloomSlicedSummaryMeta(meta)->bitsPerKey == 0 ||
		(BloomSlicedSummaryMeta(meta)->flags & BLOOMIDX_SUMMARY_MEASURED) != 0;
	snap->nGroups = 0;
	for (k = 0; k < BLOOMIDX_GROUP_SLOTS; k++)
	{
		const BloomSlicedGroupSlot *slot = &BloomSlicedGroupMeta(meta)->slots[k];

		if (slot->groupPlus1 != 0)
			snap->groups[snap->nGroups++] = *slot;
	}
	memset(snap->groupBlocks, 0, sizeof(snap->groupBlocks));
	if (snap->nGroups > 0)
		memcpy(snap->groupBlocks, BloomSlicedSummaryMeta(meta)->blocks,
			   sizeof(uint16) * Min(meta->nColumns, BLOOMIDX_MAX_COLUMNS));
	snap->stripes = NULL;
	if (stripes)
	{
		uint32		nlisted = snap->nStripes - snap->firstStripe;

		snap->stripes = palloc(sizeof(BlockNumber) * Max(nlisted, 1));
		for (k = 0; k * BLOOMIDX_STRIPELIST_ENTRIES < nlisted; k++)
		{
			uint32		n = Min(nlisted - k * BLOOMIDX_STRIPELIST_ENTRIES,
								BLOOMIDX_STRIPELIST_ENTRIES);
			Buffer		buffer;

			if (snap->stripeLists[k] == InvalidBlockNumber)
				BloomSlicedCorrupted(index, BLOOMIDX_METAPAGE_BLKNO,
									 "metapage listing every stripe-list page");
			buffer = ReadBuffer(index, snap->stripeLists[k]);
			LockBuffer(buffer, BUFFER_LOCK_SHARE);
			if (!BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_STRIPELIST,
								   snap->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES + k))
				BloomSlicedCorrupted(index, snap->stripeLists[k], "stripe-list page");
			BloomStripeListCopy(BufferGetPage(buffer),
								snap->stripes + k * BLOOMIDX_STRIPELIST_ENTRIES, n);
			UnlockReleaseBuffer(buffer);
		}

		/*
		 * Every stripe page listed is a page of the index (other than the
		 * metapage): a stripe page is added before it is listed, so the
		 * length read now covers every sound entry (BloomBlocksCovering
		 * reads it only for an entry past a length seen before).
		 */
		for (k = 0; k < nlisted; k++)
		{
			BlockNumber blkno = snap->stripes[k];
			BlockNumber nblocks;

			if (blkno == InvalidBlockNumber)
				continue;
			nblocks = BloomBlocksCovering(index, blkno);
			if (blkno == BLOOMIDX_METAPAGE_BLKNO || blkno >= nblocks)
				BloomReportCorruption(index,
									  snap->stripeLists[k / BLOOMIDX_STRIPELIST_ENTRIES],
									  psprintf("Stripe %u is listed at block %u, not a page of the index's %u blocks other than the metapage.",
											   snap->firstStripe + k, blkno, nblocks));
		}
	}
	UnlockReleaseBuffer(metabuf);
}

/*
 * Free a snapshot taken by BloomTakeSnapshot (palloc'd by the caller).
 */
void
BloomFreeSnapshot(BloomSlicedSnapshot *snap)
{
	if (snap->stripes != NULL)
		pfree(snap->stripes);
	pfree(snap);
}

/*
 * Is group g's region still at first, as in the snapshot a scan (or
 * bloomidx_check) took?  A page of it that is not a page of the group is
 * corruption if so, else the region was freed under the reader by a
 * VACUUM that moved or dropped it.
 */
bool
BloomGroupStillHeld(Relation index, uint32 g, BlockNumber first)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	const BloomSlicedGroupSlot *slot;
	bool		held;

	BloomTakeSnapshot(index, snap, false);
	slot = BloomSnapGroup(snap, g * BLOOMIDX_GROUP_STRIPES);
	held = slot != NULL && slot->first == first;
	BloomFreeSnapshot(snap);
	return held;
}

/*
 * Is stripe s still listed, at stripe page blkno?  A page of a stripe
 * that is not what it should be is corruption if so, else a page freed
 * (and maybe reused) since the caller listed the stripe.
 */
static bool
BloomStripeIsListed(Relation index, uint32 s, BlockNumber blkno)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	bool		listed;

	BloomTakeSnapshot(index, snap, true);
	listed = BloomSnapStripe(snap, s) == blkno;
	BloomFreeSnapshot(snap);
	return listed;
}

/*
 * Complain if block blkno, which a scan read as a pending page and found
 * no data page of the index, is still listed as a pending page: a page is
 * initialized in the WAL record that lists it, and freed only after the
 * record that takes it off the list, both under the exclusive metapage
 * lock, so a listed pending page is a data page.  If it is not listed, a
 * merge took its rows (below the scan's second mergedRows) and freed it.
 */
void
BloomCheckPendingGone(Relation index, BloomState state, BlockNumber blkno)
{
	Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	BloomMetaPage meta;
	bool		listed = false;
	bool		sound = true;
	int			i;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	for (i = 0; i < BloomSlicedMeta(meta)->nPending && !listed; i++)
		listed = BloomSlicedMeta(meta)->pendingPages[i] == blkno;
	if (listed)
	{
		Buffer		buffer = ReadBuffer(index, blkno);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		sound = BloomPageIsRowPage(BufferGetPage(buffer), state->tuplesPerPage);
		UnlockReleaseBuffer(buffer);
	}
	UnlockReleaseBuffer(metabuf);
	if (!sound)
		BloomSlicedCorrupted(index, blkno, "pending page");
}

/*
 * Copy the page lists of stripe s, whose stripe page is blkno.  Returns
 * false if the page is no longer that stripe's (see BloomStripeIsListed).
 */
bool
BloomReadStripe(Relation index, uint32 s, BlockNumber blkno, int sigBits,
				BloomStripePages *pages)
{
	return BloomReadStripeBuffer(index, s, BloomReadBufferRecent(index, blkno, NULL),
								 sigBits, pages);
}

/*
 * BloomReadStripe of a stripe page already pinned in buffer, which it
 * releases.
 */
bool
BloomReadStripeBuffer(Relation index, uint32 s, Buffer buffer, int sigBits,
					  BloomStripePages *pages)
{
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Page		page;

	BloomSlicedCheckSigBits(index, sigBits);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (!BloomPageIsSliced(page, BLOOMIDX_STRIPE, s))
	{
		UnlockReleaseBuffer(buffer);
		if (BloomStripeIsListed(index, s, blkno))
			BloomSlicedCorrupted(index, blkno, "stripe page");
		return false;
	}
	BloomCheckStripePage(index, page, blkno, sigBits);
	pages->stripe = s;
	BloomStripeGetPages(page, sigBits, pages);
	UnlockReleaseBuffer(buffer);
	return true;
}

/*
 * Read and share-lock page blkno of stripe pages->stripe, which should be
 * of kind flag.  Returns InvalidBuffer if the stripe was emptied since it
 * was listed (see BloomStripeIsListed).
 */
Buffer
BloomReadStripePage(Relation index, const BloomStripePages *pages,
					BlockNumber stripeBlkno, BlockNumber blkno, uint16 flag,
					BufferAccessStrategy bas)
{
	Buffer		buffer = BloomReadBufferRecent(index, blkno, bas);

	if (BloomLockStripePage(index, pages, stripeBlkno, buffer, flag))
		return buffer;
	return InvalidBuffer;
}

/*
 * Share-lock buffer, pinned, which should hold a page of kind flag of
 * stripe pages->stripe.  Returns false, the buffer released, if the stripe
 * was emptied since it was listed.
 */
bool
BloomLockStripePage(Relation index, const BloomStripePages *pages,
					BlockNumber stripeBlkno, Buffer buffer, uint16 flag)
{
	BlockNumber blkno = BufferGetBlockNumber(buffer);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	if (BloomPageIsSliced(BufferGetPage(buffer), flag, pages->stripe))
		return true;
	UnlockReleaseBuffer(buffer);
	if (BloomStripeIsListed(index, pages->stripe, stripeBlkno))
		BloomSlicedCorrupted(index, blkno,
							 flag == BLOOMIDX_SLICE ? "slice page" :
							 flag == BLOOMIDX_SUMMARY ? "summary page" : "TID-map page");
	return false;
}

/*
 * Complain unless TID map t of a stripe of rows rows (those below
 * mergedRows), read to hold nrows rows from firstRow, holds the rows its
 * stripe page gives it: from its first row there, and not past the next
 * map's.  Rows past the stripe's may be those of a merge a crash cut short,
 * which the next merge packs again.
 */
void
BloomCheckTidMapRows(Relation index, const BloomStripePages *pages, int t,
					 int firstRow, int nrows, int rows)
{
	int			next = t + 1 < pages->nTidPages ? pages->tidFirstRow[t + 1] : rows;

	if (pages->tidFirstRow[t] < rows && firstRow != pages->tidFirstRow[t])
		BloomReportCorruption(index, pages->tidPages[t],
							  psprintf("The TID map starts at row %d, where its stripe page says %d.",
									   firstRow, pages->tidFirstRow[t]));
	if (next < rows && firstRow + nrows > next)
		BloomReportCorruption(index, pages->tidPages[t],
							  psprintf("The TID map holds rows %d to %d, past row %d where the next TID map starts.",
									   firstRow, firstRow + nrows - 1, next));
}

/*
 * Rows in stripe s: a whole stripe, or what mergedRows leaves of it.
 */
int
BloomStripeRows(uint64 mergedRows, uint32 s)
{
	uint64		first = (uint64) s * BLOOMIDX_STRIPE_ROWS;

	if (mergedRows <= first)
		return 0;
	return (int) Min(mergedRows - first, (uint64) BLOOMIDX_STRIPE_ROWS);
}

/*
 * Complain that the sliced layout has no room for more rows.
 */
void
BloomTooManyRows(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("index \"%s\" is full", RelationGetRelationName(index)),
			 errdetail("The sliced layout keeps at most %u stripes of %d rows between its oldest and newest rows.",
					   (uint32) BLOOMIDX_MAX_STRIPES, (int) BLOOMIDX_STRIPE_ROWS),
			 errhint("VACUUM the table, which moves the oldest rows forward, or REINDEX the index.")));
}

/*
 * One step of BloomTranspose64: swap the j x j blocks off the diagonal of
 * every 2j x 2j block, the bits m selects.  Inlined with j and m constant
 * (a build transposes 64 rows for every 64 bits of their signatures).
 */
static inline void
BloomTransposeStep(uint64 a[64], int j, uint64 m)
{
	int			base,
				k;

	for (base = 0; base < 64; base += 2 * j)
	{
		for (k = base; k < base + j; k++)
		{
			uint64		t = ((a[k] >> j) ^ a[k + j]) & m;

			a[k + j] ^= t;
			a[k] ^= t << j;
		}
	}
}

/*
 * Transpose a 64 x 64 bit matrix: bit j of a[i] becomes bit i of a[j]
 * (Hacker's Delight, 7-3).
 */
void
BloomTranspose64(uint64 a[64])
{
	BloomTransposeStep(a, 32, UINT64CONST(0x00000000FFFFFFFF));
	BloomTransposeStep(a, 16, UINT64CONST(0x0000FFFF0000FFFF));
	BloomTransposeStep(a, 8, UINT64CONST(0x00FF00FF00FF00FF));
	BloomTransposeStep(a, 4, UINT64CONST(0x0F0F0F0F0F0F0F0F));
	BloomTransposeStep(a, 2, UINT64CONST(0x3333333333333333));
	BloomTransposeStep(a, 1, UINT64CONST(0x5555555555555555));
}

/*
 * Sizes the cost model and bloomidx_stats need: stripes in use, pending
 * pages, the row numbers the stripe lists span.
 */
void
BloomSlicedSizes(Relation index, BloomLayoutSizesData *sizes)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	uint32		s;

	BloomTakeSnapshot(index, snap, true);
	sizes->stripes = 0;
	for (s = snap->firstStripe; s < snap->nStripes; s++)
		sizes->stripes += BloomSnapStripe(snap, s) != InvalidBlockNumber ? 1 : 0;
	sizes->pendingPages = snap->nPending;
	sizes->firstRow = (uint64) snap->firstStripe * BLOOMIDX_STRIPE_ROWS;
	sizes->nextRow = Max(snap->mergedRows, sizes->firstRow);
	BloomFreeSnapshot(snap);
}

/*
 * Read back the rows of stripe s that VACUUM has not removed: their row
 * numbers, TIDs and signature words (sigWords words each), in row order.
 * Returns how many; the arrays are palloc'd.  The caller holds the merge
 * lock, so that the stripe stays.
 */
int
BloomReadStripeRows(Relation index, const BloomShape *shape,
					const BloomStripePages *pages, BlockNumber stripeBlkno,
					int rows, int **rowOf, ItemPointerData **tids, uint64 **words)
{
	int			sigWords = shape->sigWords;
	ItemPointerData *map = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	BlockNumber blocks[BLOOMIDX_STRIPE_TIDPAGES + BLOOMIDX_SLICED_MAX_LENGTH];
	BloomReader reader;
	int			nblocks = 0;
	int			nlive = 0;
	int			t,
				b,
				i;

	*rowOf = palloc(sizeof(int) * Max(rows, 1));
	*tids = palloc(sizeof(ItemPointerData) * Max(rows, 1));

	/* Its TID maps, then its slices, read ahead */
	for (t = 0; t < pages->nTidPages; t++)
		blocks[nblocks++] = pages->tidPages[t];
	for (b = 0; b < shape->sigBits; b++)
	{
		if (pages->slices[b] != InvalidBlockNumber)
			blocks[nblocks++] = pages->slices[b];
	}
	BloomReaderInit(&reader, index, NULL, READ_STREAM_FULL);
	BloomReaderStart(&reader, blocks, nblocks, nblocks);

	for (t = 0; t < pages->nTidPages; t++)
	{
		Buffer		buffer;
		int			first,
					n;

		buffer = BloomReaderNext(&reader);
		if (!BloomLockStripePage(index, pages, stripeBlkno, buffer, BLOOMIDX_TIDMAP))
			elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied while it was read",
				 pages->stripe, RelationGetRelationName(index));
		first = BloomTidMapGetFirstRow(BufferGetPage(buffer));
		n = BloomTidMapUnpack(BufferGetPage(buffer), map);
		UnlockReleaseBuffer(buffer);
		if (first != pages->tidFirstRow[t] || (t == 0 && first != 0) ||
			(t > 0 && first < pages->tidFirstRow[t - 1]))
			BloomSlicedCorrupted(index, pages->tidPages[t],
								 "TID-map page starting where the stripe page says");
		BloomCheckTidMapRows(index, pages, t, first, n, rows);
		for (i = 0; i < n && first + i < rows; i++)
		{
			if (ItemPointerIsValid(&map[i]))
			{
				if (nlive >= rows)
					BloomReportCorruption(index, pages->tidPages[t],
										  psprintf("The stripe's TID maps hold more than its %d rows.",
												   rows));
				(*tids)[nlive] = map[i];
				(*rowOf)[nlive++] = first + i;
			}
		}
	}
	pfree(map);

	*words = palloc0(sizeof(uint64) * sigWords * Max(nlive, 1));
	for (b = 0; b < shape->sigBits; b++)
	{
		Buffer		buffer;
		Page		slice;

		if (pages->slices[b] == InvalidBlockNumber)
			continue;
		CHECK_FOR_INTERRUPTS();
		buffer = BloomReaderNext(&reader);
		if (!BloomLockStripePage(index, pages, stripeBlkno, buffer, BLOOMIDX_SLICE))
			elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied while it was read",
				 pages->stripe, RelationGetRelationName(index));
		slice = BufferGetPage(buffer);
		for (i = 0; i < nlive; i++)
		{
			if (BloomSliceHasRow(slice, (*rowOf)[i]))
				(*words)[(Size) i * sigWords + b / 64] |= UINT64CONST(1) << (b % 64);
		}
		UnlockReleaseBuffer(buffer);
	}
	BloomReaderEnd(&reader);
	return nlive;
}

/*
 * Call fn for every row in the slices of a sliced index that VACUUM has
 * not removed, with its TID, its signature (sigBytes bytes) and the block
 * of its stripe page, and return the number of rows.  The caller holds
 * the merge lock (LockPage on the metapage's block), so that rows do not
 * move while it reads.
 */
uint64
BloomSlicedForEachRow(Relation index, const BloomShape *shape,
					  BloomRowCallback fn, void *arg)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomStripePages *pages = palloc(sizeof(BloomStripePages));
	BloomReader stripes;
	uint64		total = 0;
	uint32		s;

	BloomTakeSnapshot(index, snap, true);
	BloomReaderInit(&stripes, index, NULL, READ_STREAM_FULL);
	BloomReaderStartStripes(&stripes, snap);
	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		int			rows = BloomStripeRows(snap->mergedRows, s);
		BlockNumber blkno = BloomSnapStripe(snap, s);
		int		   *rowOf;
		ItemPointerData *tids;
		uint64	   *words;
		int			nlive,
					i;

		if (rows == 0)
			break;
		if (blkno == InvalidBlockNumber)
			continue;
		if (!BloomReadStripeBuffer(index, s, BloomReaderNext(&stripes),
								   shape->sigBits, pages))
			elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied while it was read",
				 s, RelationGetRelationName(index));
		BloomCheckStripeSealed(index, snap, s, blkno, pages);
		nlive = BloomReadStripeRows(index, shape, pages, blkno, rows,
									&rowOf, &tids, &words);
		for (i = 0; i < nlive; i++)
		{
			uint8		sig[BLOOMIDX_SLICED_MAX_LENGTH / 8];

			BloomStoreWords(sig, words + (Size) i * shape->sigWords, shape->sigBytes);
			fn(&tids[i], sig, blkno, arg);
		}
		total += nlive;
		pfree(rowOf);
		pfree(tids);
		pfree(words);
	}
	BloomReaderEnd(&stripes);
	pfree(stripes.blocks);
	BloomCheckGroupRegions(index, snap);
	pfree(pages);
	BloomFreeSnapshot(snap);
	return total;
}


/*
 * Complain unless stripe s (at stripe page blkno, read into pages) is
 * sealed in its summary group's region exactly when its stripe page says
 * so (the snapshot taken under the merge lock).
 */
static void
BloomCheckStripeSealed(Relation index, const BloomSlicedSnapshot *snap,
					   uint32 s, BlockNumber blkno, const BloomStripePages *pages)
{
	const BloomSlicedGroupSlot *slot = BloomSnapGroup(snap, s);
	bool		sealed = slot != NULL &&
		((slot->sealed >> (s % BLOOMIDX_GROUP_STRIPES)) & 1) != 0;
	bool		grouped = (pages->flags & BLOOMIDX_STRIPE_SUMMARY_GROUPED) != 0;

	if (sealed && !grouped)
		BloomReportCorruption(index, blkno,
							  psprintf("Stripe %u is sealed in summary group %u, but its stripe page lists a summary of its own.",
									   s, s / BLOOMIDX_GROUP_STRIPES));
	if (grouped && !sealed)
		BloomReportCorruption(index, blkno,
							  psprintf("The stripe page of stripe %u says it is sealed, but summary group %u does not seal it.",
									   s, s / BLOOMIDX_GROUP_STRIPES));
}

/*
 * Complain unless every page of the summary groups' regions is a group
 * page tagged with its group's first stripe.
 */
static void
BloomCheckGroupRegions(Relation index, const BloomSlicedSnapshot *snap)
{
	int			i;

	for (i = 0; i < snap->nGroups; i++)
	{
		const BloomSlicedGroupSlot *slot = &snap->groups[i];
		uint64		x;
		BlockNumber j;

		/* A stripe leaving its list leaves its group (BloomUnsealStripe) */
		for (x = slot->sealed; x != 0; x &= x - 1)
		{
			uint32		s = BloomGroupFirstStripe(slot) + pg_rightmost_one_pos64(x);

			if (BloomSnapStripe(snap, s) == InvalidBlockNumber)
				BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO,
									  psprintf("Summary group %u seals stripe %u, which is not listed.",
											   slot->groupPlus1 - 1, s));
		}

		for (j = 0; j < slot->npages; j++)
		{
			Buffer		buffer;
			bool		sound;

			CHECK_FOR_INTERRUPTS();
			buffer = ReadBuffer(index, slot->first + j);
			LockBuffer(buffer, BUFFER_LOCK_SHARE);
			sound = BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_GROUP,
									  BloomGroupFirstStripe(slot));
			UnlockReleaseBuffer(buffer);
			/* A VACUUM that moved the region since the snapshot: skip it */
			if (!sound &&
				!BloomGroupStillHeld(index, slot->groupPlus1 - 1, slot->first))
				break;
			if (!sound)
				BloomReportCorruption(index, slot->first + j,
									  psprintf("Page %u of the region of summary group %u is not a page of the group.",
											   j, slot->groupPlus1 - 1));
		}
	}
}

/*
 * The layout's columns of bloomidx_stats (the routine table's
 * statscolumns): stripes, pending_pages, first_row, next_row.
 */
void
BloomSlicedStatsColumns(Relation index, Datum *values, bool *nulls)
{
	BloomLayoutSizesData sizes;

	BloomSlicedSizes(index, &sizes);
	values[0] = Int64GetDatum((int64) sizes.stripes);
	values[1] = Int64GetDatum((int64) sizes.pendingPages);
	values[2] = Int64GetDatum((int64) sizes.firstRow);
	values[3] = Int64GetDatum((int64) sizes.nextRow);
	nulls[0] = nulls[1] = nulls[2] = nulls[3] = false;
}

/*
 * At most how many rows the index holds, for bloomidx_check (the routine
 * table's rowsheld): the rows the stripe lists span and a full page's
 * worth for each pending page.
 */
double
BloomSlicedRowsHeld(Relation index, const BloomMetaPageData *meta)
{
	BloomLayoutSizesData sizes;

	BloomSlicedSizes(index, &sizes);
	return (double) (sizes.nextRow - sizes.firstRow) +
		sizes.pendingPages * meta->tuplesPerPage;
}

/* Order of block numbers, for qsort */
static int
BloomBlockCmp(const void *a, const void *b)
{
	BlockNumber x = *(const BlockNumber *) a;
	BlockNumber y = *(const BlockNumber *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * The row pages of a sliced index whose rows are live, for the walk of
 * bloomidx_stats and bloomidx_check: the pending pages the metapage lists,
 * sorted (a pending page no longer listed holds rows merged since).
 */
BlockNumber *
BloomSlicedLiveRowPages(const BloomMetaPageData *meta, int *npages)
{
	BlockNumber *pages = palloc(sizeof(BlockNumber) * Max(BloomSlicedMeta(meta)->nPending, 1));

	memcpy(pages, BloomSlicedMeta(meta)->pendingPages, sizeof(BlockNumber) * BloomSlicedMeta(meta)->nPending);
	qsort(pages, BloomSlicedMeta(meta)->nPending, sizeof(BlockNumber), BloomBlockCmp);
	*npages = BloomSlicedMeta(meta)->nPending;
	return pages;
}

/*
 * Read stream callback of a BloomReader: its next page, while the reader
 * allows it to be read ahead.
 */
static BlockNumber
BloomReaderNextBlock(ReadStream *stream, void *arg, void *per_buffer_data)
{
	BloomReader *reader = (BloomReader *) arg;

	if (reader->taken >= reader->allowed)
		return InvalidBlockNumber;
	return reader->blocks[reader->taken++];
}

/*
 * Set up reader to read pages of index (with strategy bas) through a read
 * stream of flags once one of them is not in shared buffers.
 */
void
BloomReaderInit(BloomReader *reader, Relation index, BufferAccessStrategy bas,
				int flags)
{
	memset(reader, 0, sizeof(BloomReader));
	reader->index = index;
	reader->bas = bas;
	reader->flags = flags;
}

/*
 * Start reading the n pages of blocks (the caller's array, kept until the
 * next start), in that order, the first allowed of them ahead of their
 * use.  Pages read ahead of the last list and not used are dropped.
 */
void
BloomReaderStart(BloomReader *reader, BlockNumber *blocks, int n, int allowed)
{
	BloomReaderEnd(reader);
	reader->stream = NULL;
	reader->blocks = blocks;
	reader->nblocks = n;
	reader->allowed = Min(allowed, n);
	reader->taken = 0;
	reader->next = 0;
}

/*
 * Let the first n pages of the list be read ahead.
 */
void
BloomReaderAllow(BloomReader *reader, int n)
{
	reader->allowed = Max(reader->allowed, Min(n, reader->nblocks));
}

/*
 * The next page of the list, pinned.  Read as BloomReadBufferRecent reads
 * it while every page so far was in shared buffers; once one was not, read
 * through a read stream over the pages allowed (a stream that ran out of
 * them is started again).
 */
Buffer
BloomReaderNext(BloomReader *reader)
{
	Buffer		buffer;

	Assert(reader->next < reader->nblocks);
	reader->allowed = Max(reader->allowed, reader->next + 1);
	if (!reader->streaming)
	{
		int64		read = pgBufferUsage.shared_blks_read +
			pgBufferUsage.local_blks_read;

		buffer = BloomReadBufferRecent(reader->index, reader->blocks[reader->next],
									   reader->bas);
		reader->streaming = pgBufferUsage.shared_blks_read +
			pgBufferUsage.local_blks_read > read;
		reader->taken = ++reader->next;
		return buffer;
	}
	for (;;)
	{
		if (reader->stream == NULL)
		{
			reader->taken = reader->next;
			reader->stream = read_stream_begin_relation(reader->flags, reader->bas,
														reader->index, MAIN_FORKNUM,
														BloomReaderNextBlock,
														reader, 0);
		}
		buffer = read_stream_next_buffer(reader->stream, NULL);
		if (BufferIsValid(buffer))
			break;
		read_stream_end(reader->stream);
		reader->stream = NULL;
	}
	Assert(BufferGetBlockNumber(buffer) == reader->blocks[reader->next]);
	reader->next++;
	return buffer;
}

/*
 * Done with a reader: pages read ahead and not used are dropped.
 */
void
BloomReaderEnd(BloomReader *reader)
{
	/* The stream takes no more pages as it ends */
	reader->allowed = reader->taken;
	if (reader->stream != NULL)
		read_stream_end(reader->stream);
	reader->stream = NULL;
}

/*
 * Start reading the stripe pages of a snapshot (taken with stripes) in
 * order, those of its stripes up to the first without merged rows, less
 * any emptied; the list is palloc'd in reader->blocks.
 */
void
BloomReaderStartStripes(BloomReader *reader, const BloomSlicedSnapshot *snap)
{
	BlockNumber *blocks = palloc(sizeof(BlockNumber) *
								 Max(snap->nStripes - snap->firstStripe, 1));
	int			n = 0;
	uint32		s;

	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		if (BloomStripeRows(snap->mergedRows, s) == 0)
			break;
		if (BloomSnapStripe(snap, s) != InvalidBlockNumber)
			blocks[n++] = BloomSnapStripe(snap, s);
	}
	BloomReaderStart(reader, blocks, n, n);
}
