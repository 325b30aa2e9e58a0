/*-------------------------------------------------------------------------
 *
 * row.c
 *	  The routine table of the row layout (see row.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "layout.h"
#include "row.h"

const BloomLayoutRoutine BloomRowLayout = {
	.name = "row",
	.pageKinds = 0,
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
	.sizes = NULL,
	.scanpages = BloomRowScanPages,
	.metaproblem = BloomRowMetaProblem,
	.metablocksproblem = NULL,	/* no blocks listed but the free list */
	.metaspareproblem = NULL,
	.pageproblem = BloomRowPageProblem,
};
