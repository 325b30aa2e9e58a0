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
	if (meta->mergedRows != 0 || meta->firstStripe != 0 ||
		meta->nStripes != 0 || meta->nPending != 0)
		return psprintf("An index of the row layout has " UINT64_FORMAT " merged rows, stripes %u to %u and %u pending pages.",
						meta->mergedRows, meta->firstStripe, meta->nStripes,
						meta->nPending);
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
