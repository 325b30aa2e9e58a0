/*-------------------------------------------------------------------------
 *
 * row_check.c
 *	  Checks of the row layout's metapage fields and pages (the routine
 *	  table's metaproblem and pageproblem).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/row/row_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufpage.h"

#include "bloomidx.h"
#include "page.h"
#include "row.h"

/*
 * Describe what is wrong with the signature length and the row layout's
 * fields of a metapage, or return NULL if nothing is: the length is a
 * multiple of 16, and the fields of the sliced layout are unused.  The row
 * layout lists no blocks but the free list, which pagecheck.c checks.
 */
char *
BloomRowMetaProblem(BloomMetaPage meta, BlockNumber *needBlocks)
{
	if (meta->sigBits < BLOOMIDX_MIN_LENGTH || meta->sigBits > BLOOMIDX_MAX_LENGTH ||
		meta->sigBits % 16 != 0)
		return psprintf("Signature length %u is not a multiple of 16 between %d and %d.",
						meta->sigBits, BLOOMIDX_MIN_LENGTH, BLOOMIDX_MAX_LENGTH);
	return NULL;
}

/*
 * The free list, in the metapage of an index of any layout (the others
 * leave it empty): its length and its entries, raising *needBlocks to one
 * past the highest.
 */
char *
BloomRowMetaAreaProblem(BloomMetaPage meta, BlockNumber *needBlocks)
{
	BloomRowMetaData *row = BloomRowMeta(meta);
	int			i;

	if (row->nFree > BLOOMIDX_FREELIST_SIZE || row->freeStart > row->nFree)
		return psprintf("Free list has %u entries from %u, more than %d.",
						row->nFree, row->freeStart, BLOOMIDX_FREELIST_SIZE);
	for (i = 0; i < row->nFree; i++)
	{
		if (row->freePages[i] == BLOOMIDX_METAPAGE_BLKNO ||
			row->freePages[i] == InvalidBlockNumber)
			return psprintf("Free list entry %d is block %u.", i, row->freePages[i]);
		*needBlocks = Max(*needBlocks, row->freePages[i] + 1);
	}
	return NULL;
}

/* The free list's entries against the index's length nblocks */
char *
BloomRowMetaAreaBlocksProblem(BloomMetaPage meta, BlockNumber nblocks)
{
	BloomRowMetaData *row = BloomRowMeta(meta);
	uint32		i;

	for (i = 0; i < row->nFree; i++)
		if (row->freePages[i] >= nblocks)
			return psprintf("Free list entry %u is block %u, past the index's %u blocks.",
							i, row->freePages[i], nblocks);
	return NULL;
}

/*
 * Describe what is wrong with a page of a row index other than the
 * metapage, neither new nor deleted, or return NULL if nothing is: it is
 * a data page.
 */
char *
BloomRowPageProblem(Page page, const BloomShape *shape)
{
	if (BloomPageHasFlag(page, BLOOMIDX_KIND_FLAGS))
		return psprintf("Page flags 0x%04X are of a kind of page the row layout does not have.",
						(unsigned) BloomPageGetOpaque(page)->flags);
	return BloomDataPageProblem(page, shape);
}
