/*-------------------------------------------------------------------------
 *
 * row_vacuum.c
 *	  VACUUM of an index of the row layout: removing dead rows' signatures,
 *	  reusing their slots, recycling emptied pages.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/row/row_vacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"
#include "row.h"
#include "signature.h"

/*
 * Rebuild the metapage's free list from the pages found with free slots,
 * and store fresh fill statistics, WAL-logged.
 */
static void
BloomUpdateMetaAfterVacuum(Relation index, BlockNumber *freePages, int nfree,
						   uint64 tuples, uint64 bitsSet)
{
	Buffer		metabuf;
	GenericXLogState *xlogState;
	BloomMetaPage meta;
	int			i;

	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomRowCheckMeta(index, BufferGetPage(metabuf));
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));

	BloomRowMeta(meta)->nFree = 0;
	BloomRowMeta(meta)->freeStart = 0;
	for (i = 0; i < nfree && i < BLOOMIDX_FREELIST_SIZE; i++)
		BloomRowMeta(meta)->freePages[BloomRowMeta(meta)->nFree++] = freePages[i];
	if (tuples > 0)
	{
		meta->statTuples = tuples;
		meta->statBitsSet = bitsSet;
	}

	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Remove the signatures of dead rows (ambulkdelete).
 *
 * Each page is compacted in place.  A page left empty is marked deleted, to
 * be recycled through the free space map by vacuum-cleanup.  The pages with
 * free slots become the metapage's free list.
 */
IndexBulkDeleteResult *
BloomRowBulkDelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BloomState	state = BloomGetState(index);
	int			sigBytes = state->shape.sigBytes;
	BloomBlockRange range;
	ReadStream *stream;
	Buffer		buffer;
	BlockNumber *freePages;
	int			nfree = 0;
	uint64		tuples = 0;
	uint64		bitsSet = 0;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	freePages = palloc(sizeof(BlockNumber) * BLOOMIDX_FREELIST_SIZE);
	range.next = BLOOMIDX_METAPAGE_BLKNO + 1;
	range.end = RelationGetNumberOfBlocks(index);
	stream = read_stream_begin_relation(READ_STREAM_MAINTENANCE | READ_STREAM_FULL,
										info->strategy, index, MAIN_FORKNUM,
										BloomBlockRangeNext, &range, 0);
	while ((buffer = read_stream_next_buffer(stream, NULL)) != InvalidBuffer)
	{
		BlockNumber blkno = BufferGetBlockNumber(buffer);
		Page		page;
		GenericXLogState *xlogState = NULL;
		int			i;

		vacuum_delay_point(false);

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buffer);

		if (!BloomRowPageIsData(index, page, blkno, state->tuplesPerPage))
		{
			UnlockReleaseBuffer(buffer);
			continue;
		}

		xlogState = BloomPageRemoveDead(index, buffer, &page, sigBytes,
										callback, callback_state, stats);

		if (BloomPageGetNTuples(page) == 0)
		{
			if (xlogState == NULL)
			{
				xlogState = GenericXLogStart(index);
				page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
			}
			BloomInitDeletedPage(page);
		}
		else
		{
			int			n = BloomPageGetNTuples(page);

			for (i = 0; i < n; i++)
				bitsSet += BloomCountBits(BloomPageGetSignature(page, sigBytes, i),
										  sigBytes);
			tuples += n;
			if (BloomPageHasFreeSlot(page) && nfree < BLOOMIDX_FREELIST_SIZE)
				freePages[nfree++] = blkno;
		}

		if (xlogState != NULL)
			GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}

	read_stream_end(stream);
	BloomUpdateMetaAfterVacuum(index, freePages, nfree, tuples, bitsSet);
	pfree(freePages);

	return stats;
}

/*
 * Count pages and tuples, and tell the free space map which pages can be
 * reused and which data pages have free slots (amvacuumcleanup).
 */
IndexBulkDeleteResult *
BloomRowVacuumCleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	BloomState	state = BloomGetState(index);
	BloomBlockRange range;
	ReadStream *stream;
	Buffer		buffer;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	range.next = BLOOMIDX_METAPAGE_BLKNO + 1;
	range.end = RelationGetNumberOfBlocks(index);
	stats->num_pages = range.end;
	stats->pages_free = 0;
	stats->num_index_tuples = 0;

	stream = read_stream_begin_relation(READ_STREAM_MAINTENANCE | READ_STREAM_FULL,
										info->strategy, index, MAIN_FORKNUM,
										BloomBlockRangeNext, &range, 0);
	while ((buffer = read_stream_next_buffer(stream, NULL)) != InvalidBuffer)
	{
		BlockNumber blkno = BufferGetBlockNumber(buffer);
		Page		page;

		vacuum_delay_point(false);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (BloomRowPageIsData(index, page, blkno, state->tuplesPerPage))
		{
			stats->num_index_tuples += BloomPageGetNTuples(page);
			/* Free slots beyond the metapage's list are found through the FSM */
			BloomRecordFreeSpace(index, blkno, page, state->shape.sigBytes);
		}
		else if (PageIsNew(page) || BloomPageIsDeleted(page))
		{
			RecordFreeIndexPage(index, blkno);
			stats->pages_free++;
		}
		UnlockReleaseBuffer(buffer);
	}
	read_stream_end(stream);

	return stats;
}
