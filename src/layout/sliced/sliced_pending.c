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
 * The slot of a pending row (see page.h): its signature, given as words,
 * then, if the index's pending pages carry keys, its keys (zero if keys
 * is NULL: a row without keys).
 */
void
BloomPendingFormSlot(BloomState state, uint8 *slot, const uint64 *words,
					 const uint32 *keys)
{
	BloomStoreWords(slot, words, state->shape.sigBytes);
	if (BloomSlicedPendingHasKeys(state))
		BloomPendingSetKeys(state, slot, keys);
}

/*
 * Initialize an empty pending page, for rows without keys if keyless and
 * the index's pending pages carry keys (a page holds rows with keys or rows
 * without, never both).
 */
void
BloomPendingInitPage(BloomState state, Page page, bool keyless)
{
	BloomInitDataPage(page, BloomSlicedSlotBytes(state));
	if (keyless && BloomSlicedPendingHasKeys(state))
		BloomPageGetOpaque(page)->flags |= BLOOMIDX_KEYLESS;
}

/*
 * Can a pending page take one more row, with keys or without (keyless)?
 * Rows without keys (VACUUM's) and rows with keys (inserts') go to pages
 * of their own, so that the rows inserted keep their keys.
 */
static bool
BloomPendingHasRoom(Relation index, BloomState state, Page page,
					BlockNumber blkno, bool keyless)
{
	return BloomSlicedPageIsData(index, page, blkno, state->tuplesPerPage) &&
		!BloomPageHasFlag(page, BLOOMIDX_FROZEN) &&
		BloomPageHasFreeSlot(page) &&
		(!BloomSlicedPendingHasKeys(state) ||
		 BloomPageHasFlag(page, BLOOMIDX_KEYLESS) == keyless);
}

/*
 * Mark in a record what listing a new pending page changed in the
 * metapage's image: the list's last entry and length, and the fill
 * statistics.
 */
static void
BloomPendingMarkListed(BloomDeltaXLog x, Page metaImage, BloomMetaPage meta)
{
	BloomSlicedMetaData *sm = BloomSlicedMeta(meta);

	BloomDeltaXLogMarkChanged(x, metaImage, &sm->pendingPages[sm->nPending - 1],
							  sizeof(BlockNumber));
	BloomDeltaXLogMarkChanged(x, metaImage, &sm->nPending, sizeof(sm->nPending));
	BloomDeltaXLogMarkChanged(x, metaImage, &meta->statTuples,
							  sizeof(meta->statTuples));
	BloomDeltaXLogMarkChanged(x, metaImage, &meta->statBitsSet,
							  sizeof(meta->statBitsSet));
}

/*
 * Mark in a record what adding rows [first, first + n) to a pending page
 * changed: their slots and TIDs, pd_lower and pd_upper, and the count in
 * the special space (see BloomPageAddTuple).
 */
static void
BloomPendingMarkAdded(BloomDeltaXLog x, Page page, int slotBytes, int first,
					  int n)
{
	if (n <= 0)
		return;
	BloomDeltaXLogMark(x, page, &((PageHeader) page)->pd_lower,
					   sizeof(LocationIndex) * 2);
	BloomDeltaXLogMark(x, page, BloomPageGetSignature(page, slotBytes, first),
					   (Size) slotBytes * n);
	BloomDeltaXLogMark(x, page, BloomPageGetTid(page, slotBytes, first + n - 1),
					   sizeof(ItemPointerData) * n);
	BloomDeltaXLogMark(x, page, BloomPageGetOpaque(page),
					   sizeof(BloomPageOpaqueData));
}

/*
 * Add a row, its slot formed, to the last pending page if it has room,
 * WAL-logged.
 */
static bool
BloomPendingTryPage(Relation index, BloomState state, BlockNumber blkno,
					const uint8 *slot, bool keyless, ItemPointer tid)
{
	Buffer		buffer = BloomReadBufferRecent(index, blkno, NULL);
	bool		done = false;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (BloomPendingHasRoom(index, state, BufferGetPage(buffer), blkno, keyless))
	{
		BloomDeltaXLog x;
		Page		page;

		BloomCheckDataPageBounds(index, BufferGetPage(buffer), blkno,
								 BloomSlicedSlotBytes(state));
		x = BloomDeltaXLogStart(index);
		page = BloomDeltaXLogRegister(x, buffer);
		done = BloomPageAddTuple(page, BloomSlicedSlotBytes(state), slot, tid);
		BloomPendingMarkAdded(x, page, BloomSlicedSlotBytes(state),
							  BloomPageGetNTuples(page) - 1, 1);
		BloomDeltaXLogFinish(x);
	}
	UnlockReleaseBuffer(buffer);
	return done;
}

/*
 * Add a row, its slot formed (BloomPendingFormSlot), to the pending pages:
 * one of rows without keys if keyless.  Returns true if it started a new
 * pending page: the time for a merge step, if one is due.
 */
bool
BloomPendingAdd(Relation index, BloomState state, const uint8 *slot,
				bool keyless, int nbitsSet, ItemPointer tid)
{
	bool		mergedNothing = false;

	for (;;)
	{
		Buffer		metabuf = BloomReadBufferRecent(index, BLOOMIDX_METAPAGE_BLKNO,
													NULL);
		BloomMetaPage meta;
		BlockNumber last = InvalidBlockNumber;
		int			npending;
		BloomDeltaXLog xlogState;
		Page		metaImage;
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
			BloomPendingTryPage(index, state, last, slot, keyless, tid))
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

		xlogState = BloomDeltaXLogStart(index);
		metaImage = BloomDeltaXLogRegister(xlogState, metabuf);
		meta = BloomPageGetMeta(metaImage);
		buffer = BloomNewBuffer(index);
		page = BloomDeltaXLogRegisterNew(xlogState, buffer);
		BloomPendingInitPage(state, page, keyless);
		if (!BloomPageAddTuple(page, BloomSlicedSlotBytes(state), slot, tid))
			elog(ERROR, "could not add a tuple to an empty bloomidx page");
		BloomSlicedMeta(meta)->pendingPages[BloomSlicedMeta(meta)->nPending++] = BufferGetBlockNumber(buffer);
		meta->statTuples++;
		meta->statBitsSet += nbitsSet;
		npending = BloomSlicedMeta(meta)->nPending;
		BloomPendingMarkListed(xlogState, metaImage, meta);
		BloomDeltaXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
		UnlockReleaseBuffer(metabuf);
		return true;
	}
}

/*
 * Add rows, their signatures as words and their keys (nColumns a row, or
 * NULL: rows without keys), to the pending list: the last pending page
 * filled first, then pages of their own, each page filled (and a new one
 * listed) in one WAL record: the rows a statement inserted
 * (sliced_batch.c), and VACUUM moving the live rows of a stripe back,
 * under the merge lock, without keys.  Rows the list has no room for take
 * BloomPendingAdd's path, which merges a full list.  New rows (inserted)
 * count in the fill statistics as BloomPendingAdd counts them: the first
 * row of each page.  Returns the number of pages started.
 */
int
BloomPendingAddRows(Relation index, BloomState state, const uint64 *words,
					const uint32 *keys, const ItemPointerData *tids, int n,
					bool inserted)
{
	const BloomShape *shape = &state->shape;
	int			slotBytes = BloomSlicedSlotBytes(state);
	bool		keyless = keys == NULL;
	uint8		slot[BLOOMIDX_SLICED_MAX_SLOT];
	int			done = 0;
	int			started = 0;

	BloomSlicedCheckSigBits(index, shape->sigBits);

	while (done < n)
	{
		Buffer		metabuf = BloomReadBufferRecent(index, BLOOMIDX_METAPAGE_BLKNO,
													NULL);
		BloomMetaPage meta;
		BloomDeltaXLog xlogState = NULL;
		BloomDeltaXLog x = NULL;
		Buffer		buffer;
		Page		page;
		int			first = 0;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
		meta = BloomPageGetMeta(BufferGetPage(metabuf));

		/* The last pending page first, if it has room; else a new one */
		buffer = InvalidBuffer;
		if (BloomSlicedMeta(meta)->nPending > 0)
		{
			BlockNumber last = BloomSlicedMeta(meta)->pendingPages[BloomSlicedMeta(meta)->nPending - 1];

			buffer = BloomReadBufferRecent(index, last, NULL);
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			if (BloomPendingHasRoom(index, state, BufferGetPage(buffer), last,
									keyless))
			{
				BloomCheckDataPageBounds(index, BufferGetPage(buffer), last,
										 slotBytes);
				/* Rows added to a page: a record of the bytes they take */
				x = BloomDeltaXLogStart(index);
				page = BloomDeltaXLogRegister(x, buffer);
				first = BloomPageGetNTuples(page);
			}
			else
			{
				UnlockReleaseBuffer(buffer);
				buffer = InvalidBuffer;
			}
		}
		if (!BufferIsValid(buffer) && BloomSlicedMeta(meta)->nPending >= BLOOMIDX_PENDING_SIZE)
		{
			UnlockReleaseBuffer(metabuf);
			break;
		}
		if (!BufferIsValid(buffer))
		{
			Page		metaImage;

			xlogState = BloomDeltaXLogStart(index);
			metaImage = BloomDeltaXLogRegister(xlogState, metabuf);
			meta = BloomPageGetMeta(metaImage);
			buffer = BloomNewBuffer(index);
			page = BloomDeltaXLogRegisterNew(xlogState, buffer);
			BloomPendingInitPage(state, page, keyless);
			BloomSlicedMeta(meta)->pendingPages[BloomSlicedMeta(meta)->nPending++] = BufferGetBlockNumber(buffer);
			if (inserted)
			{
				meta->statTuples++;
				meta->statBitsSet += BloomCountWordBits(words + (Size) done * shape->sigWords,
														shape->sigWords);
			}
			BloomPendingMarkListed(xlogState, metaImage, meta);
			started++;
		}
		for (; done < n; done++)
		{
			BloomPendingFormSlot(state, slot, words + (Size) done * shape->sigWords,
								 keyless ? NULL : keys + (Size) done * shape->nColumns);
			if (!BloomPageAddTuple(page, slotBytes, slot,
								   (ItemPointer) &tids[done]))
				break;
		}
		if (x != NULL)
		{
			BloomPendingMarkAdded(x, page, slotBytes, first,
								  BloomPageGetNTuples(page) - first);
			BloomDeltaXLogFinish(x);
		}
		else
			BloomDeltaXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
		UnlockReleaseBuffer(metabuf);
	}

	for (; done < n; done++)
	{
		const uint64 *row = words + (Size) done * shape->sigWords;

		BloomPendingFormSlot(state, slot, row,
							 keyless ? NULL : keys + (Size) done * shape->nColumns);
		if (BloomPendingAdd(index, state, slot, keyless,
							BloomCountWordBits(row, shape->sigWords),
							(ItemPointer) &tids[done]))
			started++;
	}
	return started;
}

/*
 * Add one row, its slot formed with its keys, to the pending pages, and
 * take a merge step if it started a pending page: a row written on its own
 * (sliced_batch.c).
 */
void
BloomPendingInsert(Relation index, BloomState state, const uint8 *slot,
				   int nbitsSet, ItemPointer tid)
{
	if (BloomPendingAdd(index, state, slot, false, nbitsSet, tid))
		BloomSlicedMerge(index, false, BLOOM_MERGE_STEP);
}
