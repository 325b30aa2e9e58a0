/*-------------------------------------------------------------------------
 *
 * sliced_format.c
 *	  The page layer of the sliced layout: slices, TID maps, stripe pages
 *	  and stripe-list pages (their structs are in page.h), and the keys in
 *	  a pending row's slot.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_format.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "port/pg_bitutils.h"
#include "storage/bufpage.h"

#include "page.h"
#include "signature.h"
#include "sliced.h"

/*
 * Offset of the end of the used part of a page of the sliced layout: the
 * bytes up to pd_lower, which generic WAL logs (the hole past it, up to the
 * special space, is all zero).  A slice page uses the words of the rows
 * written so far, a TID map its packed TIDs, a stripe page its links; a
 * stripe list, or any page written before version 1.1, uses the whole page.
 */
static void
BloomSlicedSetUsed(Page page, Size used)
{
	PageHeader	phdr = (PageHeader) page;
	Size		lower = MAXALIGN(SizeOfPageHeaderData) + used;

	Assert(lower <= phdr->pd_special);
	if (lower > phdr->pd_lower)
		phdr->pd_lower = (LocationIndex) Min(lower, phdr->pd_special);
}

/*
 * Initialize a page of the sliced layout with its tag: a slice (all bits
 * clear), a TID map (no TIDs), a stripe page (no pages yet) for
 * signatures of sigBits bits, or a stripe-list page (no stripes).  Only
 * the part in use counts as data for generic WAL (see BloomSlicedSetUsed).
 */
void
BloomInitSlicedPage(Page page, uint16 flag, int sigBits, uint32 tag)
{
	BloomPageOpaque opaque;

	BloomInitPage(page, flag);
	if (flag == BLOOMIDX_STRIPE)
		BloomSlicedSetUsed(page, offsetof(BloomStripeData, slices) +
						   sizeof(BlockNumber) * sigBits);
	else if (flag == BLOOMIDX_TIDMAP)
		BloomSlicedSetUsed(page, offsetof(BloomTidMapData, packed));
	else if (flag != BLOOMIDX_SLICE)
		BloomSlicedSetUsed(page, BLOOMIDX_PAGE_FREE_SPACE);
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
	/*
	 * A TID map must not send readers past its end, nor have its entries
	 * read in other widths than they were packed in
	 */
	return flag != BLOOMIDX_TIDMAP ||
		(BloomTidMapIsSane(BloomPageGetTidMap(page)) && BloomTidMapUsedIsSane(page));
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

/*
 * Were a TID-map page's entries, its header sane, packed in the count and
 * widths its header says?  BloomTidMapPack zeroes the page past the
 * entries, and sets pd_lower to their end and the 8 bytes past them;
 * nothing else moves it but a new page's header (a TID map not packed
 * yet).  A page written before version 1.1 uses the whole page, as a full
 * map may: then the bytes past the entries must be zero.
 */
bool
BloomTidMapUsedIsSane(Page page)
{
	BloomTidMap map = BloomPageGetTidMap(page);
	Size		lower = ((PageHeader) page)->pd_lower;
	Size		start = MAXALIGN(SizeOfPageHeaderData) + offsetof(BloomTidMapData, packed);
	uint64		bits = (uint64) map->nrows * (map->blockBits + map->offsetBits);
	Size		i;

	if (bits % 8 != 0 && (map->packed[bits / 8] >> (bits % 8)) != 0)
		return false;
	if (lower != ((PageHeader) page)->pd_special)
		return lower == start + (bits + 7) / 8 + 8 ||
			(map->nrows == 0 && lower == start);
	for (i = (bits + 7) / 8; i < BLOOMIDX_PAGE_FREE_SPACE - offsetof(BloomTidMapData, packed); i++)
	{
		if (map->packed[i] != 0)
			return false;
	}
	return true;
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
	((PageHeader) page)->pd_lower = MAXALIGN(SizeOfPageHeaderData);
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
	/* The packed entries, and the 8 bytes a 64-bit load reads past them */
	BloomSlicedSetUsed(page, offsetof(BloomTidMapData, packed) +
					   ((uint64) n * width + 7) / 8 + 8);
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
BloomTidMapKill(Page page, int i)
{
	BloomTidMap map = BloomPageGetTidMap(page);
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

/*
 * Copy the page lists of a stripe page (of signatures of sigBits bits)
 * into pages; the caller sets pages->stripe.
 */
void
BloomStripeGetPages(Page page, int sigBits, BloomStripePages *pages)
{
	BloomStripe stripe = BloomPageGetStripe(page);

	Assert(sigBits >= 1 && sigBits <= BLOOMIDX_SLICED_MAX_LENGTH);
	pages->nTidPages = Min(stripe->nTidPages, BLOOMIDX_STRIPE_TIDPAGES);
	memcpy(pages->tidPages, stripe->tidPages, sizeof(pages->tidPages));
	memcpy(pages->tidFirstRow, stripe->tidFirstRow, sizeof(pages->tidFirstRow));
	memcpy(pages->slices, stripe->slices, sizeof(BlockNumber) * sigBits);
	pages->flags = stripe->flags;
	pages->summaryColumns = 0;
	pages->nSummaryPages = 0;
	if (BloomStripeSummaryProblem(page, sigBits) == NULL)
	{
		const BloomStripeSummaryData *sum = (const BloomStripeSummaryData *)
			((const char *) stripe + BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits));

		pages->summaryColumns = sum->nColumns;
		pages->nSummaryPages = sum->nPages;
		memcpy(pages->summaryBlocks, sum->blocks, sizeof(uint16) * sum->nColumns);
		memcpy(pages->summaryPages,
			   (const char *) sum + BLOOMIDX_STRIPE_SUMMARY_PAGES_OFFSET(sum->nColumns),
			   sizeof(BlockNumber) * sum->nPages);
	}
}

/*
 * Describe what is wrong with the summary fields of a stripe page of
 * sigBits-bit signatures, or return NULL: counts in range, pages enough
 * for the blocks, pd_lower covering them.  A stripe page of an older
 * format has none (all zero), which is sound.
 */
char *
BloomStripeSummaryProblem(Page page, int sigBits)
{
	const BloomStripeSummaryData *sum = (const BloomStripeSummaryData *)
		((const char *) BloomPageGetStripe(page) + BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits));
	Size		end;
	int			total = 0;
	int			i;

	if (BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits) + sizeof(BloomStripeSummaryData) >
		BLOOMIDX_PAGE_FREE_SPACE)
		return NULL;			/* no room: never written */
	if (sum->nColumns == 0)
		return sum->nPages == 0 &&
			(BloomStripeGetFlags(page) & BLOOMIDX_STRIPE_SUMMARY_GROUPED) == 0 ? NULL :
			psprintf("The stripe's summary has %u pages and no column.", sum->nPages);
	if (sum->nColumns > BLOOMIDX_MAX_COLUMNS || sum->nPages > BLOOMIDX_SUMMARY_MAX_PAGES)
		return psprintf("The stripe's summary has %u columns and %u pages, more than %d and %d.",
						sum->nColumns, sum->nPages, BLOOMIDX_MAX_COLUMNS,
						BLOOMIDX_SUMMARY_MAX_PAGES);
	for (i = 0; i < sum->nColumns; i++)
	{
		if (sum->blocks[i] > BLOOMIDX_SUMMARY_MAX_BLOCKS)
			return psprintf("Column %d of the stripe's summary has %u blocks, more than %d.",
							i + 1, sum->blocks[i], BLOOMIDX_SUMMARY_MAX_BLOCKS);
		total += sum->blocks[i];
	}
	if ((BloomStripeGetFlags(page) & BLOOMIDX_STRIPE_SUMMARY_GROUPED) != 0)
	{
		/* Sealed in its group's region: no page of its own */
		if (sum->nPages != 0)
			return psprintf("The stripe's summary is sealed in its group and has %u pages.",
							sum->nPages);
	}
	else if ((total + BLOOMIDX_SUMMARY_PAGE_BLOCKS - 1) / BLOOMIDX_SUMMARY_PAGE_BLOCKS != sum->nPages)
		return psprintf("The stripe's summary of %d blocks has %u pages.",
						total, sum->nPages);
	end = BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits) +
		BLOOMIDX_STRIPE_SUMMARY_PAGES_OFFSET(sum->nColumns) +
		sizeof(BlockNumber) * sum->nPages;
	if (end > BLOOMIDX_PAGE_FREE_SPACE ||
		((PageHeader) page)->pd_lower < MAXALIGN(SizeOfPageHeaderData) + end)
		return psprintf("pd_lower %u does not cover the stripe's summary.",
						(unsigned) ((PageHeader) page)->pd_lower);
	return NULL;
}

/* Does a stripe page (of sigBits-bit signatures) list a sound summary? */
bool
BloomStripeHasSummary(Page page, int sigBits)
{
	const BloomStripeSummaryData *sum = (const BloomStripeSummaryData *)
		((const char *) BloomPageGetStripe(page) + BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits));

	return BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits) + sizeof(BloomStripeSummaryData) <=
		BLOOMIDX_PAGE_FREE_SPACE && sum->nColumns > 0 &&
		BloomStripeSummaryProblem(page, sigBits) == NULL;
}

/*
 * Give a stripe page (of sigBits-bit signatures) its summary: nColumns
 * columns' block counts and the npages summary pages holding them.
 */
void
BloomStripeSetSummary(Page page, int sigBits, int nColumns, const uint16 *blocks,
					  const BlockNumber *summaryPages, int npages)
{
	BloomStripeSummaryData *sum = (BloomStripeSummaryData *)
		((char *) BloomPageGetStripe(page) + BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits));

	Assert(nColumns <= BLOOMIDX_MAX_COLUMNS && npages <= BLOOMIDX_SUMMARY_MAX_PAGES);
	sum->nColumns = nColumns;
	sum->nPages = npages;
	memcpy(sum->blocks, blocks, sizeof(uint16) * nColumns);
	memcpy((char *) sum + BLOOMIDX_STRIPE_SUMMARY_PAGES_OFFSET(nColumns),
		   summaryPages, sizeof(BlockNumber) * npages);
	BloomSlicedSetUsed(page, BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits) +
					   BLOOMIDX_STRIPE_SUMMARY_PAGES_OFFSET(nColumns) +
					   sizeof(BlockNumber) * npages);
}

/* The flags of a stripe page (BLOOMIDX_STRIPE_*) */
uint16
BloomStripeGetFlags(Page page)
{
	return BloomPageGetStripe(page)->flags;
}

void
BloomStripeSetFlags(Page page, uint16 flags)
{
	BloomPageGetStripe(page)->flags = flags;
}

/*
 * Positions of a group whose region gives a stripe perStripe blocks of a
 * column a page (see sliced.h)
 */
int
BloomGroupPositions(int perStripe)
{
	return Min(BLOOMIDX_GROUP_STRIPES,
			   BLOOMIDX_SUMMARY_PAGE_BLOCKS / Max(perStripe, 1));
}

/*
 * The blocks a stripe's column gets in a page of the region of a group
 * expected to hold expectedStripes full stripes: as many as leave room in
 * a page for that many positions, at least BLOOMIDX_GROUP_MIN_BLOCKS (all
 * BLOOMIDX_GROUP_STRIPES), so that a group the table leaves short takes
 * no more pages than its stripes' own summaries would.
 */
int
BloomGroupPerStripe(double expectedStripes)
{
	double		n = ceil(expectedStripes);

	n = Min(Max(n, 1.0), (double) BLOOMIDX_GROUP_STRIPES);
	return Max(BLOOMIDX_GROUP_MIN_BLOCKS,
			   BLOOMIDX_SUMMARY_PAGE_BLOCKS / (int) n);
}

/* Pages a column of blocks blocks takes in a region of perStripe */
static inline int
BloomGroupColumnPages(int blocks, int perStripe)
{
	return (blocks + perStripe - 1) / perStripe;
}

/* Pages of a group's region, for summaries of blocks blocks per column */
int
BloomGroupRegionPages(const uint16 *blocks, int nColumns, int perStripe)
{
	int			n = 0;
	int			c;

	for (c = 0; c < nColumns; c++)
		n += BloomGroupColumnPages(blocks[c], perStripe);
	return n;
}

/*
 * The page of a group's region (slot) holding block b of column col of the
 * stripe at position pos, blocks being the index-wide blocks; *index: the
 * block's place among the page's blocks (BloomSummaryPageBlocks).
 */
BlockNumber
BloomGroupBlockPage(const BloomSlicedGroupSlot *slot, const uint16 *blocks,
					int col, int b, int pos, int *index)
{
	int			start = 0;
	int			c;

	for (c = 0; c < col; c++)
		start += BloomGroupColumnPages(blocks[c], slot->perStripe);
	*index = pos * slot->perStripe + b % slot->perStripe;
	return slot->first + start + b / slot->perStripe;
}

/* The blocks of a summary page, BLOOMIDX_SUMMARY_BLOCK_WORDS words each */
uint32 *
BloomSummaryPageBlocks(Page page)
{
	return (uint32 *) PageGetContents(page);
}

/*
 * Link i of a stripe page: the slice page of bit i (flag BLOOMIDX_SLICE)
 * or its i-th TID-map page (BLOOMIDX_TIDMAP).
 */
BlockNumber
BloomStripeGetLink(Page page, uint16 flag, int i)
{
	BloomStripe stripe = BloomPageGetStripe(page);

	Assert(flag == BLOOMIDX_SLICE || (i >= 0 && i < BLOOMIDX_STRIPE_TIDPAGES));
	return flag == BLOOMIDX_SLICE ? stripe->slices[i] : stripe->tidPages[i];
}

/*
 * Set link i of a stripe page (see BloomStripeGetLink).
 */
void
BloomStripeSetLink(Page page, uint16 flag, int i, BlockNumber blkno)
{
	BloomStripe stripe = BloomPageGetStripe(page);

	Assert(flag == BLOOMIDX_SLICE || (i >= 0 && i < BLOOMIDX_STRIPE_TIDPAGES));
	if (flag == BLOOMIDX_SLICE)
		stripe->slices[i] = blkno;
	else
		stripe->tidPages[i] = blkno;
}

/* TID-map pages a stripe page lists */
int
BloomStripeGetNTidPages(Page page)
{
	return BloomPageGetStripe(page)->nTidPages;
}

/* First row of TID-map page t of a stripe page */
int
BloomStripeGetTidFirstRow(Page page, int t)
{
	Assert(t >= 0 && t < BLOOMIDX_STRIPE_TIDPAGES);
	return BloomPageGetStripe(page)->tidFirstRow[t];
}

/*
 * Make a stripe page list ntidpages TID maps, those from t0 on starting at
 * rows firstRows[t0 ..]; links past them are cleared.
 */
void
BloomStripeSetTidPages(Page page, int ntidpages, int t0, const uint16 *firstRows)
{
	BloomStripe stripe = BloomPageGetStripe(page);
	int			i;

	Assert(ntidpages <= BLOOMIDX_STRIPE_TIDPAGES);
	stripe->nTidPages = ntidpages;
	for (i = t0; i < ntidpages; i++)
		stripe->tidFirstRow[i] = firstRows[i];
	for (i = ntidpages; i < BLOOMIDX_STRIPE_TIDPAGES; i++)
		stripe->tidPages[i] = InvalidBlockNumber;
}

/* Set the live rows of a stripe page */
void
BloomStripeSetLive(Page page, uint32 nlive)
{
	BloomPageGetStripe(page)->nlive = nlive;
}

/* Add n to the live rows of a stripe page */
void
BloomStripeAddLive(Page page, uint32 n)
{
	BloomPageGetStripe(page)->nlive += n;
}

/*
 * Fill a slice page with the BLOOMIDX_STRIPE_WORDS words of a build's slice.
 */
void
BloomSliceSetWords(Page page, const uint64 *words)
{
	memcpy(BloomPageGetSlice(page), words, sizeof(uint64) * BLOOMIDX_STRIPE_WORDS);
	BloomSlicedSetUsed(page, sizeof(uint64) * BLOOMIDX_STRIPE_WORDS);
}

/*
 * Words of a slice page in use (see BloomSlicedSetUsed).
 */
static int
BloomSliceUsedWords(Page page)
{
	int			used = ((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData);

	return Min(Max(used, 0) / (int) sizeof(uint64), BLOOMIDX_STRIPE_WORDS);
}

/*
 * Does a slice page have bits of rows r0 and later?  Only a merge that a
 * crash cut short leaves them: rows are written past the merged ones.
 */
bool
BloomSliceHasRowsFrom(Page page, int r0)
{
	const uint64 *slice = BloomPageGetSlice(page);
	int			used = BloomSliceUsedWords(page);
	int			w = r0 / 64;

	if (w >= used)
		return false;
	if (r0 % 64 != 0 && (slice[w++] >> (r0 % 64)) != 0)
		return true;
	for (; w < used; w++)
	{
		if (slice[w] != 0)
			return true;
	}
	return false;
}

/*
 * Write the bits of rows r0 and later of a slice page: words[0 .. nw) are
 * its words from the one holding row r0 on (their bits of rows before r0
 * zero).  The page keeps its bits of rows before r0, takes these for the
 * rows after, and drops any bits of later rows that a merge cut short by a
 * crash left, so that each row has exactly the bits of its signature.
 */
void
BloomSliceWriteRows(Page page, int r0, const uint64 *words, int nw)
{
	uint64	   *dst = BloomPageGetSlice(page);
	int			used = BloomSliceUsedWords(page);
	int			w0 = r0 / 64;
	uint64		keep = r0 % 64 == 0 ? 0 : (~UINT64CONST(0)) >> (64 - r0 % 64);
	int			w;

	Assert(nw >= 1 && w0 + nw <= BLOOMIDX_STRIPE_WORDS);
	Assert((words[0] & keep) == 0);
	BloomSlicedSetUsed(page, sizeof(uint64) * (w0 + nw));
	dst[w0] = (dst[w0] & keep) | words[0];
	for (w = 1; w < nw; w++)
		dst[w0 + w] = words[w];
	for (w = w0 + nw; w < used; w++)
		dst[w] = 0;
}

/*
 * AND the first nw words of a slice page into r, listing in live[] the
 * words left non-zero; returns how many.
 */
int
BloomSliceAndWords(Page page, uint64 *r, int nw, uint16 *live)
{
	const uint64 *slice = BloomPageGetSlice(page);
	int			n = 0;
	int			w;

	Assert(nw <= BLOOMIDX_STRIPE_WORDS);
	for (w = 0; w < nw; w++)
	{
		r[w] &= slice[w];
		live[n] = w;
		n += r[w] != 0;
	}
	return n;
}

/*
 * AND into r only its nlive words listed in live[] (every other word of r
 * is zero), keeping in live[] those left non-zero; returns how many.
 */
int
BloomSliceAndLiveWords(Page page, uint64 *r, uint16 *live, int nlive)
{
	const uint64 *slice = BloomPageGetSlice(page);
	int			n = 0;
	int			i;

	for (i = 0; i < nlive; i++)
	{
		int			w = live[i];

		Assert(w < BLOOMIDX_STRIPE_WORDS);
		r[w] &= slice[w];
		live[n] = w;
		n += r[w] != 0;
	}
	return n;
}

/* Entry i of a stripe-list page */
BlockNumber
BloomStripeListGet(Page page, int i)
{
	Assert(i >= 0 && i < BLOOMIDX_STRIPELIST_ENTRIES);
	return BloomPageGetStripeList(page)[i];
}

/* Set entry i of a stripe-list page */
void
BloomStripeListSet(Page page, int i, BlockNumber blkno)
{
	Assert(i >= 0 && i < BLOOMIDX_STRIPELIST_ENTRIES);
	BloomPageGetStripeList(page)[i] = blkno;
}

/* Copy the first n entries of a stripe-list page into stripes */
void
BloomStripeListCopy(Page page, BlockNumber *stripes, int n)
{
	Assert(n <= BLOOMIDX_STRIPELIST_ENTRIES);
	memcpy(stripes, BloomPageGetStripeList(page), sizeof(BlockNumber) * n);
}

/* Set the first n entries of a stripe-list page from stripes */
void
BloomStripeListFill(Page page, const BlockNumber *stripes, int n)
{
	Assert(n <= BLOOMIDX_STRIPELIST_ENTRIES);
	memcpy(BloomPageGetStripeList(page), stripes, sizeof(BlockNumber) * n);
}

/* Does a stripe-list page list no stripe? */
bool
BloomStripeListIsEmpty(Page page)
{
	const BlockNumber *list = BloomPageGetStripeList(page);
	int			i;

	for (i = 0; i < BLOOMIDX_STRIPELIST_ENTRIES; i++)
	{
		if (list[i] != InvalidBlockNumber)
			return false;
	}
	return true;
}

/*
 * Set the keys of a pending row's slot (see page.h), after its signature,
 * from a row's nColumns keys (NULL: a row without keys, zero): those of
 * the columns that are not of sets, which alone have one.
 */
void
BloomPendingSetKeys(BloomState state, uint8 *slot, const uint32 *keys)
{
	const BloomShape *shape = &state->shape;
	uint8	   *p = slot + shape->sigBytes;
	int			i;

	if (keys == NULL)
	{
		memset(p, 0, BloomShapeKeyBytes(shape));
		return;
	}
	for (i = 0; i < shape->nColumns; i++)
	{
		if ((shape->setColumns & (1U << i)) != 0)
			continue;
		memcpy(p, &keys[i], sizeof(uint32));
		p += sizeof(uint32);
	}
}

/*
 * The nColumns keys of a pending row from its slot (0 for a column of
 * sets): BloomPendingSetKeys's inverse.
 */
void
BloomPendingGetKeys(BloomState state, const uint8 *slot, uint32 *keys)
{
	const BloomShape *shape = &state->shape;
	const uint8 *p = slot + shape->sigBytes;
	int			i;

	for (i = 0; i < shape->nColumns; i++)
	{
		keys[i] = 0;
		if ((shape->setColumns & (1U << i)) != 0)
			continue;
		memcpy(&keys[i], p, sizeof(uint32));
		p += sizeof(uint32);
	}
}
