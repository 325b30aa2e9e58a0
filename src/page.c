/*-------------------------------------------------------------------------
 *
 * page.c
 *	  The on-disk format of bloomidx: metapage and data page layout.
 *
 * Nothing outside this file (and the inline accessors of page.h) knows
 * where a signature or a TID sits on a page.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "page.h"
#include "signature.h"

/*
 * Number of (signature, TID) slots on a data page for signatures of the
 * given length.
 */
int
BloomTuplesPerPage(int sigBytes)
{
	return BLOOMIDX_PAGE_FREE_SPACE / (sigBytes + sizeof(ItemPointerData));
}

/*
 * Initialize a page with the special space every bloomidx page has.
 */
static void
BloomInitPage(Page page, uint16 flags)
{
	BloomPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(BloomPageOpaqueData));
	opaque = BloomPageGetOpaque(page);
	opaque->flags = flags;
	opaque->page_id = BLOOMIDX_PAGE_ID;
}

/*
 * Initialize an empty data page for signatures of sigBytes bytes.
 */
void
BloomInitDataPage(Page page, int sigBytes)
{
	BloomPageOpaque opaque;

	BloomInitPage(page, 0);
	opaque = BloomPageGetOpaque(page);
	opaque->ntuples = 0;
	opaque->maxtuples = BloomTuplesPerPage(sigBytes);
}

/*
 * Initialize a page as deleted: empty, waiting for reuse.
 */
void
BloomInitDeletedPage(Page page)
{
	BloomInitPage(page, BLOOMIDX_DELETED);
}

/*
 * Initialize a page of the sliced layout with its tag: a slice (all bits
 * clear), a TID map (no TIDs), a stripe page (no pages yet) for
 * signatures of sigBits bits, or a stripe-list page (no stripes).  The
 * whole contents area counts as data for generic WAL.
 */
void
BloomInitSlicedPage(Page page, uint16 flag, int sigBits, uint32 tag)
{
	BloomPageOpaque opaque;

	BloomInitPage(page, flag);
	((PageHeader) page)->pd_lower = BLCKSZ - MAXALIGN(sizeof(BloomPageOpaqueData));
	opaque = BloomPageGetOpaque(page);
	opaque->ntuples = (uint16) (tag & 0xFFFF);
	opaque->maxtuples = (uint16) (tag >> 16);
	if (flag == BLOOMIDX_STRIPE)
	{
		BloomStripe stripe = BloomPageGetStripe(page);
		int			i;

		for (i = 0; i < BLOOMIDX_STRIPE_TIDPAGES; i++)
			stripe->tidPages[i] = InvalidBlockNumber;
		for (i = 0; i < sigBits; i++)
			stripe->slices[i] = InvalidBlockNumber;
	}
	else if (flag == BLOOMIDX_TIDMAP)
		BloomPageGetTidMap(page)->offsetBits = 1;
	else if (flag == BLOOMIDX_STRIPELIST)
	{
		BlockNumber *list = BloomPageGetStripeList(page);
		int			i;

		for (i = 0; i < BLOOMIDX_STRIPELIST_ENTRIES; i++)
			list[i] = InvalidBlockNumber;
	}
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
 * Is this a live page of the sliced layout of the given kind and tag?
 */
bool
BloomPageIsSliced(Page page, uint16 flag, uint32 tag)
{
	BloomPageOpaque opaque;

	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(BloomPageOpaqueData)))
		return false;
	opaque = BloomPageGetOpaque(page);
	if (opaque->page_id != BLOOMIDX_PAGE_ID ||
		(opaque->flags & (BLOOMIDX_DELETED | BLOOMIDX_META | BLOOMIDX_SLICED_FLAGS)) != flag ||
		BloomPageGetTag(page) != tag)
		return false;
	/* A TID map must not send readers past its end */
	return flag != BLOOMIDX_TIDMAP || BloomTidMapIsSane(BloomPageGetTidMap(page));
}

/*
 * Does the header of a TID map describe entries that fit in its page?
 */
bool
BloomTidMapIsSane(BloomTidMap map)
{
	int			width = map->blockBits + map->offsetBits;

	return map->blockBits <= 32 && map->offsetBits >= 1 && map->offsetBits <= 16 &&
		(uint64) map->nrows * width <= BLOOMIDX_TIDMAP_BITS &&
		map->firstRow + map->nrows <= BLOOMIDX_STRIPE_ROWS;
}

/* Bits needed to store values 0 .. x */
static int
BloomBitsFor(uint32 x)
{
	return x == 0 ? 0 : pg_leftmost_one_pos32(x) + 1;
}

/*
 * Pack as many of the ntids TIDs as fit into a TID-map page (initialized
 * by BloomInitSlicedPage, its tag kept), as rows firstRow onwards; returns
 * how many, at least one.  Invalid TIDs stand for removed rows.
 */
int
BloomTidMapPack(Page page, int firstRow, const ItemPointerData *tids, int ntids)
{
	BloomTidMap map = BloomPageGetTidMap(page);
	BlockNumber minBlock = InvalidBlockNumber;
	BlockNumber maxBlock = 0;
	OffsetNumber maxOffset = FirstOffsetNumber;
	int			n;
	int			i;
	int			width;

	/* Take TIDs while the widths their range needs leave room for them */
	for (n = 0; n < ntids; n++)
	{
		const ItemPointerData *tid = &tids[n];
		BlockNumber lo = minBlock,
					hi = maxBlock;
		OffsetNumber off = maxOffset;

		if (ItemPointerIsValid(tid))
		{
			lo = Min(lo, ItemPointerGetBlockNumber(tid));
			hi = Max(hi, ItemPointerGetBlockNumber(tid));
			off = Max(off, ItemPointerGetOffsetNumber(tid));
		}
		width = BloomBitsFor(lo == InvalidBlockNumber ? 0 : hi - lo) + BloomBitsFor(off);
		if ((uint64) (n + 1) * width > BLOOMIDX_TIDMAP_BITS)
			break;
		minBlock = lo;
		maxBlock = hi;
		maxOffset = off;
	}
	Assert(n > 0 || ntids == 0);

	memset(map->packed, 0, BLOOMIDX_PAGE_FREE_SPACE - offsetof(BloomTidMapData, packed));
	map->firstRow = (uint16) firstRow;
	map->nrows = (uint16) n;
	map->baseBlock = minBlock == InvalidBlockNumber ? 0 : minBlock;
	map->blockBits = BloomBitsFor(minBlock == InvalidBlockNumber ? 0 : maxBlock - minBlock);
	map->offsetBits = BloomBitsFor(maxOffset);
	width = map->blockBits + map->offsetBits;
	for (i = 0; i < n; i++)
	{
		uint64		bit = (uint64) i * width;
		uint64		x = 0;
		uint8	   *p = map->packed + bit / 8;

		if (ItemPointerIsValid(&tids[i]))
			x = ((uint64) (ItemPointerGetBlockNumber(&tids[i]) - map->baseBlock)
				 << map->offsetBits) | ItemPointerGetOffsetNumber(&tids[i]);
		BloomStoreWord(p, BloomLoadWord(p) | (x << (bit % 8)));
	}
	return n;
}

/*
 * All the TIDs of a TID-map page, removed rows as invalid TIDs; returns
 * how many.
 */
int
BloomTidMapUnpack(Page page, ItemPointerData *tids)
{
	BloomTidMap map = BloomPageGetTidMap(page);
	int			i;

	for (i = 0; i < map->nrows; i++)
		BloomTidMapGet(map, i, &tids[i]);
	return map->nrows;
}

/*
 * Mark entry i of a TID-map page removed: its offset number becomes 0.
 */
void
BloomTidMapKill(BloomTidMap map, int i)
{
	int			width = map->blockBits + map->offsetBits;
	uint64		bit = (uint64) i * width;
	uint8	   *p = map->packed + bit / 8;
	uint64		mask = ((UINT64CONST(1) << map->offsetBits) - 1) << (bit % 8);

	BloomStoreWord(p, BloomLoadWord(p) & ~mask);
}

/*
 * What is wrong with the header of a TID-map page, or NULL.
 */
char *
BloomTidMapProblem(Page page)
{
	BloomTidMap map = BloomPageGetTidMap(page);
	int			width = map->blockBits + map->offsetBits;

	if (BloomTidMapIsSane(map))
		return NULL;
	if (map->blockBits > 32 || map->offsetBits < 1 || map->offsetBits > 16)
		return psprintf("TID map packs TIDs in %u block and %u offset bits.",
						map->blockBits, map->offsetBits);
	return psprintf("TID map holds %u rows from row %u in %d bits each.",
					map->nrows, map->firstRow, width);
}

/*
 * Initialize the metapage for an index of the given shape.
 */
void
BloomInitMetaPage(Page page, const BloomShape *shape)
{
	BloomMetaPage meta;
	int			i;

	BloomInitPage(page, BLOOMIDX_META);
	meta = BloomPageGetMeta(page);
	memset(meta, 0, sizeof(BloomMetaPageData));
	meta->magic = BLOOMIDX_MAGIC;
	meta->version = BLOOMIDX_FORMAT_VERSION;
	meta->layout = shape->layout;
	meta->hashScheme = BLOOM_HASH_SCHEME;
	meta->tuplesPerPage = BloomTuplesPerPage(shape->sigBytes);
	meta->nColumns = shape->nColumns;
	meta->sigBits = shape->sigBits;
	for (i = 0; i < shape->nColumns; i++)
		meta->bitsPerColumn[i] = shape->bitsPerColumn[i];
	meta->targetFpr = shape->targetFpr;
	for (i = 0; i < BLOOMIDX_MAX_STRIPELISTS; i++)
		meta->stripeLists[i] = InvalidBlockNumber;
	((PageHeader) page)->pd_lower += sizeof(BloomMetaPageData);
}

/*
 * Read the signature shape frozen in a metapage.
 */
void
BloomMetaGetShape(BloomMetaPage meta, BloomShape *shape)
{
	int			i;

	memset(shape, 0, sizeof(BloomShape));
	shape->nColumns = meta->nColumns;
	shape->sigBits = meta->sigBits;
	shape->sigBytes = (meta->sigBits + 7) / 8;
	shape->sigWords = (meta->sigBits + 63) / 64;
	for (i = 0; i < meta->nColumns; i++)
		shape->bitsPerColumn[i] = meta->bitsPerColumn[i];
	shape->targetFpr = meta->targetFpr;
	shape->layout = meta->layout;
}

/*
 * Complain unless page is the metapage of a bloomidx index this code can
 * read.
 */
void
BloomCheckMetaPage(Relation index, Page page)
{
	BloomMetaPage meta = BloomPageGetMeta(page);

	if (PageIsNew(page) || !BloomPageIsMeta(page) ||
		BloomPageGetOpaque(page)->page_id != BLOOMIDX_PAGE_ID ||
		meta->magic != BLOOMIDX_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a bloomidx index",
						RelationGetRelationName(index)),
				 errdetail("Block %u has no valid bloomidx metapage.",
						   BLOOMIDX_METAPAGE_BLKNO)));
	if (meta->version != BLOOMIDX_FORMAT_VERSION ||
		(meta->layout != BLOOMIDX_LAYOUT_ROW && meta->layout != BLOOMIDX_LAYOUT_SLICED) ||
		meta->hashScheme != BLOOM_HASH_SCHEME)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloomidx index \"%s\" has format version %u, layout %u and hash scheme %u, which this build cannot read",
						RelationGetRelationName(index), meta->version,
						meta->layout, meta->hashScheme),
				 errhint("REINDEX the index.")));
	if (meta->nColumns < 1 || meta->nColumns > BLOOMIDX_MAX_COLUMNS ||
		meta->sigBits < BLOOMIDX_MIN_LENGTH || meta->sigBits > BLOOMIDX_MAX_LENGTH ||
		meta->tuplesPerPage != BloomTuplesPerPage((meta->sigBits + 7) / 8) ||
		meta->nFree > BLOOMIDX_FREELIST_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("metapage of index \"%s\" is corrupted",
						RelationGetRelationName(index)),
				 errdetail("Block %u has an invalid signature shape or free list.",
						   BLOOMIDX_METAPAGE_BLKNO)));
}

/*
 * Append a (signature, TID) pair to a data page.  Returns false if the page
 * is full.
 */
bool
BloomPageAddTuple(Page page, int sigBytes, const uint8 *sig, ItemPointer tid)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);
	int			i = opaque->ntuples;

	if (i >= opaque->maxtuples)
		return false;
	memcpy(BloomPageGetSignature(page, sigBytes, i), sig, sigBytes);
	*BloomPageGetTid(page, sigBytes, i) = *tid;
	opaque->ntuples = i + 1;
	((PageHeader) page)->pd_lower += sigBytes;
	((PageHeader) page)->pd_upper -= sizeof(ItemPointerData);
	return true;
}

/*
 * Remove slot i from a data page by moving the last slot into it.
 */
void
BloomPageDeleteTuple(Page page, int sigBytes, int i)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);
	int			last = opaque->ntuples - 1;

	Assert(i >= 0 && i <= last);
	if (i != last)
	{
		memcpy(BloomPageGetSignature(page, sigBytes, i),
			   BloomPageGetSignature(page, sigBytes, last), sigBytes);
		*BloomPageGetTid(page, sigBytes, i) = *BloomPageGetTid(page, sigBytes, last);
	}
	memset(BloomPageGetSignature(page, sigBytes, last), 0, sigBytes);
	memset(BloomPageGetTid(page, sigBytes, last), 0, sizeof(ItemPointerData));
	opaque->ntuples = last;
	((PageHeader) page)->pd_lower -= sigBytes;
	((PageHeader) page)->pd_upper += sizeof(ItemPointerData);
}

/*
 * Remember a data page with free slots in the metapage's list, unless it is
 * there already or the list is full.
 */
void
BloomMetaAddFreePage(BloomMetaPage meta, BlockNumber blkno)
{
	int			i;

	for (i = meta->freeStart; i < meta->nFree; i++)
	{
		if (meta->freePages[i] == blkno)
			return;
	}
	if (meta->nFree < BLOOMIDX_FREELIST_SIZE)
		meta->freePages[meta->nFree++] = blkno;
	else if (meta->freeStart > 0)
	{
		/* Reclaim the entries already used up */
		memmove(meta->freePages, meta->freePages + meta->freeStart,
				sizeof(BlockNumber) * (meta->nFree - meta->freeStart));
		meta->nFree -= meta->freeStart;
		meta->freeStart = 0;
		meta->freePages[meta->nFree++] = blkno;
	}
}

/*
 * Free space the free space map records for a page: a recycled page counts
 * as wholly free (the FSM's top category, which no data page reaches); a
 * data page offers the bytes of its free slots.
 */
void
BloomRecordFreeSpace(Relation index, BlockNumber blkno, Page page, int sigBytes)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);

	RecordPageWithFreeSpace(index, blkno,
							(Size) (opaque->maxtuples - opaque->ntuples) *
							(sigBytes + sizeof(ItemPointerData)));
}

/*
 * Free the page in buffer (locked exclusively by the caller): make it a
 * deleted page, WAL-logged, and tell the free space map, upper levels
 * included, so that BloomNewBuffer finds it at once.
 */
void
BloomFreePage(Relation index, Buffer buffer)
{
	GenericXLogState *xlogState = GenericXLogStart(index);
	BlockNumber blkno = BufferGetBlockNumber(buffer);

	BloomInitDeletedPage(GenericXLogRegisterBuffer(xlogState, buffer,
												   GENERIC_XLOG_FULL_IMAGE));
	GenericXLogFinish(xlogState);
	RecordFreeIndexPage(index, blkno);
	FreeSpaceMapVacuumRange(index, blkno, blkno + 1);
}

/*
 * Get a buffer for a new page, exclusively locked: a recycled page from the
 * free space map if there is one, else a new block at the end.
 */
Buffer
BloomNewBuffer(Relation index)
{
	Buffer		buffer;
	bool		needLock;

	/*
	 * First, try a page the free space map knows to be recyclable: asking
	 * for the largest request it takes matches only wholly free pages.
	 */
	for (;;)
	{
		BlockNumber blkno = GetPageWithFreeSpace(index, MaxHeapTupleSize);

		if (blkno == InvalidBlockNumber)
			break;
		RecordPageWithFreeSpace(index, blkno, 0);

		buffer = ReadBuffer(index, blkno);

		/* Someone else may have taken it meanwhile: check it is free */
		if (ConditionalLockBuffer(buffer))
		{
			Page		page = BufferGetPage(buffer);

			if (PageIsNew(page) || BloomPageIsDeleted(page))
				return buffer;
			LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buffer);
	}

	/* Extend the relation */
	needLock = !RELATION_IS_LOCAL(index);
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buffer = ReadBuffer(index, P_NEW);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);

	return buffer;
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
 * Free-list entries are checked against the index's length by the caller.
 */
char *
BloomMetaPageProblem(Page page, bool *unsupported)
{
	BloomMetaPage meta = BloomPageGetMeta(page);
	char	   *problem;
	uint64		totalBits = 0;
	int			i;

	*unsupported = false;
	if (PageIsNew(page))
		return pstrdup("The metapage is not initialized.");
	if ((problem = BloomPageHeaderProblem(page)) != NULL)
		return problem;
	if (!BloomPageIsMeta(page))
		return pstrdup("Block 0 is not flagged as the metapage.");
	if (((PageHeader) page)->pd_lower < MAXALIGN(SizeOfPageHeaderData) + sizeof(BloomMetaPageData))
		return psprintf("pd_lower %u does not cover the metapage contents.",
						(unsigned) ((PageHeader) page)->pd_lower);
	if (meta->magic != BLOOMIDX_MAGIC)
		return psprintf("Magic number is 0x%08X, not 0x%08X.",
						meta->magic, BLOOMIDX_MAGIC);
	if (meta->version != BLOOMIDX_FORMAT_VERSION ||
		(meta->layout != BLOOMIDX_LAYOUT_ROW && meta->layout != BLOOMIDX_LAYOUT_SLICED) ||
		meta->hashScheme != BLOOM_HASH_SCHEME)
	{
		*unsupported = true;
		return psprintf("Format version %u, layout %u and hash scheme %u; this build reads version %u, layout %u and hash scheme %u.",
						meta->version, meta->layout, meta->hashScheme,
						BLOOMIDX_FORMAT_VERSION, BLOOMIDX_LAYOUT_ROW,
						BLOOM_HASH_SCHEME);
	}
	if (meta->nColumns < 1 || meta->nColumns > BLOOMIDX_MAX_COLUMNS)
		return psprintf("Column count %u is not between 1 and %d.",
						meta->nColumns, BLOOMIDX_MAX_COLUMNS);
	if (meta->sigBits < BLOOMIDX_MIN_LENGTH || meta->sigBits > BLOOMIDX_MAX_LENGTH ||
		meta->sigBits % 16 != 0)
		return psprintf("Signature length %u is not a multiple of 16 between %d and %d.",
						meta->sigBits, BLOOMIDX_MIN_LENGTH, BLOOMIDX_MAX_LENGTH);
	if (meta->tuplesPerPage != BloomTuplesPerPage(meta->sigBits / 8))
		return psprintf("Tuples per page is %u, not %d.",
						meta->tuplesPerPage, BloomTuplesPerPage(meta->sigBits / 8));
	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
	{
		if (i < meta->nColumns &&
			(meta->bitsPerColumn[i] < 1 || meta->bitsPerColumn[i] > BLOOMIDX_MAX_COLUMN_BITS))
			return psprintf("Column %d has %u bits, not between 1 and %d.",
							i + 1, meta->bitsPerColumn[i], BLOOMIDX_MAX_COLUMN_BITS);
		if (i >= meta->nColumns && meta->bitsPerColumn[i] != 0)
			return psprintf("Column %d of %u has %u bits.",
							i + 1, meta->nColumns, meta->bitsPerColumn[i]);
		totalBits += meta->bitsPerColumn[i];
	}
	if (!(meta->targetFpr == 0 ||
		  (meta->targetFpr >= BLOOMIDX_MIN_FPR && meta->targetFpr <= BLOOMIDX_MAX_FPR)))
		return psprintf("Target false-positive rate %g is out of range.",
						meta->targetFpr);
	if (meta->statBitsSet > meta->statTuples * Min(totalBits, meta->sigBits))
		return psprintf("Fill statistics count " UINT64_FORMAT " bits set in " UINT64_FORMAT " signatures of at most " UINT64_FORMAT " bits set.",
						meta->statBitsSet, meta->statTuples,
						Min(totalBits, (uint64) meta->sigBits));
	if (meta->nFree > BLOOMIDX_FREELIST_SIZE || meta->freeStart > meta->nFree)
		return psprintf("Free list has %u entries from %u, more than %d.",
						meta->nFree, meta->freeStart, BLOOMIDX_FREELIST_SIZE);
	return NULL;
}

/*
 * Describe what is wrong with a page other than the metapage of an index of
 * the given shape, or return NULL if nothing is.
 *
 * A new (all-zero) page is sound: an index is extended before the new page
 * is initialized.  Heap TIDs are checked for validity, not against the
 * heap's length, which the caller knows.
 */
char *
BloomPageProblem(Page page, const BloomShape *shape)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);
	int			sigBytes = shape->sigBytes;
	int			maxBitsSet = 0;
	char	   *problem;
	int			i;

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
	if (BloomPageHasFlag(page, BLOOMIDX_SLICED_FLAGS))
	{
		if (shape->layout != BLOOMIDX_LAYOUT_SLICED)
			return pstrdup("Page of the sliced layout in an index of the row layout.");
		if (((PageHeader) page)->pd_lower != BLCKSZ - MAXALIGN(sizeof(BloomPageOpaqueData)))
			return psprintf("pd_lower %u does not cover the page.",
							(unsigned) ((PageHeader) page)->pd_lower);
		if (pg_popcount32(opaque->flags & BLOOMIDX_SLICED_FLAGS) != 1)
			return psprintf("Page has flags 0x%04X of more than one kind of page.",
							opaque->flags);
		if (BloomPageHasFlag(page, BLOOMIDX_TIDMAP))
			return BloomTidMapProblem(page);
		return NULL;
	}

	if (opaque->maxtuples != BloomTuplesPerPage(sigBytes))
		return psprintf("Page has %u slots, not %d.",
						opaque->maxtuples, BloomTuplesPerPage(sigBytes));
	if (opaque->ntuples > opaque->maxtuples)
		return psprintf("Page has %u tuples in %u slots.",
						opaque->ntuples, opaque->maxtuples);
	if (((PageHeader) page)->pd_lower !=
		MAXALIGN(SizeOfPageHeaderData) + opaque->ntuples * sigBytes ||
		((PageHeader) page)->pd_upper !=
		((PageHeader) page)->pd_special - opaque->ntuples * sizeof(ItemPointerData))
		return psprintf("pd_lower %u and pd_upper %u do not bound the %u signatures and TIDs.",
						(unsigned) ((PageHeader) page)->pd_lower,
						(unsigned) ((PageHeader) page)->pd_upper,
						(unsigned) opaque->ntuples);

	for (i = 0; i < shape->nColumns; i++)
		maxBitsSet += shape->bitsPerColumn[i];
	maxBitsSet = Min(maxBitsSet, shape->sigBits);

	for (i = 0; i < opaque->ntuples; i++)
	{
		ItemPointer tid = BloomPageGetTid(page, sigBytes, i);
		OffsetNumber offnum = ItemPointerGetOffsetNumberNoCheck(tid);
		uint64		bitsSet;

		if (ItemPointerGetBlockNumberNoCheck(tid) == InvalidBlockNumber ||
			offnum < FirstOffsetNumber || offnum > MaxHeapTuplesPerPage)
			return psprintf("Tuple %d points to invalid heap TID (%u,%u).",
							i, ItemPointerGetBlockNumberNoCheck(tid), offnum);
		bitsSet = BloomCountBits(BloomPageGetSignature(page, sigBytes, i), sigBytes);
		if (bitsSet < 1 || bitsSet > maxBitsSet)
			return psprintf("Tuple %d has " UINT64_FORMAT " bits set, not between 1 and %d.",
							i, bitsSet, maxBitsSet);
	}
	return NULL;
}

/*
 * Is this a data page holding tuples, rather than a new or deleted page?
 * A page that is neither, or whose slot counts do not fit the index's
 * signature length, is corrupted: complain rather than read past it.
 */
bool
BloomPageIsData(Relation index, Page page, BlockNumber blkno, int tuplesPerPage)
{
	BloomPageOpaque opaque;

	if (PageIsNew(page))
		return false;
	opaque = BloomPageGetOpaque(page);
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(BloomPageOpaqueData)) ||
		opaque->page_id != BLOOMIDX_PAGE_ID ||
		(opaque->flags & BLOOMIDX_META) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
	if (opaque->flags & (BLOOMIDX_DELETED | BLOOMIDX_SLICED_FLAGS))
		return false;
	if (opaque->maxtuples != tuplesPerPage || opaque->ntuples > opaque->maxtuples)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno),
				 errdetail("The page has %u of %u slots in use; pages of this index have %d.",
						   opaque->ntuples, opaque->maxtuples, tuplesPerPage),
				 errhint("Please REINDEX it.")));
	return true;
}
