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
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "page.h"
#include "signature.h"

/* Bytes available for tuples on a data page */
#define BLOOMIDX_PAGE_FREE_SPACE \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(BloomPageOpaqueData)))

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
 *
 * pd_lower covers all the slots, so that generic WAL treats them as data.
 */
void
BloomInitDataPage(Page page, int sigBytes)
{
	BloomPageOpaque opaque;
	int			maxtuples = BloomTuplesPerPage(sigBytes);

	BloomInitPage(page, 0);
	opaque = BloomPageGetOpaque(page);
	opaque->ntuples = 0;
	opaque->maxtuples = maxtuples;
	((PageHeader) page)->pd_lower =
		MAXALIGN(SizeOfPageHeaderData) + maxtuples * (sigBytes + sizeof(ItemPointerData));
	/* Zeroed slots keep the page image compressible and deterministic */
	memset(PageGetContents(page), 0, maxtuples * (sigBytes + sizeof(ItemPointerData)));
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
	meta->layout = BLOOMIDX_LAYOUT_ROW;
	meta->hashScheme = BLOOM_HASH_SCHEME;
	meta->tuplesPerPage = BloomTuplesPerPage(shape->sigBytes);
	meta->nColumns = shape->nColumns;
	meta->sigBits = shape->sigBits;
	for (i = 0; i < shape->nColumns; i++)
		meta->bitsPerColumn[i] = shape->bitsPerColumn[i];
	meta->targetFpr = shape->targetFpr;
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
		meta->layout != BLOOMIDX_LAYOUT_ROW ||
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
 * Get a buffer for a new page, exclusively locked: a recycled page from the
 * free space map if there is one, else a new block at the end.
 */
Buffer
BloomNewBuffer(Relation index)
{
	Buffer		buffer;
	bool		needLock;

	/* First, try a page the free space map knows to be recyclable */
	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(index);

		if (blkno == InvalidBlockNumber)
			break;

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
