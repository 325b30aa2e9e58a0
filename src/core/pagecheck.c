/*-------------------------------------------------------------------------
 *
 * pagecheck.c
 *	  Checks of the pages of a bloomidx index that every layout shares:
 *	  what readers and writers test before they trust a page, what
 *	  bloomidx_check reports, and the error they raise.  The checks of a
 *	  layout's own pages and metapage fields are its own (row_check.c,
 *	  sliced_check.c), reached through its routine table.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/pagecheck.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"
#include "signature.h"

/*
 * Raise the error for a sound metapage of a format version, layout or hash
 * scheme this build cannot read: 0A000, detail saying which.
 */
void
BloomReportUnsupported(Relation index, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("bloomidx index \"%s\" has a format this build cannot read",
					RelationGetRelationName(index)),
			 errdetail_internal("%s", detail),
			 errhint("REINDEX the index.")));
}

/*
 * Raise the error for a corrupted page of an index: XX002, naming the
 * block, problem saying what is wrong.
 */
void
BloomReportCorruption(Relation index, BlockNumber blkno, const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" is corrupted at block %u",
					RelationGetRelationName(index), blkno),
			 errdetail_internal("%s", problem),
			 errhint("REINDEX the index.")));
}

/*
 * A length of the index that covers blkno if blkno is a block of it, for
 * the checks of block numbers read from its pages.  The index never shrinks
 * under a relcache entry: bloomidx does not truncate its indexes, and
 * TRUNCATE, REINDEX and VACUUM FULL build a new one, which also rebuilds
 * the relcache entry and so its rd_amcache.  So a length seen before, kept
 * in the cached state, covers every block below it, and the storage
 * manager (an lseek, a fifth of a row-layout insert's time when every
 * insert asked it) is asked again only for a block at or past that length.
 * Before the state is cached (BloomGetState checks the metapage first) it
 * always asks.
 */
BlockNumber
BloomBlocksCovering(Relation index, BlockNumber blkno)
{
	BloomState	state = (BloomState) index->rd_amcache;
	BlockNumber nblocks;

	if (state != NULL && blkno < state->knownBlocks)
		return state->knownBlocks;
	nblocks = RelationGetNumberOfBlocks(index);
	if (state != NULL)
		state->knownBlocks = nblocks;
	return nblocks;
}

/*
 * Describe why a metapage is of a format version, layout or hash scheme
 * this build cannot read, or return NULL if it is not.
 */
static char *
BloomMetaFormatProblem(BloomMetaPage meta)
{
	if (meta->version >= BLOOMIDX_FORMAT_VERSION &&
		meta->version <= BLOOMIDX_FORMAT_SUMMARIES &&
		meta->layout >= 1 && meta->layout <= BloomMaxLayoutId() &&
		meta->hashScheme == BLOOM_HASH_SCHEME)
		return NULL;
	return psprintf("Format version %u, layout %u and hash scheme %u; this build reads versions %u to %u, layouts 1 to %u and hash scheme %u.",
					meta->version, meta->layout, meta->hashScheme,
					BLOOMIDX_FORMAT_VERSION, BLOOMIDX_FORMAT_SUMMARIES,
					BloomMaxLayoutId(), BLOOM_HASH_SCHEME);
}

/*
 * Describe what is wrong with the element counts of a metapage (page.h),
 * or return NULL if nothing is: recorded for columns of sets only, both
 * counts or neither, within the options' bounds, and all zero on a
 * metapage whose pd_lower ends before them (an index built before they
 * were recorded).
 */
static char *
BloomMetaElementsProblem(Page page)
{
	BloomMetaPage meta = BloomPageGetMeta(page);
	bool		recorded = ((PageHeader) page)->pd_lower >=
		MAXALIGN(SizeOfPageHeaderData) + BLOOMIDX_META_V4_SIZE;
	uint32		setColumns = 0;
	int			i;

	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
	{
		uint32		elements = meta->setElements[i];
		uint32		queryElements = meta->setQueryElements[i];

		if (i < meta->nColumns && meta->version >= BLOOMIDX_FORMAT_SETS &&
			(meta->bitsPerColumn[i] & BLOOMIDX_COLUMN_SETS))
			setColumns |= 1U << i;
		if ((elements != 0 || queryElements != 0) &&
			(!recorded || (setColumns & (1U << i)) == 0))
			return psprintf("Column %d records %u elements and %u query elements, but %s.",
							i + 1, elements, queryElements,
							!recorded ? "the metapage's pd_lower ends before them" :
							"it is not a column of sets");
		if ((elements == 0) != (queryElements == 0) ||
			elements > BLOOMIDX_MAX_SET_ELEMENTS ||
			queryElements > BLOOMIDX_MAX_QUERY_ELEMENTS)
			return psprintf("Column %d records %u elements and %u query elements, not both 0 or between 1 and %d and %d.",
							i + 1, elements, queryElements,
							BLOOMIDX_MAX_SET_ELEMENTS,
							BLOOMIDX_MAX_QUERY_ELEMENTS);
	}
	if ((meta->measuredColumns & ~setColumns) != 0)
		return psprintf("Measured columns 0x%08X are not within the columns of sets 0x%08X.",
						meta->measuredColumns, setColumns);
	if (!(meta->loadFactor == 0 ||
		  (meta->measuredColumns != 0 && meta->loadFactor >= 1 &&
		   meta->loadFactor <= BLOOMIDX_MAX_LOAD_FACTOR)))
		return psprintf("Load factor %g is not 0, or between 1 and %d with a measured column (measured columns 0x%08X).",
						(double) meta->loadFactor, BLOOMIDX_MAX_LOAD_FACTOR,
						meta->measuredColumns);
	return NULL;
}

/*
 * Complain unless page is the metapage of a bloomidx index this code can
 * read.
 */
void
BloomCheckMetaPage(Relation index, Page page)
{
	BloomMetaPage meta = BloomPageGetMeta(page);
	char	   *problem;
	BlockNumber needBlocks = 0;

	if (PageIsNew(page) || !BloomPageIsMeta(page) ||
		BloomPageGetOpaque(page)->page_id != BLOOMIDX_PAGE_ID ||
		meta->magic != BLOOMIDX_MAGIC)
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO,
							  "Block 0 holds no bloomidx metapage.");
	if ((problem = BloomMetaFormatProblem(meta)) != NULL)
		BloomReportUnsupported(index, problem);
	if (meta->nColumns < 1 || meta->nColumns > BLOOMIDX_MAX_COLUMNS ||
		meta->sigBits < BLOOMIDX_MIN_LENGTH || meta->sigBits > BLOOMIDX_MAX_LENGTH ||
		meta->tuplesPerPage != BloomTuplesPerPage(BloomMetaSlotBytes(meta)))
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO,
							  "The metapage has an invalid signature shape.");
	if ((problem = BloomMetaAreasProblem(meta, &needBlocks)) != NULL)
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO, problem);
}

/*
 * Describe what is wrong with the page header or special space of an
 * initialized page, or return NULL if nothing is.
 */
static char *
BloomPageHeaderProblem(Page page)
{
	PageHeader	phdr = (PageHeader) page;
	BloomPageOpaque opaque;

	if (PageGetPageSize(page) != BLCKSZ ||
		PageGetPageLayoutVersion(page) != PG_PAGE_LAYOUT_VERSION)
		return psprintf("Page size %u and layout version %u are not %u and %u.",
						(unsigned) PageGetPageSize(page),
						(unsigned) PageGetPageLayoutVersion(page),
						(unsigned) BLCKSZ, (unsigned) PG_PAGE_LAYOUT_VERSION);
	if (phdr->pd_special != BLCKSZ - MAXALIGN(sizeof(BloomPageOpaqueData)))
		return psprintf("Special space starts at %u, not %u.",
						(unsigned) phdr->pd_special,
						(unsigned) (BLCKSZ - MAXALIGN(sizeof(BloomPageOpaqueData))));
	if (phdr->pd_lower < SizeOfPageHeaderData ||
		phdr->pd_lower > phdr->pd_upper ||
		phdr->pd_upper > phdr->pd_special)
		return psprintf("pd_lower %u and pd_upper %u are out of order.",
						(unsigned) phdr->pd_lower, (unsigned) phdr->pd_upper);
	opaque = BloomPageGetOpaque(page);
	if (opaque->page_id != BLOOMIDX_PAGE_ID)
		return psprintf("Page id is 0x%04X, not 0x%04X.",
						(unsigned) opaque->page_id, (unsigned) BLOOMIDX_PAGE_ID);
	if ((opaque->flags & ~BLOOMIDX_ALL_FLAGS) != 0 ||
		(opaque->flags & BLOOMIDX_META && opaque->flags & BLOOMIDX_DELETED))
		return psprintf("Page flags 0x%04X are invalid.", (unsigned) opaque->flags);
	return NULL;
}

/*
 * Describe what is wrong with a metapage, or return NULL if nothing is.
 *
 * Sets *unsupported when the page is a sound metapage of a format version,
 * layout or hash scheme this build cannot read, rather than a corrupted one.
 * The block numbers it lists are checked against the index's length by the
 * caller: *needBlocks is set to the length they need, one more than the
 * highest (0 if none), found in the same pass.
 */
char *
BloomMetaPageProblem(Page page, BloomMetaProblemFn layoutProblem,
					 bool *unsupported, BlockNumber *needBlocks)
{
	BloomMetaPage meta = BloomPageGetMeta(page);
	char	   *problem;
	uint64		totalBits = 0;
	bool		anySets = false;
	int			i;

	*unsupported = false;
	*needBlocks = 0;
	if (PageIsNew(page))
		return pstrdup("The metapage is not initialized.");
	if ((problem = BloomPageHeaderProblem(page)) != NULL)
		return problem;
	if (!BloomPageIsMeta(page))
		return pstrdup("Block 0 is not flagged as the metapage.");
	/*
	 * A metapage written before format 4 and the element counts ends at
	 * BLOOMIDX_META_V3_SIZE (it reads zeros past it); one of format 4
	 * covers the summaries' range too
	 */
	if (((PageHeader) page)->pd_lower < MAXALIGN(SizeOfPageHeaderData) +
		(meta->version >= BLOOMIDX_FORMAT_SUMMARIES ?
		 offsetof(BloomMetaPageData, setElements) : BLOOMIDX_META_V3_SIZE))
		return psprintf("pd_lower %u does not cover the metapage contents.",
						(unsigned) ((PageHeader) page)->pd_lower);
	if (meta->magic != BLOOMIDX_MAGIC)
		return psprintf("Magic number is 0x%08X, not 0x%08X.",
						meta->magic, BLOOMIDX_MAGIC);
	if ((problem = BloomMetaFormatProblem(meta)) != NULL)
	{
		*unsupported = true;
		return problem;
	}
	if (meta->nColumns < 1 || meta->nColumns > BLOOMIDX_MAX_COLUMNS)
		return psprintf("Column count %u is not between 1 and %d.",
						meta->nColumns, BLOOMIDX_MAX_COLUMNS);
	/* The signature length, and the fields of the layout, if given */
	if (layoutProblem != NULL)
	{
		if ((problem = layoutProblem(meta, needBlocks)) != NULL)
			return problem;
	}
	else if (meta->sigBits < BLOOMIDX_MIN_LENGTH || meta->sigBits > BLOOMIDX_MAX_LENGTH)
		return psprintf("Signature length %u is not between %d and %d.",
						meta->sigBits, BLOOMIDX_MIN_LENGTH, BLOOMIDX_MAX_LENGTH);
	if (meta->tuplesPerPage != BloomTuplesPerPage(BloomMetaSlotBytes(meta)))
		return psprintf("Tuples per page is %u, not %d.",
						meta->tuplesPerPage, BloomTuplesPerPage(BloomMetaSlotBytes(meta)));
	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
	{
		unsigned	bits = meta->bitsPerColumn[i];

		/* Version 2 marks the columns of sets, whose rows set any number */
		if (meta->version >= BLOOMIDX_FORMAT_SETS && i < meta->nColumns &&
			(bits & BLOOMIDX_COLUMN_SETS))
		{
			bits &= ~BLOOMIDX_COLUMN_SETS;
			anySets = true;
		}
		if (i < meta->nColumns &&
			(bits < 1 || bits > BLOOMIDX_MAX_COLUMN_BITS))
			return psprintf("Column %d has %u bits, not between 1 and %d.",
							i + 1, bits, BLOOMIDX_MAX_COLUMN_BITS);
		if (i >= meta->nColumns && bits != 0)
			return psprintf("Column %d of %u has %u bits.",
							i + 1, meta->nColumns, bits);
		totalBits += bits;
	}
	if (anySets)
		totalBits = meta->sigBits;
	if (!(meta->targetFpr == 0 ||
		  (meta->targetFpr >= BLOOMIDX_MIN_FPR && meta->targetFpr <= BLOOMIDX_MAX_FPR)))
		return psprintf("Target false-positive rate %g is out of range.",
						meta->targetFpr);
	if (meta->statBitsSet > meta->statTuples * Min(totalBits, meta->sigBits))
		return psprintf("Fill statistics count " UINT64_FORMAT " bits set in " UINT64_FORMAT " signatures of at most " UINT64_FORMAT " bits set.",
						meta->statBitsSet, meta->statTuples,
						Min(totalBits, (uint64) meta->sigBits));
	/* The layouts' ranges of the metapage, which every index has */
	if ((problem = BloomMetaAreasProblem(meta, needBlocks)) != NULL)
		return problem;
	return BloomMetaElementsProblem(page);
}

/*
 * Complain unless every block the metapage lists is a page of the index
 * other than the metapage: nblocks is the index's length.
 */
static char *
BloomMetaBlocksProblem(BloomMetaPage meta, BlockNumber nblocks,
					   BloomMetaBlocksProblemFn layoutBlocksProblem)
{
	char	   *problem;

	if ((problem = BloomMetaAreasBlocksProblem(meta, nblocks)) != NULL)
		return problem;
	if (layoutBlocksProblem == NULL)
		return NULL;
	return layoutBlocksProblem(meta, nblocks);
}

/*
 * Check the metapage of an index, locked by the caller, before any of its
 * fields is used: XX002 naming block 0 if it is corrupted, 0A000 if it is
 * of a format this build cannot read.  Every reader and writer of the
 * metapage goes through this.  The layout's own fields are checked by the
 * functions its code passes (row.h's BloomRowCheckMeta, sliced.h's
 * BloomSlicedCheckMeta; the shells take them from the routine table); the
 * shared layers, which do not know the layout, pass NULL and check the
 * fields every metapage has.
 */
void
BloomCheckMeta(Relation index, Page page, BloomMetaProblemFn layoutProblem,
			   BloomMetaBlocksProblemFn layoutBlocksProblem)
{
	bool		unsupported;
	BlockNumber needBlocks;
	char	   *problem = BloomMetaPageProblem(page, layoutProblem,
											   &unsupported, &needBlocks);

	if (problem != NULL && unsupported)
		BloomReportUnsupported(index, problem);
	if (problem == NULL && needBlocks > 0)
	{
		/* a length the index had, its current one if that is short */
		BlockNumber nblocks = BloomBlocksCovering(index, needBlocks - 1);

		if (needBlocks > nblocks)
			problem = BloomMetaBlocksProblem(BloomPageGetMeta(page), nblocks,
											 layoutBlocksProblem);
	}
	if (problem != NULL)
		BloomReportCorruption(index, BLOOMIDX_METAPAGE_BLKNO, problem);
}

/*
 * Complain unless blkno, read from page from of an index, names another
 * page of the index than the metapage and from: locking it could wait on
 * a lock the backend holds, and forever.
 */
void
BloomCheckLink(Relation index, BlockNumber from, BlockNumber blkno,
			   const char *what)
{
	if (blkno == BLOOMIDX_METAPAGE_BLKNO || blkno == from ||
		blkno == InvalidBlockNumber || blkno >= BloomBlocksCovering(index, blkno))
		BloomReportCorruption(index, from,
							  psprintf("The page lists block %u as its %s.",
									   blkno, what));
}

/*
 * Check a data page (of the row layout, or a pending page) before it is
 * changed: its header must bound its tuples, since generic WAL logs only
 * the page up to pd_lower and from pd_upper, and a change would lose what
 * lies outside.
 */
void
BloomCheckDataPageBounds(Relation index, Page page, BlockNumber blkno,
						 int slotBytes)
{
	PageHeader	phdr = (PageHeader) page;
	BloomPageOpaque opaque = BloomPageGetOpaque(page);

	if (opaque->ntuples > opaque->maxtuples ||
		opaque->maxtuples != BloomTuplesPerPage(slotBytes) ||
		phdr->pd_special != BLCKSZ - MAXALIGN(sizeof(BloomPageOpaqueData)) ||
		phdr->pd_lower != MAXALIGN(SizeOfPageHeaderData) + opaque->ntuples * slotBytes ||
		phdr->pd_upper != phdr->pd_special - opaque->ntuples * sizeof(ItemPointerData))
		BloomReportCorruption(index, blkno,
							  psprintf("pd_lower %u and pd_upper %u do not bound the %u signatures and TIDs.",
									   (unsigned) phdr->pd_lower,
									   (unsigned) phdr->pd_upper,
									   (unsigned) opaque->ntuples));
}

/*
 * BloomCheckHeapTid for n TIDs read from block blkno.
 */
void
BloomCheckHeapTids(Relation index, BlockNumber blkno, ItemPointer tids, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		BloomCheckHeapTid(index, blkno, &tids[i]);
}

/*
 * BloomCheckHeapTids, and each TID's block is one of the table's: for a
 * scan, whose bitmap the executor reads, that would otherwise fail reading
 * past the table's end (58P01 or XX001, naming no page of the index).
 *
 * *heapBlocks is the table's length when last read (0 at first): read
 * again, once, for a TID past it, since rows may have been added to the
 * table since (a row's heap block exists before its index entry does).
 * The table cannot shrink meanwhile: truncation takes a lock that
 * conflicts with the scan's.
 */
void
BloomCheckHeapTidsInTable(Relation index, BlockNumber blkno, ItemPointer tids,
						  int n, BlockNumber *heapBlocks)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		BlockNumber heapBlock = ItemPointerGetBlockNumberNoCheck(&tids[i]);

		BloomCheckHeapTid(index, blkno, &tids[i]);
		if (heapBlock >= *heapBlocks)
		{
			Relation	heap = table_open(index->rd_index->indrelid, NoLock);

			*heapBlocks = RelationGetNumberOfBlocks(heap);
			if (heapBlock >= *heapBlocks)
				BloomReportCorruption(index, blkno,
									  psprintf("A tuple points to heap block %u, but table \"%s\" has %u blocks.",
											   heapBlock,
											   RelationGetRelationName(heap),
											   *heapBlocks));
			table_close(heap, NoLock);
		}
	}
}

/*
 * Complain unless a heap TID read from block blkno of an index is valid:
 * a bitmap would refuse it with a less helpful error.
 */
void
BloomCheckHeapTid(Relation index, BlockNumber blkno, ItemPointer tid)
{
	OffsetNumber offnum = ItemPointerGetOffsetNumberNoCheck(tid);

	if (ItemPointerGetBlockNumberNoCheck(tid) == InvalidBlockNumber ||
		offnum < FirstOffsetNumber || offnum > MaxHeapTuplesPerPage)
		BloomReportCorruption(index, blkno,
							  psprintf("A tuple points to invalid heap TID (%u,%u).",
									   ItemPointerGetBlockNumberNoCheck(tid),
									   offnum));
}

/*
 * Describe what is wrong with a data page (of the row layout, or a pending
 * page of the sliced layout) of an index of the given shape, or return NULL
 * if nothing is: its slot counts, bounds, heap TIDs (checked for validity,
 * not against the heap's length, which the caller knows), signatures, and
 * in format 4 the keys of a page without keys (zero).
 */
char *
BloomDataPageProblem(Page page, const BloomShape *shape)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);
	int			sigBytes = shape->sigBytes;
	int			slotBytes = BloomShapeSlotBytes(shape);
	int			maxBitsSet;
	int			minBitsSet;
	int			i;

	if (opaque->maxtuples != BloomTuplesPerPage(slotBytes))
		return psprintf("Page has %u slots, not %d.",
						opaque->maxtuples, BloomTuplesPerPage(slotBytes));
	if (opaque->ntuples > opaque->maxtuples)
		return psprintf("Page has %u tuples in %u slots.",
						opaque->ntuples, opaque->maxtuples);
	if ((opaque->flags & BLOOMIDX_KEYLESS) && !shape->summaries)
		return psprintf("Page flags 0x%04X mark rows without keys in an index whose rows have none.",
						(unsigned) opaque->flags);
	if (((PageHeader) page)->pd_lower !=
		MAXALIGN(SizeOfPageHeaderData) + opaque->ntuples * slotBytes ||
		((PageHeader) page)->pd_upper !=
		((PageHeader) page)->pd_special - opaque->ntuples * sizeof(ItemPointerData))
		return psprintf("pd_lower %u and pd_upper %u do not bound the %u signatures and TIDs.",
						(unsigned) ((PageHeader) page)->pd_lower,
						(unsigned) ((PageHeader) page)->pd_upper,
						(unsigned) opaque->ntuples);

	maxBitsSet = BloomShapeMaxBitsSet(shape);
	minBitsSet = BloomShapeMinBitsSet(shape);

	for (i = 0; i < opaque->ntuples; i++)
	{
		ItemPointer tid = BloomPageGetTid(page, slotBytes, i);
		OffsetNumber offnum = ItemPointerGetOffsetNumberNoCheck(tid);
		const uint8 *slot = BloomPageGetSignature(page, slotBytes, i);
		uint64		bitsSet;

		if (ItemPointerGetBlockNumberNoCheck(tid) == InvalidBlockNumber ||
			offnum < FirstOffsetNumber || offnum > MaxHeapTuplesPerPage)
			return psprintf("Tuple %d points to invalid heap TID (%u,%u).",
							i, ItemPointerGetBlockNumberNoCheck(tid), offnum);
		bitsSet = BloomCountBits(slot, sigBytes);
		if (bitsSet < minBitsSet || bitsSet > maxBitsSet)
			return psprintf("Tuple %d has " UINT64_FORMAT " bits set, not between %d and %d.",
							i, bitsSet, minBitsSet, maxBitsSet);
		if ((opaque->flags & BLOOMIDX_KEYLESS) &&
			BloomCountBits(slot + sigBytes, BloomShapeKeyBytes(shape)) != 0)
			return psprintf("Tuple %d of a page of rows without keys has keys.", i);
	}
	if (!BloomDataPagePaddingIsClear(page, shape->sigBits, slotBytes, opaque->ntuples))
		return psprintf("A signature has bits set past the %d bits of the index's signatures.",
						shape->sigBits);
	return NULL;
}

/*
 * Are the bits past sigBits of the first maxRows signatures on a data page
 * of slots slotBytes long clear?  A signature takes (sigBits + 7) / 8
 * bytes at the start of its slot (keys may follow, see page.h), and no
 * column sets the bits of its last byte past sigBits; a set one means
 * signatures longer than the metapage says, whose bits a query would not
 * find.  A scan tests a few signatures a page (BLOOMIDX_PADDING_ROWS),
 * bloomidx_check all of them.
 */
bool
BloomDataPagePaddingIsClear(Page page, int sigBits, int slotBytes, int maxRows)
{
	int			n = Min(BloomPageGetNTuples(page), maxRows);
	const uint8 *last = BloomPageGetSignature(page, slotBytes, 0) +
		(sigBits + 7) / 8 - 1;
	uint8		acc = 0;
	int			i;

	if (sigBits % 8 == 0)
		return true;
	for (i = 0; i < n; i++, last += slotBytes)
		acc |= *last;
	return (acc >> (sigBits % 8)) == 0;
}

/*
 * Describe what is wrong with a page other than the metapage, in what every
 * page has, or return NULL if nothing is; *done is set when nothing is left
 * to check (a new or deleted page), else the layout's pageproblem checks
 * the rest.
 *
 * A new (all-zero) page is sound: an index is extended before the new page
 * is initialized.
 */
char *
BloomPageCommonProblem(Page page, bool *done)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);
	char	   *problem;

	*done = true;
	if (PageIsNew(page))
		return NULL;
	if ((problem = BloomPageHeaderProblem(page)) != NULL)
		return problem;
	if (BloomPageIsMeta(page))
		return pstrdup("Page is flagged as a metapage.");
	if (BloomPageIsDeleted(page))
	{
		if (opaque->ntuples != 0)
			return psprintf("Deleted page has %u tuples.", opaque->ntuples);
		return NULL;
	}
	*done = false;
	return NULL;
}

/*
 * Is this a data page holding tuples, rather than a new or deleted page or
 * a page of one of the layout's own kinds (pageKinds, of the layout named
 * layoutName: row.h's BloomRowPageIsData and sliced.h's
 * BloomSlicedPageIsData pass them)?  A page that is none of these (a page
 * of a kind the index's layout does not have among them), or whose slot
 * counts do not fit the index's signature length, is corrupted: complain
 * rather than read past it.
 */
bool
BloomPageIsData(Relation index, Page page, BlockNumber blkno, int tuplesPerPage,
				uint16 pageKinds, const char *layoutName)
{
	BloomPageOpaque opaque;

	if (PageIsNew(page))
		return false;
	opaque = BloomPageGetOpaque(page);
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(BloomPageOpaqueData)) ||
		opaque->page_id != BLOOMIDX_PAGE_ID ||
		(opaque->flags & BLOOMIDX_META) != 0)
		BloomReportCorruption(index, blkno,
							  "The page is not a page of a bloomidx index, or is a second metapage.");
	if (opaque->flags & BLOOMIDX_KIND_FLAGS)
	{
		/* A page of the layout's own kinds, unless it has no such kind */
		if ((opaque->flags & BLOOMIDX_KIND_FLAGS & ~pageKinds) != 0)
			BloomReportCorruption(index, blkno,
								  psprintf("Page flags 0x%04X are of a kind of page the %s layout does not have.",
										   (unsigned) opaque->flags, layoutName));
		return false;
	}
	if (opaque->flags & BLOOMIDX_DELETED)
		return false;
	if (opaque->maxtuples != tuplesPerPage || opaque->ntuples > opaque->maxtuples)
		BloomReportCorruption(index, blkno,
							  psprintf("The page has %u of %u slots in use; pages of this index have %d.",
									   opaque->ntuples, opaque->maxtuples,
									   tuplesPerPage));
	return true;
}

/*
 * Is this a data page of the index, with sound slot counts?  Unlike
 * BloomPageIsData, never complains: for a sliced scan reading a pending
 * page that a merge may have freed, and that may be any page by now.
 */
bool
BloomPageIsRowPage(Page page, int tuplesPerPage)
{
	return !PageIsNew(page) &&
		BloomPageGetOpaque(page)->page_id == BLOOMIDX_PAGE_ID &&
		!BloomPageHasFlag(page, BLOOMIDX_META | BLOOMIDX_DELETED |
						  BLOOMIDX_KIND_FLAGS) &&
		BloomPageGetOpaque(page)->maxtuples == tuplesPerPage &&
		BloomPageGetNTuples(page) <= tuplesPerPage;
}
