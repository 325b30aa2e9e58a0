/*-------------------------------------------------------------------------
 *
 * row_insert.c
 *	  Inserting a row into an index of the row layout.
 *
 * The metapage lists data pages with free slots.  An insert first tries the
 * first listed page holding only that page's lock.  If it is full, it locks
 * the metapage and walks the list; as a last resort it releases the
 * metapage, takes a recycled or new page, and then lists that page.
 * Locks are always taken metapage first, then a data page; no one waits
 * for the metapage while holding a data page.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/row/row_insert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "row.h"

/*
 * Lock block blkno exclusively and return its buffer if it is a data page
 * with a free slot; otherwise return InvalidBuffer, holding nothing.
 */
static Buffer
BloomLockPageWithRoom(Relation index, BloomState state, BlockNumber blkno)
{
	Buffer		buffer = BloomReadBufferRecent(index, blkno, NULL);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (BloomRowPageIsData(index, BufferGetPage(buffer), blkno, state->tuplesPerPage) &&
		BloomPageHasFreeSlot(BufferGetPage(buffer)))
		return buffer;
	UnlockReleaseBuffer(buffer);
	return InvalidBuffer;
}

/*
 * Add the tuple to a locked data page with a free slot, in the WAL record
 * being built, and release the page.
 */
static void
BloomAddToLockedPage(Relation index, GenericXLogState *xlogState,
					 BloomState state,
					 Buffer buffer, const uint8 *sig, ItemPointer tid)
{
	Page		page;

	BloomCheckDataPageBounds(index, BufferGetPage(buffer),
							 BufferGetBlockNumber(buffer), state->shape.sigBytes);
	page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
	if (!BloomPageAddTuple(page, state->shape.sigBytes, sig, tid))
		elog(ERROR, "bloomidx page %u has no free slot",
			 BufferGetBlockNumber(buffer));
	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(buffer);
}

/* Busy pages BloomFindFreeSlot passes over, at most */
#define BLOOM_FINDSLOT_SKIPS	16

/*
 * A page found through the free space map, locked exclusively: a data page
 * with a free slot, or a recyclable page (to be initialized); or
 * InvalidBuffer.  Pages the map overrates are corrected; a page someone
 * else holds locked is passed over but keeps its free space in the map
 * (see BloomNewBuffer).
 */
static Buffer
BloomFindFreeSlot(Relation index, BloomState state)
{
	Size		needed = state->shape.sigBytes + sizeof(ItemPointerData);
	Buffer		found = InvalidBuffer;
	BlockNumber skipped[BLOOM_FINDSLOT_SKIPS];
	Size		skippedSpace[BLOOM_FINDSLOT_SKIPS];
	int			nskipped = 0;
	int			i;

	while (nskipped < BLOOM_FINDSLOT_SKIPS)
	{
		BlockNumber blkno = GetPageWithFreeSpace(index, needed);
		Buffer		buffer;

		if (blkno == InvalidBlockNumber)
			break;
		buffer = ReadBuffer(index, blkno);
		if (ConditionalLockBuffer(buffer))
		{
			Page		page = BufferGetPage(buffer);

			if (PageIsNew(page) ||
				BloomPageIsDeleted(page) ||
				(BloomRowPageIsData(index, page, blkno, state->tuplesPerPage) &&
				 BloomPageHasFreeSlot(page)))
			{
				found = buffer;
				break;
			}
			LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		}
		else
		{
			skipped[nskipped] = blkno;
			skippedSpace[nskipped++] = GetRecordedFreeSpace(index, blkno);
		}
		ReleaseBuffer(buffer);
		/* Full or busy: skip it */
		RecordPageWithFreeSpace(index, blkno, 0);
	}

	for (i = 0; i < nskipped; i++)
	{
		RecordPageWithFreeSpace(index, skipped[i], skippedSpace[i]);
		FreeSpaceMapVacuumRange(index, skipped[i], skipped[i] + 1);
	}
	return found;
}

/*
 * Insert the signature of one heap row, with nbitsSet bits set (the row's
 * values and mixes are not kept).
 */
void
BloomRowInsert(Relation index, BloomState state, const uint8 *sig,
			   int nbitsSet, const uint64 *mixed, Datum *values, bool *isnull,
			   ItemPointer ht_ctid)
{
	Buffer		metabuf;
	BloomMetaPage meta;
	BlockNumber blkno = InvalidBlockNumber;
	GenericXLogState *xlogState;
	Buffer		buffer;
	Page		page;

	/* Fast path: the first page of the free list, without the meta lock */
	metabuf = BloomReadBufferRecent(index, BLOOMIDX_METAPAGE_BLKNO, NULL);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	BloomRowCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	if (BloomRowMeta(meta)->freeStart < BloomRowMeta(meta)->nFree)
		blkno = BloomRowMeta(meta)->freePages[BloomRowMeta(meta)->freeStart];
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	if (blkno != InvalidBlockNumber &&
		(buffer = BloomLockPageWithRoom(index, state, blkno)) != InvalidBuffer)
	{
		BloomAddToLockedPage(index, GenericXLogStart(index), state, buffer, sig,
							 ht_ctid);
		ReleaseBuffer(metabuf);
		return;
	}

	/*
	 * Slow path: walk the free list under the metapage lock.  Pages found
	 * full are dropped from the list in the same WAL record as the insert.
	 */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomRowCheckMeta(index, BufferGetPage(metabuf));
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	while (BloomRowMeta(meta)->freeStart < BloomRowMeta(meta)->nFree)
	{
		BlockNumber candidate = BloomRowMeta(meta)->freePages[BloomRowMeta(meta)->freeStart];

		if (candidate != blkno &&
			(buffer = BloomLockPageWithRoom(index, state, candidate)) != InvalidBuffer)
		{
			BloomAddToLockedPage(index, xlogState, state, buffer, sig, ht_ctid);
			UnlockReleaseBuffer(metabuf);
			return;
		}
		blkno = InvalidBlockNumber;
		BloomRowMeta(meta)->freeStart++;
	}

	/* Every listed page is full: the list is used up */
	if (BloomRowMeta(meta)->nFree > 0)
	{
		BloomRowMeta(meta)->nFree = 0;
		BloomRowMeta(meta)->freeStart = 0;
		GenericXLogFinish(xlogState);
	}
	else
		GenericXLogAbort(xlogState);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/*
	 * A page the free space map knows to have a free slot (VACUUM records
	 * them all), else a recycled or new page.  It is found, and the index
	 * extended, without the metapage lock, as B-tree and hash indexes
	 * extend theirs, so that other inserts and scans do not queue behind
	 * the relation extension lock.  Two inserts that both find the list
	 * used up may then both take a page; each is listed below.
	 */
	buffer = BloomFindFreeSlot(index, state);
	if (!BufferIsValid(buffer))
		buffer = BloomNewBuffer(index);
	xlogState = GenericXLogStart(index);
	if (PageIsNew(BufferGetPage(buffer)) || BloomPageIsDeleted(BufferGetPage(buffer)))
	{
		page = GenericXLogRegisterBuffer(xlogState, buffer, GENERIC_XLOG_FULL_IMAGE);
		BloomInitDataPage(page, state->shape.sigBytes);
	}
	else
	{
		BloomCheckDataPageBounds(index, BufferGetPage(buffer),
								 BufferGetBlockNumber(buffer), state->shape.sigBytes);
		page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
	}
	if (!BloomPageAddTuple(page, state->shape.sigBytes, sig, ht_ctid))
		elog(ERROR, "bloomidx page %u has no free slot",
			 BufferGetBlockNumber(buffer));
	GenericXLogFinish(xlogState);
	blkno = BufferGetBlockNumber(buffer);
	UnlockReleaseBuffer(buffer);

	/*
	 * List the page for the next inserts, and keep the fill statistics
	 * roughly current with a sample.  A crash before this record leaves the
	 * row on its page, and the page to be found through the free space map
	 * once VACUUM records it.
	 */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	BloomMetaAddFreePage(meta, blkno);
	meta->statTuples++;
	meta->statBitsSet += nbitsSet;
	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Remember a data page with free slots in the metapage's list, unless it is
 * there already or the list is full.
 */
void
BloomMetaAddFreePage(BloomMetaPage meta, BlockNumber blkno)
{
	int			i;

	for (i = BloomRowMeta(meta)->freeStart; i < BloomRowMeta(meta)->nFree; i++)
	{
		if (BloomRowMeta(meta)->freePages[i] == blkno)
			return;
	}
	if (BloomRowMeta(meta)->nFree < BLOOMIDX_FREELIST_SIZE)
		BloomRowMeta(meta)->freePages[BloomRowMeta(meta)->nFree++] = blkno;
	else if (BloomRowMeta(meta)->freeStart > 0)
	{
		/* Reclaim the entries already used up */
		memmove(BloomRowMeta(meta)->freePages, BloomRowMeta(meta)->freePages + BloomRowMeta(meta)->freeStart,
				sizeof(BlockNumber) * (BloomRowMeta(meta)->nFree - BloomRowMeta(meta)->freeStart));
		BloomRowMeta(meta)->nFree -= BloomRowMeta(meta)->freeStart;
		BloomRowMeta(meta)->freeStart = 0;
		BloomRowMeta(meta)->freePages[BloomRowMeta(meta)->nFree++] = blkno;
	}
}
