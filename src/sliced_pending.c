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

#include <time.h>

#include "access/generic_xlog.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
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
 * Pages one merge step allocates at most for the stripe it fills (see
 * BloomPrepareStripe).  A small-limits build allocates in smaller steps, so
 * that its tests go through several.
 */
#ifndef BLOOMIDX_SMALL_LIMITS
#define BLOOMIDX_PREPARE_PAGES	16
#else
#define BLOOMIDX_PREPARE_PAGES	5
#endif

/*
 * Rows one insert merges at most, when it merges (see BloomSlicedInsert):
 * two pending pages' worth, so that the merges outpace the inserts and no
 * insert pays for more than a small step.
 */
static int
BloomMergeStepRows(BloomState state)
{
	return 2 * state->tuplesPerPage;
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
			return false;
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
			/*
			 * The list is full (merge steps fell behind, see
			 * BloomSlicedInsert): merge all of it, then start over.
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
		meta->pendingPages[meta->nPending++] = BufferGetBlockNumber(buffer);
		meta->statTuples++;
		meta->statBitsSet += nbitsSet;
		npending = meta->nPending;
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
		UnlockReleaseBuffer(metabuf);
		return true;
	}
}

/*
 * Add rows, their signatures as words, to the pending list: the last
 * pending page filled first, then pages of their own, each page filled
 * (and a new one listed) in one WAL record: VACUUM moving
 * the live rows of a stripe back, under the merge lock.  Rows the list has
 * no room for take BloomPendingAdd's path, which merges a full list.
 */
void
BloomPendingAddRows(Relation index, BloomState state, const uint64 *words,
					const ItemPointerData *tids, int n)
{
	const BloomShape *shape = &state->shape;
	uint8		sig[BLOOMIDX_SLICED_MAX_LENGTH / 8];
	int			done = 0;

	while (done < n)
	{
		Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
		BloomMetaPage meta;
		GenericXLogState *xlogState;
		Buffer		buffer;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		BloomCheckMeta(index, BufferGetPage(metabuf));
		meta = BloomPageGetMeta(BufferGetPage(metabuf));
		xlogState = GenericXLogStart(index);

		/* The last pending page first, if it has room; else a new one */
		buffer = InvalidBuffer;
		if (meta->nPending > 0)
		{
			BlockNumber last = meta->pendingPages[meta->nPending - 1];

			buffer = ReadBuffer(index, last);
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
		if (!BufferIsValid(buffer) && meta->nPending >= BLOOMIDX_PENDING_SIZE)
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
			meta->pendingPages[meta->nPending++] = BufferGetBlockNumber(buffer);
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
		int			nbits = 0;
		int			w;

		for (w = 0; w < shape->sigWords; w++)
			nbits += pg_popcount64(words[(Size) done * shape->sigWords + w]);
		BloomStoreWords(sig, words + (Size) done * shape->sigWords, shape->sigBytes);
		(void) BloomPendingAdd(index, state, sig, nbits, (ItemPointer) &tids[done]);
	}
}

/*
 * Insert a row into a sliced index: into the pending pages.  An insert
 * that starts a new pending page then takes one merge step, of at most
 * BloomMergeStepRows rows, if one is due (see BloomMergeWant) and no other
 * backend is merging: inserts never pay for a whole stripe.
 */
void
BloomSlicedInsert(Relation index, BloomState state, const uint8 *sig,
				  int nbitsSet, ItemPointer tid)
{
	if (BloomPendingAdd(index, state, sig, nbitsSet, tid))
		BloomSlicedMerge(index, false, BLOOM_MERGE_STEP);
}

/*
 * Take the first rows of one pending page, at most max, into the batch,
 * freezing the page so that no more rows are added to it; *ntuples is set
 * to the rows on the page.  Returns the rows taken, or -1 if it is not a
 * pending page (a merge interrupted by a crash after its metapage record
 * may have freed it already).
 */
static int
BloomTakePendingPage(Relation index, BloomState state, BlockNumber blkno,
					 BloomRowBatch *batch, uint64 max, int *ntuples)
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
		*ntuples = 0;
		return -1;
	}
	*ntuples = BloomPageGetNTuples(page);
	n = (int) Min((uint64) *ntuples, max);
	if (n > 0 && !BloomPageHasFlag(page, BLOOMIDX_FROZEN))
	{
		GenericXLogState *xlogState = GenericXLogStart(index);

		page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
		BloomPageSetFrozen(page);
		GenericXLogFinish(xlogState);
		page = BufferGetPage(buffer);
	}

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
	return n;
}

/* The TIDs of a batch, for sorting it: qsort_arg's comparator */
static int
BloomBatchTidCmp(const void *a, const void *b, void *arg)
{
	const ItemPointerData *tids = arg;

	return ItemPointerCompare((ItemPointer) &tids[*(const int *) a],
							  (ItemPointer) &tids[*(const int *) b]);
}

/*
 * Sort the rows of a batch by heap TID, so that each TID map packs rows of
 * nearby heap blocks in few bits, as a build's do: rows VACUUM moved back
 * from emptied stripes, and rows inserted over the whole table, would
 * otherwise come in runs that each span the table.
 */
static void
BloomSortBatch(BloomRowBatch *batch, int sigWords)
{
	int		   *order = palloc(sizeof(int) * batch->nrows);
	uint64	   *words = palloc(sizeof(uint64) * sigWords * batch->nrows);
	ItemPointerData *tids = palloc(sizeof(ItemPointerData) * batch->nrows);
	int			i;

	for (i = 0; i < batch->nrows; i++)
		order[i] = i;
	qsort_arg(order, batch->nrows, sizeof(int), BloomBatchTidCmp, batch->tids);
	for (i = 0; i < batch->nrows; i++)
	{
		memcpy(words + (Size) i * sigWords,
			   batch->words + (Size) order[i] * sigWords,
			   sizeof(uint64) * sigWords);
		tids[i] = batch->tids[order[i]];
	}
	pfree(batch->words);
	pfree(batch->tids);
	pfree(order);
	batch->words = words;
	batch->tids = tids;
}

/*
 * Rows on the pending pages of a snapshot, counted up to need at least.
 */
static uint64
BloomCountPending(Relation index, BloomState state,
				  const BloomSlicedSnapshot *snap, uint64 need)
{
	uint64		rows = 0;
	int			i;

	for (i = 0; i < snap->nPending && rows < need; i++)
	{
		Buffer		buffer = ReadBuffer(index, snap->pending[i]);
		Page		page;

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (BloomPageIsData(index, page, snap->pending[i], state->tuplesPerPage))
			rows += BloomPageGetNTuples(page);
		UnlockReleaseBuffer(buffer);
	}
	return rows;
}

/*
 * Has a merge step begun allocating stripe s, the one past the stripes of
 * a snapshot (see BloomPrepareStripe)?  Its stripe list lists it already.
 * A stripe page VACUUM freed since may still be listed: the steps then
 * allocate it again.
 */
static bool
BloomStripeBegun(Relation index, const BloomSlicedSnapshot *snap, uint32 s)
{
	uint32		listNo = s / BLOOMIDX_STRIPELIST_ENTRIES;
	uint32		k;
	Buffer		buffer;
	bool		begun = false;

	if (s < snap->firstStripe)
		return false;
	k = listNo - snap->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES;
	if (k >= BLOOMIDX_MAX_STRIPELISTS || snap->stripeLists[k] == InvalidBlockNumber)
		return false;
	buffer = ReadBuffer(index, snap->stripeLists[k]);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	if (BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_STRIPELIST, listNo))
		begun = BloomStripeListGet(BufferGetPage(buffer),
								   s % BLOOMIDX_STRIPELIST_ENTRIES) != InvalidBlockNumber;
	UnlockReleaseBuffer(buffer);
	return begun;
}

/*
 * How many pending rows a merge of the given mode takes (see sliced.h):
 * the slices of a stripe are written only once there are rows enough to
 * fill it, so that an index's stripes hold at least as many rows as their
 * pages can, and a small table's rows stay in pending pages as in the row
 * layout.  A stripe started with fewer rows (by bloomidx_merge(), or in an
 * index built by version 1.0) is filled by VACUUM once the pending rows can
 * fill it, and by the merge steps of inserts as they come (its pages are
 * there already).  When the pending list is crowded (long signatures,
 * whose stripe needs more pending pages than the list has room for),
 * merges take the rows they have.
 */
static uint64
BloomMergeWant(Relation index, BloomState state, const BloomSlicedSnapshot *snap,
			   BloomMergeMode mode)
{
	uint64		r0 = snap->mergedRows % BLOOMIDX_STRIPE_ROWS;
	uint64		toFill = BLOOMIDX_STRIPE_ROWS - r0;
	bool		crowded = snap->nPending >= BLOOMIDX_PENDING_CROWDED;
	uint64		pending;

	if (mode == BLOOM_MERGE_ALL)
		return PG_UINT64_MAX;
	if (mode == BLOOM_MERGE_STEP)
	{
		/*
		 * Only a step that would start a stripe counts the pending rows:
		 * once started (its allocation begun), a stripe is filled by the
		 * steps that follow.
		 */
		if (!crowded && r0 == 0 &&
			!BloomStripeBegun(index, snap, (uint32) (snap->mergedRows / BLOOMIDX_STRIPE_ROWS)) &&
			BloomCountPending(index, state, snap, toFill) < toFill)
			return 0;
		return Min(toFill, (uint64) BloomMergeStepRows(state));
	}

	/* Whole stripes: those the pending rows fill, or all when crowded */
	if (crowded)
		return PG_UINT64_MAX;
	pending = BloomCountPending(index, state, snap, PG_UINT64_MAX);
	if (pending < toFill)
		return 0;
	return toFill + (pending - toFill) / BLOOMIDX_STRIPE_ROWS * BLOOMIDX_STRIPE_ROWS;
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
	GenericXLogState *xlogState = NULL;
	Buffer		group[MAX_GENERIC_XLOG_PAGES];
	int			ngroup = 0;
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

	/*
	 * OR them into the slice pages, those that exist several to a WAL
	 * record; a slice with no page yet gets one, linked in its own record.
	 */
	for (b = 0; b < sigBits; b++)
	{
		const uint64 *src = sliceWords + (Size) b * nw;
		BlockNumber link;
		Buffer		buffer;
		Page		page;
		int			w;
		bool		any = false;

		CHECK_FOR_INTERRUPTS();
		for (w = 0; w < nw && !any; w++)
			any = src[w] != 0;
		if (!any)
			continue;

		link = BloomStripeGetLink(BufferGetPage(stripebuf), BLOOMIDX_SLICE, b);
		if (link == InvalidBlockNumber)
		{
			GenericXLogState *newXlog;

			page = BloomStripeGetPage(index, stripebuf, BLOOMIDX_SLICE, b, sigBits,
									  s, false, &newXlog, &buffer);
			BloomSliceOrWords(page, w0, src, nw);
			GenericXLogFinish(newXlog);
			UnlockReleaseBuffer(buffer);
			continue;
		}

		buffer = ReadBuffer(index, link);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_SLICE, s))
			BloomSlicedCorrupted(index, link, "slice page");
		if (xlogState == NULL)
			xlogState = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
		BloomSliceOrWords(page, w0, src, nw);
		group[ngroup++] = buffer;
		if (ngroup == MAX_GENERIC_XLOG_PAGES)
		{
			GenericXLogFinish(xlogState);
			xlogState = NULL;
			while (ngroup > 0)
				UnlockReleaseBuffer(group[--ngroup]);
		}
	}
	if (xlogState != NULL)
	{
		GenericXLogFinish(xlogState);
		while (ngroup > 0)
			UnlockReleaseBuffer(group[--ngroup]);
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
BloomMergeStripePage(Relation index, BloomState state, uint32 s, int *allocated)
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
		(*allocated)++;
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
	(*allocated)++;

	UnlockReleaseBuffer(listbuf);
	UnlockReleaseBuffer(metabuf);
	return stripebuf;
}

/*
 * CPU time this backend has used, in ms (0 where the platform cannot
 * tell): merge steps log it beside their elapsed time, which a busy
 * machine stretches.
 */
static double
BloomCpuMs(void)
{
#ifdef CLOCK_PROCESS_CPUTIME_ID
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		return ts.tv_sec * 1000.0 + ts.tv_nsec / 1000000.0;
#endif
	return 0;
}

/*
 * Log at DEBUG1 what a merge did, with the elapsed and CPU time since it
 * started.
 */
static void
BloomLogMergeTime(Relation index, instr_time *start, double cpuStart,
				  char *what)
{
	instr_time	elapsed;

	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, *start);
	elog(DEBUG1, "bloomidx index \"%s\": %s in %.3f ms (%.3f ms CPU)",
		 RelationGetRelationName(index), what,
		 INSTR_TIME_GET_MILLISEC(elapsed), BloomCpuMs() - cpuStart);
	pfree(what);
}

/*
 * The stripe page of stripe s, where the rows past those of a snapshot go,
 * locked exclusively: a stripe the snapshot lists, or one past them (see
 * BloomMergeStripePage), whose allocated pages are added to *allocated.
 */
static Buffer
BloomMergeLockStripe(Relation index, BloomState state,
					 const BloomSlicedSnapshot *snap, uint32 s, int *allocated)
{
	BlockNumber blkno;
	Buffer		stripebuf;

	if (s >= snap->nStripes)
		return BloomMergeStripePage(index, state, s, allocated);

	blkno = BloomSnapStripe(snap, s);
	if (blkno == InvalidBlockNumber)
		elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied before it was full",
			 s, RelationGetRelationName(index));
	stripebuf = ReadBuffer(index, blkno);
	LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
	if (!BloomPageIsSliced(BufferGetPage(stripebuf), BLOOMIDX_STRIPE, s))
		BloomSlicedCorrupted(index, blkno, "stripe page");
	BloomCheckStripePage(index, BufferGetPage(stripebuf), blkno,
						 state->shape.sigBits);
	return stripebuf;
}

/*
 * Pages a merge step allocates at most (see BloomPrepareStripe): the
 * default shape's stripe in six steps, any shape's in eight at most.
 */
static int
BloomPrepareBudget(BloomState state)
{
#ifndef BLOOMIDX_SMALL_LIMITS
	return Max(BLOOMIDX_PREPARE_PAGES, (state->shape.sigBits + 7) / 8);
#else
	return BLOOMIDX_PREPARE_PAGES;
#endif
}

/*
 * Is link j of a stripe page (of signatures of sigBits bits) missing, where
 * 0 .. sigBits - 1 are the slices and sigBits is the first TID map?
 */
static bool
BloomStripeLinkMissing(Page stripePage, int sigBits, int j)
{
	if (j < sigBits)
		return BloomStripeGetLink(stripePage, BLOOMIDX_SLICE, j) == InvalidBlockNumber;
	return BloomStripeGetNTidPages(stripePage) == 0 &&
		BloomStripeGetLink(stripePage, BLOOMIDX_TIDMAP, 0) == InvalidBlockNumber;
}

/*
 * Allocate pages for the stripe the next merged rows go to, at most budget
 * of them: its stripe page, a slice page for each bit that has none, and
 * its first TID map.  A merge step (BLOOM_MERGE_STEP) writes rows only into
 * a stripe so prepared, so that no insert allocates a whole stripe's pages.
 * Each WAL record initializes up to three new pages and links them from the
 * stripe page; a stripe not counted by the metapage yet is listed past
 * those it counts, as a merge cut short by a crash leaves one, and scans do
 * not read it.  Returns whether the stripe was ready with no page to
 * allocate; *allocated is set to the pages allocated.
 */
static bool
BloomPrepareStripe(Relation index, BloomState state,
				   const BloomSlicedSnapshot *snap, int budget, int *allocated)
{
	int			sigBits = state->shape.sigBits;
	uint32		s = (uint32) (snap->mergedRows / BLOOMIDX_STRIPE_ROWS);
	Buffer		stripebuf;
	int			j = 0;

	*allocated = 0;
	stripebuf = BloomMergeLockStripe(index, state, snap, s, allocated);
	while (j <= sigBits && *allocated < budget)
	{
		Buffer		buffers[MAX_GENERIC_XLOG_PAGES - 1];
		int			links[MAX_GENERIC_XLOG_PAGES - 1];
		int			n = 0;
		GenericXLogState *xlogState;
		Page		stripePage;
		int			i;

		CHECK_FOR_INTERRUPTS();
		for (; j <= sigBits && n < lengthof(links) && *allocated + n < budget; j++)
		{
			if (BloomStripeLinkMissing(BufferGetPage(stripebuf), sigBits, j))
				links[n++] = j;
		}
		if (n == 0)
			break;

		BloomNewBuffers(index, buffers, n);
		xlogState = GenericXLogStart(index);
		stripePage = GenericXLogRegisterBuffer(xlogState, stripebuf, 0);
		for (i = 0; i < n; i++)
		{
			uint16		flag = links[i] < sigBits ? BLOOMIDX_SLICE : BLOOMIDX_TIDMAP;

			BloomInitSlicedPage(GenericXLogRegisterBuffer(xlogState, buffers[i],
														  GENERIC_XLOG_FULL_IMAGE),
								flag, sigBits, s);
			BloomStripeSetLink(stripePage, flag, links[i] < sigBits ? links[i] : 0,
							   BufferGetBlockNumber(buffers[i]));
		}
		GenericXLogFinish(xlogState);
		for (i = 0; i < n; i++)
			UnlockReleaseBuffer(buffers[i]);
		*allocated += n;
	}

	/* Ready if it needed nothing, and has nothing left to allocate */
	for (; j <= sigBits && *allocated == 0; j++)
	{
		if (BloomStripeLinkMissing(BufferGetPage(stripebuf), sigBits, j))
			break;
	}
	UnlockReleaseBuffer(stripebuf);
	return *allocated == 0 && j > sigBits;
}

/*
 * One merge of pending rows into the slices, as many as the mode wants
 * (see BloomMergeWant) up to the end of the stripe being filled.  Pending
 * pages are taken in order while the stripe lists leave row numbers for
 * their rows; the last page taken may give only its first rows, the others
 * staying on it.  Returns the number of rows merged.
 */
static int64
BloomSlicedMergeOnce(Relation index, BloomMergeMode mode)
{
	BloomState	state = BloomGetState(index);
	int			sigBits = state->shape.sigBits;
	int			sigBytes = state->shape.sigBytes;
	BloomSlicedSnapshot *snap;
	BloomRowBatch batch;
	BlockNumber *taken;
	int			ntaken = 0;
	BlockNumber split = InvalidBlockNumber;
	int			splitRows = 0;
	uint64		pos;
	uint32		nStripes;
	int			done;
	uint64	   *sliceWords;
	uint64		want;
	Buffer		metabuf;
	Buffer		splitbuf = InvalidBuffer;
	GenericXLogState *xlogState;
	BloomMetaPage meta;
	instr_time	start;
	double		cpuStart = BloomCpuMs();
	int			allocated = 0;
	int			navail;
	int			i;

	INSTR_TIME_SET_CURRENT(start);
	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap, true);
	want = snap->nPending == 0 ? 0 : BloomMergeWant(index, state, snap, mode);
	/* A step leaves the last page, still being filled, to the next one */
	navail = mode == BLOOM_MERGE_STEP ? snap->nPending - 1 : snap->nPending;
	want = Min(want, BLOOMIDX_STRIPE_ROWS - snap->mergedRows % BLOOMIDX_STRIPE_ROWS);
	want = Min(want, BloomSnapRowsLeft(snap));
	want = Min(want, (uint64) Max(navail, 0) * state->tuplesPerPage);
	if (want == 0)
	{
		BloomFreeSnapshot(snap);
		return 0;
	}

	/*
	 * A step writes rows only into a stripe whose pages are all there: if
	 * some are missing, this step allocates some of them instead.
	 */
	if (mode == BLOOM_MERGE_STEP &&
		!BloomPrepareStripe(index, state, snap, BloomPrepareBudget(state),
							&allocated))
	{
		BloomLogMergeTime(index, &start, cpuStart,
						  psprintf("allocated %d pages of stripe %u", allocated,
								   (uint32) (snap->mergedRows / BLOOMIDX_STRIPE_ROWS)));
		BloomFreeSnapshot(snap);
		return 0;
	}

	/* Freeze the pending pages and take their rows */
	batch.nrows = 0;
	batch.maxrows = (int) want;
	batch.words = palloc(sizeof(uint64) * state->shape.sigWords * batch.maxrows);
	batch.tids = palloc(sizeof(ItemPointerData) * batch.maxrows);
	batch.bitsSet = 0;
	taken = palloc(sizeof(BlockNumber) * snap->nPending);
	for (i = 0; i < navail && batch.nrows < want; i++)
	{
		int			ntuples;
		int			took;

		CHECK_FOR_INTERRUPTS();
		took = BloomTakePendingPage(index, state, snap->pending[i], &batch,
									want - batch.nrows, &ntuples);
		if (took >= 0 && took < ntuples)
		{
			/* Its other rows stay pending */
			split = snap->pending[i];
			splitRows = took;
			break;
		}
		taken[ntaken++] = snap->pending[i];
	}

	/*
	 * A merge of whole stripes (not an insert's step, which takes a few
	 * pages of the rows) sorts them first.  Should a crash cut the merge
	 * short, the next one takes the same rows and sorts them the same way.
	 */
	if (mode != BLOOM_MERGE_STEP)
		BloomSortBatch(&batch, state->shape.sigWords);

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

		Assert(s <= nStripes);
		stripebuf = BloomMergeLockStripe(index, state, snap, s, &allocated);
		if (s >= nStripes)
			nStripes++;

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

	/*
	 * Publish: advance mergedRows and drop the pages from the list, and in
	 * the same WAL record drop the rows taken from a page that gave only
	 * some (frozen, so that nothing but this merge changed it).
	 */
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
	if (split != InvalidBlockNumber)
	{
		Page		page;

		splitbuf = ReadBuffer(index, split);
		LockBuffer(splitbuf, BUFFER_LOCK_EXCLUSIVE);
		page = GenericXLogRegisterBuffer(xlogState, splitbuf, 0);
		if (!BloomPageIsData(index, page, split, state->tuplesPerPage) ||
			BloomPageGetNTuples(page) < splitRows)
			BloomSlicedCorrupted(index, split, "pending page a merge took rows from");
		/* Deleting from the last one down moves only rows that stay */
		for (i = splitRows - 1; i >= 0; i--)
			BloomPageDeleteTuple(page, sigBytes, i);
		BloomPageClearFrozen(page);
	}
	GenericXLogFinish(xlogState);
	if (BufferIsValid(splitbuf))
		UnlockReleaseBuffer(splitbuf);
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

	BloomLogMergeTime(index, &start, cpuStart,
					  psprintf("merged %d rows from %d pending pages",
							   batch.nrows,
							   ntaken + (split != InvalidBlockNumber ? 1 : 0)));

	pfree(sliceWords);
	pfree(taken);
	pfree(batch.words);
	pfree(batch.tids);
	BloomFreeSnapshot(snap);
	return batch.nrows;
}

/*
 * Merge pending rows into the slices, as many as the mode wants (see
 * BloomMergeWant); the caller holds the merge lock.  A stripe at a time,
 * so that the pending pages of one are freed before the next one takes
 * pages: the index needs room for its pending rows and one stripe, not
 * for its pending rows twice over.  Returns the number of rows merged.
 */
int64
BloomSlicedMergeLocked(Relation index, BloomMergeMode mode)
{
	int64		total = 0;
	int64		merged;

	do
	{
		CHECK_FOR_INTERRUPTS();
		merged = BloomSlicedMergeOnce(index, mode);
		total += merged;
	} while (merged > 0 && mode != BLOOM_MERGE_STEP);
	return total;
}

/*
 * Merge pending rows of a sliced index into its slices, as many as the
 * mode wants (see BloomMergeWant).  With wait false, give up at once if
 * another backend is merging.  Returns the number of rows merged.
 */
int64
BloomSlicedMerge(Relation index, bool wait, BloomMergeMode mode)
{
	int64		merged;

	if (wait)
		LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	else if (!ConditionalLockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock))
		return 0;
	merged = BloomSlicedMergeLocked(index, mode);
	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	return merged;
}

/*
 * bloomidx_merge(): merge every pending row (the routine table's merge).
 */
int64
BloomSlicedMergeAll(Relation index, bool wait)
{
	return BloomSlicedMerge(index, wait, BLOOM_MERGE_ALL);
}
