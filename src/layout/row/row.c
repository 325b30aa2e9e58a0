/*-------------------------------------------------------------------------
 *
 * row.c
 *	  The routine table of the row layout (see row.h) and its shaping
 *	  rules.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/row/row.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "layout.h"
#include "page.h"
#include "row.h"

/*
 * The bits a column sets in a shape derived from the false-positive rate
 * fpr: k = round(log2(1 / p)), half of the bits set.
 */
static int
BloomRowColumnBits(double fpr)
{
	return Max(1, (int) rint(log2(1.0 / fpr)));
}

/*
 * The length of a derived shape, from m bits: the row layout tests whole
 * 64-bit words, so its signatures are rounded up to words.
 */
static int
BloomRowDerivedLength(double m, double fpr, const BloomShape *shape)
{
	return Max(64, TYPEALIGN(64, (int) ceil(m)));
}

const BloomLayoutRoutine BloomRowLayout = {
	.id = BLOOMIDX_LAYOUT_ROW,
	.name = "row",
	.rowPageName = "data page",
	.pageKinds = 0,
	.defaultFpr = BLOOMIDX_ROW_DEFAULT_FPR,
	.maxSigBits = BLOOMIDX_MAX_LENGTH,
	.fallback = false,			/* takes every length */
	.metainit = NULL,			/* its free list starts empty */
	.columnbits = BloomRowColumnBits,
	.derivedlength = BloomRowDerivedLength,
	.init = NULL,
	.flush = NULL,				/* inserts write their rows at once */
	.build = BloomRowBuild,
	.buildsharedsize = BloomRowSharedSize,
	.buildsharedinit = BloomRowSharedInit,
	.buildparticipant = BloomRowBuildParticipant,
	.buildfinish = BloomRowBuildFinish,
	.insert = BloomRowInsert,
	.getbitmap = BloomRowGetBitmap,
	.bulkdelete = BloomRowBulkDelete,
	.vacuumcleanup = BloomRowVacuumCleanup,
	.merge = NULL,				/* nothing to merge */
	.walkrows = NULL,			/* every row is on a data page */
	.statscolumns = NULL,
	.summarystats = NULL,
	.rowsheld = NULL,
	.scanpages = BloomRowScanPages,
	.liverowpages = NULL,		/* every row page */
	.metaproblem = BloomRowMetaProblem,
	.metablocksproblem = NULL,	/* no blocks listed but the free list */
	.metaareaproblem = BloomRowMetaAreaProblem,
	.metaareablocksproblem = BloomRowMetaAreaBlocksProblem,
	.metaspareproblem = NULL,
	.pageproblem = BloomRowPageProblem,
};
