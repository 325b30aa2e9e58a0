/*-------------------------------------------------------------------------
 *
 * sliced_merge.c
 *	  The merge of the sliced layout's pending rows into the stripes: how
 *	  many rows a merge takes, taking them from pending pages, and the
 *	  metapage record that makes them merged.
 *
 * When the pending list grows long, at VACUUM, or through bloomidx_merge(),
 * the pending rows are merged into the stripes; sliced_stripe.c writes
 * them into a stripe's pages.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_merge.c
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

/*
 * Rows one insert merges at most, when it merges (see BloomBatchAdd):
 * two pending pages' worth, so that the merges outpace the inserts and no
 * insert pays for more than a small step.  Pages of rows without keys:
 * with keys (format 4) a page holds fewer rows, and a step writes as many
 * stripe pages however few rows it merges, so a step then waits for the
 * few more pages that hold as many (BloomSlicedMergeOnce).
 */
static int
BloomMergeStepRows(BloomState state)
{
	return 2 * BloomTuplesPerPage(state->shape.sigBytes);
}

/*
 * Take the first rows of one pending page, at most max, into the batch,
 * with their keys if the batch has room for keys, freezing the page so
 * that no more rows are added to it; *ntuples is set to the rows on the
 * page, and *keyless if the rows taken have no keys (see page.h).  Returns
 * the rows taken, or -1 if it is not a pending page (a merge interrupted
 * by a crash after its metapage record may have freed it already).
 */
static int
BloomTakePendingPage(Relation index, BloomState state, BlockNumber blkno,
					 BloomRowBatch *batch, uint64 max, int *ntuples,
					 bool *keyless)
{
	int			sigBytes = state->shape.sigBytes;
	int			sigWords = state->shape.sigWords;
	int			slotBytes = BloomSlicedSlotBytes(state);
	int			nColumns = state->shape.nColumns;
	Buffer		buffer = ReadBuffer(index, blkno);
	Page		page;
	int			i,
				n;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buffer);
	if (!BloomSlicedPageIsData(index, page, blkno, state->tuplesPerPage))
	{
		UnlockReleaseBuffer(buffer);
		*ntuples = 0;
		return -1;
	}
	*ntuples = BloomPageGetNTuples(page);
	n = (int) Min((uint64) *ntuples, max);
	if (n > 0 && BloomPageHasFlag(page, BLOOMIDX_KEYLESS))
		*keyless = true;
	if (n > 0 && !BloomPageHasFlag(page, BLOOMIDX_FROZEN))
	{
		GenericXLogState *xlogState = GenericXLogStart(index);

		page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
		BloomPageSetFrozen(page);
		BloomMergeXLogFinish(index, xlogState);
		page = BufferGetPage(buffer);
	}

	for (i = 0; i < n; i++)
	{
		const uint8 *sig = BloomPageGetSignature(page, slotBytes, i);
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
		if (batch->keys != NULL)
			BloomPendingGetKeys(state, sig, batch->keys + (Size) batch->nrows * nColumns);
		batch->tids[batch->nrows++] = *BloomPageGetTid(page, slotBytes, i);
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
 * Sort the rows of a batch, and their keys (nColumns a row) if it has
 * any, by heap TID, so that each TID map packs rows of nearby heap blocks
 * in few bits, as a build's do: rows VACUUM moved back from emptied
 * stripes, and rows inserted over the whole table, would otherwise come in
 * runs that each span the table.
 */
static void
BloomSortBatch(BloomRowBatch *batch, int sigWords, int nColumns)
{
	int		   *order = palloc(sizeof(int) * Max(batch->nrows, 1));
	uint64	   *words = palloc(sizeof(uint64) * sigWords * Max(batch->nrows, 1));
	uint32	   *keys = NULL;
	ItemPointerData *tids = palloc(sizeof(ItemPointerData) * Max(batch->nrows, 1));
	int			i;

	if (batch->keys != NULL)
		keys = palloc(sizeof(uint32) * nColumns * Max(batch->nrows, 1));
	for (i = 0; i < batch->nrows; i++)
		order[i] = i;
	qsort_arg(order, batch->nrows, sizeof(int), BloomBatchTidCmp, batch->tids);
	for (i = 0; i < batch->nrows; i++)
	{
		memcpy(words + (Size) i * sigWords,
			   batch->words + (Size) order[i] * sigWords,
			   sizeof(uint64) * sigWords);
		if (keys != NULL)
			memcpy(keys + (Size) i * nColumns,
				   batch->keys + (Size) order[i] * nColumns,
				   sizeof(uint32) * nColumns);
		tids[i] = batch->tids[order[i]];
	}
	pfree(batch->words);
	pfree(batch->tids);
	if (batch->keys != NULL)
		pfree(batch->keys);
	pfree(order);
	batch->words = words;
	batch->tids = tids;
	batch->keys = keys;
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
		if (BloomSlicedPageIsData(index, page, snap->pending[i], state->tuplesPerPage))
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
 * Does an index start its stripes without waiting for a stripe's worth of
 * pending rows (see BloomMergeWant)?  Once it has a stripe, and a stripe it
 * starts gets its summary's sizes from the build's measure of a full
 * stripe (or it has no summaries) rather than from the few rows written
 * there first.
 */
static bool
BloomMergeEager(const BloomSlicedSnapshot *snap)
{
	return snap->nStripes > 0 && snap->summariesSized;
}

/*
 * How many pending rows a merge of the given mode takes (see sliced.h).
 * Until an index has a stripe, the slices of a stripe are written only
 * once there are rows enough to fill it, so that a small table's rows stay
 * in pending pages as in the row layout.  Once it has one (and its
 * summaries' sizes are known, BloomMergeEager), the pending rows go into
 * stripes as they come, since every scan reads every pending page: a step
 * starts a new stripe once a step's rows are pending, and VACUUM merges
 * them all.
 * A stripe started with fewer rows (by bloomidx_merge(), a build or a
 * step) is filled by the merge steps of inserts as they come (its pages
 * are there already), and by VACUUM.  When the pending list is crowded
 * (long signatures, whose stripe needs more pending pages than the list
 * has room for), merges take the rows they have.
 */
static uint64
BloomMergeWant(Relation index, BloomState state, const BloomSlicedSnapshot *snap,
			   BloomMergeMode mode)
{
	uint64		r0 = snap->mergedRows % BLOOMIDX_STRIPE_ROWS;
	uint64		toFill = BLOOMIDX_STRIPE_ROWS - r0;
	uint64		stepRows = (uint64) BloomMergeStepRows(state);
	bool		crowded = snap->nPending >= BLOOMIDX_PENDING_CROWDED;
	bool		eager = BloomMergeEager(snap);
	uint64		pending;

	if (mode == BLOOM_MERGE_ALL)
		return PG_UINT64_MAX;
	if (mode == BLOOM_MERGE_STEP)
	{
		/*
		 * Only a step that would start a stripe counts the pending rows, up
		 * to what starting it needs (a stripe's worth, or a step's once
		 * eager): once started (its allocation begun), a stripe is filled
		 * by the steps that follow.  A pending page holds at most
		 * tuplesPerPage rows: pages too few to hold them are not read to
		 * count theirs (a step that would start a stripe runs each time an
		 * insert starts a pending page, and reading the list there took
		 * most of such an insert's time).
		 */
		uint64		need = eager ? Min(toFill, stepRows) : toFill;

		if (!crowded && r0 == 0 &&
			!BloomStripeBegun(index, snap, (uint32) (snap->mergedRows / BLOOMIDX_STRIPE_ROWS)) &&
			((uint64) snap->nPending * state->tuplesPerPage < need ||
			 BloomCountPending(index, state, snap, need) < need))
			return 0;
		return Min(toFill, stepRows);
	}

	/*
	 * Whole stripes: those the pending rows fill, or all when crowded or
	 * eager
	 */
	if (crowded || eager)
		return PG_UINT64_MAX;
	if ((uint64) snap->nPending * state->tuplesPerPage < toFill)
		return 0;
	pending = BloomCountPending(index, state, snap, PG_UINT64_MAX);
	if (pending < toFill)
		return 0;
	return toFill + (pending - toFill) / BLOOMIDX_STRIPE_ROWS * BLOOMIDX_STRIPE_ROWS;
}

/*
 * Rows with keys a merge measures the summaries' sizes on at least (see
 * BloomMergeMeasureSummaries), unless the pending list is crowded: half a
 * stripe's
 */
#define BLOOM_MEASURE_MIN_ROWS	(BLOOMIDX_STRIPE_ROWS / 2)

/*
 * Measure the summaries' sizes of an index whose build measured no full
 * stripe (BLOOMIDX_SUMMARY_MEASURED unset), for a merge about to start a
 * stripe, from the keys of the first stripe's worth of pending rows of a
 * snapshot, as a build does on a full stripe (BloomSummaryMeasureBlocks);
 * record them in the metapage with the flag, in a WAL record of its own,
 * so that this stripe and every later one are sized by them and the index
 * starts its stripes early from then on (BloomMergeEager).  Measured only
 * once the pending rows fill a stripe (or the pending list is crowded,
 * when they cannot: from all of them), on the rows that have keys (not
 * those of BLOOMIDX_KEYLESS pages) if they are at least
 * BLOOM_MEASURE_MIN_ROWS or, when crowded, half the rows; fewer than a
 * stripe's are extrapolated to one.  Takes no lock but one pending page's,
 * then the metapage's; the caller holds the merge lock.
 */
static void
BloomMergeMeasureSummaries(Relation index, BloomState state,
						   BloomSlicedSnapshot *snap)
{
	const BloomShape *shape = &state->shape;
	int			nColumns = shape->nColumns;
	int			slotBytes = BloomSlicedSlotBytes(state);
	bool		crowded = snap->nPending >= BLOOMIDX_PENDING_CROWDED;
	uint32	   *keys;
	uint32	   *scratch;
	uint16		blocks[BLOOMIDX_MAX_COLUMNS];
	Buffer		metabuf;
	BloomSlicedSummaryMetaData *sm;
	GenericXLogState *xlogState;
	int			bitsPerKey;
	bool		measured;
	int			rows = 0;
	int			nkeys = 0;
	int			i;

	if (!crowded &&
		(uint64) snap->nPending * state->tuplesPerPage < BLOOMIDX_STRIPE_ROWS)
		return;
	keys = palloc(sizeof(uint32) * nColumns * BLOOMIDX_STRIPE_ROWS);
	for (i = 0; i < snap->nPending && rows < BLOOMIDX_STRIPE_ROWS; i++)
	{
		Buffer		buffer;
		Page		page;
		int			n,
					j;

		CHECK_FOR_INTERRUPTS();
		buffer = ReadBuffer(index, snap->pending[i]);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!BloomSlicedPageIsData(index, page, snap->pending[i], state->tuplesPerPage))
		{
			UnlockReleaseBuffer(buffer);
			continue;
		}
		n = Min(BloomPageGetNTuples(page), BLOOMIDX_STRIPE_ROWS - rows);
		if (!BloomPageHasFlag(page, BLOOMIDX_KEYLESS))
			for (j = 0; j < n; j++)
				BloomPendingGetKeys(state, BloomPageGetSignature(page, slotBytes, j),
									keys + (Size) nkeys++ * nColumns);
		rows += n;
		UnlockReleaseBuffer(buffer);
	}
	if ((rows < BLOOMIDX_STRIPE_ROWS && !crowded) ||
		(nkeys < BLOOM_MEASURE_MIN_ROWS && !(crowded && nkeys > 0 && nkeys >= rows / 2)))
	{
		pfree(keys);
		return;
	}

	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	sm = BloomSlicedSummaryMeta(BloomPageGetMeta(BufferGetPage(metabuf)));
	bitsPerKey = sm->bitsPerKey;
	measured = (sm->flags & BLOOMIDX_SUMMARY_MEASURED) != 0;
	UnlockReleaseBuffer(metabuf);
	if (measured || bitsPerKey <= 0 || bitsPerKey > BLOOMIDX_SUMMARY_MAX_BITS_PER_KEY)
	{
		pfree(keys);
		return;
	}
	scratch = palloc(sizeof(uint32) * BLOOMIDX_STRIPE_ROWS);
	BloomSummaryMeasureBlocks(shape, bitsPerKey, keys, nkeys, blocks, scratch);
	pfree(scratch);
	pfree(keys);

	/* Only merges change these fields, and this one holds the merge lock */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	xlogState = GenericXLogStart(index);
	sm = BloomSlicedSummaryMeta(BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0)));
	memcpy(sm->blocks, blocks, sizeof(uint16) * nColumns);
	sm->flags |= BLOOMIDX_SUMMARY_MEASURED;
	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(metabuf);
	snap->summariesSized = true;
	elog(DEBUG1, "bloomidx index \"%s\": summary sizes measured on %d of %d pending rows",
		 RelationGetRelationName(index), nkeys, rows);
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
	int			slotBytes = BloomSlicedSlotBytes(state);
	bool		keyless = false;
	BloomSlicedSnapshot *snap;
	BloomRowBatch batch;
	BlockNumber *taken;
	int			ntaken = 0;
	BlockNumber split = InvalidBlockNumber;
	int			splitRows = 0;
	uint64		pos;
	uint32		nStripes;
	uint32		s;
	Buffer		stripebuf;
	BlockNumber stripeBlkno;
	uint64	   *sliceWords;
	uint64		want;
	Buffer		metabuf;
	Buffer		splitbuf = InvalidBuffer;
	GenericXLogState *xlogState;
	BloomMetaPage meta;
	Page		stripePage;
	instr_time	start;
	double		cpuStart = BloomCpuMs();
	int			allocated = 0;
	int			navail;
	int			i;

	BloomSlicedCheckSigBits(index, sigBits);
	INSTR_TIME_SET_CURRENT(start);
	BloomMergeRecordsReset();
	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap, true);
	want = snap->nPending == 0 ? 0 : BloomMergeWant(index, state, snap, mode);
	/* A step leaves the last page, still being filled, to the next one */
	navail = mode == BLOOM_MERGE_STEP ? snap->nPending - 1 : snap->nPending;
	want = Min(want, BLOOMIDX_STRIPE_ROWS - snap->mergedRows % BLOOMIDX_STRIPE_ROWS);
	want = Min(want, BloomSnapRowsLeft(snap));
	if (mode == BLOOM_MERGE_STEP && BloomSlicedPendingHasKeys(state) &&
		snap->nPending < BLOOMIDX_PENDING_CROWDED &&
		(uint64) Max(navail, 0) * state->tuplesPerPage < want)
	{
		/* Too few rows for a step yet (see BloomMergeStepRows) */
		want = 0;
	}
	want = Min(want, (uint64) Max(navail, 0) * state->tuplesPerPage);
	if (want == 0)
	{
		BloomFreeSnapshot(snap);
		return 0;
	}

	/* A stripe to start in an index whose summaries were never measured */
	if (state->shape.summaries && BloomSlicedPendingHasKeys(state) &&
		!snap->summariesSized && snap->mergedRows % BLOOMIDX_STRIPE_ROWS == 0)
		BloomMergeMeasureSummaries(index, state, snap);

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
	batch.keys = NULL;
	if (BloomSlicedPendingHasKeys(state))
		batch.keys = palloc(sizeof(uint32) * state->shape.nColumns * batch.maxrows);
	batch.bitsSet = 0;
	taken = palloc(sizeof(BlockNumber) * snap->nPending);
	for (i = 0; i < navail && batch.nrows < want; i++)
	{
		int			ntuples;
		int			took;

		CHECK_FOR_INTERRUPTS();
		took = BloomTakePendingPage(index, state, snap->pending[i], &batch,
									want - batch.nrows, &ntuples, &keyless);
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
	 * Rows without keys (VACUUM moved them back from a stripe) among them:
	 * the batch has no keys, and the stripe's summary will not be complete
	 */
	if (keyless && batch.keys != NULL)
	{
		pfree(batch.keys);
		batch.keys = NULL;
	}

	/*
	 * A merge of whole stripes (not an insert's step, which takes a few
	 * pages of the rows) sorts them first.  Should a crash cut the merge
	 * short, the next one takes the same rows and sorts them the same way.
	 */
	if (mode != BLOOM_MERGE_STEP)
		BloomSortBatch(&batch, state->shape.sigWords, state->shape.nColumns);

	/*
	 * Write them into the stripe being filled, past the rows merged so far
	 * (want stops at its end)
	 */
	sliceWords = palloc(sizeof(uint64) * BLOOMIDX_STRIPE_WORDS * sigBits);
	pos = snap->mergedRows;
	nStripes = snap->nStripes;
	s = (uint32) (pos / BLOOMIDX_STRIPE_ROWS);
	Assert(s <= nStripes);
	Assert(pos % BLOOMIDX_STRIPE_ROWS + batch.nrows <= BLOOMIDX_STRIPE_ROWS);
	/*
	 * Pages whose rows were all deleted give none: then no stripe is written
	 * (nor begun), and the record below only drops the pages from the list.
	 */
	stripeBlkno = InvalidBlockNumber;
	if (batch.nrows > 0)
	{
		stripebuf = BloomMergeLockStripe(index, state, snap, s, &allocated);
		stripeBlkno = BufferGetBlockNumber(stripebuf);
		if (s >= nStripes)
			nStripes++;
		BloomWriteStripe(index, state, stripebuf, s, &batch, 0, batch.nrows,
						 (int) (pos % BLOOMIDX_STRIPE_ROWS), sliceWords);
		UnlockReleaseBuffer(stripebuf);
		pos += batch.nrows;
	}

	/*
	 * Publish: advance mergedRows and drop the pages from the list, and in
	 * the same WAL record count the stripe's new live rows and drop the
	 * rows taken from a page that gave only some (frozen, so that nothing
	 * but this merge changed it).  Until this record the rows are pending:
	 * a merge that a crash cuts short before it changed nothing that
	 * counts, and the next one writes the same row numbers again.
	 */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	stripebuf = InvalidBuffer;
	if (BlockNumberIsValid(stripeBlkno))
	{
		stripebuf = ReadBuffer(index, stripeBlkno);
		LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(stripebuf), BLOOMIDX_STRIPE, s))
			BloomSlicedCorrupted(index, stripeBlkno, "stripe page");
		stripePage = GenericXLogRegisterBuffer(xlogState, stripebuf, 0);
		BloomStripeAddLive(stripePage, (uint32) batch.nrows);
		/* A stripe without a complete summary, for the cost model */
		if (state->shape.summaries &&
			(BloomStripeGetFlags(stripePage) & BLOOMIDX_STRIPE_SUMMARY_INCOMPLETE) != 0)
			BloomSlicedSummaryMeta(meta)->completeBelow =
				Min(BloomSlicedSummaryMeta(meta)->completeBelow, s);
	}
	BloomSlicedMeta(meta)->mergedRows = pos;
	BloomSlicedMeta(meta)->nStripes = nStripes;
	meta->statTuples += batch.nrows;
	meta->statBitsSet += batch.bitsSet;
	{
		int			kept = 0;

		for (i = 0; i < BloomSlicedMeta(meta)->nPending; i++)
		{
			bool		wasTaken = false;
			int			j;

			for (j = 0; j < ntaken && !wasTaken; j++)
				wasTaken = BloomSlicedMeta(meta)->pendingPages[i] == taken[j];
			if (!wasTaken)
				BloomSlicedMeta(meta)->pendingPages[kept++] = BloomSlicedMeta(meta)->pendingPages[i];
		}
		BloomSlicedMeta(meta)->nPending = kept;
	}
	if (split != InvalidBlockNumber)
	{
		Page		page;

		splitbuf = ReadBuffer(index, split);
		LockBuffer(splitbuf, BUFFER_LOCK_EXCLUSIVE);
		page = GenericXLogRegisterBuffer(xlogState, splitbuf, 0);
		if (!BloomSlicedPageIsData(index, page, split, state->tuplesPerPage) ||
			BloomPageGetNTuples(page) < splitRows)
			BloomSlicedCorrupted(index, split, "pending page a merge took rows from");
		/* Deleting from the last one down moves only rows that stay */
		for (i = splitRows - 1; i >= 0; i--)
			BloomPageDeleteTuple(page, slotBytes, i);
		BloomPageClearFrozen(page);
	}
	GenericXLogFinish(xlogState);
	if (BufferIsValid(splitbuf))
		UnlockReleaseBuffer(splitbuf);
	if (BufferIsValid(stripebuf))
		UnlockReleaseBuffer(stripebuf);
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
		if (BloomSlicedPageIsData(index, BufferGetPage(buffer), taken[i],
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
	if (batch.keys != NULL)
		pfree(batch.keys);
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
