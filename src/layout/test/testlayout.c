/*-------------------------------------------------------------------------
 *
 * testlayout.c
 *	  A throwaway third layout, built only with -DBLOOMIDX_TEST_LAYOUT: it
 *	  stores nothing but the metapage and answers "maybe" for every row
 *	  (every page of the table, lossy, for the heap scan to recheck).
 *
 * It shows what adding a layout takes: this folder, its lines in
 * layout.c's table and its object in the Makefile; no shell changes.  The
 * limits suite (scripts/test-major.sh) builds with it and runs
 * limits/sql/test_layout.sql, the differential queries on an index of this
 * layout.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/test/testlayout.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"

/* Its number: the next after the table's last */
#define BLOOMIDX_LAYOUT_TEST	3

extern const BloomLayoutRoutine BloomTestLayout;

/* Bits a column sets for a rate: those of the textbook optimum */
static int
BloomTestColumnBits(double fpr)
{
	return Max(1, Min(16, (int) rint(-log2(fpr))));
}

/* The length for m bits: m rounded up to 16, within the limits */
static int
BloomTestDerivedLength(double m, double fpr, const BloomShape *shape)
{
	double		bits = ceil(m / 16) * 16;

	return (int) Max(BLOOMIDX_MIN_LENGTH, Min(BLOOMIDX_MAX_LENGTH, bits));
}

/* A build counts the table's rows and stores none */
static void
BloomTestBuildCallback(Relation index, ItemPointer tid, Datum *values,
					   bool *isnull, bool tupleIsAlive, void *state)
{
	((BloomBuildCounts *) state)->indtuples += 1;
}

static void
BloomTestBuild(Relation heap, Relation index, IndexInfo *indexInfo,
			   const BloomShape *shape, BloomBuildCounts *counts)
{
	counts->reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
											   BloomTestBuildCallback, counts,
											   NULL);
}

static Size
BloomTestSharedSize(const BloomShape *shape, int nparticipants)
{
	return 0;
}

static void
BloomTestSharedInit(void *shared, const BloomShape *shape, int nparticipants)
{
}

static void
BloomTestBuildParticipant(Relation heap, Relation index, IndexInfo *indexInfo,
						  const BloomShape *shape, TableScanDesc scan,
						  BloomBuildProgress *progress, void *shared,
						  int participant, BloomBuildCounts *counts)
{
	counts->reltuples = table_index_build_scan(heap, index, indexInfo, true,
											   progress->report,
											   BloomTestBuildCallback, counts,
											   scan);
}

static void
BloomTestBuildFinish(Relation heap, Relation index, IndexInfo *indexInfo,
					 const BloomShape *shape, void *shared)
{
}

static void
BloomTestInsert(Relation index, BloomState state, const uint8 *sig,
				int nbitsSet, const uint64 *mixed, Datum *values, bool *isnull,
				ItemPointer tid)
{
}

/* Every page of the table, lossy: every row may match */
static int64
BloomTestGetBitmap(Relation index, BloomState state, BloomScanOpaque so,
				   TIDBitmap *tbm)
{
	Relation	heap = table_open(IndexGetRelation(RelationGetRelid(index), false),
								  NoLock);
	BlockNumber nblocks = RelationGetNumberOfBlocks(heap);
	BlockNumber blkno;

	table_close(heap, NoLock);
	if (so->noMatch)
		return 0;
	for (blkno = 0; blkno < nblocks; blkno++)
	{
		CHECK_FOR_INTERRUPTS();
		tbm_add_page(tbm, blkno);
	}
	return (int64) nblocks;
}

static IndexBulkDeleteResult *
BloomTestBulkDelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	return stats;
}

static IndexBulkDeleteResult *
BloomTestVacuumCleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	stats->num_index_tuples = info->num_heap_tuples;
	stats->estimated_count = info->estimated_count;
	return stats;
}

/* A scan reads the metapage and tests nothing */
static void
BloomTestScanPages(Relation index, BloomState state,
				   const BloomScanPagesInput *in, BloomScanPages *out)
{
	out->pagesFetched = 1;
	out->wordsTested = 0;
}

static char *
BloomTestPageProblem(Page page, const BloomShape *shape)
{
	return pstrdup("An index of the test layout has no page but its metapage.");
}

const BloomLayoutRoutine BloomTestLayout = {
	.id = BLOOMIDX_LAYOUT_TEST,
	.name = "test",
	.rowPageName = "data page",
	.pageKinds = 0,
	.defaultFpr = 0.01,
	.maxSigBits = BLOOMIDX_MAX_LENGTH,
	.fallback = false,
	.metainit = NULL,
	.columnbits = BloomTestColumnBits,
	.derivedlength = BloomTestDerivedLength,
	.init = NULL,
	.flush = NULL,
	.build = BloomTestBuild,
	.buildsharedsize = BloomTestSharedSize,
	.buildsharedinit = BloomTestSharedInit,
	.buildparticipant = BloomTestBuildParticipant,
	.buildfinish = BloomTestBuildFinish,
	.insert = BloomTestInsert,
	.getbitmap = BloomTestGetBitmap,
	.bulkdelete = BloomTestBulkDelete,
	.vacuumcleanup = BloomTestVacuumCleanup,
	.merge = NULL,
	.walkrows = NULL,
	.statscolumns = NULL,
	.summarystats = NULL,
	.rowsheld = NULL,
	.scanpages = BloomTestScanPages,
	.liverowpages = NULL,
	.metaproblem = NULL,
	.metablocksproblem = NULL,
	.metaspareproblem = NULL,
	.pageproblem = BloomTestPageProblem,
};
