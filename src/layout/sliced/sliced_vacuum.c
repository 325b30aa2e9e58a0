/*-------------------------------------------------------------------------
 *
 * sliced_vacuum.c
 *	  VACUUM of an index of the sliced layout: dead rows out of the pending
 *	  pages and the TID maps, stripes emptied back through the pending
 *	  list while their dead rows are over a budget, orphaned pages freed.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_vacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"
#include "sliced.h"

/* Bit of block blkno in a bitmap of the blocks from lo */
#define BLOOM_BIT_BYTE(blkno, lo)	(((blkno) - (lo)) / 8)
#define BLOOM_BIT_MASK(blkno, lo)	(1 << (((blkno) - (lo)) % 8))

/*
 * Mark in referenced, a bitmap of blocks lo .. hi - 1, those of them a
 * sliced index lists: stripe lists, stripes, their slices, TID maps and
 * summary pages, pending pages, summary groups' regions.  The caller holds
 * the merge lock, so that no merge or VACUUM changes them.
 */
static void
BloomSlicedReferenced(Relation index, const BloomShape *shape,
					  uint8 *referenced, BlockNumber lo, BlockNumber hi)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomStripePages *pages = palloc(sizeof(BloomStripePages));
	BlockNumber *stripes;
	BloomReader reader;
	int			nstripes = 0;
	uint32		s;
	int			i;

#define BLOOM_REFERENCE(blkno) \
	do { \
		if ((blkno) >= lo && (blkno) < hi) \
			referenced[BLOOM_BIT_BYTE(blkno, lo)] |= BLOOM_BIT_MASK(blkno, lo); \
	} while (0)

	BloomTakeSnapshot(index, snap, true);
	for (i = 0; i < snap->nPending; i++)
		BLOOM_REFERENCE(snap->pending[i]);
	for (i = 0; i < BLOOMIDX_MAX_STRIPELISTS; i++)
	{
		if (snap->stripeLists[i] != InvalidBlockNumber)
			BLOOM_REFERENCE(snap->stripeLists[i]);
	}
	for (i = 0; i < snap->nGroups; i++)
	{
		BlockNumber j;

		for (j = 0; j < snap->groups[i].npages; j++)
			BLOOM_REFERENCE(snap->groups[i].first + j);
	}

	/* Every listed stripe page, read ahead */
	stripes = palloc(sizeof(BlockNumber) * Max(snap->nStripes - snap->firstStripe, 1));
	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		if (BloomSnapStripe(snap, s) != InvalidBlockNumber)
			stripes[nstripes++] = BloomSnapStripe(snap, s);
	}
	BloomReaderInit(&reader, index, NULL, READ_STREAM_MAINTENANCE | READ_STREAM_FULL);
	BloomReaderStart(&reader, stripes, nstripes, nstripes);

	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		BlockNumber blkno = BloomSnapStripe(snap, s);

		if (blkno == InvalidBlockNumber)
			continue;
		CHECK_FOR_INTERRUPTS();
		BLOOM_REFERENCE(blkno);
		if (!BloomReadStripeBuffer(index, s, BloomReaderNext(&reader),
								   shape->sigBits, pages))
			continue;
		for (i = 0; i < pages->nTidPages; i++)
			BLOOM_REFERENCE(pages->tidPages[i]);
		for (i = 0; i < pages->nSummaryPages; i++)
			BLOOM_REFERENCE(pages->summaryPages[i]);
		for (i = 0; i < shape->sigBits; i++)
		{
			if (pages->slices[i] != InvalidBlockNumber)
				BLOOM_REFERENCE(pages->slices[i]);
		}
	}
#undef BLOOM_REFERENCE
	BloomReaderEnd(&reader);
	pfree(stripes);
	pfree(pages);
	BloomFreeSnapshot(snap);
}

/*
 * Free a page of a sliced index that nothing lists any more: a pending
 * page that a merge froze and published, or a page of a stripe that a
 * merge wrote, but a crash kept from freeing or listing.  The caller holds
 * the merge lock and the page's buffer pinned (it stays so), and found the
 * block missing from BloomSlicedReferenced; a free page, or a pending page
 * added since, is left as it is.  Returns whether the page was freed.
 */
static bool
BloomSlicedFreeOrphan(Relation index, BloomState state, Buffer buffer)
{
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Page		page;
	bool		orphan;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buffer);
	if (PageIsNew(page) || BloomPageIsDeleted(page))
		orphan = false;
	else if (BloomPageHasFlag(page, BLOOMIDX_SLICED_FLAGS))
		orphan = true;
	else
		orphan = BloomSlicedPageIsData(index, page, blkno, state->tuplesPerPage) &&
			BloomPageHasFlag(page, BLOOMIDX_FROZEN);
	if (orphan)
		BloomFreePage(index, buffer);
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	return orphan;
}

/*
 * In the record that takes stripe s out of its list (xlogState, the
 * metapage metabuf locked exclusively), clear its bit in its summary
 * group's slot, if it is sealed there.
 */
static void
BloomUnsealStripe(GenericXLogState *xlogState, Buffer metabuf, uint32 s)
{
	BloomSlicedGroupMetaData *gm =
		BloomSlicedGroupMeta(BloomPageGetMeta(BufferGetPage(metabuf)));
	uint64		bit = UINT64CONST(1) << (s % BLOOMIDX_GROUP_STRIPES);
	int			i;

	for (i = 0; i < BLOOMIDX_GROUP_SLOTS; i++)
	{
		if (gm->slots[i].groupPlus1 != s / BLOOMIDX_GROUP_STRIPES + 1)
			continue;
		if ((gm->slots[i].sealed & bit) != 0)
		{
			Page		page = GenericXLogRegisterBuffer(xlogState, metabuf, 0);

			BloomSlicedGroupMeta(BloomPageGetMeta(page))->slots[i].sealed &= ~bit;
		}
		return;
	}
}

/*
 * Free the regions of the summary groups that seal no stripe and can get
 * no more (their last stripe number is taken): the slots first, in one
 * metapage record, then the pages, each if it is still the group's (a
 * crash between the two leaves orphans, which the walk of
 * BloomSlicedVacuumCleanup frees).  A scan that copied a slot before finds
 * its pages freed by their tags and starts over.  The caller holds the
 * merge lock.
 */
static void
BloomFreeDeadGroups(Relation index)
{
	Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	BloomSlicedGroupSlot dead[BLOOMIDX_GROUP_SLOTS];
	GenericXLogState *xlogState = NULL;
	BloomMetaPage meta;
	int			ndead = 0;
	int			i;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	for (i = 0; i < BLOOMIDX_GROUP_SLOTS; i++)
	{
		BloomSlicedGroupSlot *slot = &BloomSlicedGroupMeta(meta)->slots[i];

		if (slot->groupPlus1 == 0 || slot->sealed != 0 ||
			BloomSlicedMeta(meta)->nStripes <
			(uint64) slot->groupPlus1 * BLOOMIDX_GROUP_STRIPES)
			continue;
		if (xlogState == NULL)
		{
			xlogState = GenericXLogStart(index);
			meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
			slot = &BloomSlicedGroupMeta(meta)->slots[i];
		}
		dead[ndead++] = *slot;
		memset(slot, 0, sizeof(BloomSlicedGroupSlot));
	}
	if (xlogState != NULL)
		GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(metabuf);

	for (i = 0; i < ndead; i++)
	{
		BlockNumber j;

		for (j = 0; j < dead[i].npages; j++)
		{
			Buffer		buffer;

			CHECK_FOR_INTERRUPTS();
			buffer = ReadBuffer(index, dead[i].first + j);
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			if (BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_GROUP,
								  BloomGroupFirstStripe(&dead[i])))
				BloomFreePage(index, buffer);
			UnlockReleaseBuffer(buffer);
		}
	}
}

/*
 * Stripes a VACUUM seals at most: each copies a stripe's summary into its
 * group's region, so that a VACUUM of an index of many stripes loaded
 * since its build does not take that long at once (the next seals more).
 */
#define BLOOM_SEAL_MAX		(4 * BLOOMIDX_GROUP_STRIPES)

/*
 * Fills page j of a region that BloomExtendRegion adds (initialized as a
 * group page of no block set)
 */
typedef void (*BloomRegionFill) (Relation index, Page page, int j, void *arg);

/*
 * Add a contiguous run of npages new pages at the end of the index, as
 * group pages of group g tagged with its first stripe, each filled by fill
 * (if not NULL) and WAL-logged with a full image, MAX_GENERIC_XLOG_PAGES a
 * record, under the relation extension lock (every other extension of the
 * index waits for it).  Returns the first page.  The pages are listed
 * nowhere yet: after a crash, VACUUM's walk frees them.
 */
static BlockNumber
BloomExtendRegion(Relation index, const BloomShape *shape, uint32 g, int npages,
				  BloomRegionFill fill, void *arg)
{
	bool		needLock = !RELATION_IS_LOCAL(index);
	Buffer		buffers[MAX_GENERIC_XLOG_PAGES];
	BlockNumber first = InvalidBlockNumber;
	GenericXLogState *xlogState;
	int			nb = 0;
	int			j;

	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	for (j = 0; j < npages; j++)
	{
		Buffer		buffer;

		if (nb == 0)
			CHECK_FOR_INTERRUPTS();
		buffer = ReadBuffer(index, P_NEW);
		if (j == 0)
			first = BufferGetBlockNumber(buffer);
		else if (BufferGetBlockNumber(buffer) != first + j)
			elog(ERROR, "bloomidx index \"%s\": page %d of a summary group's region is block %u, not %u",
				 RelationGetRelationName(index), j,
				 BufferGetBlockNumber(buffer), first + j);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		buffers[nb++] = buffer;
		if (nb == MAX_GENERIC_XLOG_PAGES || j == npages - 1)
		{
			int			k;

			xlogState = GenericXLogStart(index);
			for (k = 0; k < nb; k++)
			{
				Page		page = GenericXLogRegisterBuffer(xlogState, buffers[k],
															 GENERIC_XLOG_FULL_IMAGE);

				BloomInitSlicedPage(page, BLOOMIDX_GROUP, shape->sigBits,
									g * BLOOMIDX_GROUP_STRIPES);
				if (fill != NULL)
					fill(index, page, j - nb + 1 + k, arg);
			}
			BloomMergeXLogFinish(index, xlogState);
			for (k = 0; k < nb; k++)
				UnlockReleaseBuffer(buffers[k]);
			nb = 0;
		}
	}
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return first;
}

/*
 * The blocks a stripe's column gets in a page of a new region of group g,
 * as a build sizes them (BloomGroupPerStripe) for stripes positions of
 * the group, and at least for position maxPos.
 */
static int
BloomNewRegionPerStripe(double stripes, int maxPos)
{
	return Min(BloomGroupPerStripe(stripes),
			   BLOOMIDX_SUMMARY_PAGE_BLOCKS / (maxPos + 1));
}

/*
 * Positions a group's first region is sized for: the stripes twice the
 * table's rows would give group g, since a table whose full stripes merges
 * filled (one loaded after CREATE INDEX) may still be growing.
 */
#define BloomFirstRegionStripes(g, heapTuples) \
	(2 * (heapTuples) / BLOOMIDX_STRIPE_ROWS - (double) (g) * BLOOMIDX_GROUP_STRIPES)

/*
 * Positions a group's region grows to: a quarter more than the stripes
 * the table's rows give group g, or than its positions in use (up to
 * maxPos), whichever is more.  Not twice: under churn stripe numbers
 * advance while the table keeps its size, so growth repeats, and each
 * growth frees the region it replaces (a region twice the table's needs
 * would leave the index a third larger than a fresh build).
 */
#define BloomGrownRegionStripes(g, heapTuples, maxPos) \
	(1.25 * Max((heapTuples) / BLOOMIDX_STRIPE_ROWS - \
				(double) (g) * BLOOMIDX_GROUP_STRIPES, (double) (maxPos) + 1))

/*
 * Allocate the region of summary group g, sized by BloomNewRegionPerStripe
 * (a table that grows seals its next stripes too, while the region of a
 * small index stays the size of its stripes' own summaries), and give it a
 * free slot of the metapage: new pages (BloomExtendRegion), then, in one
 * metapage record, the slot.  A crash before that record leaves the pages
 * unlisted, and VACUUM's walk frees them.  Returns false if the metapage
 * has no free slot.  The caller holds the merge lock, so that no one else
 * changes the slots.
 */
static bool
BloomAllocGroupRegion(Relation index, const BloomShape *shape, uint32 g,
					  const uint16 *wide, double heapTuples, int maxPos)
{
	int			perStripe = BloomNewRegionPerStripe(BloomFirstRegionStripes(g, heapTuples),
													maxPos);
	int			npages = BloomGroupRegionPages(wide, shape->nColumns, perStripe);
	BlockNumber first;
	GenericXLogState *xlogState;
	Buffer		metabuf;
	BloomMetaPage meta;
	int			freeSlot = -1;
	int			i;

	/* A free slot, first: none, no region */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	for (i = 0; i < BLOOMIDX_GROUP_SLOTS && freeSlot < 0; i++)
		if (BloomSlicedGroupMeta(meta)->slots[i].groupPlus1 == 0)
			freeSlot = i;
	UnlockReleaseBuffer(metabuf);
	if (freeSlot < 0 || npages == 0)
		return false;

	first = BloomExtendRegion(index, shape, g, npages, NULL, NULL);

	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	if (BloomSlicedGroupMeta(meta)->slots[freeSlot].groupPlus1 != 0)
		elog(ERROR, "bloomidx index \"%s\": a summary group's slot was taken during VACUUM",
			 RelationGetRelationName(index));
	{
		BloomSlicedGroupSlot *slot = &BloomSlicedGroupMeta(meta)->slots[freeSlot];

		memset(slot, 0, sizeof(BloomSlicedGroupSlot));
		slot->groupPlus1 = g + 1;
		slot->first = first;
		slot->perStripe = perStripe;
		slot->npages = npages;
	}
	BloomMergeXLogFinish(index, xlogState);
	UnlockReleaseBuffer(metabuf);
	return true;
}

/*
 * Can full stripe s (its stripe page read into pages) be sealed with the
 * index-wide blocks wide: a complete summary of exactly those blocks, in
 * summary pages of its own?
 */
static bool
BloomStripeSealable(const BloomStripePages *pages, int nColumns,
					const uint16 *wide, int ownPages)
{
	int			c;

	if (pages->summaryColumns != nColumns || pages->nSummaryPages != ownPages ||
		(pages->flags & (BLOOMIDX_STRIPE_SUMMARY_INCOMPLETE |
						 BLOOMIDX_STRIPE_SUMMARY_GROUPED)) != 0)
		return false;
	for (c = 0; c < nColumns; c++)
		if (pages->summaryBlocks[c] != wide[c])
			return false;
	return true;
}

/*
 * Read the summary of stripe s from its own summary pages (listed in
 * pages), whole, into summary: BLOOMIDX_SUMMARY_PAGE_BLOCKS blocks a page.
 */
static void
BloomReadOwnSummary(Relation index, uint32 s, const BloomStripePages *pages,
					uint32 *summary)
{
	int			p;

	for (p = 0; p < pages->nSummaryPages; p++)
	{
		Buffer		buffer = ReadBuffer(index, pages->summaryPages[p]);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		if (!BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_SUMMARY, s))
			BloomSlicedCorrupted(index, pages->summaryPages[p], "summary page");
		memcpy(summary + (Size) p * BLOOMIDX_SUMMARY_PAGE_BLOCKS * BLOOMIDX_SUMMARY_BLOCK_WORDS,
			   BloomSummaryPageBlocks(BufferGetPage(buffer)),
			   (Size) BLOOMIDX_SUMMARY_PAGE_BLOCKS * BLOOMIDX_SUMMARY_BLOCK_BYTES);
		UnlockReleaseBuffer(buffer);
	}
}

/*
 * Free the own summary pages of stripe s, sealed now (listed in pages, as
 * read before it was), each if it still is one of the stripe's: a scan
 * still reading them finds them freed.
 */
static void
BloomFreeOwnSummary(Relation index, uint32 s, const BloomStripePages *pages)
{
	int			p;

	for (p = 0; p < pages->nSummaryPages; p++)
	{
		Buffer		buffer = ReadBuffer(index, pages->summaryPages[p]);

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_SUMMARY, s))
			BloomFreePage(index, buffer);
		UnlockReleaseBuffer(buffer);
	}
}

/*
 * The slot of metapage meta that holds summary group g's region starting
 * at page first: the slot a caller holding the merge lock read before
 * must still be there (only the merge lock's holder changes slots).
 */
static int
BloomGroupSlotOf(Relation index, BloomMetaPage meta, uint32 g, BlockNumber first)
{
	int			i;

	for (i = 0; i < BLOOMIDX_GROUP_SLOTS; i++)
		if (BloomSlicedGroupMeta(meta)->slots[i].groupPlus1 == g + 1 &&
			BloomSlicedGroupMeta(meta)->slots[i].first == first)
			return i;
	elog(ERROR, "bloomidx index \"%s\": summary group %u lost its slot during VACUUM",
		 RelationGetRelationName(index), g);
	return -1;					/* keep compiler quiet */
}

/*
 * Seal full stripe s (stripe page blkno, read into pages) into the region
 * of its group (slot, as in a snapshot taken under the merge lock, which
 * the caller holds): OR its summary's blocks into the region, up to
 * MAX_GENERIC_XLOG_PAGES pages a record; then, in one record, set its bit
 * in the slot and flag its stripe page GROUPED with no summary page; then
 * free its own summary pages.  A crash before that record leaves it
 * unsealed (the next VACUUM ORs the same blocks again); after it, its own
 * summary pages are listed nowhere, and the walk of VACUUM frees them if
 * this did not.  summary: room for the stripe's ownPages pages of blocks.
 */
static void
BloomSealOneStripe(Relation index, const BloomShape *shape, uint32 s,
				   BlockNumber blkno, const BloomStripePages *pages,
				   const BloomSlicedGroupSlot *slot, const uint16 *wide,
				   uint32 *summary)
{
	uint32		g = s / BLOOMIDX_GROUP_STRIPES;
	int			pos = s % BLOOMIDX_GROUP_STRIPES;
	Buffer		buffers[MAX_GENERIC_XLOG_PAGES];
	GenericXLogState *xlogState = NULL;
	Buffer		metabuf;
	Buffer		stripebuf;
	BloomMetaPage meta;
	BlockNumber none = InvalidBlockNumber;
	Page		page;
	int			nb = 0;
	int			start = 0;
	int			c,
				b,
				i;

	BloomReadOwnSummary(index, s, pages, summary);

	/* ORed into the region, each page's share of it */
	for (c = 0; c < shape->nColumns; start += wide[c], c++)
	{
		for (b = 0; b < wide[c]; b += slot->perStripe)
		{
			int			at;
			BlockNumber gblkno = BloomGroupBlockPage(slot, wide, c, b, pos, &at);
			Buffer		buffer;
			uint32	   *dst;
			const uint32 *src;
			Size		n;
			Size		w;

			if (nb == 0)
			{
				CHECK_FOR_INTERRUPTS();
				xlogState = GenericXLogStart(index);
			}
			buffer = ReadBuffer(index, gblkno);
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			buffers[nb++] = buffer;
			if (!BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_GROUP,
								   BloomGroupFirstStripe(slot)))
				BloomReportCorruption(index, gblkno,
									  psprintf("Page %u of the region of summary group %u is not a page of the group.",
											   gblkno - slot->first, g));
			page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
			dst = BloomSummaryPageBlocks(page) + (Size) at * BLOOMIDX_SUMMARY_BLOCK_WORDS;
			src = summary + (Size) (start + b) * BLOOMIDX_SUMMARY_BLOCK_WORDS;
			n = (Size) Min(slot->perStripe, wide[c] - b) * BLOOMIDX_SUMMARY_BLOCK_WORDS;
			for (w = 0; w < n; w++)
				dst[w] |= src[w];
			if (nb == MAX_GENERIC_XLOG_PAGES)
			{
				BloomMergeXLogFinish(index, xlogState);
				for (i = 0; i < nb; i++)
					UnlockReleaseBuffer(buffers[i]);
				nb = 0;
			}
		}
	}
	if (nb > 0)
	{
		BloomMergeXLogFinish(index, xlogState);
		for (i = 0; i < nb; i++)
			UnlockReleaseBuffer(buffers[i]);
	}

	/* Sealed: its bit and its stripe page's flag in one record */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	stripebuf = ReadBuffer(index, blkno);
	LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
	if (!BloomPageIsSliced(BufferGetPage(stripebuf), BLOOMIDX_STRIPE, s))
		BloomSlicedCorrupted(index, blkno, "stripe page");
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	i = BloomGroupSlotOf(index, meta, g, slot->first);
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	BloomSlicedGroupMeta(meta)->slots[i].sealed |= UINT64CONST(1) << pos;
	page = GenericXLogRegisterBuffer(xlogState, stripebuf, 0);
	BloomStripeSetSummary(page, shape->sigBits, shape->nColumns, wide, &none, 0);
	BloomStripeSetFlags(page, BloomStripeGetFlags(page) | BLOOMIDX_STRIPE_SUMMARY_GROUPED);
	BloomMergeXLogFinish(index, xlogState);
	UnlockReleaseBuffer(stripebuf);
	UnlockReleaseBuffer(metabuf);

	BloomFreeOwnSummary(index, s, pages);
}

/*
 * Stripes a region's growth seals in the record that switches the group's
 * slot to the new region: each takes a page of the record (its stripe
 * page) besides the metapage.  The group's others are sealed afterwards,
 * one at a time, as those of a group whose region holds them.
 */
#define BLOOM_GROW_SEAL_MAX		(MAX_GENERIC_XLOG_PAGES - 1)

/* What BloomGrowFill copies into the pages of a group's new region */
typedef struct BloomGrowData
{
	const BloomSlicedGroupSlot *old;	/* the region it replaces */
	int			perStripe;		/* of the new region */
	const uint16 *wide;			/* the index-wide blocks */
	int			nColumns;
	int			nNew;			/* stripes sealed with the growth */
	int			pos[BLOOM_GROW_SEAL_MAX];	/* their positions */
	uint32	   *summary[BLOOM_GROW_SEAL_MAX];	/* their own summaries */
} BloomGrowData;

/*
 * Fill page j of a group's new region (BloomRegionFill): for each column's
 * block the page holds, the block of every stripe the old region seals,
 * read from the old region, where a block sits elsewhere when the number
 * of blocks a stripe gets a page differs (so blocks are copied one by
 * one, not pages), and the block of each stripe sealed with the growth,
 * from its own summary.
 */
static void
BloomGrowFill(Relation index, Page page, int j, void *arg)
{
	BloomGrowData *gd = (BloomGrowData *) arg;
	const BloomSlicedGroupSlot *old = gd->old;
	uint32	   *dst = BloomSummaryPageBlocks(page);
	Buffer		oldbuf = InvalidBuffer;
	BlockNumber oldblk = InvalidBlockNumber;
	int			start = 0;
	int			chunk = j;
	int			c,
				b,
				i,
				bEnd;

	/* Column c, its chunk-th page in the new region */
	for (c = 0; c < gd->nColumns; start += gd->wide[c], c++)
	{
		int			n = BloomGroupRegionPages(&gd->wide[c], 1, gd->perStripe);

		if (chunk < n)
			break;
		chunk -= n;
	}
	if (c == gd->nColumns)
		elog(ERROR, "bloomidx index \"%s\": page %d is past a summary group's new region",
			 RelationGetRelationName(index), j);

	bEnd = Min(gd->wide[c], (chunk + 1) * gd->perStripe);
	for (b = chunk * gd->perStripe; b < bEnd; b++)
	{
		int			at;
		int			to = b - chunk * gd->perStripe;
		BlockNumber blkno = BloomGroupBlockPage(old, gd->wide, c, b, 0, &at);
		uint64		x;

		if (old->sealed != 0 && blkno != oldblk)
		{
			if (BufferIsValid(oldbuf))
				UnlockReleaseBuffer(oldbuf);
			oldbuf = ReadBuffer(index, blkno);
			oldblk = blkno;
			LockBuffer(oldbuf, BUFFER_LOCK_SHARE);
			if (!BloomPageIsSliced(BufferGetPage(oldbuf), BLOOMIDX_GROUP,
								   BloomGroupFirstStripe(old)))
				BloomReportCorruption(index, blkno,
									  psprintf("Page %u of the region of summary group %u is not a page of the group.",
											   blkno - old->first, old->groupPlus1 - 1));
		}
		for (x = old->sealed; x != 0; x &= x - 1)
		{
			int			p = pg_rightmost_one_pos64(x);

			memcpy(dst + (Size) (p * gd->perStripe + to) * BLOOMIDX_SUMMARY_BLOCK_WORDS,
				   BloomSummaryPageBlocks(BufferGetPage(oldbuf)) +
				   (Size) (at + p * old->perStripe) * BLOOMIDX_SUMMARY_BLOCK_WORDS,
				   BLOOMIDX_SUMMARY_BLOCK_BYTES);
		}
		for (i = 0; i < gd->nNew; i++)
		{
			uint32	   *d = dst + (Size) (gd->pos[i] * gd->perStripe + to) *
				BLOOMIDX_SUMMARY_BLOCK_WORDS;
			const uint32 *src = gd->summary[i] + (Size) (start + b) *
				BLOOMIDX_SUMMARY_BLOCK_WORDS;
			int			w;

			for (w = 0; w < BLOOMIDX_SUMMARY_BLOCK_WORDS; w++)
				d[w] |= src[w];
		}
	}
	if (BufferIsValid(oldbuf))
		UnlockReleaseBuffer(oldbuf);
}

/*
 * Grow the region of summary group g (old, its slot in snap, a snapshot
 * taken under the merge lock, which the caller holds) whose positions do
 * not reach full stripe s0, sealable, of the group: a new region sized by
 * BloomNewRegionPerStripe for position s0's and the group's last listed
 * stripe's, made of new pages (BloomExtendRegion) filled with the blocks
 * of every stripe the old region seals and those of up to
 * BLOOM_GROW_SEAL_MAX sealable stripes of the group from s0 on, from their
 * own summaries; then ONE record switches the group's slot to the new
 * region (its first page, perStripe, pages and sealed bits, the new
 * stripes' set) and flags the new stripes' pages GROUPED with no summary
 * page; then the old region's pages and the new stripes' own summary
 * pages are freed.  A crash before the switch leaves the new pages
 * unlisted (VACUUM's walk frees them) and the group as it was; after it,
 * the old region's pages and the own summary pages are listed nowhere,
 * and the walk frees those the crash kept.  A scan that copied the old
 * slot reads the old region, unchanged until it is freed, and starts over
 * if it finds a page of it freed (BloomGroupStillHeld: the group's slot
 * has moved).  Returns false if the group cannot grow.  *nsealed counts
 * the stripes sealed.
 */
static bool
BloomGrowGroupRegion(Relation index, const BloomShape *shape,
					 const BloomSlicedSnapshot *snap, uint32 s0,
					 const BloomSlicedGroupSlot *old, const uint16 *wide,
					 int ownPages, double heapTuples, int *nsealed)
{
	uint32		g = s0 / BLOOMIDX_GROUP_STRIPES;
	uint32		last = Min(snap->nStripes - 1, (g + 1) * BLOOMIDX_GROUP_STRIPES - 1);
	int			perStripe = BloomNewRegionPerStripe(BloomGrownRegionStripes(g, heapTuples,
																		  last % BLOOMIDX_GROUP_STRIPES),
													last % BLOOMIDX_GROUP_STRIPES);
	int			npages = BloomGroupRegionPages(wide, shape->nColumns, perStripe);
	BloomSlicedGroupSlot oldSlot;
	BloomStripePages *pages[BLOOM_GROW_SEAL_MAX];
	uint32		stripes[BLOOM_GROW_SEAL_MAX];
	BlockNumber stripeBlk[BLOOM_GROW_SEAL_MAX];
	Buffer		stripebufs[BLOOM_GROW_SEAL_MAX];
	BloomGrowData gd;
	GenericXLogState *xlogState;
	Buffer		metabuf;
	BloomMetaPage meta;
	BloomSlicedGroupSlot *slot;
	BlockNumber none = InvalidBlockNumber;
	BlockNumber first;
	uint64		newBits = 0;
	uint32		s;
	BlockNumber j;
	int			i;

	/* The group's slot as it is now (snap's may predate a seal of this VACUUM) */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	i = BloomGroupSlotOf(index, meta, g, old->first);
	oldSlot = BloomSlicedGroupMeta(meta)->slots[i];
	UnlockReleaseBuffer(metabuf);

	if (perStripe >= oldSlot.perStripe || npages == 0)
		return false;

	/* The group's sealable stripes from s0 on, with their own summaries */
	memset(&gd, 0, sizeof(gd));
	for (s = s0; s <= last && gd.nNew < BLOOM_GROW_SEAL_MAX; s++)
	{
		BlockNumber blkno = BloomSnapStripe(snap, s);
		int			pos = s % BLOOMIDX_GROUP_STRIPES;
		BloomStripePages *sp;

		if (BloomStripeRows(snap->mergedRows, s) < BLOOMIDX_STRIPE_ROWS)
			break;
		if (blkno == InvalidBlockNumber || ((oldSlot.sealed >> pos) & 1) != 0 ||
			pos >= BloomGroupPositions(perStripe))
			continue;
		sp = palloc(sizeof(BloomStripePages));
		if (!BloomReadStripe(index, s, blkno, shape->sigBits, sp) ||
			!BloomStripeSealable(sp, shape->nColumns, wide, ownPages))
		{
			pfree(sp);
			continue;
		}
		pages[gd.nNew] = sp;
		stripes[gd.nNew] = s;
		stripeBlk[gd.nNew] = blkno;
		gd.pos[gd.nNew] = pos;
		gd.summary[gd.nNew] = palloc((Size) ownPages * BLOOMIDX_SUMMARY_PAGE_BLOCKS *
									 BLOOMIDX_SUMMARY_BLOCK_BYTES);
		BloomReadOwnSummary(index, s, sp, gd.summary[gd.nNew]);
		newBits |= UINT64CONST(1) << pos;
		gd.nNew++;
	}
	if (gd.nNew == 0)
		return false;

	/* The new region, filled */
	gd.old = &oldSlot;
	gd.perStripe = perStripe;
	gd.wide = wide;
	gd.nColumns = shape->nColumns;
	first = BloomExtendRegion(index, shape, g, npages, BloomGrowFill, &gd);

	/* The switch: the slot, and the new stripes' pages, in one record */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	for (i = 0; i < gd.nNew; i++)
	{
		stripebufs[i] = ReadBuffer(index, stripeBlk[i]);
		LockBuffer(stripebufs[i], BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(stripebufs[i]), BLOOMIDX_STRIPE, stripes[i]))
			BloomSlicedCorrupted(index, stripeBlk[i], "stripe page");
	}
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	i = BloomGroupSlotOf(index, meta, g, oldSlot.first);
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	slot = &BloomSlicedGroupMeta(meta)->slots[i];
	slot->first = first;
	slot->perStripe = perStripe;
	slot->npages = npages;
	slot->sealed = (slot->sealed & oldSlot.sealed) | newBits;
	for (i = 0; i < gd.nNew; i++)
	{
		Page		page = GenericXLogRegisterBuffer(xlogState, stripebufs[i], 0);

		BloomStripeSetSummary(page, shape->sigBits, shape->nColumns, wide, &none, 0);
		BloomStripeSetFlags(page, BloomStripeGetFlags(page) | BLOOMIDX_STRIPE_SUMMARY_GROUPED);
	}
	BloomMergeXLogFinish(index, xlogState);
	for (i = 0; i < gd.nNew; i++)
		UnlockReleaseBuffer(stripebufs[i]);
	UnlockReleaseBuffer(metabuf);

	/* The old region's pages, each if still the group's */
	for (j = 0; j < oldSlot.npages; j++)
	{
		Buffer		buffer;

		CHECK_FOR_INTERRUPTS();
		buffer = ReadBuffer(index, oldSlot.first + j);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_GROUP,
							  BloomGroupFirstStripe(&oldSlot)))
			BloomFreePage(index, buffer);
		UnlockReleaseBuffer(buffer);
	}
	for (i = 0; i < gd.nNew; i++)
	{
		BloomFreeOwnSummary(index, stripes[i], pages[i]);
		pfree(gd.summary[i]);
		pfree(pages[i]);
	}
	*nsealed += gd.nNew;
	return true;
}

/*
 * Seal the listed full stripes that merges filled into their summary
 * groups' regions (see BloomSealOneStripe), allocating a group's region
 * when it has none, and growing it (BloomGrowGroupRegion) when it does not
 * reach their positions: those whose summary is complete and of the
 * index-wide blocks (BLOOMIDX_SUMMARY_MEASURED), while a slot is free; at
 * most BLOOM_SEAL_MAX of them.  heapTuples: the table's rows, which size a
 * new region.  The caller holds the merge lock.
 */
static void
BloomSealStripes(Relation index, BloomState state, double heapTuples)
{
	const BloomShape *shape = &state->shape;
	uint16		wide[BLOOMIDX_MAX_COLUMNS];
	BloomSlicedSnapshot *snap;
	BloomStripePages *pages;
	uint32	   *summary;
	Buffer		metabuf;
	BloomMetaPage meta;
	bool		measured;
	bool		noSlot = false;
	uint32		noGrow = PG_UINT32_MAX;
	int			ownPages;
	int			nsealed = 0;
	uint32		s;

	BloomMergeRecordsReset();
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	measured = meta->version >= BLOOMIDX_FORMAT_SUMMARIES &&
		BloomSlicedSummaryMeta(meta)->bitsPerKey > 0 &&
		(BloomSlicedSummaryMeta(meta)->flags & BLOOMIDX_SUMMARY_MEASURED) != 0 &&
		meta->nColumns == shape->nColumns;
	if (measured)
		memcpy(wide, BloomSlicedSummaryMeta(meta)->blocks,
			   sizeof(uint16) * shape->nColumns);
	UnlockReleaseBuffer(metabuf);
	if (!measured)
		return;
	ownPages = (BloomSummaryTotalBlocks(wide, shape->nColumns) +
				BLOOMIDX_SUMMARY_PAGE_BLOCKS - 1) / BLOOMIDX_SUMMARY_PAGE_BLOCKS;
	if (ownPages == 0 || ownPages > BLOOMIDX_SUMMARY_MAX_PAGES)
		return;

	snap = palloc(sizeof(BloomSlicedSnapshot));
	pages = palloc(sizeof(BloomStripePages));
	summary = palloc((Size) ownPages * BLOOMIDX_SUMMARY_PAGE_BLOCKS *
					 BLOOMIDX_SUMMARY_BLOCK_BYTES);
	BloomTakeSnapshot(index, snap, true);
	for (s = snap->firstStripe; s < snap->nStripes && nsealed < BLOOM_SEAL_MAX; s++)
	{
		BlockNumber blkno = BloomSnapStripe(snap, s);
		const BloomSlicedGroupSlot *slot = BloomSnapGroup(snap, s);
		int			pos = s % BLOOMIDX_GROUP_STRIPES;

		if (BloomStripeRows(snap->mergedRows, s) < BLOOMIDX_STRIPE_ROWS)
			break;
		if (blkno == InvalidBlockNumber ||
			(slot != NULL && (((slot->sealed >> pos) & 1) != 0 ||
							  (pos >= BloomGroupPositions(slot->perStripe) &&
							   s / BLOOMIDX_GROUP_STRIPES == noGrow))) ||
			(slot == NULL && noSlot))
			continue;
		vacuum_delay_point(false);
		if (!BloomReadStripe(index, s, blkno, shape->sigBits, pages) ||
			!BloomStripeSealable(pages, shape->nColumns, wide, ownPages))
			continue;
		if (slot != NULL && pos >= BloomGroupPositions(slot->perStripe))
		{
			/* Its group's region does not reach it: a larger one */
			if (!BloomGrowGroupRegion(index, shape, snap, s, slot, wide,
									  ownPages, heapTuples, &nsealed))
				noGrow = s / BLOOMIDX_GROUP_STRIPES;
			BloomFreeSnapshot(snap);
			snap = palloc(sizeof(BloomSlicedSnapshot));
			BloomTakeSnapshot(index, snap, true);
			continue;
		}
		if (slot == NULL)
		{
			uint32		last = Min(snap->nStripes - 1,
								   (s / BLOOMIDX_GROUP_STRIPES + 1) * BLOOMIDX_GROUP_STRIPES - 1);

			if (!BloomAllocGroupRegion(index, shape, s / BLOOMIDX_GROUP_STRIPES, wide,
									   heapTuples, last % BLOOMIDX_GROUP_STRIPES))
			{
				noSlot = true;
				continue;
			}
			BloomFreeSnapshot(snap);
			snap = palloc(sizeof(BloomSlicedSnapshot));
			BloomTakeSnapshot(index, snap, true);
			slot = BloomSnapGroup(snap, s);
			if (slot == NULL)
				elog(ERROR, "bloomidx index \"%s\": summary group %u has no slot after its region was allocated",
					 RelationGetRelationName(index), s / BLOOMIDX_GROUP_STRIPES);
		}
		BloomSealOneStripe(index, shape, s, blkno, pages, slot, wide, summary);
		nsealed++;
	}
	pfree(summary);
	pfree(pages);
	BloomFreeSnapshot(snap);
}

/*
 * Move the live rows of a mostly dead stripe back to the pending pages,
 * reading their signatures back from the slices, take the stripe out of
 * its list and free its pages.  Their keys are not known (the slices hold
 * none): in format 4 they go to pending pages of rows without keys, and
 * the stripe they are merged into gets an incomplete summary.
 */
static void
BloomReclaimStripe(Relation index, BloomState state, uint32 s, BlockNumber stripeBlkno,
				   const BloomStripePages *pages, int rows)
{
	const BloomShape *shape = &state->shape;
	ItemPointerData *tids;
	int		   *rowOf;
	uint64	   *words;
	int			nlive;
	int			i;
	Buffer		metabuf;
	Buffer		listbuf;
	GenericXLogState *xlogState;
	BloomMetaPage meta;
	uint32		listNo = s / BLOOMIDX_STRIPELIST_ENTRIES;
	uint32		k;

	nlive = BloomReadStripeRows(index, shape, pages, stripeBlkno, rows,
								&rowOf, &tids, &words);

	/* Back to the pending pages */
	(void) BloomPendingAddRows(index, state, words, NULL, tids, nlive, false);

	/* Take the stripe out of its list */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	k = listNo - BloomSlicedMeta(meta)->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES;
	if (s < BloomSlicedMeta(meta)->firstStripe || k >= BLOOMIDX_MAX_STRIPELISTS ||
		BloomSlicedMeta(meta)->stripeLists[k] == InvalidBlockNumber)
		elog(ERROR, "stripe %u of bloomidx index \"%s\" is outside its stripe lists",
			 s, RelationGetRelationName(index));
	listbuf = ReadBuffer(index, BloomSlicedMeta(meta)->stripeLists[k]);
	LockBuffer(listbuf, BUFFER_LOCK_EXCLUSIVE);
	if (!BloomPageIsSliced(BufferGetPage(listbuf), BLOOMIDX_STRIPELIST, listNo))
		BloomSlicedCorrupted(index, BloomSlicedMeta(meta)->stripeLists[k], "stripe-list page");
	xlogState = GenericXLogStart(index);
	BloomStripeListSet(GenericXLogRegisterBuffer(xlogState, listbuf, 0),
					   s % BLOOMIDX_STRIPELIST_ENTRIES, InvalidBlockNumber);
	BloomUnsealStripe(xlogState, metabuf, s);
	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(listbuf);
	UnlockReleaseBuffer(metabuf);

	/* Free its pages; a scan still reading them finds out by their tags */
	for (i = -1; i < shape->sigBits + pages->nTidPages + pages->nSummaryPages; i++)
	{
		BlockNumber blkno;
		Buffer		buffer;

		if (i < 0)
			blkno = stripeBlkno;
		else if (i < shape->sigBits)
			blkno = pages->slices[i];
		else if (i < shape->sigBits + pages->nTidPages)
			blkno = pages->tidPages[i - shape->sigBits];
		else
			blkno = pages->summaryPages[i - shape->sigBits - pages->nTidPages];
		if (blkno == InvalidBlockNumber)
			continue;
		buffer = ReadBuffer(index, blkno);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (BloomPageHasFlag(BufferGetPage(buffer), BLOOMIDX_SLICED_FLAGS) &&
			BloomPageGetTag(BufferGetPage(buffer)) == s)
			BloomFreePage(index, buffer);
		UnlockReleaseBuffer(buffer);
	}

	pfree(words);
	pfree(rowOf);
	pfree(tids);
}

/*
 * Are the stripe lists nearly full?  Then VACUUM moves the rows of the
 * first list's stripes forward.
 */
static bool
BloomSnapCrowded(const BloomSlicedSnapshot *snap)
{
	return snap->nStripes - snap->firstStripe >
		BLOOMIDX_MAX_STRIPES - 2 * BLOOMIDX_STRIPELIST_ENTRIES;
}

/*
 * Does a sliced index need a VACUUM's pass over its stripes even though
 * no row is dead: are its stripe lists nearly full?
 */
static bool
BloomSlicedNeedsRenumbering(Relation index)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	bool		crowded;

	BloomTakeSnapshot(index, snap, false);
	crowded = BloomSnapCrowded(snap);
	BloomFreeSnapshot(snap);
	return crowded;
}

/*
 * Rows a sliced index can still take without a VACUUM renumbering its
 * oldest ones: the row numbers left in its stripe lists, and room in the
 * pending list, less the rows pending.
 */
static uint64
BloomSlicedRoom(Relation index, BloomState state)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	uint64		room;

	BloomTakeSnapshot(index, snap, false);
	room = BloomSnapRowsLeft(snap);
	if (room >= (uint64) snap->nPending * state->tuplesPerPage)
		room -= (uint64) snap->nPending * state->tuplesPerPage;
	else
		room = 0;
	/* Short of a crowded pending list (see BloomMergeWant) */
	if (snap->nPending < BLOOMIDX_PENDING_CROWDED)
		room += (uint64) (BLOOMIDX_PENDING_CROWDED - snap->nPending) * state->tuplesPerPage;
	BloomFreeSnapshot(snap);
	return room;
}

/*
 * Drop the first stripe-list pages while every stripe they list is full
 * and emptied: the metapage lists the stripe lists from the next one.
 * Scans copy the stripes they read under the metapage lock, so the pages
 * are freed at once.  The caller holds the merge lock.
 */
static void
BloomDropEmptyStripeLists(Relation index)
{
	for (;;)
	{
		Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
		Buffer		listbuf;
		BloomMetaPage meta;
		GenericXLogState *xlogState;

		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
		meta = BloomPageGetMeta(BufferGetPage(metabuf));
		if (BloomSlicedMeta(meta)->stripeLists[0] == InvalidBlockNumber ||
			(uint64) (BloomSlicedMeta(meta)->firstStripe + BLOOMIDX_STRIPELIST_ENTRIES) *
			BLOOMIDX_STRIPE_ROWS > BloomSlicedMeta(meta)->mergedRows)
		{
			UnlockReleaseBuffer(metabuf);
			return;
		}
		listbuf = ReadBuffer(index, BloomSlicedMeta(meta)->stripeLists[0]);
		LockBuffer(listbuf, BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(listbuf), BLOOMIDX_STRIPELIST,
							   BloomSlicedMeta(meta)->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES))
			BloomSlicedCorrupted(index, BloomSlicedMeta(meta)->stripeLists[0], "stripe-list page");
		if (!BloomStripeListIsEmpty(BufferGetPage(listbuf)))
		{
			UnlockReleaseBuffer(listbuf);
			UnlockReleaseBuffer(metabuf);
			return;
		}

		xlogState = GenericXLogStart(index);
		meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
		memmove(BloomSlicedMeta(meta)->stripeLists, BloomSlicedMeta(meta)->stripeLists + 1,
				sizeof(BlockNumber) * (BLOOMIDX_MAX_STRIPELISTS - 1));
		BloomSlicedMeta(meta)->stripeLists[BLOOMIDX_MAX_STRIPELISTS - 1] = InvalidBlockNumber;
		BloomSlicedMeta(meta)->firstStripe += BLOOMIDX_STRIPELIST_ENTRIES;
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(metabuf);

		BloomFreePage(index, listbuf);
		UnlockReleaseBuffer(listbuf);
	}
}

/*
 * A full stripe VACUUM may empty: its live rows, and whether it must be
 * emptied (at least half dead, or in the first stripe list of nearly full
 * stripe lists).
 */
typedef struct BloomReclaimCandidate
{
	uint32		s;
	BlockNumber blkno;
	int			nlive;
	bool		must;
} BloomReclaimCandidate;

/*
 * Dead rows a stripe must have at least for VACUUM to empty it to keep
 * within the budget: emptying a stripe rewrites its live rows, so not for
 * a few dead ones.
 */
#define BLOOM_RECLAIM_MIN_DEAD	(BLOOMIDX_STRIPE_ROWS / 16)

/*
 * Dead rows VACUUM leaves in full stripes at most (short of stripes with
 * too few of them, see BLOOM_RECLAIM_MIN_DEAD), for live rows in them: a
 * thirty-second of them, so that the index's size stays within about that
 * of a fresh build's plus the rows deleted between two VACUUMs.
 */
static uint64
BloomDeadBudget(uint64 live)
{
	return live / 32;
}

/* qsort order of candidates: the most dead first, then stripe order */
static int
BloomCandidateCmp(const void *a, const void *b)
{
	const BloomReclaimCandidate *ca = a;
	const BloomReclaimCandidate *cb = b;

	if (ca->nlive != cb->nlive)
		return ca->nlive < cb->nlive ? -1 : 1;
	if (ca->s != cb->s)
		return ca->s < cb->s ? -1 : 1;
	return 0;
}

/*
 * Empty a candidate stripe if its live rows can be numbered again, and
 * merge them into the stripes.  The caller holds the merge lock, and the
 * stripe is full, so no merge has changed it since it was counted.
 * Returns whether it was emptied.
 */
static bool
BloomReclaimIfRoom(Relation index, BloomState state,
				   const BloomReclaimCandidate *c, BloomStripePages *pages,
				   bool *first)
{
	/*
	 * Before the first stripe is emptied, the pending rows go into the
	 * stripe being filled, so that the rows moved back find a stripe with
	 * room: otherwise the merge that follows would allocate a new stripe
	 * while the rows that were pending and those moved back both still
	 * hold pending pages, and the index would grow by that much.
	 */
	if (*first)
	{
		BloomSlicedMergeLocked(index, BLOOM_MERGE_ALL);
		*first = false;
	}
	if ((uint64) c->nlive > BloomSlicedRoom(index, state))
		return false;
	if (!BloomReadStripe(index, c->s, c->blkno, state->shape.sigBits, pages))
		elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied during VACUUM",
			 c->s, RelationGetRelationName(index));
	BloomReclaimStripe(index, state, c->s, c->blkno, pages, BLOOMIDX_STRIPE_ROWS);
	BloomSlicedMergeLocked(index, BLOOM_MERGE_STRIPES);
	return true;
}

/*
 * Remove dead rows from a sliced index (ambulkdelete): compact the pending
 * pages and merge their rows, mark dead rows in the TID maps, then move
 * the live rows of full stripes at least half dead, and of the most dead
 * others while the dead rows are over the budget, back through the
 * pending pages, merging them after each stripe.
 */
IndexBulkDeleteResult *
BloomSlicedBulkDelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BloomState	state = BloomGetState(index);
	BloomSlicedSnapshot *snap;
	BloomStripePages *pages;
	ItemPointerData *map;
	BloomReader reader;
	BloomReader stripes;
	bool		reclaimed = false;
	bool		first = true;
	bool		crowded;
	BloomReclaimCandidate *cands;
	int			ncands = 0;
	uint64		liveLeft = 0;
	uint64		deadLeft = 0;
	uint32		s;
	int			i;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);

	snap = palloc(sizeof(BloomSlicedSnapshot));
	pages = palloc(sizeof(BloomStripePages));
	map = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	BloomTakeSnapshot(index, snap, false);
	BloomReaderInit(&reader, index, info->strategy,
					READ_STREAM_MAINTENANCE | READ_STREAM_FULL);
	BloomReaderInit(&stripes, index, NULL, READ_STREAM_MAINTENANCE | READ_STREAM_FULL);

	/* Pending pages: dead rows out, then the rest into the stripes */
	BloomReaderStart(&reader, snap->pending, snap->nPending, snap->nPending);
	for (i = 0; i < snap->nPending; i++)
	{
		Buffer		buffer = BloomReaderNext(&reader);
		Page		page;
		GenericXLogState *xlogState = NULL;

		vacuum_delay_point(false);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buffer);
		if (BloomSlicedPageIsData(index, page, snap->pending[i], state->tuplesPerPage))
			xlogState = BloomPageRemoveDead(index, buffer, &page,
											BloomSlicedSlotBytes(state), callback,
											callback_state, stats);
		if (xlogState != NULL)
			GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}

	BloomReaderEnd(&reader);
	BloomFreeSnapshot(snap);
	BloomSlicedMergeLocked(index, BLOOM_MERGE_STRIPES);
	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap, true);

	/*
	 * Stripes: mark dead rows, count the live ones.  When the stripe lists
	 * are nearly full, the stripes of the first list are emptied whatever
	 * their live rows, so that the list can go.
	 */
	crowded = BloomSnapCrowded(snap);
	cands = palloc(sizeof(BloomReclaimCandidate) *
				   Max(snap->nStripes - snap->firstStripe, 1));
	BloomReaderStartStripes(&stripes, snap);
	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		int			rows = BloomStripeRows(snap->mergedRows, s);
		BlockNumber blkno = BloomSnapStripe(snap, s);
		int			nlive = 0;
		int			t;
		Buffer		stripebuf;
		GenericXLogState *xlogState;

		if (rows == 0)
			break;
		if (blkno == InvalidBlockNumber)
			continue;
		if (!BloomReadStripeBuffer(index, s, BloomReaderNext(&stripes),
								   state->shape.sigBits, pages))
			elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied during VACUUM",
				 s, RelationGetRelationName(index));

		/* Its TID maps, read ahead */
		BloomReaderStart(&reader, pages->tidPages, pages->nTidPages, pages->nTidPages);
		for (t = 0; t < pages->nTidPages; t++)
		{
			Buffer		buffer;
			Page		page;
			int			first;
			int			n;
			int			j;

			vacuum_delay_point(false);
			buffer = BloomReaderNext(&reader);
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			page = BufferGetPage(buffer);
			if (!BloomPageIsSliced(page, BLOOMIDX_TIDMAP, s))
				BloomSlicedCorrupted(index, pages->tidPages[t], "TID-map page");
			first = BloomTidMapGetFirstRow(page);
			n = BloomTidMapUnpack(page, map);
			xlogState = NULL;
			for (j = 0; j < n && first + j < rows; j++)
			{
				if (!ItemPointerIsValid(&map[j]))
					continue;
				if (!callback(&map[j], callback_state))
				{
					nlive++;
					continue;
				}
				if (xlogState == NULL)
				{
					xlogState = GenericXLogStart(index);
					page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
				}
				BloomTidMapKill(page, j);
				stats->tuples_removed += 1;
			}
			if (xlogState != NULL)
				GenericXLogFinish(xlogState);
			UnlockReleaseBuffer(buffer);
		}
		BloomReaderEnd(&reader);

		stripebuf = ReadBuffer(index, blkno);
		LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
		xlogState = GenericXLogStart(index);
		BloomStripeSetLive(GenericXLogRegisterBuffer(xlogState, stripebuf, 0), nlive);
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(stripebuf);

		/* Full stripes are the candidates for emptying */
		if (rows == BLOOMIDX_STRIPE_ROWS)
		{
			BloomReclaimCandidate *c = &cands[ncands++];

			c->s = s;
			c->blkno = blkno;
			c->nlive = nlive;
			c->must = nlive <= rows / 2 ||
				(crowded && s < snap->firstStripe + BLOOMIDX_STRIPELIST_ENTRIES);
			if (!c->must)
			{
				liveLeft += nlive;
				deadLeft += rows - nlive;
			}
		}
	}

	BloomReaderEnd(&stripes);
	pfree(stripes.blocks);

	/*
	 * Empty the stripes at least half dead (and, when the stripe lists are
	 * nearly full, those of the first list), in stripe order; then, while
	 * the dead rows left in full stripes are more than the budget, the
	 * most dead of the others (see BloomDeadBudget).  The rows moved back
	 * are merged after each stripe, so that the next one reuses the pages
	 * the merge frees.
	 */
	for (i = 0; i < ncands; i++)
	{
		if (cands[i].must &&
			BloomReclaimIfRoom(index, state, &cands[i], pages, &first))
			reclaimed = true;
	}
	qsort(cands, ncands, sizeof(BloomReclaimCandidate), BloomCandidateCmp);
	for (i = 0; i < ncands && deadLeft > BloomDeadBudget(liveLeft); i++)
	{
		BloomReclaimCandidate *c = &cands[i];

		if (c->must)
			continue;
		if (BLOOMIDX_STRIPE_ROWS - c->nlive < BLOOM_RECLAIM_MIN_DEAD)
			break;
		if (BloomReclaimIfRoom(index, state, c, pages, &first))
		{
			reclaimed = true;
			deadLeft -= BLOOMIDX_STRIPE_ROWS - c->nlive;
			liveLeft -= c->nlive;
		}
	}

	if (reclaimed)
		BloomDropEmptyStripeLists(index);

	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	pfree(cands);
	pfree(map);
	pfree(pages);
	BloomFreeSnapshot(snap);
	return stats;
}

/* A bulk-delete callback for a pass that removes nothing */
static bool
BloomNothingDead(ItemPointer itemptr, void *state)
{
	return false;
}

/*
 * Merge the pending rows, count pages and rows, free the pages nothing
 * lists and tell the free space map which pages can be reused
 * (amvacuumcleanup).
 *
 * The blocks the index lists are marked in a bitmap of one bit per block,
 * taken in chunks that fit in maintenance_work_mem.
 */
IndexBulkDeleteResult *
BloomSlicedVacuumCleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	BloomState	state = BloomGetState(index);
	BlockNumber npages;
	BlockNumber blkno;
	BlockNumber chunkPages;
	BlockNumber chunkStart = 0;
	BlockNumber chunkEnd = 0;
	BloomBlockRange range;
	ReadStream *stream;
	Buffer		buffer;
	uint8	   *referenced;

	/*
	 * A VACUUM that found no dead rows skips ambulkdelete; an index whose
	 * stripe lists are nearly full needs its pass all the same, to move its
	 * oldest rows forward.
	 */
	if (stats == NULL && BloomSlicedNeedsRenumbering(index))
		stats = BloomSlicedBulkDelete(info, NULL, BloomNothingDead, NULL);

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/*
	 * VACUUM merges the pending rows, as GIN's does.  The walk below then
	 * holds the merge lock, so that a page of the sliced layout (or a
	 * frozen pending page) that nothing lists is one a crash kept a merge
	 * from listing or freeing.
	 */
	BloomSlicedMerge(index, true, BLOOM_MERGE_STRIPES);
	LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	BloomFreeDeadGroups(index);
	BloomSealStripes(index, state, info->num_heap_tuples);

	npages = RelationGetNumberOfBlocks(index);
	stats->num_pages = npages;
	stats->pages_free = 0;
	stats->num_index_tuples = 0;

	chunkPages = (BlockNumber) Min((uint64) npages,
								   (uint64) maintenance_work_mem * 1024 * 8);
#ifdef BLOOMIDX_SMALL_LIMITS
	/* A build whose walk takes several chunks, to test them */
	chunkPages = Min(chunkPages, 50);
#endif
	chunkPages = Max(chunkPages, 1);
	referenced = palloc((chunkPages + 7) / 8);

	/* Every page, in order, read ahead */
	range.next = BLOOMIDX_METAPAGE_BLKNO + 1;
	range.end = npages;
	stream = read_stream_begin_relation(READ_STREAM_MAINTENANCE | READ_STREAM_FULL,
										info->strategy, index, MAIN_FORKNUM,
										BloomBlockRangeNext, &range, 0);
	while ((buffer = read_stream_next_buffer(stream, NULL)) != InvalidBuffer)
	{
		Page		page;

		blkno = BufferGetBlockNumber(buffer);
		vacuum_delay_point(false);

		if (blkno >= chunkEnd)
		{
			chunkStart = blkno;
			chunkEnd = chunkStart + Min(chunkPages, npages - chunkStart);
			memset(referenced, 0, (chunkPages + 7) / 8);
			BloomSlicedReferenced(index, &state->shape, referenced,
								  chunkStart, chunkEnd);
		}

		/*
		 * A page that nothing lists is free, a pending page added since, or
		 * an orphan to free.
		 */
		if ((referenced[BLOOM_BIT_BYTE(blkno, chunkStart)] &
			 BLOOM_BIT_MASK(blkno, chunkStart)) == 0 &&
			BloomSlicedFreeOrphan(index, state, buffer))
		{
			ReleaseBuffer(buffer);
			stats->pages_free++;
			continue;
		}

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (BloomSlicedPageIsData(index, page, blkno, state->tuplesPerPage))
			stats->num_index_tuples += BloomPageGetNTuples(page);
		else if (BloomPageHasFlag(page, BLOOMIDX_TIDMAP) && !BloomPageIsDeleted(page))
			stats->num_index_tuples += BloomTidMapCountLive(page);
		else if (PageIsNew(page) || BloomPageIsDeleted(page))
		{
			RecordFreeIndexPage(index, blkno);
			stats->pages_free++;
		}
		UnlockReleaseBuffer(buffer);
	}
	read_stream_end(stream);

	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	pfree(referenced);
	return stats;
}
