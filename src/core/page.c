/*-------------------------------------------------------------------------
 *
 * page.c
 *	  The page layer of bloomidx: the metapage, the data pages of the row
 *	  layout (the sliced layout's pending pages too), getting and freeing
 *	  pages.
 *
 * The structs are declared in page.h; the pages proper to the sliced
 * layout are in sliced_format.c, the checks of any page in pagecheck.c.
 * Nothing above the page layer knows where a signature or a TID sits on a
 * page.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/page.c
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

#include "fpmodel.h"
#include "page.h"
#include "signature.h"

/*
 * Read stream callback: the next block of a BloomBlockRange, in order.
 */
BlockNumber
BloomBlockRangeNext(ReadStream *stream, void *range, void *per_buffer_data)
{
	BloomBlockRange *r = (BloomBlockRange *) range;

	if (r->next >= r->end)
		return InvalidBlockNumber;
	return r->next++;
}

/*
 * Number of (signature, TID) slots on a data page for slots of the given
 * length (the signature's, and in format 4 its keys', see page.h).
 */
int
BloomTuplesPerPage(int slotBytes)
{
	return BLOOMIDX_PAGE_FREE_SPACE / (slotBytes + sizeof(ItemPointerData));
}

/*
 * Bytes of a data page's slot in an index of this metapage: the signature,
 * then in format 4 a 32-bit key per column that is not of sets (see
 * page.h).
 */
int
BloomMetaSlotBytes(BloomMetaPage meta)
{
	int			slotBytes = (meta->sigBits + 7) / 8;
	int			i;

	if (meta->version >= BLOOMIDX_FORMAT_SUMMARIES)
		for (i = 0; i < meta->nColumns && i < BLOOMIDX_MAX_COLUMNS; i++)
			if ((meta->bitsPerColumn[i] & BLOOMIDX_COLUMN_SETS) == 0)
				slotBytes += (int) sizeof(uint32);
	return slotBytes;
}

/*
 * Initialize a page with the special space every bloomidx page has.
 */
void
BloomInitPage(Page page, uint16 flags)
{
	BloomPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(BloomPageOpaqueData));
	opaque = BloomPageGetOpaque(page);
	opaque->flags = flags;
	opaque->page_id = BLOOMIDX_PAGE_ID;
}

/*
 * Initialize an empty data page for slots of slotBytes bytes.
 */
void
BloomInitDataPage(Page page, int slotBytes)
{
	BloomPageOpaque opaque;

	BloomInitPage(page, 0);
	opaque = BloomPageGetOpaque(page);
	opaque->ntuples = 0;
	opaque->maxtuples = BloomTuplesPerPage(slotBytes);
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
 * Initialize the metapage for an index of the given shape: the fields every
 * index has, the layouts' fields zeroed (BloomInitMetaAreas then sets
 * theirs).
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
	meta->version = shape->summaries ? BLOOMIDX_FORMAT_SUMMARIES :
		shape->setColumns != 0 ? BLOOMIDX_FORMAT_FOLD : BLOOMIDX_FORMAT_VERSION;
	meta->layout = shape->layout;
	meta->hashScheme = BLOOM_HASH_SCHEME;
	meta->tuplesPerPage = BloomTuplesPerPage(BloomShapeSlotBytes(shape));
	meta->nColumns = shape->nColumns;
	meta->sigBits = shape->sigBits;
	for (i = 0; i < shape->nColumns; i++)
		meta->bitsPerColumn[i] = shape->bitsPerColumn[i] |
			((shape->setColumns & (1U << i)) ? BLOOMIDX_COLUMN_SETS : 0);
	meta->targetFpr = shape->targetFpr;
	for (i = 0; i < shape->nColumns; i++)
		if (shape->setColumns & (1U << i))
		{
			meta->setElements[i] = shape->elements[i];
			meta->setQueryElements[i] = shape->queryElements[i];
		}
	meta->measuredColumns = shape->measuredColumns & shape->setColumns;
	meta->loadFactor = meta->measuredColumns != 0 ? shape->loadFactor : 0;
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
	{
		shape->bitsPerColumn[i] = meta->bitsPerColumn[i];
		if (meta->version >= BLOOMIDX_FORMAT_SETS &&
			(meta->bitsPerColumn[i] & BLOOMIDX_COLUMN_SETS))
		{
			shape->bitsPerColumn[i] &= ~BLOOMIDX_COLUMN_SETS;
			shape->setColumns |= 1U << i;
			shape->elements[i] = meta->setElements[i];
			shape->queryElements[i] = meta->setQueryElements[i];
		}
	}
	shape->measuredColumns = meta->measuredColumns & shape->setColumns;
	shape->loadFactor = meta->loadFactor;
	shape->targetFpr = meta->targetFpr;
	shape->layout = meta->layout;
	shape->legacyFold = meta->version == BLOOMIDX_FORMAT_SETS;
	shape->summaries = meta->version >= BLOOMIDX_FORMAT_SUMMARIES;
	BloomShapeSetQueryBits(shape);
}

/*
 * Set the bits a typical query of each column of a shape tests, the one
 * place they are computed: k for a column of equality, k times the query
 * elements the shape records for a column of sets (k where none are
 * recorded: BloomShapeFillQueryElements reads them from the options of an
 * index built before they were), at most BLOOM_MODEL_MAX_QUERY_BITS.
 */
void
BloomShapeSetQueryBits(BloomShape *shape)
{
	int			i;

	for (i = 0; i < shape->nColumns; i++)
	{
		int64		q = Max(shape->queryElements[i], 1);

		shape->queryBits[i] = (int) Min((int64) shape->bitsPerColumn[i] * q,
										BLOOM_MODEL_MAX_QUERY_BITS);
	}
}

/*
 * Append a (slot, TID) pair to a data page: the slot is the signature, and
 * in format 4 its keys, slotBytes in all.  Returns false if the page is
 * full.
 */
bool
BloomPageAddTuple(Page page, int slotBytes, const uint8 *slot, ItemPointer tid)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);
	int			i = opaque->ntuples;

	if (i >= opaque->maxtuples)
		return false;
	memcpy(BloomPageGetSignature(page, slotBytes, i), slot, slotBytes);
	*BloomPageGetTid(page, slotBytes, i) = *tid;
	opaque->ntuples = i + 1;
	((PageHeader) page)->pd_lower += slotBytes;
	((PageHeader) page)->pd_upper -= sizeof(ItemPointerData);
	return true;
}

/*
 * Remove slot i from a data page of slots slotBytes long by moving the
 * last slot into it.
 */
void
BloomPageDeleteTuple(Page page, int slotBytes, int i)
{
	BloomPageOpaque opaque = BloomPageGetOpaque(page);
	int			last = opaque->ntuples - 1;

	Assert(i >= 0 && i <= last);
	if (i != last)
	{
		memcpy(BloomPageGetSignature(page, slotBytes, i),
			   BloomPageGetSignature(page, slotBytes, last), slotBytes);
		*BloomPageGetTid(page, slotBytes, i) = *BloomPageGetTid(page, slotBytes, last);
	}
	memset(BloomPageGetSignature(page, slotBytes, last), 0, slotBytes);
	memset(BloomPageGetTid(page, slotBytes, last), 0, sizeof(ItemPointerData));
	opaque->ntuples = last;
	((PageHeader) page)->pd_lower -= slotBytes;
	((PageHeader) page)->pd_upper += sizeof(ItemPointerData);
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

/* Free pages BloomNewBuffers passes over, locked by someone else, at most */
#define BLOOM_NEWBUFFER_SKIPS	16

/*
 * Get a buffer for a new page, exclusively locked: see BloomNewBuffers.
 */
Buffer
BloomNewBuffer(Relation index)
{
	Buffer		buffer;

	BloomNewBuffers(index, &buffer, 1);
	return buffer;
}

/*
 * Get buffers for n new pages, exclusively locked: recycled pages from the
 * free space map while it has some, then new blocks at the end, added
 * under one relation extension lock.
 *
 * A free page that someone else holds locked (the checkpointer or the
 * background writer writing it out, a scan finding it freed) is passed
 * over rather than waited for, as B-trees do, but recorded as free again
 * afterwards: otherwise the free space map would forget it until the next
 * VACUUM, and the index would grow, by how often its pages happen to be
 * written out while being reused.
 */
void
BloomNewBuffers(Relation index, Buffer *buffers, int n)
{
	BlockNumber skipped[BLOOM_NEWBUFFER_SKIPS];
	int			nskipped = 0;
	int			got = 0;
	bool		needLock;
	int			i;

	/*
	 * First, try pages the free space map knows to be recyclable: asking
	 * for the largest request it takes matches only wholly free pages.
	 * Once it has none, it is not asked again for the others.
	 */
	while (got < n && nskipped < BLOOM_NEWBUFFER_SKIPS)
	{
		BlockNumber blkno = GetPageWithFreeSpace(index, MaxHeapTupleSize);
		Buffer		buffer;

		if (blkno == InvalidBlockNumber)
			break;
		RecordPageWithFreeSpace(index, blkno, 0);

		buffer = ReadBuffer(index, blkno);

		/* Someone else may have taken it meanwhile: check it is free */
		if (ConditionalLockBuffer(buffer))
		{
			Page		page = BufferGetPage(buffer);

			if (PageIsNew(page) || BloomPageIsDeleted(page))
			{
				buffers[got++] = buffer;
				continue;
			}
			LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		}
		else
			skipped[nskipped++] = blkno;
		ReleaseBuffer(buffer);
	}

	/* Extend the relation by the rest */
	if (got < n)
	{
		needLock = !RELATION_IS_LOCAL(index);
		if (needLock)
			LockRelationForExtension(index, ExclusiveLock);
		for (; got < n; got++)
		{
			buffers[got] = ReadBuffer(index, P_NEW);
			LockBuffer(buffers[got], BUFFER_LOCK_EXCLUSIVE);
		}
		if (needLock)
			UnlockRelationForExtension(index, ExclusiveLock);
	}

	/* The pages passed over are free still, as far as we know */
	for (i = 0; i < nskipped; i++)
	{
		RecordFreeIndexPage(index, skipped[i]);
		FreeSpaceMapVacuumRange(index, skipped[i], skipped[i] + 1);
	}
}
