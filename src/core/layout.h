/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  The routine table between the access method's callbacks and the
 *	  layouts that store an index's signatures.
 *
 * An index's layout is frozen in its metapage.  BloomGetLayout (layout.c)
 * is the one place that maps it to the layout's routines; the callbacks
 * (am_*.c), the SQL functions that read an index (inspect.c) and the page
 * checks (pagecheck.c) go through the table and never test the layout
 * themselves.  A new layout is one more folder, src/layout/NAME/, whose
 * files define a BloomLayoutRoutine, and its lines in layout.c's table
 * (src/layout/test/ shows one, in test builds).
 *
 * The data-page primitives (datapage.c) are shared by the layouts: the row
 * layout's data pages and the sliced layout's pending pages are the same
 * pages.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/layout.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_LAYOUT_H
#define BLOOMIDX_LAYOUT_H

#include "access/genam.h"
#include "access/reloptions.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "commands/progress.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "nodes/pathnodes.h"
#include "nodes/tidbitmap.h"
#include "storage/bufpage.h"

#include "bloomidx.h"

/* Declared in page.h and fpmodel.h */
struct BloomMetaPageData;
struct BloomModelShape;
struct BloomCostQuery;

/* Most participants of a parallel build, leader included */
#define BLOOMIDX_MAX_PARTICIPANTS	64

/* What a build, or one participant of a parallel build, counted */
typedef struct BloomBuildCounts
{
	double		reltuples;		/* heap tuples scanned */
	double		indtuples;		/* rows indexed */
	uint64		bitsSet;		/* signature bits set, for the fill */
} BloomBuildCounts;

/*
 * A build's count of the rows indexed, for pg_stat_progress_create_index:
 * every participant of a parallel build adds to one shared counter, and
 * the backend that reports progress shows the total.
 */
typedef struct BloomBuildProgress
{
	bool		report;			/* this backend reports the build's progress */
	pg_atomic_uint64 *shared;	/* parallel: rows of every participant */
	uint64		local;			/* serial: rows so far */
} BloomBuildProgress;

/* Rows between two updates of the progress report */
#define BLOOMIDX_PROGRESS_ROWS		1024

/*
 * Count nrows more rows indexed, and report the total if this backend
 * reports the build's progress.
 */
static inline void
BloomBuildProgressAdd(BloomBuildProgress *progress, uint64 nrows)
{
	uint64		done;

	if (progress->shared != NULL)
		done = pg_atomic_add_fetch_u64(progress->shared, nrows);
	else
		done = progress->local += nrows;
	if (progress->report)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
									 (int64) done);
}

/*
 * The columns of bloomidx_stats that a layout fills with figures of its
 * own (stripes, pending_pages, first_row, next_row), from this one on.
 */
#define BLOOMIDX_STATS_LAYOUT_FIRST		14
#define BLOOMIDX_STATS_LAYOUT_COLUMNS	4

/*
 * What bloomidx_stats and bloomidx_check learn of an index's stripe
 * summaries (the routine table's summarystats).  counted: the stripes
 * were read (else only bitsPerKey is known).  The sums are over the
 * stripes with a complete summary, per column (zero for a column without
 * one).  A summary's load is the distinct keys its bits set imply over the
 * keys it was sized for: 1 at its sizing, more as the data outgrows it.
 */
typedef struct BloomSummaryStatsData
{
	int			bitsPerKey;		/* 0: the index has no summaries */
	bool		counted;
	int64		pages;			/* summary pages of the stripes listed */
	int64		stripes;		/* stripes with a complete summary */
	double		designedFpr;	/* a summary's rate at its sizing */
	double		bits[BLOOMIDX_MAX_COLUMNS];
	double		bitsSet[BLOOMIDX_MAX_COLUMNS];
	double		fprSum[BLOOMIDX_MAX_COLUMNS];	/* of the stripes' rates */
	int			overloaded[BLOOMIDX_MAX_COLUMNS];	/* stripes over the load
													 * asked about */
	/* the stripe of the highest load, of those whose sizing was not capped */
	double		worstLoad[BLOOMIDX_MAX_COLUMNS];
	double		worstKeys[BLOOMIDX_MAX_COLUMNS];
	double		worstSized[BLOOMIDX_MAX_COLUMNS];
	double		worstFpr[BLOOMIDX_MAX_COLUMNS];
	bool		worstFull[BLOOMIDX_MAX_COLUMNS];	/* every bit set: its keys
													 * are at least worstKeys */
	uint32		worstStripe[BLOOMIDX_MAX_COLUMNS];
} BloomSummaryStatsData;

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
	double		matching;		/* ... that match the clauses the index tests */
	double		falsePositives; /* ... that pass every signature test without
								 * matching (selectivity less matching) */
	const struct BloomModelShape *shape;	/* the index's, for the model */
	const struct BloomCostQuery *query; /* its clauses, as the model sees them */
	double		wordsPerRow;	/* signature words tested per row */
} BloomScanPagesInput;

/* What a bitmap scan reads, by the cost model */
typedef struct BloomScanPages
{
	double		pagesFetched;	/* index pages read, per loop */
	double		wordsTested;	/* 64-bit words tested */
	double		falsePositiveShare; /* of the false positives, those the scan
									 * meets (1 unless it skips some rows
									 * without testing them: the caller sets 1) */
} BloomScanPages;

struct BloomMetaPageData;		/* page.h */


/*
 * The routines of a layout.  Entries a layout does not need are NULL, as
 * the comments say.
 */
typedef struct BloomLayoutRoutine
{
	int			id;				/* its number in the metapage and options */
	const char *name;			/* the value of the layout option */
	const char *rowPageName;	/* what its row pages are, for messages */
	uint16		pageKinds;		/* page flags of its own (page.h), for checks */

	/*
	 * Shaping (options.c).  A shape derived from a false-positive rate aims
	 * at defaultFpr when the options give neither a rate nor a length; each
	 * column then sets columnbits(rate) bits, in a signature of
	 * derivedlength(m, rate, shape) bits, m being the bits the rate asks
	 * for by the textbook formula and rate 0 if the shape was not derived
	 * from one.  A layout takes signatures of at most maxSigBits bits; with
	 * fallback, a longer one gets the first layout of the table that takes
	 * it (BloomLayoutForLength), shaped by that layout's rules.
	 */
	double		defaultFpr;
	int			maxSigBits;
	bool		summaries;		/* it keeps summaries (option summaries) */
	bool		fallback;
	int			(*columnbits) (double fpr);
	int			(*derivedlength) (double m, double fpr, const BloomShape *shape);

	/*
	 * A new index's metapage: set the layout's own fields, which every
	 * index has whatever its layout, to what an index that does not use
	 * them keeps (BloomInitMetaAreas; they start zeroed; NULL: zero).
	 */
	void		(*metainit) (struct BloomMetaPageData *meta);

	/*
	 * The checks of the layout's range of the metapage's layouts' area in
	 * an index of any layout (every index has them all), which the shared
	 * metapage checks call for every layout of the table: each describes
	 * what is wrong, or returns NULL.  metaareaproblem raises *needBlocks
	 * to one past the highest block readers read from the range;
	 * metaareablocksproblem checks those blocks against the index's length
	 * nblocks.  NULL if there is nothing to check.
	 */
	char	   *(*metaareaproblem) (struct BloomMetaPageData *meta,
									BlockNumber *needBlocks);
	char	   *(*metaareablocksproblem) (struct BloomMetaPageData *meta,
										  BlockNumber nblocks);

	/*
	 * Module load: register the layout's settings and hooks (NULL: none).
	 * flush writes out what the layout gathered of the index's rows in
	 * this backend and not yet wrote to its pages (NULL: it gathers none);
	 * the shells call it (through BloomFlushGathered) before anything that
	 * must see every row inserted so far: a scan, VACUUM, a merge, the
	 * inspection functions, the end of an insert statement.
	 */
	void		(*init) (void);
	void		(*flush) (Relation index);

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
									 BloomBuildProgress *progress, void *shared,
									 int participant, BloomBuildCounts *counts);
	void		(*buildfinish) (Relation heap, Relation index,
								struct IndexInfo *indexInfo,
								const BloomShape *shape, void *shared);

	/*
	 * aminsert: a row's signature, with nbitsSet bits set, and the row's
	 * values, for what a layout keeps of them besides (the sliced layout's
	 * keys, in format 4), with mixed each column's salted mix as the
	 * signature took it (BloomFormSignatureMixed), or NULL: the keys come
	 * from there without hashing the values again
	 */
	void		(*insert) (Relation index, BloomState state, const uint8 *sig,
						   int nbitsSet, const uint64 *mixed, Datum *values,
						   bool *isnull, ItemPointer tid);

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
	 * fill the layout's columns of bloomidx_stats (values and nulls are
	 * its BLOOMIDX_STATS_LAYOUT_COLUMNS, all NULL on entry); bound the rows
	 * the index holds, for bloomidx_check's set of keys.  Each is NULL if
	 * the layout has no such rows, figures or bound.
	 */
	uint64		(*walkrows) (Relation index, const BloomShape *shape,
							 BloomRowCallback fn, void *arg);

	/*
	 * bloomidx_check's heapallindexed pass, for what the layout keeps of
	 * the rows' values beside their signatures: heapcheckbegin returns the
	 * state heapcheckrow gets with each
	 * row of the table, or NULL if there is nothing to check; heapcheckrow
	 * reports what the layout lacks of the row.  NULL if the layout keeps
	 * nothing more.
	 */
	void	   *(*heapcheckbegin) (Relation index, BloomState state);
	void		(*heapcheckrow) (void *arg, Relation heap, ItemPointer tid,
								 Datum *values, bool *isnull);
	void		(*statscolumns) (Relation index, Datum *values, bool *nulls);

	/*
	 * bloomidx_stats and bloomidx_check: what the index's stripe summaries
	 * hold, reading the stripes' pages if exact (else the metapage alone),
	 * counting the stripes whose summary's load is over overload.  NULL if
	 * the layout has no summaries.
	 */
	void		(*summarystats) (Relation index, bool exact, double overload,
								 BloomSummaryStatsData *out);
	double		(*rowsheld) (Relation index,
							 const struct BloomMetaPageData *meta);

	/*
	 * The walk of bloomidx_stats and bloomidx_check: the row pages whose
	 * rows are live, sorted, in a palloc'd array of *npages blocks (NULL:
	 * every row page).
	 */
	BlockNumber *(*liverowpages) (const struct BloomMetaPageData *meta,
								  int *npages);

	/* The cost model: pages and words a bitmap scan reads */
	void		(*scanpages) (Relation index, BloomState state,
							  const BloomScanPagesInput *in,
							  BloomScanPages *out);


	/*
	 * The checks of the layout's own fields of the metapage and of its
	 * pages (row_check.c, sliced_check.c), which pagecheck.c calls once
	 * what every layout shares is sound; each describes what is wrong, or
	 * returns NULL.  metaproblem: the signature length and the layout's
	 * fields, raising *needBlocks to one past the highest block readers
	 * read from them.  metablocksproblem: those blocks against the index's
	 * length nblocks, and metaspareproblem the entries readers do not read
	 * (bloomidx_check); NULL if the layout lists no blocks there.
	 * pageproblem: a page other than the metapage, not new or deleted.
	 */
	char	   *(*metaproblem) (struct BloomMetaPageData *meta,
								BlockNumber *needBlocks);
	char	   *(*metablocksproblem) (struct BloomMetaPageData *meta,
									  BlockNumber nblocks);
	char	   *(*metaspareproblem) (struct BloomMetaPageData *meta,
									 BlockNumber nblocks);
	char	   *(*pageproblem) (Page page, const BloomShape *shape);
} BloomLayoutRoutine;

/* layout.c */
extern relopt_enum_elt_def *BloomLayoutOptionValues(void);
extern const char *BloomLayoutValuesMessage(void);
extern int	BloomNumLayouts(void);
extern int	BloomMaxLayoutId(void);
extern const BloomLayoutRoutine *BloomLayoutByIndex(int i);
extern const BloomLayoutRoutine *BloomLayoutById(int layout);
extern const BloomLayoutRoutine *BloomLayoutForLength(int sigBits);
extern const BloomLayoutRoutine *BloomGetLayout(const BloomShape *shape);
extern const BloomLayoutRoutine *BloomGetStateLayout(Relation index,
													 BloomState state);
extern void BloomInitLayouts(void);
extern void BloomInitMetaAreas(struct BloomMetaPageData *meta);
extern char *BloomMetaAreasProblem(struct BloomMetaPageData *meta,
								   BlockNumber *needBlocks);
extern char *BloomMetaAreasBlocksProblem(struct BloomMetaPageData *meta,
										 BlockNumber nblocks);
extern void BloomFlushGathered(Relation index);

#endif							/* BLOOMIDX_LAYOUT_H */
