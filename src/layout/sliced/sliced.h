/*-------------------------------------------------------------------------
 *
 * sliced.h
 *	  Declarations shared by the files of the sliced layout.
 *
 * The sliced layout stores signatures transposed, so that a query reads
 * only the bit positions it tests.  Its files, from the bottom up:
 *	sliced_format.c		the pages of the layout: TID maps, stripe pages,
 *						slices, stripe lists (the page layer)
 *	sliced_util.c		snapshots of the metapage's lists, reading stripes
 *						and their rows back, transposition
 *	sliced_build.c		ambuild, serial and parallel
 *	sliced_pending.c	the pending list: where inserts go
 *	sliced_batch.c		a statement's inserted rows, gathered and added
 *						to the pending list a page at a time
 *	sliced_merge.c		merges of pending rows into the stripes
 *	sliced_stripe.c		writing rows into a stripe's pages, allocating them
 *	sliced_scan.c		amgetbitmap
 *	sliced_vacuum.c		ambulkdelete, amvacuumcleanup
 *	sliced_summary.c	stripe summaries: per-column keys of a row and
 *						the split-block bloom filter that holds them
 *	sliced_check.c		checks of its metapage fields and pages
 *	sliced_inspect.c	what the stripe summaries hold, for bloomidx_stats
 *						and bloomidx_check; its heapallindexed pass over the
 *						keys of the rows' values
 *	sliced.c			the layout's routine table, shaping rules and
 *						module load
 *
 * Rows are numbered densely as they reach the slices.  For every stripe of
 * BLOOMIDX_STRIPE_ROWS row numbers and every signature bit there is one
 * slice page holding that bit of each row of the stripe, and the stripe's
 * TID-map pages hold the rows' heap TIDs (see page.h).  A query ANDs the
 * slices of its bits 64 rows at a time, then maps the surviving row
 * numbers to TIDs.
 *
 * Inserts go to pending pages, data pages of the row layout listed in the
 * metapage, as GIN's fast-update list does.  Every scan reads every
 * pending page, so they are kept few once an index has stripes; until it
 * has one, a stripe's slices are written only once there are rows to fill
 * it, so that a table smaller than a stripe has an index of pending pages
 * only, the size of the row layout's.  A build writes full stripes, then
 * the rest of the rows in a partial stripe if it wrote one, else in
 * pending pages.  Merges move pending rows into the slices:
 *	- an insert that starts a new pending page takes one merge step, of
 *	  at most two pending pages' rows (so no insert pays for a whole
 *	  stripe, and the steps outpace the inserts), into the stripe being
 *	  filled; a step that would start a new stripe does so once a step's
 *	  rows are pending, in an index that has a stripe and knows
 *	  its summaries' sizes (BLOOMIDX_SUMMARY_MEASURED, or no summaries),
 *	  and only once they can fill the stripe in another (whose pending
 *	  list so grows to a stripe's worth of rows; a merge that starts a
 *	  stripe in an index with summaries of unknown sizes first measures
 *	  them on those rows, BloomMergeMeasureSummaries, so that it is
 *	  another no more); while that stripe lacks
 *	  some of its pages, a step allocates a few of them instead
 *	  (BloomPrepareStripe), so that no insert allocates a whole stripe's
 *	  pages either;
 *	- VACUUM merges all the pending rows of an index that has a stripe
 *	  (as above), and in another those that fill stripes;
 *	- bloomidx_merge() merges them all, a partial stripe included (later
 *	  merges fill it up);
 *	- when the pending list is crowded (signatures so long that a stripe's
 *	  rows need more than BLOOMIDX_PENDING_CROWDED pending pages), merges
 *	  take what they have, and when it is full an insert merges it all.
 * A merge takes the pending pages in list order; the last one may give only
 * its first rows, the rest staying on it (see BloomSlicedMergeLocked).
 *
 * Concurrency and crash safety:
 *	- A merge holds a heavyweight lock on the metapage's block (as GIN's
 *	  pending-list cleanup does), so merges and VACUUMs run one at a time.
 *	  It freezes the pending pages it takes (inserts go elsewhere), writes
 *	  their rows into the slices and TID maps past mergedRows, and only
 *	  then, in one metapage WAL record, advances mergedRows and drops the
 *	  pages from the pending list (and drops the rows it took from a page
 *	  it took only some of, in the same record); then it frees them.  A
 *	  crash before that record leaves the rows pending; the next merge
 *	  writes rows at the same row numbers again, its bits ORed over those
 *	  written before and its TIDs packed afresh: at worst (other rows, if
 *	  VACUUM compacted a pending page meanwhile or the merge is of another
 *	  size) more false positives, never a missed row.
 *	- A scan copies the pending list and the stripe list, reads the
 *	  pending pages, then reads mergedRows again: a row that left a pending
 *	  page meanwhile had been merged below it.  So merged pending pages are
 *	  freed at once.  Stripes that VACUUM empties move the other way (their
 *	  live rows go back to pending pages, then the stripe leaves the list
 *	  and its pages are freed at once): a scan keeps reading the stripes it
 *	  listed first, and every page of a stripe carries the stripe's number,
 *	  never reused, so a scan that finds a page freed or reused under it
 *	  starts over, with the rows now in pending pages or newer stripes.
 *	- VACUUM seals full stripes merges filled into their summary groups'
 *	  regions (see below), after the region's blocks are written, in one
 *	  record of the metapage and the stripe page; a crash before it leaves
 *	  the stripe unsealed.
 *	- Lock order: metapage, then a stripe-list page or one data page;
 *	  stripe page, then its slice or TID-map pages.  No one holds a page
 *	  lock while locking the metapage.  Stripe-list pages change only under
 *	  an exclusive metapage lock, so a snapshot taken under a shared one is
 *	  consistent.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_SLICED_H
#define BLOOMIDX_SLICED_H

#include "access/genam.h"
#include "storage/buf.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"

#define BLOOMIDX_SLICED_DEFAULT_FPR	0.00035	/* of a derived shape */
#define BLOOMIDX_SLICED_FILL		0.4	/* bits set, in a derived shape */
/* Most bytes of a pending page's slot: signature, then keys (page.h) */
#define BLOOMIDX_SLICED_MAX_SLOT \
	(BLOOMIDX_SLICED_MAX_LENGTH / 8 + sizeof(uint32) * BLOOMIDX_MAX_COLUMNS)

/*
 * The sliced layout's fields of the metapage, in its layouts' area
 * (page.h) from BLOOMIDX_SLICED_META_START on, past the row layout's
 * range: rows merged into stripes, stripes, pending pages.  An index of
 * another layout leaves them zero and the stripe lists invalid.
 */
typedef struct BloomSlicedMetaData
{
	uint64		mergedRows;		/* row numbers 0 .. mergedRows-1 are used */
	uint32		firstStripe;	/* stripes firstStripe .. nStripes-1 are */
	uint32		nStripes;		/* listed, ENTRIES per stripe-list page */
	uint16		nPending;		/* entries in pendingPages */
	uint16		unused;
	BlockNumber stripeLists[BLOOMIDX_MAX_STRIPELISTS];
	BlockNumber pendingPages[BLOOMIDX_PENDING_SIZE];
} BloomSlicedMetaData;

#define BLOOMIDX_SLICED_META_START	TYPEALIGN(8, 4 + 4 * BLOOMIDX_FREELIST_SIZE)
#define BloomSlicedMeta(meta) \
	((BloomSlicedMetaData *) ((meta)->layoutArea + BLOOMIDX_SLICED_META_START))

/* Where format version 1 put them, in the metapage's contents */
#define BLOOMIDX_SLICED_META_OFFSET(field) \
	(offsetof(BloomMetaPageData, layoutArea) + BLOOMIDX_SLICED_META_START + \
	 offsetof(BloomSlicedMetaData, field))
StaticAssertDecl(BLOOMIDX_SLICED_META_OFFSET(mergedRows) == 2160 &&
				 BLOOMIDX_SLICED_META_OFFSET(firstStripe) == 2168 &&
				 BLOOMIDX_SLICED_META_OFFSET(nStripes) == 2172 &&
				 BLOOMIDX_SLICED_META_OFFSET(nPending) == 2176 &&
				 BLOOMIDX_SLICED_META_OFFSET(unused) == 2178 &&
				 BLOOMIDX_SLICED_META_OFFSET(stripeLists) == 2180 &&
				 BLOOMIDX_SLICED_META_OFFSET(pendingPages) ==
				 2180 + 4 * BLOOMIDX_MAX_STRIPELISTS,
				 "sliced layout's metapage fields moved");
StaticAssertDecl(BLOOMIDX_SLICED_META_START + sizeof(BloomSlicedMetaData) <=
				 BLOOMIDX_META_AREA_SIZE,
				 "sliced layout's metapage fields overflow the area");

/*
 * The sliced layout's fields of the metapage for stripe summaries (format
 * version 4), in the range of the layouts' area past all the others
 * (page.h), zero in an index of an older format: bitsPerKey 0 means no
 * summaries.  blocks gives each column's summary blocks in a new stripe a
 * merge starts, as the build or a merge measured them.  completeBelow: no
 * stripe below it was marked incomplete by a merge (for the cost model).
 */
typedef struct BloomSlicedSummaryMetaData
{
	uint16		bitsPerKey;
	uint16		flags;			/* BLOOMIDX_SUMMARY_MEASURED */
	uint32		completeBelow;	/* stripes below it have complete summaries */
	uint16		blocks[BLOOMIDX_MAX_COLUMNS];
} BloomSlicedSummaryMetaData;

/*
 * In BloomSlicedSummaryMetaData.flags: blocks were measured by the build
 * on a full stripe, or by a merge on a stripe's worth of pending rows
 * (BloomMergeMeasureSummaries, in an index built on fewer rows than a
 * stripe's, when it starts a stripe).  Without it, a merge sizes the
 * summary of a stripe it starts from the rows it writes there first
 * (BloomSummarySizeBlocksFromRows).
 */
#define BLOOMIDX_SUMMARY_MEASURED	0x0001

#define BloomSlicedSummaryMeta(meta) \
	((BloomSlicedSummaryMetaData *) ((meta)->layoutArea + BLOOMIDX_META_AREA_V1_SIZE))
StaticAssertDecl(sizeof(BloomSlicedSummaryMetaData) <= BLOOMIDX_META_AREA_V4_SIZE,
				 "sliced layout's summary fields overflow their range");

/*
 * Summary groups (sliced_summary.c): the summaries of full stripes sealed
 * into one contiguous region of pages per group of BLOOMIDX_GROUP_STRIPES
 * consecutive stripe numbers (stripe s is at position s % G of group
 * s / G), so that a query tests a block of a column in one page for the
 * whole group instead of a summary page (and the stripe page) per stripe.
 * A sealed stripe's summary has the index-wide blocks (BloomSlicedSummary
 * Meta's blocks[]); in its group's region, column c takes
 * ceil(blocks[c] / perStripe) pages, the columns one after another, and
 * block b of column c of the stripe at position p is block
 * p * perStripe + b % perStripe of the region's page chunkStart(c) +
 * b / perStripe.  perStripe is at least BLOOMIDX_GROUP_MIN_BLOCKS, so that
 * a page holds the blocks of every position; a region sized for a group
 * the build expected to hold fewer stripes has a larger perStripe and
 * holds positions below BLOOMIDX_SUMMARY_PAGE_BLOCKS / perStripe only
 * (BloomGroupPositions).  The region's pages are flagged BLOOMIDX_GROUP
 * and tagged with the group's first stripe number.
 *
 * The metapage's group range (past all its other fields) has a slot per
 * region; group 0 is stored as 1, a free slot is 0.  sealed: bit p set
 * when the stripe at position p is sealed, its stripe page then flagged
 * BLOOMIDX_STRIPE_SUMMARY_GROUPED with no summary page of its own.  No
 * free slot: a stripe is not sealed (it keeps its own summary pages).
 *
 * The build seals the full stripes it writes; VACUUM (BloomSealStripes,
 * sliced_vacuum.c) those merges filled, under the merge lock: a region
 * for all positions if the group has none (new pages under the relation
 * extension lock, then the slot in a metapage record), the stripe's own
 * blocks ORed into it, then ONE record setting its bit (metapage) and its
 * stripe page's GROUPED flag, nPages 0; then its own summary pages are
 * freed (or found unlisted by VACUUM's walk after a crash).  A region
 * that does not reach a sealable stripe's position is replaced by a
 * larger one (BloomGrowGroupRegion): new pages, the old region's sealed
 * blocks re-laid into them, then one record switching the slot.  A scan that
 * read the stripe page before and finds a summary page freed reads the
 * stripe page again: GROUPED means "may match" (sliced_scan.c).
 */
#ifndef BLOOMIDX_SMALL_LIMITS
#define BLOOMIDX_GROUP_STRIPES		63
#else
/* A build whose groups fill up after 2 stripes, to test them */
#define BLOOMIDX_GROUP_STRIPES		2
#endif
#define BLOOMIDX_GROUP_MIN_BLOCKS	4
#define BLOOMIDX_GROUP_SLOTS		108

typedef struct BloomSlicedGroupSlot
{
	uint32		groupPlus1;		/* group number + 1; 0: a free slot */
	BlockNumber first;			/* the region's first page */
	uint16		perStripe;		/* blocks of a stripe's column a page */
	uint16		npages;			/* pages of the region */
	uint32		spare;			/* zero */
	uint64		sealed;			/* bit p: stripe g * G + p is sealed */
} BloomSlicedGroupSlot;

typedef struct BloomSlicedGroupMetaData
{
	BloomSlicedGroupSlot slots[BLOOMIDX_GROUP_SLOTS];
} BloomSlicedGroupMetaData;

#define BloomSlicedGroupMeta(meta) \
	((BloomSlicedGroupMetaData *) ((meta)->groupArea))
StaticAssertDecl(sizeof(BloomSlicedGroupSlot) == 24 &&
				 sizeof(BloomSlicedGroupMetaData) <= BLOOMIDX_META_GROUP_AREA_SIZE,
				 "summary groups overflow their range");
StaticAssertDecl(BLOOMIDX_GROUP_STRIPES * BLOOMIDX_GROUP_MIN_BLOCKS <=
				 BLOOMIDX_SUMMARY_PAGE_BLOCKS && BLOOMIDX_GROUP_STRIPES < 64,
				 "a group page does not hold every position");

/* The first stripe of the group of a slot */
static inline uint32
BloomGroupFirstStripe(const BloomSlicedGroupSlot *slot)
{
	return (slot->groupPlus1 - 1) * BLOOMIDX_GROUP_STRIPES;
}

/* The page checks of pagecheck.c, with the sliced layout's own (sliced_check.c) */
#define BloomSlicedCheckMeta(index, page) \
	BloomCheckMeta((index), (page), BloomSlicedMetaProblem, \
				   BloomSlicedMetaBlocksProblem)
#define BloomSlicedPageIsData(index, page, blkno, tuplesPerPage) \
	BloomPageIsData((index), (page), (blkno), (tuplesPerPage), \
					BLOOMIDX_SLICED_FLAGS, "sliced")

/*
 * The layout's sizes, for the cost model and bloomidx_stats (whose
 * stripes, pending_pages, first_row and next_row columns these are).
 */
typedef struct BloomLayoutSizesData
{
	double		stripes;		/* stripes listed and not emptied */
	double		pendingPages;
	uint64		firstRow;		/* rows firstRow .. nextRow - 1 are in the */
	uint64		nextRow;		/* stripes still listed */
} BloomLayoutSizesData;

/*
 * The sliced code's arrays hold signatures of at most
 * BLOOMIDX_SLICED_MAX_LENGTH bits: a stripe's slices, a row's signature
 * bytes and words on the stack.  A shape longer than that can only come
 * from a corrupted metapage (the build refuses one), and is refused with
 * XX002 where those arrays are filled, before anything is written past
 * them, whatever checked the metapage before.
 */
static inline void
BloomSlicedCheckSigBits(Relation index, int sigBits)
{
	if (unlikely(sigBits < 1 || sigBits > BLOOMIDX_SLICED_MAX_LENGTH))
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO,
							  psprintf("Signature length %d is not between 1 and %d.",
									   sigBits, BLOOMIDX_SLICED_MAX_LENGTH));
}

/*
 * Do the pending pages of an index carry its rows' keys, one per column
 * after each signature (format 4, see page.h)?  Pages of rows whose keys
 * are unknown are flagged BLOOMIDX_KEYLESS.
 */
static inline bool
BloomSlicedPendingHasKeys(BloomState state)
{
	return BloomShapeKeyBytes(&state->shape) > 0;
}

/* Bytes of a pending page's slot: the signature, then the keys if any */
static inline int
BloomSlicedSlotBytes(BloomState state)
{
	return BloomShapeSlotBytes(&state->shape);
}

/*
 * A copy of the metapage's lists, and of the stripe lists, taken under one
 * metapage lock.
 */
typedef struct BloomSlicedSnapshot
{
	uint64		mergedRows;
	uint32		firstStripe;
	uint32		nStripes;
	int			nPending;
	bool		summariesSized; /* no summaries, or their sizes measured
								 * (BLOOMIDX_SUMMARY_MEASURED) */
	BlockNumber pending[BLOOMIDX_PENDING_SIZE];
	BlockNumber stripeLists[BLOOMIDX_MAX_STRIPELISTS];
	BlockNumber *stripes;		/* of stripes firstStripe on, palloc'd */
	/* The summary groups' slots in use, and the index-wide blocks */
	int			nGroups;
	BloomSlicedGroupSlot groups[BLOOMIDX_GROUP_SLOTS];
	uint16		groupBlocks[BLOOMIDX_MAX_COLUMNS];
} BloomSlicedSnapshot;

/* Row numbers the stripe lists have left, past mergedRows */
static inline uint64
BloomSnapRowsLeft(const BloomSlicedSnapshot *snap)
{
	return (uint64) (snap->firstStripe + BLOOMIDX_MAX_STRIPES) * BLOOMIDX_STRIPE_ROWS -
		snap->mergedRows;
}

/* The slot of stripe s's group in a snapshot, or NULL if it has none */
static inline const BloomSlicedGroupSlot *
BloomSnapGroup(const BloomSlicedSnapshot *snap, uint32 s)
{
	uint32		g = s / BLOOMIDX_GROUP_STRIPES + 1;
	int			i;

	for (i = 0; i < snap->nGroups; i++)
		if (snap->groups[i].groupPlus1 == g)
			return &snap->groups[i];
	return NULL;
}

/* Stripe page of stripe s in a snapshot taken with stripes */
static inline BlockNumber
BloomSnapStripe(const BloomSlicedSnapshot *snap, uint32 s)
{
	if (s < snap->firstStripe || s >= snap->nStripes)
		return InvalidBlockNumber;
	return snap->stripes[s - snap->firstStripe];
}


/* sliced.c: the routine table (layout.c lists it) */
extern const BloomLayoutRoutine BloomSlicedLayout;

/*
 * Pages read in a known order, ahead of their use once one of them had to
 * be read from the file (BloomReaderNext): a list of pages, of which the
 * first allowed may be read ahead.  The list grows only by what the reader
 * allows; a new list drops what was read ahead of the last.
 */
typedef struct BloomReader
{
	Relation	index;
	BufferAccessStrategy bas;
	int			flags;			/* of the read stream */
	bool		streaming;		/* a page was not in shared buffers */
	ReadStream *stream;
	BlockNumber *blocks;		/* the pages, in the order they are used */
	int			nblocks;
	int			allowed;		/* how many of them may be read ahead */
	int			taken;			/* how many the stream has taken */
	int			next;			/* how many were returned */
} BloomReader;

/* sliced_summary.c */
/*
 * What the cost model needs of an index's summaries (the layout's
 * scanpages, BloomSlicedSummaryInfo)
 */
typedef struct BloomSummaryInfoData
{
	int			bitsPerKey;		/* 0: the index has no summaries */
	double		stripes;		/* stripes listed */
	double		completeStripes;	/* of them, with a complete summary */
	double		meanBlocks[BLOOMIDX_MAX_COLUMNS];	/* 256-bit blocks a
													 * stripe, per column */
	double		summaryPages;	/* over every stripe, groups' regions too */
	double		sealedStripes;	/* stripes listed sealed in their groups */
	double		sealedGroups;	/* groups sealing some of them */
} BloomSummaryInfoData;

extern void BloomSlicedSummaryInfo(Relation index, BloomSummaryInfoData *info);
extern void *BloomSlicedSummaryCheckBegin(Relation index, BloomState state);
extern void BloomSlicedSummaryCheckRow(void *arg, Relation heap, ItemPointer tid,
									   Datum *values, bool *isnull);
extern void BloomSummarySizeBlocks(const BloomShape *shape, int bitsPerKey,
								   const uint32 *keys, int nrows,
								   uint16 *blocks, uint32 *scratch);
extern void BloomSummarySizeBlocksFromRows(const BloomShape *shape,
										   int bitsPerKey, const uint32 *keys,
										   int nrows, uint16 *blocks,
										   uint32 *scratch);
extern void BloomSummaryMeasureBlocks(const BloomShape *shape, int bitsPerKey,
									  const uint32 *keys, int nrows,
									  uint16 *blocks, uint32 *scratch);
extern int	BloomSummaryTotalBlocks(const uint16 *blocks, int nColumns);
extern void BloomSummaryFill(const uint16 *blocks, int nColumns,
							 const uint32 *keys, int nrows, uint32 *words);
extern int	BloomSummaryColumnStart(const uint16 *blocks, int col);

extern uint32 BloomSummaryKey(uint64 columnHash, int col);
extern void BloomSummaryKeysFromMixed(const BloomShape *shape,
									  const uint64 *mixed, uint32 *keys);
extern void BloomFormSummaryKeys(BloomState state, Datum *values, bool *isnull,
								 uint32 *keys);
extern void BloomSummaryAdd(uint32 *blocks, int nblocks, uint32 key);
extern uint32 BloomSummaryAddToBlock(uint32 *block, uint32 key);
extern int	BloomSummaryBlockFor(uint32 key, int nblocks);
extern bool BloomSummaryTestBlock(const uint32 *block, uint32 key);
extern int	BloomSummaryBlocksFor(double ndistinct, int bitsPerKey);
extern double BloomSummaryFpr(int bitsPerKey);
extern int	BloomSummaryCountDistinct(const uint32 *keys, int n, int nColumns,
									  int col, uint32 *scratch);

/* sliced_format.c: the keys in a pending row's slot (format 4, page.h) */
extern void BloomPendingSetKeys(BloomState state, uint8 *slot,
								const uint32 *keys);
extern void BloomPendingGetKeys(BloomState state, const uint8 *slot,
								uint32 *keys);
/* sliced_format.c: the summary groups' regions */
extern int	BloomGroupPositions(int perStripe);
extern int	BloomGroupPerStripe(double expectedStripes);
extern int	BloomGroupRegionPages(const uint16 *blocks, int nColumns,
								  int perStripe);
extern BlockNumber BloomGroupBlockPage(const BloomSlicedGroupSlot *slot,
									   const uint16 *blocks, int col, int b,
									   int pos, int *index);

/* sliced_check.c */
extern char *BloomGroupSlotsProblem(BloomMetaPage meta, BlockNumber *needBlocks);
extern char *BloomGroupSlotsOverlap(BloomMetaPage meta);
extern char *BloomSlicedMetaProblem(BloomMetaPage meta, BlockNumber *needBlocks);
extern char *BloomSlicedMetaAreaProblem(BloomMetaPage meta, BlockNumber *needBlocks);
extern char *BloomSlicedMetaBlocksProblem(BloomMetaPage meta, BlockNumber nblocks);
extern char *BloomSlicedMetaSpareProblem(BloomMetaPage meta, BlockNumber nblocks);
extern char *BloomSlicedPageProblem(Page page, const BloomShape *shape);
extern void BloomCheckStripePage(Relation index, Page page, BlockNumber blkno,
								 int sigBits);

/* sliced_inspect.c */
extern void BloomSlicedSummaryStats(Relation index, bool exact, double overload,
									BloomSummaryStatsData *out);
extern void *BloomSlicedHeapCheckBegin(Relation index, BloomState state);
extern void BloomSlicedHeapCheckRow(void *arg, Relation heap, ItemPointer tid,
									Datum *values, bool *isnull);

/* sliced_util.c */
pg_noreturn extern void BloomSlicedCorrupted(Relation index, BlockNumber blkno,
								 const char *what);
extern void BloomTakeSnapshot(Relation index, BloomSlicedSnapshot *snap,
							  bool stripes);
extern bool BloomGroupStillHeld(Relation index, uint32 g, BlockNumber first);
extern void BloomFreeSnapshot(BloomSlicedSnapshot *snap);
extern BlockNumber *BloomSlicedLiveRowPages(const BloomMetaPageData *meta,
											int *npages);
extern void BloomCheckPendingGone(Relation index, BloomState state,
								  BlockNumber blkno);
extern bool BloomReadStripe(Relation index, uint32 s, BlockNumber blkno,
							int sigBits, BloomStripePages *pages);
extern bool BloomReadStripeBuffer(Relation index, uint32 s, Buffer buffer,
								  int sigBits, BloomStripePages *pages);
extern Buffer BloomReadStripePage(Relation index, const BloomStripePages *pages,
								  BlockNumber stripeBlkno, BlockNumber blkno,
								  uint16 flag, BufferAccessStrategy bas);
extern bool BloomLockStripePage(Relation index, const BloomStripePages *pages,
								BlockNumber stripeBlkno, Buffer buffer,
								uint16 flag);
extern void BloomCheckTidMapRows(Relation index, const BloomStripePages *pages,
								 int t, int firstRow, int nrows, int rows);
extern int	BloomStripeRows(uint64 mergedRows, uint32 s);
pg_noreturn extern void BloomTooManyRows(Relation index);
extern void BloomTranspose64(uint64 a[64]);
extern int	BloomReadStripeRows(Relation index, const BloomShape *shape,
								const BloomStripePages *pages,
								BlockNumber stripeBlkno, int rows, int **rowOf,
								ItemPointerData **tids, uint64 **words);
extern void BloomReaderInit(BloomReader *reader, Relation index,
							BufferAccessStrategy bas, int flags);
extern void BloomReaderStart(BloomReader *reader, BlockNumber *blocks, int n,
							 int allowed);
extern void BloomReaderAllow(BloomReader *reader, int n);
extern Buffer BloomReaderNext(BloomReader *reader);
extern void BloomReaderEnd(BloomReader *reader);
extern void BloomReaderStartStripes(BloomReader *reader,
									const BloomSlicedSnapshot *snap);
extern void BloomSlicedSizes(Relation index, BloomLayoutSizesData *sizes);
extern void BloomSlicedStatsColumns(Relation index, Datum *values, bool *nulls);
extern double BloomSlicedRowsHeld(Relation index,
								  const struct BloomMetaPageData *meta);
extern uint64 BloomSlicedForEachRow(Relation index, const BloomShape *shape,
									BloomRowCallback fn, void *arg);

/* sliced_build.c */
extern void BloomSlicedBuild(Relation heap, Relation index,
							 struct IndexInfo *indexInfo,
							 const BloomShape *shape, BloomBuildCounts *counts);
extern Size BloomSlicedSharedSize(const BloomShape *shape, int nparticipants);
extern void BloomSlicedSharedInit(void *shared, const BloomShape *shape,
								  int nparticipants);
extern void BloomSlicedBuildParticipant(Relation heap, Relation index,
										struct IndexInfo *indexInfo,
										const BloomShape *shape,
										TableScanDesc scan,
										BloomBuildProgress *progress,
										void *shared, int participant,
										BloomBuildCounts *counts);
extern void BloomSlicedBuildFinish(Relation heap, Relation index,
								   struct IndexInfo *indexInfo,
								   const BloomShape *shape, void *shared);

/*
 * How many pending rows a merge takes (see BloomMergeWant):
 *	BLOOM_MERGE_ALL		all of them (bloomidx_merge(), a full pending list)
 *	BLOOM_MERGE_STRIPES	those that fill stripes (VACUUM)
 *	BLOOM_MERGE_STEP	one small step towards filling a stripe (an insert)
 */
typedef enum BloomMergeMode
{
	BLOOM_MERGE_ALL,
	BLOOM_MERGE_STRIPES,
	BLOOM_MERGE_STEP
} BloomMergeMode;

/* sliced_pending.c */
/* Rows taken from pending pages by a merge */
typedef struct BloomRowBatch
{
	int			nrows;
	int			maxrows;
	uint64	   *words;			/* nrows * sigWords signature words */
	ItemPointerData *tids;
	uint32	   *keys;			/* nrows * nColumns summary keys, row-major,
								 * or NULL: the rows have none */
	uint64		bitsSet;
} BloomRowBatch;

/* sliced_stripe.c */
extern void BloomMergeDefineSettings(void);
extern void BloomMergeRecordsReset(void);
extern void BloomMergeXLogFinish(Relation index, GenericXLogState *xlogState);
extern void BloomWriteStripe(Relation index, BloomState state, Buffer stripebuf, uint32 s,
				 BloomRowBatch *batch, int first, int n, int r0,
				 uint64 *sliceWords);
extern Buffer BloomMergeStripePage(Relation index, BloomState state, uint32 s, int *allocated);
extern Buffer BloomMergeLockStripe(Relation index, BloomState state,
					 const BloomSlicedSnapshot *snap, uint32 s, int *allocated);
extern int BloomPrepareBudget(BloomState state);
extern bool BloomPrepareStripe(Relation index, BloomState state,
				   const BloomSlicedSnapshot *snap, int budget, int *allocated);

extern void BloomPendingFormSlot(BloomState state, uint8 *slot,
								 const uint64 *words, const uint32 *keys);
extern void BloomPendingInitPage(BloomState state, Page page, bool keyless);
extern bool BloomPendingAdd(Relation index, BloomState state, const uint8 *slot,
							bool keyless, int nbitsSet, ItemPointer tid);
extern int	BloomPendingAddRows(Relation index, BloomState state,
								const uint64 *words, const uint32 *keys,
								const ItemPointerData *tids, int n,
								bool inserted);
extern void BloomPendingInsert(Relation index, BloomState state, const uint8 *slot,
							   int nbitsSet, ItemPointer tid);

/* sliced_batch.c (rows gathered by inserts) */
extern void BloomBatchInit(void);
extern void BloomBatchFlush(Relation index);
extern void BloomBatchAdd(Relation index, BloomState state, const uint8 *sig,
						  int nbitsSet, const uint64 *mixed, Datum *values,
						  bool *isnull, ItemPointer tid);
extern int64 BloomSlicedMergeLocked(Relation index, BloomMergeMode mode);
extern int64 BloomSlicedMerge(Relation index, bool wait, BloomMergeMode mode);
extern int64 BloomSlicedMergeAll(Relation index, bool wait);

/* sliced_scan.c */
extern int64 BloomSlicedGetBitmap(Relation index, BloomState state,
								  BloomScanOpaque so, TIDBitmap *tbm);
extern void BloomSlicedScanPages(Relation index, BloomState state,
								 const BloomScanPagesInput *in,
								 BloomScanPages *out);

/* sliced_vacuum.c */
extern IndexBulkDeleteResult *BloomSlicedBulkDelete(IndexVacuumInfo *info,
													IndexBulkDeleteResult *stats,
													IndexBulkDeleteCallback callback,
													void *callback_state);
extern IndexBulkDeleteResult *BloomSlicedVacuumCleanup(IndexVacuumInfo *info,
													   IndexBulkDeleteResult *stats);

#endif							/* BLOOMIDX_SLICED_H */
