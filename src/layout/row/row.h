/*-------------------------------------------------------------------------
 *
 * row.h
 *	  Declarations shared by the files of the row layout.
 *
 * The row layout keeps one (signature, heap TID) pair per row in data
 * pages (page.h); the metapage lists pages with free slots.  Its files:
 *	row_build.c		ambuild, serial and parallel
 *	row_insert.c	aminsert
 *	row_scan.c		amgetbitmap, and the pages a scan reads for the
 *					cost model
 *	row_vacuum.c	ambulkdelete, amvacuumcleanup
 *	row_check.c		checks of its metapage fields and pages
 *	row.c			the layout's routine table and shaping rules
 * The data pages are read and changed through datapage.c (src/core/),
 * shared with the sliced layout's pending pages.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/row/row.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_ROW_H
#define BLOOMIDX_ROW_H

#include "bloomidx.h"
#include "layout.h"
#include "page.h"

#define BLOOMIDX_ROW_DEFAULT_FPR	0.01	/* of a derived shape */

/*
 * The row layout's fields of the metapage, from the start of its layouts'
 * area (page.h): data pages that had free slots when last seen.  An index
 * of another layout leaves the list empty.
 */
typedef struct BloomRowMetaData
{
	uint16		nFree;			/* entries in freePages */
	uint16		freeStart;		/* first entry worth trying */
	BlockNumber freePages[BLOOMIDX_FREELIST_SIZE];
} BloomRowMetaData;

#define BloomRowMeta(meta) ((BloomRowMetaData *) (meta)->layoutArea)

/* Where format version 1 put them, in the metapage's contents */
StaticAssertDecl(offsetof(BloomMetaPageData, layoutArea) +
				 offsetof(BloomRowMetaData, nFree) == 104 &&
				 offsetof(BloomMetaPageData, layoutArea) +
				 offsetof(BloomRowMetaData, freeStart) == 106 &&
				 offsetof(BloomMetaPageData, layoutArea) +
				 offsetof(BloomRowMetaData, freePages) == 108,
				 "row layout's metapage fields moved");
StaticAssertDecl(sizeof(BloomRowMetaData) <= BLOOMIDX_META_AREA_SIZE,
				 "row layout's metapage fields overflow the area");

/* The page checks of pagecheck.c, with the row layout's own (row_check.c) */
#define BloomRowCheckMeta(index, page) \
	BloomCheckMeta((index), (page), BloomRowMetaProblem, NULL)
#define BloomRowPageIsData(index, page, blkno, tuplesPerPage) \
	BloomPageIsData((index), (page), (blkno), (tuplesPerPage), 0, "row")

/* row.c: the routine table (layout.c lists it) */
extern const BloomLayoutRoutine BloomRowLayout;

/* row_insert.c */
extern void BloomMetaAddFreePage(BloomMetaPage meta, BlockNumber blkno);

/* row_build.c */
extern void BloomRowBuild(Relation heap, Relation index,
						  struct IndexInfo *indexInfo,
						  const BloomShape *shape, BloomBuildCounts *counts);
extern Size BloomRowSharedSize(const BloomShape *shape, int nparticipants);
extern void BloomRowSharedInit(void *shared, const BloomShape *shape,
							   int nparticipants);
extern void BloomRowBuildParticipant(Relation heap, Relation index,
									 struct IndexInfo *indexInfo,
									 const BloomShape *shape,
									 TableScanDesc scan,
									 BloomBuildProgress *progress,
									 void *shared, int participant,
									 BloomBuildCounts *counts);
extern void BloomRowBuildFinish(Relation heap, Relation index,
								struct IndexInfo *indexInfo,
								const BloomShape *shape, void *shared);

/* row_insert.c */
extern void BloomRowInsert(Relation index, BloomState state, const uint8 *sig,
						   int nbitsSet, const uint64 *mixed, Datum *values,
						   bool *isnull, ItemPointer ht_ctid);

/* row_scan.c */
extern int64 BloomRowGetBitmap(Relation index, BloomState state,
							   BloomScanOpaque so, TIDBitmap *tbm);
extern void BloomRowScanPages(Relation index, BloomState state,
							  const BloomScanPagesInput *in,
							  BloomScanPages *out);

/* row_check.c */
extern char *BloomRowMetaProblem(BloomMetaPage meta, BlockNumber *needBlocks);
extern char *BloomRowMetaAreaProblem(BloomMetaPage meta, BlockNumber *needBlocks);
extern char *BloomRowMetaAreaBlocksProblem(BloomMetaPage meta, BlockNumber nblocks);
extern char *BloomRowPageProblem(Page page, const BloomShape *shape);

/* row_vacuum.c */
extern IndexBulkDeleteResult *BloomRowBulkDelete(IndexVacuumInfo *info,
												 IndexBulkDeleteResult *stats,
												 IndexBulkDeleteCallback callback,
												 void *callback_state);
extern IndexBulkDeleteResult *BloomRowVacuumCleanup(IndexVacuumInfo *info,
													IndexBulkDeleteResult *stats);

#endif							/* BLOOMIDX_ROW_H */
