/*-------------------------------------------------------------------------
 *
 * sliced_pending.c
 *	  The pending list of the sliced layout, and the merge of its rows into
 *	  the slices (the sliced layout's ginfast.c).
 *
 * Inserts go to pending pages, data pages of the row layout listed in the
 * metapage.  When the list grows long, at VACUUM, or through
 * bloomidx_merge(), the pending rows are merged into the stripes.
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

/* Rows taken from pending pages by a merge */
typedef struct BloomRowBatch
{
	int			nrows;
	int			maxrows;
	uint64	   *words;			/* nrows * sigWords signature words */
	ItemPointerData *tids;
	uint64		bitsSet;
} BloomRowBatch;

/*
 * Number of pending pages past which an insert merges them: a stripe's
 * worth of rows, and at most half the list.
 */
static int
BloomPendingLimit(BloomState state)
{
	int			pages = (BLOOMIDX_STRIPE_ROWS + state->tuplesPerPage - 1) /
		state->tuplesPerPage;

	return Min(pages, BLOOMIDX_PENDING_SIZE / 2);
}


/*
 * Can a pending page take one more row?
 */
static bool
BloomPendingHasRoom(Relation index, BloomState state, Page page,
					BlockNumber blkno)
{
	return BloomPageIsData(index, page, blkno, state->tuplesPerPage) &&
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
	Buffer		buffer = ReadBuffer(index, blkno);
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
 * Add a row to the pending pages.  Returns true if the list has grown past
 * the point where it should be merged.
 */
bool
BloomPendingAdd(Relation index, BloomState state, const uint8 *sig,
				int nbitsSet, ItemPointer tid)
{
	bool		mergedNothing = false;

	for (;;)
	{
		Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
		BloomMetaPage meta;
		BlockNumber last = InvalidBlockNumber;
		int			npending;
		GenericXLogState *xlogState;
		Buffer		buffer;
		Page		page;

		/* Fast path: the last pending page, under its own lock only */
		LockBuffer(metabuf, BUFFER_LOCK_SHARE);
		BloomCheckMeta(index, BufferGetPage(metabuf));
		meta = BloomPageGetMeta(BufferGetPage(metabuf));
		npending = meta->nPending;
		if (npending > 0)
			last = meta->pendingPages[npending - 1];
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

		if (last != InvalidBlockNumber &&
			BloomPendingTryPage(index, state, last, sig, tid))
		{
			ReleaseBuffer(metabuf);
			return npending >= BloomPendingLimit(state);
		}

		/* Slow path: a new pending page, under the metapage lock */
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		BloomCheckMeta(index, BufferGetPage(metabuf));
		meta = BloomPageGetMeta(BufferGetPage(metabuf));
		npending = meta->nPending;
		if (npending > 0 && meta->pendingPages[npending - 1] != last)
		{
			/* Someone added a page meanwhile: try that one */
			UnlockReleaseBuffer(metabuf);
			continue;
		}
		if (npending >= BLOOMIDX_PENDING_SIZE)
		{
			/* The list is full: merge it, then start over */
			UnlockReleaseBuffer(metabuf);
			if (mergedNothing)
				BloomTooManyRows(index);
			mergedNothing = BloomSlicedMerge(index, true) == 0;
			continue;
		}

		xlogState = GenericXLogStart(index);
		meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
		buffer = BloomNewBuffer(index);
		page = GenericXLogRegisterBuffer(xlogState, buffer, GENERIC_XLOG_FULL_IMAGE);
		BloomInitDataPage(page, state->shape.sigBytes);
		if (!BloomPageAddTuple(page, state->shape.sigBytes, sig, tid))
			elog(ERROR, "could not add a tuple to an empty bloomidx page");
		meta->pendingPages[meta->nPending++] = BufferGetBlockNumber(buffer);
		meta->statTuples++;
		meta->statBitsSet += nbitsSet;
		npending = meta->nPending;
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
		UnlockReleaseBuffer(metabuf);
		return npending >= BloomPendingLimit(state);
	}
}

/*
 * Insert a row into a sliced index: into the pending pages, merging them
 * into the slices when there are enough (unless another backend is
 * merging already).
 */
void
BloomSlicedInsert(Relation index, BloomState state, const uint8 *sig,
				  int nbitsSet, ItemPointer tid)
{
	if (BloomPendingAdd(index, state, sig, nbitsSet, tid))
		BloomSlicedMerge(index, false);
}

/*
 * Take the rows of one pending page into the batch, freezing the page so
 * that no more rows are added to it.  Returns false if it is not a pending
 * page with rows (a merge interrupted by a crash after its metapage record
 * may have freed it already).
 */
static bool
BloomTakePendingPage(Relation index, BloomState state, BlockNumber blkno,
					 BloomRowBatch *batch, uint64 room, bool *full)
{
	int			sigBytes = state->shape.sigBytes;
	int			sigWords = state->shape.sigWords;
	Buffer		buffer = ReadBuffer(index, blkno);
	Page		page;
	int			i,
				n;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buffer);
	if (!BloomPageIsData(index, page, blkno, state->tuplesPerPage))
	{
		UnlockReleaseBuffer(buffer);
		return false;
	}
	if (batch->nrows + BloomPageGetNTuples(page) > room)
	{
		/* No row numbers left for them (see BloomSlicedMergeLocked) */
		*full = true;
		UnlockReleaseBuffer(buffer);
		return false;
	}
	if (!BloomPageHasFlag(page, BLOOMIDX_FROZEN))
	{
		GenericXLogState *xlogState = GenericXLogStart(index);

		page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
		BloomPageSetFrozen(page);
		GenericXLogFinish(xlogState);
		page = BufferGetPage(buffer);
	}

	n = BloomPageGetNTuples(page);
	for (i = 0; i < n; i++)
	{
		const uint8 *sig = BloomPageGetSignature(page, sigBytes, i);
		uint64	   *words = batch->words + (Size) batch->nrows * sigWords;
		int			w;

		Assert(batch->nrows < batch->maxrows);
		memset(words, 0, sizeof(uint64) * sigWords);
		for (w = 0; w < sigWords; w++)
		{
			int			nb = Min(8, sigBytes - 8 * w);
			int			j;

			for (j = 0; j < nb; j++)
				words[w] |= (uint64) sig[8 * w + j] << (8 * j);
			batch->bitsSet += pg_popcount64(words[w]);
		}
		batch->tids[batch->nrows++] = *BloomPageGetTid(page, sigBytes, i);
	}
	UnlockReleaseBuffer(buffer);
	return true;
}

/*
 * Get the page link i of a (locked) stripe page of stripe s points to (see
 * BloomStripeGetLink), locked exclusively and registered in a new WAL
 * record; if there is none yet, allocate it and set the link in the same
 * record.  With init, the page is initialized afresh either way.
 */
static Page
BloomStripeGetPage(Relation index, Buffer stripebuf, uint16 flag, int i,
				   int sigBits, uint32 s, bool init,
				   GenericXLogState **xlogState, Buffer *buffer)
{
	BlockNumber link = BloomStripeGetLink(BufferGetPage(stripebuf), flag, i);
	Page		page;

	*xlogState = GenericXLogStart(index);
	if (link == InvalidBlockNumber)
	{
		*buffer = BloomNewBuffer(index);
		page = GenericXLogRegisterBuffer(*xlogState, *buffer, GENERIC_XLOG_FULL_IMAGE);
		BloomInitSlicedPage(page, flag, sigBits, s);

		/* Link it, in the same WAL record */
		BloomStripeSetLink(GenericXLogRegisterBuffer(*xlogState, stripebuf, 0),
						   flag, i, BufferGetBlockNumber(*buffer));
	}
	else
	{
		*buffer = ReadBuffer(index, link);
		LockBuffer(*buffer, BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(*buffer), flag, s))
			BloomSlicedCorrupted(index, link,
								 flag == BLOOMIDX_SLICE ? "slice page" : "TID-map page");
		page = GenericXLogRegisterBuffer(*xlogState, *buffer,
										 init ? GENERIC_XLOG_FULL_IMAGE : 0);
		if (init)
			BloomInitSlicedPage(page, flag, sigBits, s);
	}
	return page;
}

/*
 * Write TIDs tids[0 .. n) as rows r0 .. r0 + n - 1 of stripe s, whose
 * stripe page is locked exclusively by the caller: the TID map holding
 * row r0 is packed again with its rows before r0 and the new ones, and as
 * many more as it takes follow.  Rows past r0 + n that a merge cut short
 * by a crash left are dropped.
 */
static void
BloomWriteStripeTids(Relation index, BloomState state, Buffer stripebuf,
					 uint32 s, const ItemPointerData *tids, int n, int r0)
{
	int			sigBits = state->shape.sigBits;
	Page		stripePage = BufferGetPage(stripebuf);
	int			nTidPages = BloomStripeGetNTidPages(stripePage);
	ItemPointerData *all = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	GenericXLogState *xlogState;
	Buffer		buffer;
	Page		page;
	uint16		firstRows[BLOOMIDX_STRIPE_TIDPAGES];
	int			t = 0;
	int			t0;
	int			first = 0;
	int			nall = 0;
	int			done;

	/* The last TID map starting at or before r0: its rows before r0 */
	while (t + 1 < nTidPages && BloomStripeGetTidFirstRow(stripePage, t + 1) <= r0)
		t++;
	if (t < nTidPages)
	{
		BlockNumber blkno = BloomStripeGetLink(stripePage, BLOOMIDX_TIDMAP, t);

		first = BloomStripeGetTidFirstRow(stripePage, t);
		buffer = ReadBuffer(index, blkno);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!BloomPageIsSliced(page, BLOOMIDX_TIDMAP, s) ||
			BloomTidMapGetFirstRow(page) != first ||
			first + BloomTidMapGetNRows(page) < r0)
			BloomSlicedCorrupted(index, blkno, "TID-map page");
		(void) BloomTidMapUnpack(page, all);
		UnlockReleaseBuffer(buffer);
	}
	else if (r0 != 0)
		BloomSlicedCorrupted(index, BufferGetBlockNumber(stripebuf),
							 "stripe page listing its TID maps");
	nall = r0 - first;
	if (nall < 0 || nall + n > BLOOMIDX_STRIPE_ROWS)
		BloomReportCorruption(index, BufferGetBlockNumber(stripebuf),
							  psprintf("The TID map of row %d starts at row %d.",
									   r0, first));
	memcpy(all + nall, tids, sizeof(ItemPointerData) * n);
	nall += n;

	/* Pack them, into the pages listed already, then new ones */
	t0 = t;
	for (done = 0; done < nall; t++)
	{
		if (t >= BLOOMIDX_STRIPE_TIDPAGES)
			elog(ERROR, "stripe %u of bloomidx index \"%s\" needs more than %d TID maps",
				 s, RelationGetRelationName(index), (int) BLOOMIDX_STRIPE_TIDPAGES);
		page = BloomStripeGetPage(index, stripebuf, BLOOMIDX_TIDMAP, t,
								  sigBits, s, true, &xlogState, &buffer);
		firstRows[t] = first + done;
		done += BloomTidMapPack(page, first + done, all + done, nall - done);
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}

	/* List them; pages listed past them are left to VACUUM to free */
	xlogState = GenericXLogStart(index);
	BloomStripeSetTidPages(GenericXLogRegisterBuffer(xlogState, stripebuf, 0),
						   t, t0, firstRows);
	GenericXLogFinish(xlogState);
	pfree(all);
}

/*
 * Write rows [first, first + n) of the batch into stripe s at row numbers
 * [r0, r0 + n) of the stripe.  The stripe page is locked exclusively by
 * the caller.
 */
static void
BloomWriteStripe(Relation index, BloomState state, Buffer stripebuf, uint32 s,
				 BloomRowBatch *batch, int first, int n, int r0,
				 uint64 *sliceWords)
{
	int			sigBits = state->shape.sigBits;
	int			sigWords = state->shape.sigWords;
	int			w0 = r0 / 64;
	int			w1 = (r0 + n - 1) / 64;
	int			nw = w1 - w0 + 1;
	int			wr,
				i,
				b;

	/*
	 * Transpose the rows' signatures into the words of each slice, 64 rows
	 * (one word of the slices) at a time, as a build does.
	 */
	memset(sliceWords, 0, sizeof(uint64) * nw * sigBits);
	for (wr = w0; wr <= w1; wr++)
	{
		int			lo = Max(r0, wr * 64);
		int			hi = Min(r0 + n, (wr + 1) * 64);
		int			sw;

		for (sw = 0; sw < sigWords; sw++)
		{
			uint64		m[64];
			int			j;

			memset(m, 0, sizeof(m));
			for (i = lo; i < hi; i++)
				m[i % 64] = batch->words[(Size) (first + i - r0) * sigWords + sw];
			BloomTranspose64(m);
			for (j = 0; j < 64 && sw * 64 + j < sigBits; j++)
				sliceWords[(Size) (sw * 64 + j) * nw + (wr - w0)] = m[j];
		}
	}

	for (b = 0; b < sigBits; b++)
	{
		const uint64 *src = sliceWords + (Size) b * nw;
		GenericXLogState *xlogState;
		Buffer		buffer;
		Page		page;
		int			w;
		bool		any = false;

		CHECK_FOR_INTERRUPTS();
		for (w = 0; w < nw && !any; w++)
			any = src[w] != 0;
		if (!any)
			continue;

		page = BloomStripeGetPage(index, stripebuf, BLOOMIDX_SLICE, b, sigBits,
								  s, false, &xlogState, &buffer);
		BloomSliceOrWords(page, w0, src, nw);
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}

	BloomWriteStripeTids(index, state, stripebuf, s, batch->tids + first, n, r0);
}

/*
 * The stripe page of stripe s, past those the metapage counts, locked
 * exclusively: the one a merge cut short by a crash listed already, or a
 * new one, listed now (in a new stripe-list page if need be).  Scans do
 * not read it until the metapage counts it.
 */
static Buffer
BloomMergeStripePage(Relation index, BloomState state, uint32 s)
{
	uint32		listNo = s / BLOOMIDX_STRIPELIST_ENTRIES;
	uint32		k;
	Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	Buffer		listbuf = InvalidBuffer;
	Buffer		stripebuf;
	BlockNumber listed = InvalidBlockNumber;
	GenericXLogState *xlogState;
	BloomMetaPage meta;
	Page		page;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	k = listNo - meta->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES;
	if (s < meta->firstStripe || k >= BLOOMIDX_MAX_STRIPELISTS)
		elog(ERROR, "stripe %u of bloomidx index \"%s\" is outside its stripe lists",
			 s, RelationGetRelationName(index));
	if (meta->stripeLists[k] != InvalidBlockNumber)
	{
		listbuf = ReadBuffer(index, meta->stripeLists[k]);
		LockBuffer(listbuf, BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(listbuf), BLOOMIDX_STRIPELIST, listNo))
			BloomSlicedCorrupted(index, meta->stripeLists[k], "stripe-list page");
		listed = BloomStripeListGet(BufferGetPage(listbuf),
									s % BLOOMIDX_STRIPELIST_ENTRIES);
		if (listed != InvalidBlockNumber)
			BloomCheckLink(index, meta->stripeLists[k], listed, "stripe page");
	}

	if (listed != InvalidBlockNumber)
	{
		/* Left by a merge a crash cut short: take it up again */
		stripebuf = ReadBuffer(index, listed);
		LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
		if (BloomPageIsSliced(BufferGetPage(stripebuf), BLOOMIDX_STRIPE, s))
		{
			BloomCheckStripePage(index, BufferGetPage(stripebuf), listed,
								 state->shape.sigBits);
			UnlockReleaseBuffer(listbuf);
			UnlockReleaseBuffer(metabuf);
			return stripebuf;
		}
		/* Not a stripe page of s any more: replace it */
		UnlockReleaseBuffer(stripebuf);
	}

	xlogState = GenericXLogStart(index);
	if (!BufferIsValid(listbuf))
	{
		meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
		listbuf = BloomNewBuffer(index);
		page = GenericXLogRegisterBuffer(xlogState, listbuf, GENERIC_XLOG_FULL_IMAGE);
		BloomInitSlicedPage(page, BLOOMIDX_STRIPELIST, state->shape.sigBits, listNo);
		meta->stripeLists[k] = BufferGetBlockNumber(listbuf);
	}
	else
		page = GenericXLogRegisterBuffer(xlogState, listbuf, 0);

	stripebuf = BloomNewBuffer(index);
	BloomInitSlicedPage(GenericXLogRegisterBuffer(xlogState, stripebuf,
												  GENERIC_XLOG_FULL_IMAGE),
						BLOOMIDX_STRIPE, state->shape.sigBits, s);
	BloomStripeListSet(page, s % BLOOMIDX_STRIPELIST_ENTRIES,
					   BufferGetBlockNumber(stripebuf));
	GenericXLogFinish(xlogState);

	UnlockReleaseBuffer(listbuf);
	UnlockReleaseBuffer(metabuf);
	return stripebuf;
}

/*
 * Merge the pending rows into the slices; the caller holds the merge lock.
 * Pending pages are taken in order while the stripe lists leave row
 * numbers for their rows; returns the number of rows merged.
 */
int64
BloomSlicedMergeLocked(Relation index)
{
	BloomState	state = BloomGetState(index);
	int			sigBits = state->shape.sigBits;
	BloomSlicedSnapshot *snap;
	BloomRowBatch batch;
	BlockNumber *taken;
	int			ntaken = 0;
	uint64		pos;
	uint32		nStripes;
	int			done;
	uint64	   *sliceWords;
	uint64		room;
	bool		full = false;
	Buffer		metabuf;
	GenericXLogState *xlogState;
	BloomMetaPage meta;
	int			i;

	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap, true);
	if (snap->nPending == 0)
	{
		BloomFreeSnapshot(snap);
		return 0;
	}

	/* Freeze the pending pages and take their rows */
	batch.nrows = 0;
	batch.maxrows = snap->nPending * state->tuplesPerPage;
	batch.words = palloc(sizeof(uint64) * state->shape.sigWords * batch.maxrows);
	batch.tids = palloc(sizeof(ItemPointerData) * batch.maxrows);
	batch.bitsSet = 0;
	taken = palloc(sizeof(BlockNumber) * snap->nPending);
	room = BloomSnapRowsLeft(snap);
	for (i = 0; i < snap->nPending && !full; i++)
	{
		CHECK_FOR_INTERRUPTS();
		BloomTakePendingPage(index, state, snap->pending[i], &batch, room, &full);
		if (!full)
			taken[ntaken++] = snap->pending[i];
	}

	/* Write them into the stripes, past the rows merged so far */
	sliceWords = palloc(sizeof(uint64) * BLOOMIDX_STRIPE_WORDS * sigBits);
	pos = snap->mergedRows;
	nStripes = snap->nStripes;
	done = 0;
	while (done < batch.nrows)
	{
		uint32		s = (uint32) (pos / BLOOMIDX_STRIPE_ROWS);
		int			r0 = (int) (pos % BLOOMIDX_STRIPE_ROWS);
		int			n = Min(batch.nrows - done, (int) BLOOMIDX_STRIPE_ROWS - r0);
		Buffer		stripebuf;
		GenericXLogState *stripeXlog;
		Page		stripePage;

		if (s >= nStripes)
		{
			Assert(s == nStripes);
			stripebuf = BloomMergeStripePage(index, state, s);
			nStripes++;
		}
		else
		{
			BlockNumber blkno = BloomSnapStripe(snap, s);

			if (blkno == InvalidBlockNumber)
				elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied before it was full",
					 s, RelationGetRelationName(index));
			stripebuf = ReadBuffer(index, blkno);
			LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
			if (!BloomPageIsSliced(BufferGetPage(stripebuf), BLOOMIDX_STRIPE, s))
				BloomSlicedCorrupted(index, blkno, "stripe page");
			BloomCheckStripePage(index, BufferGetPage(stripebuf), blkno, sigBits);
		}

		BloomWriteStripe(index, state, stripebuf, s, &batch, done, n, r0, sliceWords);

		/* Count the stripe's new live rows */
		stripeXlog = GenericXLogStart(index);
		stripePage = GenericXLogRegisterBuffer(stripeXlog, stripebuf, 0);
		BloomStripeAddLive(stripePage, n);
		GenericXLogFinish(stripeXlog);
		UnlockReleaseBuffer(stripebuf);

		pos += n;
		done += n;
	}

	/* Publish: advance mergedRows and drop the pages from the list */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomCheckMeta(index, BufferGetPage(metabuf));
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	meta->mergedRows = pos;
	meta->nStripes = nStripes;
	meta->statTuples += batch.nrows;
	meta->statBitsSet += batch.bitsSet;
	{
		int			kept = 0;

		for (i = 0; i < meta->nPending; i++)
		{
			bool		wasTaken = false;
			int			j;

			for (j = 0; j < ntaken && !wasTaken; j++)
				wasTaken = meta->pendingPages[i] == taken[j];
			if (!wasTaken)
				meta->pendingPages[kept++] = meta->pendingPages[i];
		}
		meta->nPending = kept;
	}
	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(metabuf);

	/*
	 * Free the merged pending pages at once: a scan that listed one before
	 * the metapage record reads mergedRows again after the pending pages
	 * (see BloomSlicedGetBitmap), so it finds their rows in the slices
	 * whatever it finds on the page.
	 */
	for (i = 0; i < ntaken; i++)
	{
		Buffer		buffer = ReadBuffer(index, taken[i]);

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (BloomPageIsData(index, BufferGetPage(buffer), taken[i],
							state->tuplesPerPage))
			BloomFreePage(index, buffer);
		UnlockReleaseBuffer(buffer);
	}

	pfree(sliceWords);
	pfree(taken);
	pfree(batch.words);
	pfree(batch.tids);
	BloomFreeSnapshot(snap);
	return batch.nrows;
}

/*
 * Merge the pending rows of a sliced index into its slices.  With wait
 * false, give up at once if another backend is merging.  Returns the
 * number of rows merged.
 */
int64
BloomSlicedMerge(Relation index, bool wait)
{
	int64		merged;

	if (wait)
		LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	else if (!ConditionalLockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock))
		return 0;
	merged = BloomSlicedMergeLocked(index);
	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	return merged;
}

