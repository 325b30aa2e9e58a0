/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  The routine table between the access method's callbacks and the
 *	  layouts that store an index's signatures.
 *
 * An index's layout is frozen in its metapage.  BloomGetLayout (layout.c)
 * is the one place that maps it to the layout's routines; the callbacks
 * (am_*.c) and the SQL functions that read an index (inspect.c) go through
 * the table and never test the layout themselves.  A new layout is one
 * more set of files defining a BloomLayoutRoutine, and one more case in
 * BloomGetLayout.
 *
 * The row-page primitives (rowpage.c) are shared by the layouts: the row
 * layout's data pages and the sliced layout's pending pages are the same
 * pages.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_LAYOUT_H
#define BLOOMIDX_LAYOUT_H

#include "access/genam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "nodes/pathnodes.h"
#include "nodes/tidbitmap.h"

#include "bloomidx.h"

/* Most participants of a parallel build, leader included */
#define BLOOMIDX_MAX_PARTICIPANTS	64

/* What a build, or one participant of a parallel build, counted */
typedef struct BloomBuildCounts
{
	double		reltuples;		/* heap tuples scanned */
	double		indtuples;		/* rows indexed */
	uint64		bitsSet;		/* signature bits set, for the fill */
} BloomBuildCounts;

/* Called for each row of an index with its TID, signature and block */
typedef void (*BloomRowCallback) (ItemPointer tid, const uint8 *sig,
								  BlockNumber blkno, void *arg);

/* What the cost model knows of a bitmap scan, for BloomScanPages */
typedef struct BloomScanPagesInput
{
	PlannerInfo *root;
	double		loopCount;		/* loops of a nested loop */
	double		indexPages;		/* pages of the index */
	double		indexTuples;	/* rows of the index */
	double		heapPages;		/* pages of the table */
	double		heapTuples;		/* rows of the table */
	double		selectivity;	/* share of the table's rows that are candidates */
	double		querySlices;	/* signature bits the query reads (sliced) */
	int			nclauses;		/* clauses the index tests */
	double		wordsPerRow;	/* signature words tested per row */
} BloomScanPagesInput;

/* What a bitmap scan reads, by the cost model */
typedef struct BloomScanPages
{
	double		pagesFetched;	/* index pages read, per loop */
	double		wordsTested;	/* 64-bit words tested */
} BloomScanPages;

/*
 * The routines of a layout.  Entries a layout does not need are NULL, as
 * the comments say.
 */
typedef struct BloomLayoutRoutine
{
	const char *name;			/* the value of the layout option */
	uint16		pageKinds;		/* page flags of its own (page.h), for checks */

	/*
	 * ambuild, after the metapage is written.  build scans the whole heap
	 * alone.  A parallel build gives each participant its share of a
	 * parallel heap scan (buildparticipant) and shared memory of
	 * buildsharedsize bytes for the layout, set up by buildsharedinit; the
	 * leader then completes the index with buildfinish.  The fill
	 * statistics go into the metapage after either.
	 */
	void		(*build) (Relation heap, Relation index,
						  struct IndexInfo *indexInfo, const BloomShape *shape,
						  BloomBuildCounts *counts);
	Size		(*buildsharedsize) (const BloomShape *shape, int nparticipants);
	void		(*buildsharedinit) (void *shared, const BloomShape *shape,
									int nparticipants);
	void		(*buildparticipant) (Relation heap, Relation index,
									 struct IndexInfo *indexInfo,
									 const BloomShape *shape, TableScanDesc scan,
									 bool progress, void *shared,
									 int participant, BloomBuildCounts *counts);
	void		(*buildfinish) (Relation heap, Relation index,
								struct IndexInfo *indexInfo,
								const BloomShape *shape, void *shared);

	/* aminsert: a row's signature, with nbitsSet bits set */
	void		(*insert) (Relation index, BloomState state, const uint8 *sig,
						   int nbitsSet, ItemPointer tid);

	/* amgetbitmap, for a query that may match */
	int64		(*getbitmap) (Relation index, BloomState state,
							  BloomScanOpaque so, TIDBitmap *tbm);

	/* ambulkdelete, and amvacuumcleanup unless ANALYZE only */
	IndexBulkDeleteResult *(*bulkdelete) (IndexVacuumInfo *info,
										  IndexBulkDeleteResult *stats,
										  IndexBulkDeleteCallback callback,
										  void *callback_state);
	IndexBulkDeleteResult *(*vacuumcleanup) (IndexVacuumInfo *info,
											 IndexBulkDeleteResult *stats);

	/* bloomidx_merge(): rows merged; NULL if the layout has nothing to merge */
	int64		(*merge) (Relation index, bool wait);

	/*
	 * bloomidx_stats and bloomidx_check: walk the rows kept outside row
	 * pages (the page walk reads those), its caller holding the merge lock;
	 * give the layout's sizes (false to leave them NULL).  Either is NULL if
	 * the layout has no such rows or sizes.
	 */
	uint64		(*walkrows) (Relation index, const BloomShape *shape,
							 BloomRowCallback fn, void *arg);
	bool		(*sizes) (Relation index, BloomLayoutSizesData *sizes);

	/* The cost model: pages and words a bitmap scan reads */
	void		(*scanpages) (Relation index, BloomState state,
							  const BloomScanPagesInput *in,
							  BloomScanPages *out);
} BloomLayoutRoutine;

/* layout.c */
extern const BloomLayoutRoutine *BloomGetLayout(const BloomShape *shape);

/* row.c, sliced.c */
extern const BloomLayoutRoutine BloomRowLayout;
extern const BloomLayoutRoutine BloomSlicedLayout;

/* rowpage.c */
extern int	BloomScanRowPage(BloomScanOpaque so, Page page, int sigBytes,
							 int sigWords, ItemPointerData *tids);
extern GenericXLogState *BloomPageRemoveDead(Relation index, Buffer buffer,
											 Page *page, int sigBytes,
											 IndexBulkDeleteCallback callback,
											 void *callback_state,
											 IndexBulkDeleteResult *stats);

#endif							/* BLOOMIDX_LAYOUT_H */
