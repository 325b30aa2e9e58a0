/*-------------------------------------------------------------------------
 *
 * page.h
 *	  The on-disk format of a bloomidx index, both layouts: every struct
 *	  a page holds, the one place a pg_filedump author reads.
 *
 * Block 0 is the metapage of both layouts: magic number, format version,
 * layout, the frozen signature shape and fill statistics for the planner,
 * then the layouts' area, opaque here: each layout declares its range and
 * fields in its own header (row.h: the data pages with free slots;
 * sliced.h: the stripe lists and pending pages), then the element counts
 * the columns of sets were sized for, then the sliced layout's summary
 * groups (sliced.h).  In the row
 * layout every other block is a data page; in the sliced layout a pending
 * page (a data page), a stripe, slice, TID-map, stripe-list, summary or
 * summary group page; in both, a deleted page waiting in the free space
 * map for reuse.
 *
 * A data page holds up to tuplesPerPage (signature, heap TID) pairs, stored
 * as two arrays so that a scan streams over the signatures alone.  The
 * signatures grow up from the page header, the TIDs grow down from the
 * special space, and pd_lower / pd_upper bound the free hole between them,
 * as on a standard page, so that generic WAL logs only the used parts:
 *
 *	+--------+-------------------------+------+-------------------------+---------+
 *	| header | sig[0] sig[1] ... sig[n-1] | hole | tid[n-1] ... tid[1] tid[0] | special |
 *	+--------+-------------------------+------+-------------------------+---------+
 *
 * sig[i] is sigBytes bytes, bit p of the signature in byte p / 8 at bit
 * p % 8.  In format 4 (BLOOMIDX_FORMAT_SUMMARIES, sliced indexes only) a
 * slot of a data page (a pending page) is the signature followed by a
 * 32-bit key for each column that is not of sets, in column order
 * (sliced_summary.c), in the machine's byte order: sig[i] then stands for
 * the whole slot, of sigBytes + 4 bytes a key (BloomShapeSlotBytes), and
 * tuplesPerPage counts such slots.  A pending page flagged BLOOMIDX_KEYLESS holds rows
 * whose keys are unknown (rows VACUUM moved back from a stripe), its keys
 * zero.  Slots 0 .. ntuples-1 are in use; deleting a tuple moves the last
 * one into its slot.  Only the page layer (page.c, pagecheck.c and
 * sliced_format.c) and the layouts' checks (row_check.c, sliced_check.c)
 * know these offsets: the rest of the code goes through
 * the functions and inline accessors below.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/page.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_PAGE_H
#define BLOOMIDX_PAGE_H

#include "access/generic_xlog.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"

#include "bloomidx.h"
#include "signature.h"

#define BLOOMIDX_MAGIC				0x58494c42	/* "BLIX" */
#define BLOOMIDX_FORMAT_VERSION		1
#define BLOOMIDX_FORMAT_SETS		2	/* has a column of sets (below) */
#define BLOOMIDX_FORMAT_FOLD		3	/* as 2, text_trgm_ops folding case
										 * with its own fold (src/README) */
#define BLOOMIDX_FORMAT_SUMMARIES	4	/* as 3, sliced layout with stripe
										 * summaries (below), keys in its
										 * pending pages' slots */
#define BLOOMIDX_COLUMN_SETS		0x8000	/* in bitsPerColumn, version 2: the
											 * column's values are sets */
#define BLOOMIDX_PAGE_ID			0xFF8B	/* for pg_filedump */
#define BLOOMIDX_METAPAGE_BLKNO		0
#define BLOOMIDX_LAYOUT_ROW			1
#define BLOOMIDX_LAYOUT_SLICED		2
#define BLOOMIDX_DEFAULT_LAYOUT		BLOOMIDX_LAYOUT_SLICED	/* of a new index */

/* Page flags */
#define BLOOMIDX_META				(1 << 0)
#define BLOOMIDX_DELETED			(1 << 1)
#define BLOOMIDX_SLICE				(1 << 2)	/* sliced: one signature bit */
#define BLOOMIDX_TIDMAP				(1 << 3)	/* sliced: row number -> TID */
#define BLOOMIDX_STRIPE				(1 << 4)	/* sliced: a stripe's pages */
#define BLOOMIDX_FROZEN				(1 << 5)	/* pending page being merged */
#define BLOOMIDX_STRIPELIST			(1 << 6)	/* sliced: stripe pages */
#define BLOOMIDX_SUMMARY			(1 << 7)	/* sliced: a stripe's summary */
#define BLOOMIDX_KEYLESS			(1 << 8)	/* data page of format 4 whose
												 * rows have no keys */
#define BLOOMIDX_GROUP				(1 << 9)	/* sliced: summaries of a group
												 * of stripes (sliced.h) */
#define BLOOMIDX_ALL_FLAGS			0x3FF
#define BLOOMIDX_SLICED_FLAGS \
	(BLOOMIDX_SLICE | BLOOMIDX_TIDMAP | BLOOMIDX_STRIPE | BLOOMIDX_STRIPELIST | \
	 BLOOMIDX_SUMMARY | BLOOMIDX_GROUP)
/* The flags of a layout's own kinds of page: all but those a data page has */
#define BLOOMIDX_KIND_FLAGS \
	(BLOOMIDX_ALL_FLAGS & ~(BLOOMIDX_META | BLOOMIDX_DELETED | BLOOMIDX_FROZEN | \
							BLOOMIDX_KEYLESS))

/* Special space of every page; page_id last, as pg_filedump expects */
typedef struct BloomPageOpaqueData
{
	uint16		ntuples;		/* slots in use (data pages) */
	uint16		maxtuples;		/* slots on the page (data pages) */
	uint16		flags;
	uint16		page_id;		/* BLOOMIDX_PAGE_ID */
} BloomPageOpaqueData;

typedef BloomPageOpaqueData *BloomPageOpaque;

/*
 * Signatures of a data page whose bits past the signature's length a scan
 * tests (BloomDataPagePaddingIsClear): a few, enough to find longer
 * signatures than the metapage says, whose last bit about two signatures
 * in five of a sound index have set
 */
#define BLOOMIDX_PADDING_ROWS		32

/* Length of the list of not-full pages kept in the metapage */
#define BLOOMIDX_FREELIST_SIZE		512

/* Bytes available for contents on any page */
#define BLOOMIDX_PAGE_FREE_SPACE \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(BloomPageOpaqueData)))

/*
 * Sliced layout.  Rows are numbered densely in the order they reach the
 * slices.  Stripe s is the BLOOMIDX_STRIPE_ROWS row numbers from
 * s * BLOOMIDX_STRIPE_ROWS; for each stripe, one slice page per signature
 * bit holds that bit of every row of the stripe, and TID-map pages hold
 * the rows' heap TIDs, compressed.  A stripe page lists the stripe's slice
 * pages (InvalidBlockNumber for a slice with no bit set yet) and TID-map
 * pages.  Stripe-list pages list the stripe pages, BLOOMIDX_STRIPELIST_ENTRIES
 * stripes each (InvalidBlockNumber for a stripe VACUUM has emptied), and
 * the metapage lists the stripe-list pages from the one of stripe
 * firstStripe on; VACUUM drops the first when all its stripes are emptied,
 * so the list limits the stripes between the oldest and the newest, not
 * the rows ever indexed.  New rows first go to pending
 * pages (data pages of the row layout, listed in the metapage) and are
 * merged into the slices in batches.
 *
 * Every page of a stripe (stripe page, slices, TID maps) carries the
 * stripe's number as its tag, and a stripe-list page its own position in
 * the metapage's list, in the special space's ntuples (low half) and
 * maxtuples (high half), unused on those pages.  Stripe numbers are never
 * reused, so a scan that finds a page of another tag knows the page was
 * freed and reused under it (see sliced.h).
 */
#define BLOOMIDX_STRIPE_WORDS		(BLOOMIDX_PAGE_FREE_SPACE / sizeof(uint64))
#define BLOOMIDX_STRIPE_ROWS		(BLOOMIDX_STRIPE_WORDS * 64)
#define BLOOMIDX_SLICED_MAX_LENGTH	1024
#define BLOOMIDX_PENDING_SIZE		256
/* Pending pages past which merges take what they have (see sliced.h) */
#define BLOOMIDX_PENDING_CROWDED	(BLOOMIDX_PENDING_SIZE * 3 / 4)
#ifndef BLOOMIDX_SMALL_LIMITS
#define BLOOMIDX_STRIPELIST_ENTRIES	(BLOOMIDX_PAGE_FREE_SPACE / sizeof(BlockNumber))
#define BLOOMIDX_MAX_STRIPELISTS	512
#else
/* A build whose stripe lists fill up after 6 stripes, to test them */
#define BLOOMIDX_STRIPELIST_ENTRIES	2
#define BLOOMIDX_MAX_STRIPELISTS	3
#endif
#define BLOOMIDX_MAX_STRIPES \
	((uint32) BLOOMIDX_MAX_STRIPELISTS * BLOOMIDX_STRIPELIST_ENTRIES)

/*
 * Stripe summaries (format version 4): for each stripe and each column of
 * an equality operator class, a split-block bloom filter of the keys of
 * the column's values in the stripe (sliced_summary.c).  A block is
 * BLOOMIDX_SUMMARY_BLOCK_WORDS 32-bit words; a key sets one bit in each.
 * A stripe's summary is its columns' blocks one after another, in
 * summary pages of BLOOMIDX_SUMMARY_PAGE_BLOCKS blocks each, listed in
 * its stripe page after the slices (BloomStripeSummary).
 */
#define BLOOMIDX_SUMMARY_BLOCK_WORDS	8
#define BLOOMIDX_SUMMARY_BLOCK_BYTES	(BLOOMIDX_SUMMARY_BLOCK_WORDS * 4)
#define BLOOMIDX_SUMMARY_PAGE_BLOCKS \
	((int) (BLOOMIDX_PAGE_FREE_SPACE / BLOOMIDX_SUMMARY_BLOCK_BYTES))
#define BLOOMIDX_SUMMARY_MAX_BITS_PER_KEY	16
#define BLOOMIDX_SUMMARY_DEFAULT_BITS_PER_KEY	8
/* Blocks of a column's summary: enough for a stripe of distinct keys */
#define BLOOMIDX_SUMMARY_MAX_BLOCKS \
	((int) (BLOOMIDX_STRIPE_ROWS * BLOOMIDX_SUMMARY_MAX_BITS_PER_KEY / \
			(BLOOMIDX_SUMMARY_BLOCK_WORDS * 32)))

/*
 * Contents of a TID-map page: the TIDs of rows firstRow .. firstRow +
 * nrows - 1 of a stripe, each packed into blockBits + offsetBits bits,
 * least significant bits first: the block number less baseBlock, then the
 * offset number.  Offset 0 marks a row VACUUM removed.  TIDs that come
 * in heap order, as a build's do, take a byte or two each instead of six.
 * The packed array stops 8 bytes short of the page's end, so that any
 * entry can be read with one unaligned 64-bit load.
 */
typedef struct BloomTidMapData
{
	uint16		firstRow;
	uint16		nrows;
	uint8		blockBits;		/* 0 .. 32 */
	uint8		offsetBits;		/* 1 .. 16 */
	uint16		unused;
	BlockNumber baseBlock;
	uint8		packed[FLEXIBLE_ARRAY_MEMBER];
} BloomTidMapData;

typedef BloomTidMapData *BloomTidMap;

#define BLOOMIDX_TIDMAP_BITS \
	((BLOOMIDX_PAGE_FREE_SPACE - offsetof(BloomTidMapData, packed) - 8) * 8)
/* Fewest TIDs a full TID-map page holds: 48 bits each */
#define BLOOMIDX_TIDMAP_MIN_TIDS	(BLOOMIDX_TIDMAP_BITS / 48)
/* Most TID-map pages a stripe needs, rounded up to an even number */
#define BLOOMIDX_STRIPE_TIDPAGES \
	((((BLOOMIDX_STRIPE_ROWS + BLOOMIDX_TIDMAP_MIN_TIDS - 1) / \
	   BLOOMIDX_TIDMAP_MIN_TIDS) + 1) & ~1)

/*
 * Contents of a stripe page.  In format 4, past slices[sigBits] comes the
 * stripe's summary (BloomStripeSummaryData), all zero (no summary) in a
 * stripe page of an older format.
 */
typedef struct BloomStripeData
{
	uint32		nlive;			/* live rows, as of the last VACUUM */
	uint16		nTidPages;		/* entries in tidPages */
	uint16		flags;			/* BLOOMIDX_STRIPE_* below (0 before format 4) */
	BlockNumber tidPages[BLOOMIDX_STRIPE_TIDPAGES];
	uint16		tidFirstRow[BLOOMIDX_STRIPE_TIDPAGES];	/* of each TID map */
	BlockNumber slices[FLEXIBLE_ARRAY_MEMBER];	/* one per signature bit */
} BloomStripeData;

typedef BloomStripeData *BloomStripe;

/*
 * Flags of a stripe page: its summary lacks rows a merge wrote; its summary
 * is sealed in its group's region (sliced.h), the stripe page listing no
 * summary page of its own
 */
#define BLOOMIDX_STRIPE_SUMMARY_INCOMPLETE	0x0001
#define BLOOMIDX_STRIPE_SUMMARY_GROUPED		0x0002

/* Most summary pages a stripe has */
#define BLOOMIDX_SUMMARY_MAX_PAGES	128

/*
 * A stripe's summary, in its stripe page past the slices' links: the
 * blocks of each column's filter (0 for a column without one: of sets),
 * then, 4-aligned, the summary pages, nPages of them, holding the
 * columns' blocks one after another, BLOOMIDX_SUMMARY_PAGE_BLOCKS a page.
 * nColumns 0: the stripe has no summary.
 */
typedef struct BloomStripeSummaryData
{
	uint16		nColumns;
	uint16		nPages;
	uint16		blocks[FLEXIBLE_ARRAY_MEMBER];	/* per column */
	/* BlockNumber pages[nPages] follow, 4-aligned */
} BloomStripeSummaryData;

#define BLOOMIDX_STRIPE_SUMMARY_OFFSET(sigBits) \
	(offsetof(BloomStripeData, slices) + sizeof(BlockNumber) * (sigBits))
#define BLOOMIDX_STRIPE_SUMMARY_PAGES_OFFSET(nColumns) \
	TYPEALIGN(4, offsetof(BloomStripeSummaryData, blocks) + sizeof(uint16) * (nColumns))

#define BloomPageGetStripe(page) ((BloomStripe) PageGetContents(page))
#define BloomPageGetSlice(page) ((uint64 *) PageGetContents(page))
#define BloomPageGetTidMap(page) ((BloomTidMap) PageGetContents(page))
#define BloomPageGetStripeList(page) ((BlockNumber *) PageGetContents(page))

/*
 * Bytes of the metapage that belong to the layouts: as many as the row
 * layout's free list (4 + 4 * BLOOMIDX_FREELIST_SIZE bytes, padded to 8)
 * and the sliced layout's counters (20 bytes), stripe lists and pending
 * pages took in format version 1, so that pages keep their bytes; then,
 * from format version 4, a range for the sliced layout's stripe summaries
 * (BLOOMIDX_META_AREA_V4_SIZE bytes), zero in an index of an older format
 * (whose pd_lower covers only BLOOMIDX_META_V3_SIZE bytes of contents).
 */
#define BLOOMIDX_META_AREA_V1_SIZE \
	TYPEALIGN(8, TYPEALIGN(8, 4 + 4 * BLOOMIDX_FREELIST_SIZE) + 20 + \
			  4 * (BLOOMIDX_MAX_STRIPELISTS + BLOOMIDX_PENDING_SIZE))
#define BLOOMIDX_META_AREA_V4_SIZE	TYPEALIGN(8, 8 + 2 * BLOOMIDX_MAX_COLUMNS)
#define BLOOMIDX_META_AREA_SIZE \
	(BLOOMIDX_META_AREA_V1_SIZE + BLOOMIDX_META_AREA_V4_SIZE)
/* Largest load factor a metapage records (BloomShape.loadFactor) */
#define BLOOMIDX_MAX_LOAD_FACTOR	1000

/* Bytes of the summary groups' range, past the element counts */
#define BLOOMIDX_META_GROUP_AREA_SIZE	2600

typedef struct BloomMetaPageData
{
	uint32		magic;			/* BLOOMIDX_MAGIC */
	uint16		version;		/* BLOOMIDX_FORMAT_VERSION, _SETS or _FOLD */
	uint16		layout;			/* BLOOMIDX_LAYOUT_ROW or _SLICED */
	uint16		hashScheme;		/* BLOOM_HASH_SCHEME */
	uint16		tuplesPerPage;	/* slots on a data page */
	uint16		nColumns;
	uint16		sigBits;
	uint16		bitsPerColumn[BLOOMIDX_MAX_COLUMNS];	/* k, per element of a
														 * column of sets */
	float8		targetFpr;		/* rate asked for, 0 if length/colN given */

	/* Fill statistics: signature bits set over signatures counted */
	uint64		statTuples;
	uint64		statBitsSet;

	/*
	 * The layouts' area: bytes only the layouts read and write, each its own
	 * range, declared in its header (row.h: the free list; sliced.h: the
	 * stripe lists and pending pages).  Every index has every layout's range, set by
	 * BloomInitMetaAreas; the ranges and their fields sit where format
	 * version 1 put them.
	 */
	char		layoutArea[BLOOMIDX_META_AREA_SIZE];

	/*
	 * Columns of sets, after the layouts' area (an index built before
	 * these were recorded has a shorter metapage, pd_lower ending at
	 * BLOOMIDX_META_V3_SIZE, and reads zeros here): the elements a value
	 * has and a query tests that the shape was sized for, per column (0:
	 * not recorded, or a column of equality), and the columns whose
	 * elements were measured from the table at build rather than given,
	 * and with those, how much more the rows load a signature than their
	 * mean fill says (BloomShape.loadFactor; 0 where not recorded, always
	 * without a measured column).
	 */
	uint32		setElements[BLOOMIDX_MAX_COLUMNS];
	uint16		setQueryElements[BLOOMIDX_MAX_COLUMNS];
	uint32		measuredColumns;
	float4		loadFactor;

	/*
	 * The sliced layout's summary groups (sliced.h), past everything
	 * else: a metapage written before them has a shorter pd_lower, ending
	 * at BLOOMIDX_META_V4_SIZE, and reads zeros here.
	 */
	char		groupArea[BLOOMIDX_META_GROUP_AREA_SIZE];
} BloomMetaPageData;

typedef BloomMetaPageData *BloomMetaPage;

/* The fields every layout has stay where format version 1 put them */
StaticAssertDecl(offsetof(BloomMetaPageData, version) == 4 &&
				 offsetof(BloomMetaPageData, layout) == 6 &&
				 offsetof(BloomMetaPageData, hashScheme) == 8 &&
				 offsetof(BloomMetaPageData, tuplesPerPage) == 10 &&
				 offsetof(BloomMetaPageData, nColumns) == 12 &&
				 offsetof(BloomMetaPageData, sigBits) == 14 &&
				 offsetof(BloomMetaPageData, bitsPerColumn) == 16 &&
				 offsetof(BloomMetaPageData, targetFpr) == 80 &&
				 offsetof(BloomMetaPageData, statTuples) == 88 &&
				 offsetof(BloomMetaPageData, statBitsSet) == 96 &&
				 offsetof(BloomMetaPageData, layoutArea) == 104,
				 "metapage fields moved");
/* Contents of a metapage before format 4 and the element counts */
#define BLOOMIDX_META_V3_SIZE \
	(offsetof(BloomMetaPageData, layoutArea) + BLOOMIDX_META_AREA_V1_SIZE)
/* The element counts follow the layouts' area, wherever it ends */
StaticAssertDecl(offsetof(BloomMetaPageData, setElements) ==
				 offsetof(BloomMetaPageData, layoutArea) + BLOOMIDX_META_AREA_SIZE &&
				 offsetof(BloomMetaPageData, setQueryElements) ==
				 offsetof(BloomMetaPageData, setElements) + 4 * BLOOMIDX_MAX_COLUMNS &&
				 offsetof(BloomMetaPageData, measuredColumns) ==
				 offsetof(BloomMetaPageData, setQueryElements) + 2 * BLOOMIDX_MAX_COLUMNS &&
				 offsetof(BloomMetaPageData, groupArea) ==
				 offsetof(BloomMetaPageData, measuredColumns) + 8,
				 "metapage element counts moved");
/* Contents of a metapage before the summary groups */
#define BLOOMIDX_META_V4_SIZE	offsetof(BloomMetaPageData, groupArea)
#ifndef BLOOMIDX_SMALL_LIMITS
StaticAssertDecl(BLOOMIDX_META_V3_SIZE == 5256 &&
				 BLOOMIDX_META_V4_SIZE == 5256 + 72 + 200, "metapage size changed");
#else
StaticAssertDecl(BLOOMIDX_META_V3_SIZE == 3216 &&
				 BLOOMIDX_META_V4_SIZE == 3216 + 72 + 200, "metapage size changed");
#endif
StaticAssertDecl(sizeof(BloomMetaPageData) <= BLOOMIDX_PAGE_FREE_SPACE,
				 "metapage does not fit a page");

#define BloomPageGetOpaque(page) ((BloomPageOpaque) PageGetSpecialPointer(page))
#define BloomPageIsMeta(page) ((BloomPageGetOpaque(page)->flags & BLOOMIDX_META) != 0)
#define BloomPageIsDeleted(page) ((BloomPageGetOpaque(page)->flags & BLOOMIDX_DELETED) != 0)
#define BloomPageHasFlag(page, flag) ((BloomPageGetOpaque(page)->flags & (flag)) != 0)
#define BloomPageGetMeta(page) ((BloomMetaPage) PageGetContents(page))
#define BloomPageGetNTuples(page) (BloomPageGetOpaque(page)->ntuples)
#define BloomPageHasFreeSlot(page) \
	(BloomPageGetOpaque(page)->ntuples < BloomPageGetOpaque(page)->maxtuples)

/*
 * Signature (the slot) of slot i on a data page of slots slotBytes long:
 * the signature's bytes, then in format 4 its keys
 */
static inline uint8 *
BloomPageGetSignature(Page page, int slotBytes, int i)
{
	return (uint8 *) PageGetContents(page) + (Size) slotBytes * i;
}

/* Heap TID of slot i on a data page */
static inline ItemPointer
BloomPageGetTid(Page page, int slotBytes, int i)
{
	return (ItemPointer) PageGetSpecialPointer(page) - (i + 1);
}

/* The tag of a page of the sliced layout (see above) */
static inline uint32
BloomPageGetTag(Page page)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);

	return ((uint32) opaque->maxtuples << 16) | opaque->ntuples;
}

/*
 * TID of entry i of a TID-map page; an invalid TID for a row VACUUM
 * removed.  The caller checks i < nrows.
 */
static inline void
BloomTidMapGet(BloomTidMap map, int i, ItemPointer tid)
{
	int			width = map->blockBits + map->offsetBits;
	uint64		bit = (uint64) i * width;
	uint64		x = BloomLoadWord(map->packed + bit / 8) >> (bit % 8);
	OffsetNumber off = (OffsetNumber) (x & ((UINT64CONST(1) << map->offsetBits) - 1));

	if (off == InvalidOffsetNumber)
		ItemPointerSetInvalid(tid);
	else
		ItemPointerSet(tid,
					   map->baseBlock +
					   (BlockNumber) ((x >> map->offsetBits) &
									  ((UINT64CONST(1) << map->blockBits) - 1)),
					   off);
}

/* The pages of one stripe, copied from its stripe page (in memory) */
typedef struct BloomStripePages
{
	uint32		stripe;			/* its number */
	int			nTidPages;
	BlockNumber tidPages[BLOOMIDX_STRIPE_TIDPAGES];
	uint16		tidFirstRow[BLOOMIDX_STRIPE_TIDPAGES];
	BlockNumber slices[BLOOMIDX_SLICED_MAX_LENGTH];
	/* its summary (format 4; summaryColumns 0: none) */
	uint16		flags;
	int			summaryColumns;
	int			nSummaryPages;
	uint16		summaryBlocks[BLOOMIDX_MAX_COLUMNS];
	BlockNumber summaryPages[BLOOMIDX_SUMMARY_MAX_PAGES];
} BloomStripePages;

/* Does a slice page have the bit of row r of its stripe set? */
static inline bool
BloomSliceHasRow(Page page, int r)
{
	return (BloomPageGetSlice(page)[r / 64] & (UINT64CONST(1) << (r % 64))) != 0;
}

/* First row and number of rows of a TID-map page */
static inline int
BloomTidMapGetFirstRow(Page page)
{
	return BloomPageGetTidMap(page)->firstRow;
}

static inline int
BloomTidMapGetNRows(Page page)
{
	return BloomPageGetTidMap(page)->nrows;
}

/* TID of entry i of a TID-map page (see BloomTidMapGet) */
static inline void
BloomTidMapPageGet(Page page, int i, ItemPointer tid)
{
	BloomTidMapGet(BloomPageGetTidMap(page), i, tid);
}

/* Mark a pending page frozen: a merge is taking its rows */
static inline void
BloomPageSetFrozen(Page page)
{
	BloomPageGetOpaque(page)->flags |= BLOOMIDX_FROZEN;
}

/* Unfreeze a pending page a merge took only some rows from */
static inline void
BloomPageClearFrozen(Page page)
{
	BloomPageGetOpaque(page)->flags &= ~BLOOMIDX_FROZEN;
}

/* The blocks [next, end) a read stream reads in order (BloomBlockRangeNext) */
typedef struct BloomBlockRange
{
	BlockNumber next;
	BlockNumber end;
} BloomBlockRange;

/* page.c */
extern BlockNumber BloomBlockRangeNext(ReadStream *stream, void *range,
									   void *per_buffer_data);
extern int	BloomTuplesPerPage(int slotBytes);
extern int	BloomMetaSlotBytes(BloomMetaPage meta);
extern void BloomInitPage(Page page, uint16 flags);
extern void BloomInitMetaPage(Page page, const BloomShape *shape);
extern void BloomInitDataPage(Page page, int slotBytes);
extern void BloomInitDeletedPage(Page page);
extern bool BloomPageAddTuple(Page page, int slotBytes, const uint8 *slot,
							  ItemPointer tid);
extern void BloomPageDeleteTuple(Page page, int slotBytes, int i);
extern void BloomMetaGetShape(BloomMetaPage meta, BloomShape *shape);
extern void BloomShapeSetQueryBits(BloomShape *shape);
extern Buffer BloomNewBuffer(Relation index);
extern void BloomNewBuffers(Relation index, Buffer *buffers, int n);
extern void BloomFreePage(Relation index, Buffer buffer);
extern void BloomRecordFreeSpace(Relation index, BlockNumber blkno, Page page,
								 int sigBytes);

/* datapage.c */
extern int	BloomScanRowPage(BloomScanOpaque so, Page page, int slotBytes,
							 int sigWords, ItemPointerData *tids);
extern int	BloomScanRowPageBuffer(BloomScanOpaque so, Buffer buffer,
								   int slotBytes, int sigWords,
								   ItemPointerData *tids, char *copy);
extern GenericXLogState *BloomPageRemoveDead(Relation index, Buffer buffer,
											 Page *page, int slotBytes,
											 IndexBulkDeleteCallback callback,
											 void *callback_state,
											 IndexBulkDeleteResult *stats);

/* deltawal.c: generic WAL records of the bytes the caller marks changed */
typedef struct BloomDeltaXLogData BloomDeltaXLogData;
typedef BloomDeltaXLogData *BloomDeltaXLog;
extern BloomDeltaXLog BloomDeltaXLogStart(Relation index);
extern Page BloomDeltaXLogRegister(BloomDeltaXLog x, Buffer buffer);
extern Page BloomDeltaXLogRegisterNew(BloomDeltaXLog x, Buffer buffer);
extern void BloomDeltaXLogMark(BloomDeltaXLog x, Page image, const void *ptr,
							   Size len);
extern void BloomDeltaXLogMarkChanged(BloomDeltaXLog x, Page image,
									  const void *ptr, Size len);
extern void BloomDeltaXLogMarkBytes(BloomDeltaXLog x, Page image,
									const void *ptr, uint32 mask);
extern XLogRecPtr BloomDeltaXLogFinish(BloomDeltaXLog x);

/* pagecheck.c */
pg_noreturn extern void BloomReportCorruption(Relation index, BlockNumber blkno,
								  const char *problem);
pg_noreturn extern void BloomReportUnsupported(Relation index,
								   const char *detail);
extern BlockNumber BloomBlocksCovering(Relation index, BlockNumber blkno);
extern void BloomCheckMetaPage(Relation index, Page page);
extern bool BloomPageIsData(Relation index, Page page, BlockNumber blkno,
							int tuplesPerPage, uint16 pageKinds,
							const char *layoutName);
extern bool BloomPageIsRowPage(Page page, int tuplesPerPage);
/* A layout's checks of its metapage fields (layout.h's routine entries) */
typedef char *(*BloomMetaProblemFn) (BloomMetaPage meta, BlockNumber *needBlocks);
typedef char *(*BloomMetaBlocksProblemFn) (BloomMetaPage meta, BlockNumber nblocks);

extern char *BloomMetaPageProblem(Page page, BloomMetaProblemFn layoutProblem,
								  bool *unsupported, BlockNumber *needBlocks);
extern char *BloomPageCommonProblem(Page page, bool *done);
extern char *BloomDataPageProblem(Page page, const BloomShape *shape);
extern bool BloomDataPagePaddingIsClear(Page page, int sigBits, int slotBytes,
										int maxRows);
extern void BloomCheckMeta(Relation index, Page page,
						   BloomMetaProblemFn layoutProblem,
						   BloomMetaBlocksProblemFn layoutBlocksProblem);
extern void BloomCheckLink(Relation index, BlockNumber from, BlockNumber blkno,
						   const char *what);
extern void BloomCheckDataPageBounds(Relation index, Page page,
									 BlockNumber blkno, int slotBytes);
extern void BloomCheckHeapTid(Relation index, BlockNumber blkno,
							  ItemPointer tid);
extern void BloomCheckHeapTids(Relation index, BlockNumber blkno,
							   ItemPointer tids, int n);
extern void BloomCheckHeapTidsInTable(Relation index, BlockNumber blkno,
									  ItemPointer tids, int n,
									  BlockNumber *heapBlocks);

/* sliced_format.c */
extern void BloomInitSlicedPage(Page page, uint16 flag, int sigBits, uint32 tag);
extern bool BloomPageIsSliced(Page page, uint16 flag, uint32 tag);
extern int	BloomTidMapPack(Page page, int firstRow, const ItemPointerData *tids,
							int ntids);
extern int	BloomTidMapUnpack(Page page, ItemPointerData *tids);
extern void BloomTidMapKill(Page page, int i);
extern bool BloomTidMapIsSane(BloomTidMap map);
extern bool BloomTidMapUsedIsSane(Page page);
extern char *BloomTidMapProblem(Page page);
extern int	BloomTidMapCountLive(Page page);
extern void BloomStripeGetPages(Page page, int sigBits, BloomStripePages *pages);
extern BlockNumber BloomStripeGetLink(Page page, uint16 flag, int i);
extern void BloomStripeSetLink(Page page, uint16 flag, int i, BlockNumber blkno);
extern int	BloomStripeGetNTidPages(Page page);
extern int	BloomStripeGetTidFirstRow(Page page, int t);
extern void BloomStripeSetTidPages(Page page, int ntidpages, int t0,
								   const uint16 *firstRows);
extern void BloomStripeSetSummary(Page page, int sigBits, int nColumns,
								  const uint16 *blocks,
								  const BlockNumber *summaryPages, int npages);
extern void BloomStripeSetFlags(Page page, uint16 flags);
extern uint16 BloomStripeGetFlags(Page page);
extern char *BloomStripeSummaryProblem(Page page, int sigBits);
extern bool BloomStripeHasSummary(Page page, int sigBits);
extern uint32 *BloomSummaryPageBlocks(Page page);
extern void BloomStripeSetLive(Page page, uint32 nlive);
extern void BloomStripeAddLive(Page page, uint32 n);
extern void BloomSliceSetWords(Page page, const uint64 *words);
extern bool BloomSliceHasRowsFrom(Page page, int r0);
extern void BloomSliceWriteRows(Page page, int r0, const uint64 *words, int nw);
extern int	BloomSliceAndWords(Page page, uint64 *r, int nw, uint16 *live);
extern int	BloomSliceAndLiveWords(Page page, uint64 *r, uint16 *live, int nlive);
extern BlockNumber BloomStripeListGet(Page page, int i);
extern void BloomStripeListSet(Page page, int i, BlockNumber blkno);
extern void BloomStripeListCopy(Page page, BlockNumber *stripes, int n);
extern void BloomStripeListFill(Page page, const BlockNumber *stripes, int n);
extern bool BloomStripeListIsEmpty(Page page);

#endif							/* BLOOMIDX_PAGE_H */
