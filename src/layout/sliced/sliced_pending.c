/*-------------------------------------------------------------------------
 *
 * sliced_pending.c
 *	  The pending list of the sliced layout: where inserts go.
 *
 * Inserts go to pending pages, data pages of the row layout listed in the
 * metapage, as GIN's fast-update list does; sliced_merge.c merges them into
 * the stripes (the sliced layout's ginfast.c is these two files).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_pending.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"
#include "sliced.h"

/* Bits set in a signature of nw words */
static int
BloomCountWordBits(const uint64 *words, int nw)
{
	int			nbits = 0;
	int			w;

	for (w = 0; w < nw; w++)
		nbits += pg_popcount64(words[w]);
	return nbits;
}

/*
 * Can a pending page take one more row?
 */
static bool
BloomPendingHasRoom(Relation index, BloomState state, Page page,
					BlockNumber blkno)
{
	return BloomSlicedPageIsData(index, page, blkno, state->tuplesPerPage) &&
		!BloomPageHasFlag(page, BLOOMIDX_FROZEN) &&
		BloomPageHasFreeSlot(page);
}

/*
 * Add a row to the last pending page if it has room, WAL-logged.
 */
static bool
BloomPendingTryPage(Relation index, BloomState state, BlockNumber blkno,
					const uint8 *sig, ItemPointer tid)
{
	Buffer		buffer = BloomReadBufferRecent(index, blkno, NULL);
	bool		done = false;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (BloomPendingHasRoom(index, state, BufferGetPage(buffer), blkno))
	{
		GenericXLogState *xlogState;
		Page		page;

		BloomCheckDataPageBounds(index, BufferGetPage(buffer), blkno,
								 state->shape.sigBytes);
		xlogState = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
		done = BloomPageAddTuple(page, state->shape.sigBytes, sig, tid);
		GenericXLogFinish(xlogState);
	}
	UnlockReleaseBuffer(buffer);
	return done;
}

/*
 * Add a row to the pending pages.  Returns true if it started a new
 * pending page: the time for a merge step, if one is due.
 */
bool
BloomPendingAdd(Relation index, BloomState state, const uint8 *sig,
				int nbitsSet, ItemPointer tid)
{
	bool		mergedNothing = false;

	for (;;)
	{
		Buffer		metabuf = BloomReadBufferRecent(index, BLOOMIDX_METAPAGE_BLKNO,
													NULL);
		BloomMetaPage meta;
		BlockNumber last = InvalidBlockNumber;
		int			npending;
		GenericXLogState *xlogState;
		Buffer		buffer;
		Page		page;

		/* Fast path: the last pending page, under its own lock only */
		LockBuffer(metabuf, BUFFER_LOCK_SHARE);
		BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
		meta = BloomPageGetMeta(BufferGetPage(metabuf));
		npending = BloomSlicedMeta(meta)->nPending;
		if (npending > 0)
			last = BloomSlicedMeta(meta)->pendingPages[npending - 1];
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

		if (last != InvalidBlockNumber &&
			BloomPendingTryPage(index, state, last, sig, tid))
		{
			ReleaseBuffer(metabuf);
			return false;
		}

		/* Slow path: a new pending page, under the metapage lock */
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
		meta = BloomPageGetMeta(BufferGetPage(metabuf));
		npending = BloomSlicedMeta(meta)->nPending;
		if (npending > 0 && BloomSlicedMeta(meta)->pendingPages[npending - 1] != last)
		{
			/* Someone added a page meanwhile: try that one */
			UnlockReleaseBuffer(metabuf);
			continue;
		}
		if (npending >= BLOOMIDX_PENDING_SIZE)
		{
			/*
			 * The list is full (merge steps fell behind, see
			 * BloomBatchAdd): merge all of it, then start over.
			 */
			UnlockReleaseBuffer(metabuf);
			if (mergedNothing)
				BloomTooManyRows(index);
			mergedNothing = BloomSlicedMerge(index, true, BLOOM_MERGE_ALL) == 0;
			continue;
		}

		xlogState = GenericXLogStart(index);
		meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
		buffer = BloomNewBuffer(index);
		page = GenericXLogRegisterBuffer(xlogState, buffer, GENERIC_XLOG_FULL_IMAGE);
		BloomInitDataPage(page, state->shape.sigBytes);
		if (!BloomPageAddTuple(page, state->shape.sigBytes, sig, tid))
			elog(ERROR, "could not add a tuple to an empty bloomidx page");
		BloomSlicedMeta(meta)->pendingPages[BloomSlicedMeta(meta)->nPending++] = BufferGetBlockNumber(buffer);
		meta->statTuples++;
		meta->statBitsSet += nbitsSet;
		npending = BloomSlicedMeta(meta)->nPending;
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
		UnlockReleaseBuffer(metabuf);
		return true;
	}
}

/*
 * Add rows, their signatures as words, to the pending list: the last
 * pending page filled first, then pages of their own, each page filled
 * (and a new one listed) in one WAL record: the rows a statement inserted
 * (sliced_batch.c), and VACUUM moving the live rows of a stripe back,
 * under the merge lock.  Rows the list has no room for take
 * BloomPendingAdd's path, which merges a full list.  New rows (inserted)
 * count in the fill statistics as BloomPendingAdd counts them: the first
 * row of each page.  Returns the number of pages started.
 */
int
BloomPendingAddRows(Relation index, BloomState state, const uint64 *words,
					const ItemPointerData *tids, int n, bool inserted)
{
	const BloomShape *shape = &state->shape;
	uint8		sig[BLOOMIDX_SLICED_MAX_LENGTH / 8];
	int			done = 0;
	int			started = 0;

	BloomSlicedCheckSigBits(index, shape->sigBits);

	while (done < n)
	{
		Buffer		metabuf = BloomReadBufferRecent(index, BLOOMIDX_METAPAGE_BLKNO,
													NULL);
		BloomMetaPage meta;
		GenericXLogState *xlogState;
		Buffer		buffer;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
		meta = BloomPageGetMeta(BufferGetPage(metabuf));
		xlogState = GenericXLogStart(index);

		/* The last pending page first, if it has room; else a new one */
		buffer = InvalidBuffer;
		if (BloomSlicedMeta(meta)->nPending > 0)
		{
			BlockNumber last = BloomSlicedMeta(meta)->pendingPages[BloomSlicedMeta(meta)->nPending - 1];

			buffer = BloomReadBufferRecent(index, last, NULL);
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			if (BloomPendingHasRoom(index, state, BufferGetPage(buffer), last))
			{
				BloomCheckDataPageBounds(index, BufferGetPage(buffer), last,
										 shape->sigBytes);
				page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
			}
			else
			{
				UnlockReleaseBuffer(buffer);
				buffer = InvalidBuffer;
			}
		}
		if (!BufferIsValid(buffer) && BloomSlicedMeta(meta)->nPending >= BLOOMIDX_PENDING_SIZE)
		{
			GenericXLogAbort(xlogState);
			UnlockReleaseBuffer(metabuf);
			break;
		}
		if (!BufferIsValid(buffer))
		{
			meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
			buffer = BloomNewBuffer(index);
			page = GenericXLogRegisterBuffer(xlogState, buffer, GENERIC_XLOG_FULL_IMAGE);
			BloomInitDataPage(page, shape->sigBytes);
			BloomSlicedMeta(meta)->pendingPages[BloomSlicedMeta(meta)->nPending++] = BufferGetBlockNumber(buffer);
			if (inserted)
			{
				meta->statTuples++;
				meta->statBitsSet += BloomCountWordBits(words + (Size) done * shape->sigWords,
														shape->sigWords);
			}
			started++;
		}
		for (; done < n; done++)
		{
			BloomStoreWords(sig, words + (Size) done * shape->sigWords,
							shape->sigBytes);
			if (!BloomPageAddTuple(page, shape->sigBytes, sig,
								   (ItemPointer) &tids[done]))
				break;
		}
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
		UnlockReleaseBuffer(metabuf);
	}

	for (; done < n; done++)
	{
		const uint64 *row = words + (Size) done * shape->sigWords;

		BloomStoreWords(sig, row, shape->sigBytes);
		if (BloomPendingAdd(index, state, sig,
							BloomCountWordBits(row, shape->sigWords),
							(ItemPointer) &tids[done]))
			started++;
	}
	return started;
}

/*
 * Add one row to the pending pages, and take a merge step if it started a
 * pending page: a row written on its own (sliced_batch.c).
 */
void
BloomPendingInsert(Relation index, BloomState state, const uint8 *sig,
				   int nbitsSet, ItemPointer tid)
{
	if (BloomPendingAdd(index, state, sig, nbitsSet, tid))
		BloomSlicedMerge(index, false, BLOOM_MERGE_STEP);
}
