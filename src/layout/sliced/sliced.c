/*-------------------------------------------------------------------------
 *
 * sliced.c
 *	  The routine table of the sliced layout (see sliced.h), its shaping
 *	  rules and its module load.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fpmodel.h"
#include "layout.h"
#include "page.h"
#include "sliced.h"

/*
 * The bits a column sets in a shape derived from the false-positive rate
 * fpr.  A sliced scan reads a slice page per bit an equality tests, each of
 * which removes the rows whose bit is clear: with 40% of the bits set
 * rather than half, a column needs k = ln(1/p) / ln(2.5) bits rather than
 * log2(1/p) for the same rate (3/4 as many pages to read for a one-column
 * query, each leaving 40% of the rows rather than half), in a signature
 * about 3% longer.  Fewer bits still would cut the pages further but cost
 * more space for the rate, and a one-column query's false positives, each
 * a heap fetch, cost more than its slices.
 */
static int
BloomSlicedColumnBits(double fpr)
{
	return Max(1, (int) rint(log(1.0 / fpr) / log(1.0 / BLOOMIDX_SLICED_FILL)));
}

/*
 * The length of a derived shape, from m bits.  A sliced scan reads only
 * the slices it tests, so a longer signature costs it space but no time:
 * it takes any length, the shortest from m up whose one-column rate, by
 * the false-positive model of the cost estimates, is at most the target
 * fpr (0: none): the rate of a typical query (queryBits) of the column that
 * tests the fewest bits, at the fill of a typical row (rowBits, for a
 * shape with columns of sets).
 */
static int
BloomSlicedDerivedLength(double m, double fpr, const BloomShape *shape)
{
	int			bits;
	int			fewest = 0;
	int			totalBits = 0;
	int			i;

	bits = Max(BLOOMIDX_MIN_LENGTH, (int) ceil(m));
	for (i = 0; i < shape->nColumns; i++)
	{
		if (shape->queryBits[i] < shape->queryBits[fewest])
			fewest = i;
		totalBits += shape->bitsPerColumn[i];
	}
	if (shape->rowBits > 0)
		totalBits = (int) ceil(shape->rowBits);
	for (; fpr > 0 && bits < BLOOMIDX_SLICED_MAX_LENGTH; bits++)
	{
		BloomModelShape model;

		model.sigBits = bits;
		model.sigWords = (bits + 63) / 64;
		model.nColumns = shape->nColumns;
		model.bitsPerColumn = shape->queryBits;
		if (BloomModelEqualityFpr(&model, BloomExpectedFill(bits, 1, totalBits),
								  1, &fewest) <= fpr)
			break;
	}
	return bits;
}

/*
 * Module load: the merges' debug setting, and the hooks that write the
 * rows inserts gather.
 */
static void
BloomSlicedInit(void)
{
	BloomMergeDefineSettings();
	BloomBatchInit();
}

/*
 * The sliced layout's fields of a new metapage, of every index: no stripe
 * list yet, and in an index with summaries their bits a key.
 */
static void
BloomSlicedMetaInit(BloomMetaPageData *meta)
{
	int			i;

	for (i = 0; i < lengthof(BloomSlicedMeta(meta)->stripeLists); i++)
		BloomSlicedMeta(meta)->stripeLists[i] = InvalidBlockNumber;

	/* Summaries: a block a column until the build measures the data */
	if (meta->version >= BLOOMIDX_FORMAT_SUMMARIES &&
		meta->layout == BLOOMIDX_LAYOUT_SLICED)
	{
		BloomSlicedSummaryMetaData *sm = BloomSlicedSummaryMeta(meta);

		sm->bitsPerKey = BLOOMIDX_SUMMARY_DEFAULT_BITS_PER_KEY;
		for (i = 0; i < meta->nColumns; i++)
			sm->blocks[i] = (meta->bitsPerColumn[i] & BLOOMIDX_COLUMN_SETS) ? 0 : 1;
	}
}

const BloomLayoutRoutine BloomSlicedLayout = {
	.id = BLOOMIDX_LAYOUT_SLICED,
	.name = "sliced",
	.rowPageName = "pending page",
	.pageKinds = BLOOMIDX_SLICED_FLAGS,
	.defaultFpr = BLOOMIDX_SLICED_DEFAULT_FPR,
	.maxSigBits = BLOOMIDX_SLICED_MAX_LENGTH,
	.summaries = true,
	.fallback = true,			/* to the row layout, which takes any length */
	.columnbits = BloomSlicedColumnBits,
	.derivedlength = BloomSlicedDerivedLength,
	.metainit = BloomSlicedMetaInit,
	.init = BloomSlicedInit,
	.flush = BloomBatchFlush,
	.build = BloomSlicedBuild,
	.buildsharedsize = BloomSlicedSharedSize,
	.buildsharedinit = BloomSlicedSharedInit,
	.buildparticipant = BloomSlicedBuildParticipant,
	.buildfinish = BloomSlicedBuildFinish,
	.insert = BloomBatchAdd,
	.getbitmap = BloomSlicedGetBitmap,
	.bulkdelete = BloomSlicedBulkDelete,
	.vacuumcleanup = BloomSlicedVacuumCleanup,
	.merge = BloomSlicedMergeAll,
	.walkrows = BloomSlicedForEachRow,
	.heapcheckbegin = BloomSlicedHeapCheckBegin,
	.heapcheckrow = BloomSlicedHeapCheckRow,
	.statscolumns = BloomSlicedStatsColumns,
	.summarystats = BloomSlicedSummaryStats,
	.rowsheld = BloomSlicedRowsHeld,
	.scanpages = BloomSlicedScanPages,
	.liverowpages = BloomSlicedLiveRowPages,
	.metaproblem = BloomSlicedMetaProblem,
	.metablocksproblem = BloomSlicedMetaBlocksProblem,
	.metaareaproblem = BloomSlicedMetaAreaProblem,
	.metaareablocksproblem = NULL,	/* another layout's lists no blocks */
	.metaspareproblem = BloomSlicedMetaSpareProblem,
	.pageproblem = BloomSlicedPageProblem,
};
