/*-------------------------------------------------------------------------
 *
 * sliced_check.c
 *	  Checks of the sliced layout's metapage fields and pages: slices, TID
 *	  maps, stripe and stripe-list pages (the routine table's metaproblem,
 *	  metablocksproblem, metaspareproblem and pageproblem), and of a stripe
 *	  page before its links are followed.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"
#include "storage/bufpage.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "sliced.h"

/*
 * Stripe-list pages a sliced metapage's stripes firstStripe to nStripes
 * take (checked to be in range by BloomSlicedMetaProblem).
 */
static uint32
BloomMetaStripeListsInUse(BloomMetaPage meta)
{
	if (BloomSlicedMeta(meta)->nStripes == BloomSlicedMeta(meta)->firstStripe)
		return 0;
	return (BloomSlicedMeta(meta)->nStripes - 1) / BLOOMIDX_STRIPELIST_ENTRIES -
		BloomSlicedMeta(meta)->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES + 1;
}

/*
 * Describe what is wrong with the signature length and the sliced layout's
 * fields of a metapage, or return NULL if nothing is (the routine table's
 * metaproblem).  Block numbers are checked against the index's length by
 * the caller: *needBlocks is raised to cover those listed here.
 */
char *
BloomSlicedMetaProblem(BloomMetaPage meta, BlockNumber *needBlocks)
{
	uint32		nlists;
	uint32		i;

	/* Any length: see BloomDerivedLength */
	if (meta->sigBits < BLOOMIDX_MIN_LENGTH || meta->sigBits > BLOOMIDX_SLICED_MAX_LENGTH)
		return psprintf("Signature length %u is not between %d and %d.",
						meta->sigBits, BLOOMIDX_MIN_LENGTH, BLOOMIDX_SLICED_MAX_LENGTH);
	if (BloomSlicedMeta(meta)->nPending > BLOOMIDX_PENDING_SIZE)
		return psprintf("Pending list has %u entries, more than %d.",
						BloomSlicedMeta(meta)->nPending, BLOOMIDX_PENDING_SIZE);
	for (i = 0; i < BloomSlicedMeta(meta)->nPending; i++)
	{
		if (BloomSlicedMeta(meta)->pendingPages[i] == BLOOMIDX_METAPAGE_BLKNO ||
			BloomSlicedMeta(meta)->pendingPages[i] == InvalidBlockNumber)
			return psprintf("Pending list entry %u is block %u.", i,
							BloomSlicedMeta(meta)->pendingPages[i]);
		*needBlocks = Max(*needBlocks, BloomSlicedMeta(meta)->pendingPages[i] + 1);
	}
	if (BloomSlicedMeta(meta)->firstStripe > BloomSlicedMeta(meta)->nStripes ||
		BloomSlicedMeta(meta)->nStripes - BloomSlicedMeta(meta)->firstStripe > BLOOMIDX_MAX_STRIPES -
		BloomSlicedMeta(meta)->firstStripe % BLOOMIDX_STRIPELIST_ENTRIES)
		return psprintf("Stripes %u to %u are listed, at most %u.",
						BloomSlicedMeta(meta)->firstStripe, BloomSlicedMeta(meta)->nStripes,
						(uint32) BLOOMIDX_MAX_STRIPES);
	if (BloomSlicedMeta(meta)->mergedRows > (uint64) BloomSlicedMeta(meta)->nStripes * BLOOMIDX_STRIPE_ROWS ||
		(BloomSlicedMeta(meta)->nStripes > 0 &&
		 BloomSlicedMeta(meta)->mergedRows <= (uint64) (BloomSlicedMeta(meta)->nStripes - 1) * BLOOMIDX_STRIPE_ROWS))
		return psprintf(UINT64_FORMAT " merged rows do not fill %u stripes of %d rows.",
						BloomSlicedMeta(meta)->mergedRows, BloomSlicedMeta(meta)->nStripes,
						(int) BLOOMIDX_STRIPE_ROWS);
	nlists = BloomMetaStripeListsInUse(meta);
	/*
	 * The lists in use, and the next, which a merge lists before it lists
	 * the stripe: the entries anything reads before it reads the metapage
	 * again (VACUUM shifts the entries down under the metapage lock).
	 * bloomidx_check checks the others too (metaspareproblem).
	 */
	for (i = 0; i < Min(nlists + 1, BLOOMIDX_MAX_STRIPELISTS); i++)
	{
		if (BloomSlicedMeta(meta)->stripeLists[i] == BLOOMIDX_METAPAGE_BLKNO ||
			(i < nlists && BloomSlicedMeta(meta)->stripeLists[i] == InvalidBlockNumber))
			return psprintf("Stripe-list entry %u is block %u.", i,
							BloomSlicedMeta(meta)->stripeLists[i]);
		/* an unused entry, InvalidBlockNumber, adds 0 */
		*needBlocks = Max(*needBlocks, (BlockNumber) (BloomSlicedMeta(meta)->stripeLists[i] + 1));
	}
	return BloomGroupSlotsProblem(meta, needBlocks);
}

/*
 * Describe what is wrong with the stripe-list entries of a sound sliced
 * metapage past those BloomSlicedMetaProblem checks, or return NULL: each
 * is unused or a block of the index's nblocks other than the metapage (the
 * routine table's metaspareproblem).
 */
char *
BloomSlicedMetaSpareProblem(BloomMetaPage meta, BlockNumber nblocks)
{
	uint32		nlists;
	uint32		i;

	nlists = BloomMetaStripeListsInUse(meta);
	for (i = nlists + 1; i < BLOOMIDX_MAX_STRIPELISTS; i++)
		if (BloomSlicedMeta(meta)->stripeLists[i] == BLOOMIDX_METAPAGE_BLKNO ||
			(BloomSlicedMeta(meta)->stripeLists[i] != InvalidBlockNumber &&
			 BloomSlicedMeta(meta)->stripeLists[i] >= nblocks))
			return psprintf("Stripe-list entry %u is block %u.", i,
							BloomSlicedMeta(meta)->stripeLists[i]);
	return BloomGroupSlotsOverlap(meta);
}

/*
 * Complain unless every block the sliced layout's fields of a metapage
 * list is a page of the index: nblocks is the index's length (the routine
 * table's metablocksproblem).
 */
char *
BloomSlicedMetaBlocksProblem(BloomMetaPage meta, BlockNumber nblocks)
{
	uint32		i;

	for (i = 0; i < BloomSlicedMeta(meta)->nPending; i++)
		if (BloomSlicedMeta(meta)->pendingPages[i] >= nblocks)
			return psprintf("Pending list entry %u is block %u, past the index's %u blocks.",
							i, BloomSlicedMeta(meta)->pendingPages[i], nblocks);
	for (i = 0; i < BLOOMIDX_MAX_STRIPELISTS; i++)
		if (BloomSlicedMeta(meta)->stripeLists[i] != InvalidBlockNumber &&
			BloomSlicedMeta(meta)->stripeLists[i] >= nblocks)
			return psprintf("Stripe-list entry %u is block %u, past the index's %u blocks.",
							i, BloomSlicedMeta(meta)->stripeLists[i], nblocks);
	for (i = 0; i < BLOOMIDX_GROUP_SLOTS; i++)
	{
		const BloomSlicedGroupSlot *slot = &BloomSlicedGroupMeta(meta)->slots[i];

		if (slot->groupPlus1 != 0 && slot->first + slot->npages > nblocks)
			return psprintf("The region of summary group %u, blocks %u to %u, is past the index's %u blocks.",
							slot->groupPlus1 - 1, slot->first,
							slot->first + slot->npages - 1, nblocks);
	}
	return NULL;
}


/*
 * The sliced layout's fields in the metapage of an index of another
 * layout, which leaves them zero (the stripe lists invalid, not checked).
 */
char *
BloomSlicedMetaAreaProblem(BloomMetaPage meta, BlockNumber *needBlocks)
{
	BloomSlicedMetaData *sliced = BloomSlicedMeta(meta);

	if (meta->layout == BLOOMIDX_LAYOUT_SLICED)
		return NULL;			/* BloomSlicedMetaProblem checks them */
	if (sliced->mergedRows != 0 || sliced->firstStripe != 0 ||
		sliced->nStripes != 0 || sliced->nPending != 0)
		return psprintf("An index of the %s layout has " UINT64_FORMAT " merged rows, stripes %u to %u and %u pending pages.",
						BloomLayoutById(meta->layout)->name,
						sliced->mergedRows, sliced->firstStripe,
						sliced->nStripes, sliced->nPending);
	return BloomGroupSlotsProblem(meta, needBlocks);
}

/*
 * Describe what is wrong with the summary groups' slots of a metapage, or
 * return NULL: none in use unless the index is of the sliced layout with
 * measured summaries; a slot's region of as many pages as the index-wide
 * blocks take at its perStripe, past the metapage; sealed bits only at
 * the positions it holds, of stripes listed so far.  *needBlocks is raised
 * to cover the regions.
 */
char *
BloomGroupSlotsProblem(BloomMetaPage meta, BlockNumber *needBlocks)
{
	BloomSlicedGroupMetaData *gm = BloomSlicedGroupMeta(meta);
	bool		groups = meta->version >= BLOOMIDX_FORMAT_SUMMARIES &&
		meta->layout == BLOOMIDX_LAYOUT_SLICED &&
		(BloomSlicedSummaryMeta(meta)->flags & BLOOMIDX_SUMMARY_MEASURED) != 0 &&
		meta->nColumns <= BLOOMIDX_MAX_COLUMNS;
	int			i;

	for (i = 0; i < BLOOMIDX_GROUP_SLOTS; i++)
	{
		const BloomSlicedGroupSlot *slot = &gm->slots[i];
		uint64		firstStripe;
		int			npages;

		if (slot->groupPlus1 == 0)
		{
			if (slot->first != 0 || slot->perStripe != 0 || slot->npages != 0 ||
				slot->spare != 0 || slot->sealed != 0)
				return psprintf("Free summary group slot %d is not zero.", i);
			continue;
		}
		if (!groups)
			return psprintf("Summary group slot %d is in use in an index without measured summaries.", i);
		firstStripe = (uint64) (slot->groupPlus1 - 1) * BLOOMIDX_GROUP_STRIPES;
		if (slot->perStripe < BLOOMIDX_GROUP_MIN_BLOCKS ||
			slot->perStripe > BLOOMIDX_SUMMARY_PAGE_BLOCKS)
			return psprintf("Summary group %u has %u blocks a stripe a page, not between %d and %d.",
							slot->groupPlus1 - 1, slot->perStripe,
							BLOOMIDX_GROUP_MIN_BLOCKS, BLOOMIDX_SUMMARY_PAGE_BLOCKS);
		npages = BloomGroupRegionPages(BloomSlicedSummaryMeta(meta)->blocks,
									   meta->nColumns, slot->perStripe);
		if (slot->npages != npages || npages == 0)
			return psprintf("Summary group %u has a region of %u pages, not the %d its blocks take.",
							slot->groupPlus1 - 1, slot->npages, npages);
		if (slot->first == BLOOMIDX_METAPAGE_BLKNO ||
			slot->first >= InvalidBlockNumber - slot->npages)
			return psprintf("Summary group %u has its region at block %u.",
							slot->groupPlus1 - 1, slot->first);
		if ((slot->sealed >> BloomGroupPositions(slot->perStripe)) != 0 ||
			firstStripe >= BloomSlicedMeta(meta)->nStripes ||
			(slot->sealed != 0 &&
			 firstStripe + pg_leftmost_one_pos64(slot->sealed) >=
			 BloomSlicedMeta(meta)->nStripes) ||
			slot->spare != 0)
			return psprintf("Summary group %u seals stripes 0x%016llx from stripe " UINT64_FORMAT " of %u listed, at %d positions.",
							slot->groupPlus1 - 1,
							(unsigned long long) slot->sealed, firstStripe,
							BloomSlicedMeta(meta)->nStripes,
							BloomGroupPositions(slot->perStripe));
		*needBlocks = Max(*needBlocks, slot->first + slot->npages);
	}
	return NULL;
}

/*
 * Two slots of the same group, or two regions that overlap, for
 * bloomidx_check; NULL if none (each slot checked by BloomGroupSlotsProblem)
 */
char *
BloomGroupSlotsOverlap(BloomMetaPage meta)
{
	BloomSlicedGroupMetaData *gm = BloomSlicedGroupMeta(meta);
	int			i,
				j;

	for (i = 0; i < BLOOMIDX_GROUP_SLOTS; i++)
	{
		const BloomSlicedGroupSlot *a = &gm->slots[i];

		if (a->groupPlus1 == 0)
			continue;
		for (j = i + 1; j < BLOOMIDX_GROUP_SLOTS; j++)
		{
			const BloomSlicedGroupSlot *b = &gm->slots[j];

			if (b->groupPlus1 == 0)
				continue;
			if (a->groupPlus1 == b->groupPlus1)
				return psprintf("Summary group %u has two slots, %d and %d.",
								a->groupPlus1 - 1, i, j);
			if (a->first < b->first + b->npages && b->first < a->first + a->npages)
				return psprintf("The regions of summary groups %u and %u overlap.",
								a->groupPlus1 - 1, b->groupPlus1 - 1);
		}
	}
	return NULL;
}

/* Most slots of the set BloomStripeLinkTwice keeps, a power of two */
#define BLOOM_LINK_SLOTS	4096

StaticAssertDecl(BLOOM_LINK_SLOTS >= 2 * (BLOOMIDX_SLICED_MAX_LENGTH + BLOOMIDX_STRIPE_TIDPAGES),
				 "BLOOM_LINK_SLOTS too small");

/*
 * A block a stripe page links twice (its TID maps and its slices), or
 * InvalidBlockNumber if none: a merge would lock that page twice and wait
 * on itself forever, and a scan would read a slice as another's.  An open
 * addressing set of the links, by their low bits: a stripe's pages are
 * mostly consecutive blocks.
 */
static BlockNumber
BloomStripeLinkTwice(BloomStripe stripe, int sigBits)
{
	BlockNumber set[BLOOM_LINK_SLOTS];
	int			n = stripe->nTidPages + sigBits;
	uint32		mask = 63;
	int			i;

	/* At least twice as many slots as links, in the set's first ones */
	while (mask + 1 < 2 * n)
		mask = mask * 2 + 1;
	memset(set, 0xFF, sizeof(BlockNumber) * (mask + 1));
	for (i = 0; i < n; i++)
	{
		BlockNumber link = i < stripe->nTidPages ? stripe->tidPages[i] :
			stripe->slices[i - stripe->nTidPages];
		uint32		h;

		if (link == InvalidBlockNumber)
			continue;
		for (h = link & mask; set[h] != InvalidBlockNumber; h = (h + 1) & mask)
		{
			if (set[h] == link)
				return link;
		}
		set[h] = link;
	}
	return InvalidBlockNumber;
}

/*
 * Describe what is wrong with the contents of stripe page blkno of an
 * index of sigBits-bit signatures nblocks long, or return NULL if nothing
 * is: the counts, the TID maps' first rows, and every link.
 */
static char *
BloomStripePageProblem(Page page, BlockNumber blkno, int sigBits,
					   BlockNumber nblocks)
{
	BloomStripe stripe = BloomPageGetStripe(page);
	BlockNumber twice;
	char	   *problem;
	int			t;
	int			b;

	if (sigBits > BLOOMIDX_SLICED_MAX_LENGTH)
		return psprintf("Signature length %d is more than the sliced layout's %d.",
						sigBits, BLOOMIDX_SLICED_MAX_LENGTH);
	if (stripe->nlive > BLOOMIDX_STRIPE_ROWS)
		return psprintf("The stripe has %u live rows, more than %d.",
						stripe->nlive, (int) BLOOMIDX_STRIPE_ROWS);
	if (((PageHeader) page)->pd_lower < MAXALIGN(SizeOfPageHeaderData) +
		offsetof(BloomStripeData, slices) + sizeof(BlockNumber) * sigBits)
		return psprintf("pd_lower %u does not cover the links of %d slices.",
						(unsigned) ((PageHeader) page)->pd_lower, sigBits);
	if (stripe->nTidPages > BLOOMIDX_STRIPE_TIDPAGES)
		return psprintf("The stripe has %u TID maps, more than %d.",
						stripe->nTidPages, (int) BLOOMIDX_STRIPE_TIDPAGES);
	for (t = 0; t < stripe->nTidPages; t++)
	{
		BlockNumber link = stripe->tidPages[t];

		if ((t == 0 && stripe->tidFirstRow[t] != 0) ||
			(t > 0 && stripe->tidFirstRow[t] <= stripe->tidFirstRow[t - 1]) ||
			stripe->tidFirstRow[t] >= BLOOMIDX_STRIPE_ROWS)
			return psprintf("TID map %d starts at row %u.", t,
							stripe->tidFirstRow[t]);
		if (link == BLOOMIDX_METAPAGE_BLKNO || link == blkno || link >= nblocks)
			return psprintf("TID map %d is block %u.", t, link);
	}
	for (b = 0; b < sigBits; b++)
	{
		BlockNumber link = stripe->slices[b];

		if (link != InvalidBlockNumber &&
			(link == BLOOMIDX_METAPAGE_BLKNO || link == blkno || link >= nblocks))
			return psprintf("The slice of bit %d is block %u.", b, link);
	}

	/*
	 * A stripe page is initialized with the links of its signature's bits
	 * only, the rest zero, and no link is ever block 0: a link past them
	 * means signatures longer than the metapage says, unless it is the
	 * stripe's summary (format 4), which starts there.
	 */
	if (sigBits < BLOOMIDX_SLICED_MAX_LENGTH && stripe->slices[sigBits] != 0 &&
		!BloomStripeHasSummary(page, sigBits))
		return psprintf("The stripe page has a slice link for bit %d, past the signature's %d bits.",
						sigBits, sigBits);
	if ((twice = BloomStripeLinkTwice(stripe, sigBits)) != InvalidBlockNumber)
		return psprintf("The stripe page links block %u twice.", twice);
	if ((problem = BloomStripeSummaryProblem(page, sigBits)) != NULL)
		return problem;
	else
	{
		BloomStripePages *pages = palloc(sizeof(BloomStripePages));
		int			p;

		BloomStripeGetPages(page, sigBits, pages);
		for (p = 0; p < pages->nSummaryPages; p++)
		{
			BlockNumber link = pages->summaryPages[p];

			if (link == BLOOMIDX_METAPAGE_BLKNO || link == blkno || link >= nblocks)
			{
				pfree(pages);
				return psprintf("Summary page %d is block %u.", p, link);
			}
		}
		pfree(pages);
	}
	return NULL;
}

/*
 * Check stripe page blkno before its contents are used (see
 * BloomStripePageProblem).
 */
void
BloomCheckStripePage(Relation index, Page page, BlockNumber blkno, int sigBits)
{
	BloomState	state = (BloomState) index->rd_amcache;
	char	   *problem = NULL;

	/* a length the index had first, its current one if that is short */
	if (state == NULL ||
		BloomStripePageProblem(page, blkno, sigBits, state->knownBlocks) != NULL)
		problem = BloomStripePageProblem(page, blkno, sigBits,
										 BloomBlocksCovering(index, InvalidBlockNumber));
	if (problem != NULL)
		BloomReportCorruption(index, blkno, problem);
}

/*
 * Describe what is wrong with the used part of a page of the sliced layout
 * (of signatures of sigBits bits), which generic WAL logs up to pd_lower
 * (see BloomInitSlicedPage), or return NULL if nothing is: it must cover
 * what the page holds, and a slice's bits past it must be clear.  A TID
 * map's header must be sane.
 */
static char *
BloomSlicedUsedProblem(Page page, int sigBits)
{
	PageHeader	phdr = (PageHeader) page;
	Size		used = phdr->pd_lower - Min(phdr->pd_lower, MAXALIGN(SizeOfPageHeaderData));
	Size		need = 0;

	if (BloomPageHasFlag(page, BLOOMIDX_SLICE))
	{
		const uint8 *hole = (const uint8 *) PageGetContents(page) + used;
		Size		i;

		for (i = 0; used + i < BLOOMIDX_PAGE_FREE_SPACE; i++)
		{
			if (hole[i] != 0)
				return psprintf("Slice has bits set past its pd_lower %u.",
								(unsigned) phdr->pd_lower);
		}
		return NULL;
	}
	if (BloomPageHasFlag(page, BLOOMIDX_TIDMAP))
	{
		BloomTidMap map = BloomPageGetTidMap(page);

		need = offsetof(BloomTidMapData, packed) +
			((uint64) map->nrows * (map->blockBits + map->offsetBits) + 7) / 8;
	}
	else if (BloomPageHasFlag(page, BLOOMIDX_STRIPE))
		need = offsetof(BloomStripeData, slices) + sizeof(BlockNumber) * sigBits;
	else
		need = BLOOMIDX_PAGE_FREE_SPACE;
	if (phdr->pd_lower < MAXALIGN(SizeOfPageHeaderData) + need)
		return psprintf("pd_lower %u does not cover the page's contents.",
						(unsigned) phdr->pd_lower);
	if (BloomPageHasFlag(page, BLOOMIDX_TIDMAP) && !BloomTidMapUsedIsSane(page))
	{
		BloomTidMap map = BloomPageGetTidMap(page);

		return psprintf("The TID map's %u entries of %d bits do not end where its used part, to pd_lower %u, does.",
						map->nrows, map->blockBits + map->offsetBits,
						(unsigned) phdr->pd_lower);
	}
	return NULL;
}

/*
 * Describe what is wrong with a page of a sliced index other than the
 * metapage, neither new nor deleted, or return NULL if nothing is (the
 * routine table's pageproblem): a page of one of the layout's kinds, or a
 * pending page.
 */
char *
BloomSlicedPageProblem(Page page, const BloomShape *shape)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);
	char	   *problem;

	if (!BloomPageHasFlag(page, BLOOMIDX_SLICED_FLAGS))
		return BloomDataPageProblem(page, shape);
	if (pg_popcount32(opaque->flags & BLOOMIDX_SLICED_FLAGS) != 1 ||
		(opaque->flags & BLOOMIDX_KEYLESS) != 0)
		return psprintf("Page has flags 0x%04X of more than one kind of page.",
						opaque->flags);
	if (BloomPageHasFlag(page, BLOOMIDX_TIDMAP) &&
		(problem = BloomTidMapProblem(page)) != NULL)
		return problem;
	return BloomSlicedUsedProblem(page, shape->sigBits);
}
