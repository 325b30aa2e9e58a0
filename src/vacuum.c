/*-------------------------------------------------------------------------
 *
 * vacuum.c
 *	  VACUUM of a bloomidx index: removing dead rows' signatures, reusing
 *	  their slots, recycling emptied pages.
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
#include "page.h"
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
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));

	meta->nFree = 0;
	meta->freeStart = 0;
	for (i = 0; i < nfree && i < BLOOMIDX_FREELIST_SIZE; i++)
		meta->freePages[meta->nFree++] = freePages[i];
	if (tuples > 0)
	{
		meta->statTuples = tuples;
		meta->statBitsSet = bitsSet;
	}

	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Remove the tuples of dead rows from a data page (of the row layout, or a
 * pending page) that is locked exclusively.  Changes go into a WAL record
 * started at the first one, which is returned for the caller to finish
 * (NULL if nothing changed); *page is then the page to go on changing.
 */
GenericXLogState *
BloomPageRemoveDead(Relation index, Buffer buffer, Page *page, int sigBytes,
					IndexBulkDeleteCallback callback, void *callback_state,
					IndexBulkDeleteResult *stats)
{
	GenericXLogState *xlogState = NULL;
	int			i;

	/* Walk backwards so that moving the last slot down is safe */
	for (i = BloomPageGetNTuples(*page) - 1; i >= 0; i--)
	{
		if (!callback(BloomPageGetTid(*page, sigBytes, i), callback_state))
			continue;
		if (xlogState == NULL)
		{
			xlogState = GenericXLogStart(index);
			*page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
		}
		BloomPageDeleteTuple(*page, sigBytes, i);
		stats->tuples_removed += 1;
	}
	return xlogState;
}

/*
 * Remove the signatures of dead rows (ambulkdelete).
 *
 * Each page is compacted in place.  A page left empty is marked deleted, to
 * be recycled through the free space map by vacuum-cleanup.  The pages with
 * free slots become the metapage's free list.
 */
IndexBulkDeleteResult *
bloomidx_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BloomState	state = BloomGetState(index);
	int			sigBytes = state->shape.sigBytes;
	BlockNumber npages;
	BlockNumber blkno;
	BlockNumber *freePages;
	int			nfree = 0;
	uint64		tuples = 0;
	uint64		bitsSet = 0;

	if (state->shape.layout == BLOOMIDX_LAYOUT_SLICED)
		return BloomSlicedBulkDelete(info, stats, callback, callback_state);

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	freePages = palloc(sizeof(BlockNumber) * BLOOMIDX_FREELIST_SIZE);
	npages = RelationGetNumberOfBlocks(index);

	for (blkno = BLOOMIDX_METAPAGE_BLKNO + 1; blkno < npages; blkno++)
	{
		Buffer		buffer;
		Page		page;
		GenericXLogState *xlogState = NULL;
		int			i;

		vacuum_delay_point();

		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
									info->strategy);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buffer);

		if (!BloomPageIsData(index, page, blkno, state->tuplesPerPage))
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

	BloomUpdateMetaAfterVacuum(index, freePages, nfree, tuples, bitsSet);
	pfree(freePages);

	return stats;
}

/* A bulk-delete callback for a pass that removes nothing */
static bool
BloomNothingDead(ItemPointer itemptr, void *state)
{
	return false;
}

/*
 * Count pages and tuples, and tell the free space map which pages can be
 * reused and which data pages have free slots (amvacuumcleanup).
 */
IndexBulkDeleteResult *
bloomidx_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	BloomState	state;
	BlockNumber npages;
	BlockNumber blkno;
	bool		sliced;
	bool	   *referenced = NULL;

	if (info->analyze_only)
		return stats;

	state = BloomGetState(index);
	sliced = state->shape.layout == BLOOMIDX_LAYOUT_SLICED;

	/*
	 * A VACUUM that found no dead rows skips ambulkdelete; a sliced index
	 * whose stripe lists are nearly full needs its pass all the same, to
	 * move its oldest rows forward.
	 */
	if (stats == NULL && sliced && BloomSlicedNeedsRenumbering(index))
		stats = BloomSlicedBulkDelete(info, NULL, BloomNothingDead, NULL);

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/*
	 * VACUUM merges the pending rows of a sliced index, as GIN's does.  The
	 * walk below then holds the merge lock, so that a page of the sliced
	 * layout (or a frozen pending page) that nothing lists is one a crash
	 * kept a merge from listing or freeing.
	 */
	if (sliced)
	{
		BloomSlicedMerge(index, true);
		LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	}

	npages = RelationGetNumberOfBlocks(index);
	stats->num_pages = npages;
	stats->pages_free = 0;
	stats->num_index_tuples = 0;
	if (sliced)
	{
		referenced = palloc0(sizeof(bool) * npages);
		BloomSlicedReferenced(index, &state->shape, referenced, npages);
	}

	for (blkno = BLOOMIDX_METAPAGE_BLKNO + 1; blkno < npages; blkno++)
	{
		Buffer		buffer;
		Page		page;

		vacuum_delay_point();

		/*
		 * A page of a sliced index that nothing lists is free, a pending page
		 * added since, or an orphan to free.
		 */
		if (sliced && !referenced[blkno] &&
			BloomSlicedFreeOrphan(index, state, blkno))
		{
			stats->pages_free++;
			continue;
		}

		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
									info->strategy);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (BloomPageIsData(index, page, blkno, state->tuplesPerPage))
		{
			stats->num_index_tuples += BloomPageGetNTuples(page);
			/* Free slots beyond the metapage's list are found through the FSM */
			if (state->shape.layout == BLOOMIDX_LAYOUT_ROW)
				BloomRecordFreeSpace(index, blkno, page, state->shape.sigBytes);
		}
		else if (BloomPageHasFlag(page, BLOOMIDX_TIDMAP) && !BloomPageIsDeleted(page))
		{
			BloomTidMap map = BloomPageGetTidMap(page);
			int			i;

			for (i = 0; BloomTidMapIsSane(map) && i < map->nrows; i++)
			{
				ItemPointerData tid;

				BloomTidMapGet(map, i, &tid);
				stats->num_index_tuples += ItemPointerIsValid(&tid) ? 1 : 0;
			}
		}
		else if (PageIsNew(page) || BloomPageIsDeleted(page))
		{
			RecordFreeIndexPage(index, blkno);
			stats->pages_free++;
		}

		UnlockReleaseBuffer(buffer);
	}

	if (sliced)
	{
		UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
		pfree(referenced);
	}

	IndexFreeSpaceMapVacuum(index);

	return stats;
}
