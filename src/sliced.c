/*-------------------------------------------------------------------------
 *
 * sliced.c
 *	  The routine table of the sliced layout (see sliced.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "layout.h"
#include "page.h"
#include "sliced.h"

const BloomLayoutRoutine BloomSlicedLayout = {
	.name = "sliced",
	.pageKinds = BLOOMIDX_SLICED_FLAGS,
	.build = BloomSlicedBuild,
	.buildsharedsize = BloomSlicedSharedSize,
	.buildsharedinit = BloomSlicedSharedInit,
	.buildparticipant = BloomSlicedBuildParticipant,
	.buildfinish = BloomSlicedBuildFinish,
	.insert = BloomSlicedInsert,
	.getbitmap = BloomSlicedGetBitmap,
	.bulkdelete = BloomSlicedBulkDelete,
	.vacuumcleanup = BloomSlicedVacuumCleanup,
	.merge = BloomSlicedMergeAll,
	.walkrows = BloomSlicedForEachRow,
	.sizes = BloomSlicedLayoutSizes,
	.scanpages = BloomSlicedScanPages,
	.metaproblem = BloomSlicedMetaProblem,
	.metablocksproblem = BloomSlicedMetaBlocksProblem,
	.metaspareproblem = BloomSlicedMetaSpareProblem,
	.pageproblem = BloomSlicedPageProblem,
};
