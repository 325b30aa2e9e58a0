/*-------------------------------------------------------------------------
 *
 * sliced_format.c
 *	  The page layer of the sliced layout: slices, TID maps, stripe pages
 *	  and stripe-list pages (their structs are in page.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "storage/bufpage.h"

#include "page.h"
#include "signature.h"

/*
 * Initialize a page of the sliced layout with its tag: a slice (all bits
 * clear), a TID map (no TIDs), a stripe page (no pages yet) for
 * signatures of sigBits bits, or a stripe-list page (no stripes).  The
 * whole contents area counts as data for generic WAL.
 */
void
BloomInitSlicedPage(Page page, uint16 flag, int sigBits, uint32 tag)
{
	BloomPageOpaque opaque;

	BloomInitPage(page, flag);
	((PageHeader) page)->pd_lower = BLCKSZ - MAXALIGN(sizeof(BloomPageOpaqueData));
	opaque = BloomPageGetOpaque(page);
	opaque->ntuples = (uint16) (tag & 0xFFFF);
	opaque->maxtuples = (uint16) (tag >> 16);
	if (flag == BLOOMIDX_STRIPE)
	{
		BloomStripe stripe = BloomPageGetStripe(page);
		int			i;

		for (i = 0; i < BLOOMIDX_STRIPE_TIDPAGES; i++)
			stripe->tidPages[i] = InvalidBlockNumber;
		for (i = 0; i < sigBits; i++)
			stripe->slices[i] = InvalidBlockNumber;
	}
	else if (flag == BLOOMIDX_TIDMAP)
		BloomPageGetTidMap(page)->offsetBits = 1;
	else if (flag == BLOOMIDX_STRIPELIST)
	{
		BlockNumber *list = BloomPageGetStripeList(page);
		int			i;

		for (i = 0; i < BLOOMIDX_STRIPELIST_ENTRIES; i++)
			list[i] = InvalidBlockNumber;
	}
}

/*
 * Is this a live page of the sliced layout of the given kind and tag?
 */
bool
BloomPageIsSliced(Page page, uint16 flag, uint32 tag)
{
	BloomPageOpaque opaque;

	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(BloomPageOpaqueData)))
		return false;
	opaque = BloomPageGetOpaque(page);
	if (opaque->page_id != BLOOMIDX_PAGE_ID ||
		(opaque->flags & (BLOOMIDX_DELETED | BLOOMIDX_META | BLOOMIDX_SLICED_FLAGS)) != flag ||
		BloomPageGetTag(page) != tag)
		return false;
	/* A TID map must not send readers past its end */
	return flag != BLOOMIDX_TIDMAP || BloomTidMapIsSane(BloomPageGetTidMap(page));
}

/*
 * Does the header of a TID map describe entries that fit in its page?
 */
bool
BloomTidMapIsSane(BloomTidMap map)
{
	int			width = map->blockBits + map->offsetBits;

	return map->blockBits <= 32 && map->offsetBits >= 1 && map->offsetBits <= 16 &&
		(uint64) map->nrows * width <= BLOOMIDX_TIDMAP_BITS &&
		map->firstRow + map->nrows <= BLOOMIDX_STRIPE_ROWS;
}

/* Bits needed to store values 0 .. x */
static int
BloomBitsFor(uint32 x)
{
	return x == 0 ? 0 : pg_leftmost_one_pos32(x) + 1;
}

/*
 * Pack as many of the ntids TIDs as fit into a TID-map page (initialized
 * by BloomInitSlicedPage, its tag kept), as rows firstRow onwards; returns
 * how many, at least one.  Invalid TIDs stand for removed rows.
 */
int
BloomTidMapPack(Page page, int firstRow, const ItemPointerData *tids, int ntids)
{
	BloomTidMap map = BloomPageGetTidMap(page);
	BlockNumber minBlock = InvalidBlockNumber;
	BlockNumber maxBlock = 0;
	OffsetNumber maxOffset = FirstOffsetNumber;
	int			n;
	int			i;
	int			width;

	/* Take TIDs while the widths their range needs leave room for them */
	for (n = 0; n < ntids; n++)
	{
		const ItemPointerData *tid = &tids[n];
		BlockNumber lo = minBlock,
					hi = maxBlock;
		OffsetNumber off = maxOffset;

		if (ItemPointerIsValid(tid))
		{
			lo = Min(lo, ItemPointerGetBlockNumber(tid));
			hi = Max(hi, ItemPointerGetBlockNumber(tid));
			off = Max(off, ItemPointerGetOffsetNumber(tid));
		}
		width = BloomBitsFor(lo == InvalidBlockNumber ? 0 : hi - lo) + BloomBitsFor(off);
		if ((uint64) (n + 1) * width > BLOOMIDX_TIDMAP_BITS)
			break;
		minBlock = lo;
		maxBlock = hi;
		maxOffset = off;
	}
	Assert(n > 0 || ntids == 0);

	memset(map->packed, 0, BLOOMIDX_PAGE_FREE_SPACE - offsetof(BloomTidMapData, packed));
	map->firstRow = (uint16) firstRow;
	map->nrows = (uint16) n;
	map->baseBlock = minBlock == InvalidBlockNumber ? 0 : minBlock;
	map->blockBits = BloomBitsFor(minBlock == InvalidBlockNumber ? 0 : maxBlock - minBlock);
	map->offsetBits = BloomBitsFor(maxOffset);
	width = map->blockBits + map->offsetBits;
	for (i = 0; i < n; i++)
	{
		uint64		bit = (uint64) i * width;
		uint64		x = 0;
		uint8	   *p = map->packed + bit / 8;

		if (ItemPointerIsValid(&tids[i]))
			x = ((uint64) (ItemPointerGetBlockNumber(&tids[i]) - map->baseBlock)
				 << map->offsetBits) | ItemPointerGetOffsetNumber(&tids[i]);
		BloomStoreWord(p, BloomLoadWord(p) | (x << (bit % 8)));
	}
	return n;
}

/*
 * All the TIDs of a TID-map page, removed rows as invalid TIDs; returns
 * how many.
 */
int
BloomTidMapUnpack(Page page, ItemPointerData *tids)
{
	BloomTidMap map = BloomPageGetTidMap(page);
	int			i;

	for (i = 0; i < map->nrows; i++)
		BloomTidMapGet(map, i, &tids[i]);
	return map->nrows;
}

/*
 * Mark entry i of a TID-map page removed: its offset number becomes 0.
 */
void
BloomTidMapKill(BloomTidMap map, int i)
{
	int			width = map->blockBits + map->offsetBits;
	uint64		bit = (uint64) i * width;
	uint8	   *p = map->packed + bit / 8;
	uint64		mask = ((UINT64CONST(1) << map->offsetBits) - 1) << (bit % 8);

	BloomStoreWord(p, BloomLoadWord(p) & ~mask);
}

/*
 * What is wrong with the header of a TID-map page, or NULL.
 */
char *
BloomTidMapProblem(Page page)
{
	BloomTidMap map = BloomPageGetTidMap(page);
	int			width = map->blockBits + map->offsetBits;

	if (BloomTidMapIsSane(map))
		return NULL;
	if (map->blockBits > 32 || map->offsetBits < 1 || map->offsetBits > 16)
		return psprintf("TID map packs TIDs in %u block and %u offset bits.",
						map->blockBits, map->offsetBits);
	return psprintf("TID map holds %u rows from row %u in %d bits each.",
					map->nrows, map->firstRow, width);
}

/*
 * Rows of a TID-map page that VACUUM has not removed; none if its header
 * is not sane.
 */
int
BloomTidMapCountLive(Page page)
{
	BloomTidMap map = BloomPageGetTidMap(page);
	int			n = 0;
	int			i;

	for (i = 0; BloomTidMapIsSane(map) && i < map->nrows; i++)
	{
		ItemPointerData tid;

		BloomTidMapGet(map, i, &tid);
		n += ItemPointerIsValid(&tid) ? 1 : 0;
	}
	return n;
}
