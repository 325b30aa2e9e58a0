/*-------------------------------------------------------------------------
 *
 * sliced.c
 *	  The sliced layout of bloomidx: signatures stored transposed, so that
 *	  a query reads only the bit positions it tests.
 *
 * Rows are numbered densely as they reach the slices.  For every stripe of
 * BLOOMIDX_STRIPE_ROWS row numbers and every signature bit there is one
 * slice page holding that bit of each row of the stripe, and the stripe's
 * TID-map pages hold the rows' heap TIDs (see page.h).  A query ANDs the
 * slices of its bits 64 rows at a time, then maps the surviving row
 * numbers to TIDs.
 *
 * Inserts go to pending pages, data pages of the row layout listed in the
 * metapage, as GIN's fast-update list does.  When the list grows long, at
 * VACUUM, or through bloomidx_merge(), the pending rows are merged into the
 * slices.
 *
 * Concurrency and crash safety:
 *	- A merge holds a heavyweight lock on the metapage's block (as GIN's
 *	  pending-list cleanup does), so merges and VACUUMs run one at a time.
 *	  It freezes the pending pages it takes (inserts go elsewhere), writes
 *	  their rows into the slices and TID maps past mergedRows, and only
 *	  then, in one metapage WAL record, advances mergedRows and drops the
 *	  pages from the pending list; then it frees them.  A crash before that record leaves the
 *	  rows pending; merging them again sets the same bits again (or, if
 *	  VACUUM compacted a pending page meanwhile, more bits: more false
 *	  positives, never a missed row).
 *	- A scan copies the pending list and the stripe list from the metapage,
 *	  reads the pending pages, then reads mergedRows again: a row that left
 *	  a pending page meanwhile had been merged below it.  So merged pending
 *	  pages are freed at once.  Stripes that VACUUM empties move the other
 *	  way (their live rows go back to pending pages): a scan keeps reading
 *	  the stripes it listed first, and those pages are retired, not wiped,
 *	  and recycled only when no transaction that could still read them
 *	  remains (BloomPageIsRecyclable).
 *	- Lock order: metapage, then one data page; stripe page, then its
 *	  slice or TID-map pages.  No one holds a page lock while locking the
 *	  metapage.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_class.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloomidx_merge);

/* A copy of the metapage's lists, taken under one lock */
typedef struct BloomSlicedSnapshot
{
	uint64		mergedRows;
	int			nStripes;
	int			nPending;
	BlockNumber stripes[BLOOMIDX_MAX_STRIPES];
	BlockNumber pending[BLOOMIDX_PENDING_SIZE];
} BloomSlicedSnapshot;

/* The pages of one stripe, copied from its stripe page */
typedef struct BloomStripePages
{
	BlockNumber tidPages[BLOOMIDX_STRIPE_TIDPAGES];
	BlockNumber slices[BLOOMIDX_SLICED_MAX_LENGTH];
} BloomStripePages;

/*
 * Shared state of a parallel sliced build: the full stripes the
 * participants wrote, then (see BloomSlicedSharedSize) each participant's
 * leftover rows.
 */
struct BloomSlicedShared
{
	slock_t		mutex;
	int			nparticipants;
	int			sigWords;
	int			nStripes;		/* full stripes written, under mutex */
	BlockNumber stripes[BLOOMIDX_MAX_STRIPES];
	int			leftovers[FLEXIBLE_ARRAY_MEMBER];	/* rows left, per participant */
};

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
 * Copy the metapage's lists.
 */
static void
BloomTakeSnapshot(Relation index, BloomSlicedSnapshot *snap)
{
	Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	BloomMetaPage meta;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	snap->mergedRows = meta->mergedRows;
	snap->nStripes = Min(meta->nStripes, BLOOMIDX_MAX_STRIPES);
	snap->nPending = Min(meta->nPending, BLOOMIDX_PENDING_SIZE);
	memcpy(snap->stripes, meta->stripes, sizeof(BlockNumber) * snap->nStripes);
	memcpy(snap->pending, meta->pendingPages, sizeof(BlockNumber) * snap->nPending);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Copy the page lists of the stripe whose stripe page is blkno.
 */
static void
BloomReadStripe(Relation index, BlockNumber blkno, int sigBits,
				BloomStripePages *pages)
{
	Buffer		buffer = ReadBuffer(index, blkno);
	Page		page;
	BloomStripe stripe;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (PageIsNew(page) || !BloomPageHasFlag(page, BLOOMIDX_STRIPE) ||
		BloomPageGetOpaque(page)->page_id != BLOOMIDX_PAGE_ID)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno),
				 errdetail("A stripe page was expected."),
				 errhint("Please REINDEX it.")));
	stripe = BloomPageGetStripe(page);
	memcpy(pages->tidPages, stripe->tidPages, sizeof(pages->tidPages));
	memcpy(pages->slices, stripe->slices, sizeof(BlockNumber) * sigBits);
	UnlockReleaseBuffer(buffer);
}

/*
 * Rows in stripe s: a whole stripe, or what mergedRows leaves of it.
 */
static int
BloomStripeRows(uint64 mergedRows, int s)
{
	uint64		first = (uint64) s * BLOOMIDX_STRIPE_ROWS;

	if (mergedRows <= first)
		return 0;
	return (int) Min(mergedRows - first, (uint64) BLOOMIDX_STRIPE_ROWS);
}

/*
 * Complain that the sliced layout has no room for more rows.
 */
static void
BloomTooManyRows(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("index \"%s\" is full: the sliced layout holds at most %d stripes of %d rows",
					RelationGetRelationName(index), BLOOMIDX_MAX_STRIPES,
					(int) BLOOMIDX_STRIPE_ROWS),
			 errhint("REINDEX it to renumber its rows, or use layout = row.")));
}

/* ---------------------------------------------------------------------
 * Build
 * ---------------------------------------------------------------------
 */

typedef struct BloomSlicedBuildState
{
	BloomStateData state;
	Relation	index;
	MemoryContext tmpCtx;		/* reset after every row */
	uint64	   *slices;			/* sigBits * BLOOMIDX_STRIPE_WORDS words */
	bool	   *sliceUsed;		/* any bit set in each slice */
	ItemPointerData *tids;		/* BLOOMIDX_STRIPE_ROWS */
	int			nrows;			/* rows in the stripe being filled */
	double		indtuples;
	uint64		bitsSet;
	int			nStripes;
	BlockNumber stripes[BLOOMIDX_MAX_STRIPES];

	/* In a parallel build: full stripes go to the shared list */
	BloomSlicedShared *shared;
} BloomSlicedBuildState;

/*
 * Write a page image to a new block of the index being built.
 */
static BlockNumber
BloomBuildWritePage(Relation index, Page image, bool parallel)
{
	Buffer		buffer;
	BlockNumber blkno;

	if (parallel)
		LockRelationForExtension(index, ExclusiveLock);
	buffer = ReadBuffer(index, P_NEW);
	if (parallel)
		UnlockRelationForExtension(index, ExclusiveLock);
	blkno = BufferGetBlockNumber(buffer);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(buffer), image, BLCKSZ);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);
	return blkno;
}

/*
 * Write the stripe being built: its slices, TID maps and stripe page.
 */
static void
BloomSlicedFlushStripe(BloomSlicedBuildState *bs)
{
	int			sigBits = bs->state.shape.sigBits;
	PGAlignedBlock stripeImage;
	PGAlignedBlock image;
	BloomStripe stripe;
	BlockNumber blkno;
	int			ntidPages;
	int			b,
				t;

	if (bs->nStripes >= BLOOMIDX_MAX_STRIPES)
		BloomTooManyRows(bs->index);

	BloomInitSlicedPage(stripeImage.data, BLOOMIDX_STRIPE, sigBits);
	stripe = BloomPageGetStripe(stripeImage.data);

	for (b = 0; b < sigBits; b++)
	{
		if (!bs->sliceUsed[b])
			continue;
		BloomInitSlicedPage(image.data, BLOOMIDX_SLICE, sigBits);
		memcpy(BloomPageGetSlice(image.data),
			   bs->slices + (Size) b * BLOOMIDX_STRIPE_WORDS,
			   sizeof(uint64) * BLOOMIDX_STRIPE_WORDS);
		stripe->slices[b] = BloomBuildWritePage(bs->index, image.data,
											   bs->shared != NULL);
	}

	ntidPages = (bs->nrows + BLOOMIDX_TIDS_PER_PAGE - 1) / BLOOMIDX_TIDS_PER_PAGE;
	for (t = 0; t < ntidPages; t++)
	{
		int			first = t * BLOOMIDX_TIDS_PER_PAGE;
		int			n = Min(bs->nrows - first, (int) BLOOMIDX_TIDS_PER_PAGE);

		BloomInitSlicedPage(image.data, BLOOMIDX_TIDMAP, sigBits);
		memcpy(BloomPageGetTidMap(image.data), bs->tids + first,
			   sizeof(ItemPointerData) * n);
		stripe->tidPages[t] = BloomBuildWritePage(bs->index, image.data,
												 bs->shared != NULL);
	}
	stripe->nlive = bs->nrows;

	blkno = BloomBuildWritePage(bs->index, stripeImage.data, bs->shared != NULL);
	if (bs->shared != NULL)
	{
		/* A full stripe of a parallel build: into the shared list */
		SpinLockAcquire(&bs->shared->mutex);
		if (bs->shared->nStripes < BLOOMIDX_MAX_STRIPES)
			bs->shared->stripes[bs->shared->nStripes++] = blkno;
		else
			blkno = InvalidBlockNumber;
		SpinLockRelease(&bs->shared->mutex);
		if (blkno == InvalidBlockNumber)
			BloomTooManyRows(bs->index);
	}
	else
		bs->stripes[bs->nStripes++] = blkno;

	memset(bs->slices, 0, sizeof(uint64) * BLOOMIDX_STRIPE_WORDS * sigBits);
	memset(bs->sliceUsed, 0, sizeof(bool) * sigBits);
	bs->nrows = 0;
}

/*
 * Add a row, given its signature words, to the stripe being built.
 */
static void
BloomSlicedAddRow(BloomSlicedBuildState *bs, const uint64 *words, ItemPointer tid)
{
	int			r = bs->nrows;
	int			w;

	for (w = 0; w < bs->state.shape.sigWords; w++)
	{
		uint64		x = words[w];

		while (x != 0)
		{
			int			b = w * 64 + pg_rightmost_one_pos64(x);

			bs->slices[(Size) b * BLOOMIDX_STRIPE_WORDS + r / 64] |=
				UINT64CONST(1) << (r % 64);
			bs->sliceUsed[b] = true;
			x &= x - 1;
		}
	}
	bs->tids[r] = *tid;
	bs->nrows++;
	if (bs->nrows == BLOOMIDX_STRIPE_ROWS)
		BloomSlicedFlushStripe(bs);
}

/*
 * Add one heap row to the sliced index being built.
 */
static void
BloomSlicedBuildCallback(Relation index, ItemPointer tid, Datum *values,
						 bool *isnull, bool tupleIsAlive, void *state)
{
	BloomSlicedBuildState *bs = (BloomSlicedBuildState *) state;
	uint64		words[BLOOMIDX_SLICED_MAX_LENGTH / 64];
	MemoryContext oldCtx;

	oldCtx = MemoryContextSwitchTo(bs->tmpCtx);
	bs->bitsSet += BloomFormSignatureWords(&bs->state, values, isnull, words);
	MemoryContextSwitchTo(oldCtx);
	MemoryContextReset(bs->tmpCtx);

	BloomSlicedAddRow(bs, words, tid);
	bs->indtuples += 1;

	if (((uint64) bs->indtuples & 1023) == 0)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
									 (int64) bs->indtuples);
}

/*
 * Set up the state of a sliced build (or of one participant).
 */
static BloomSlicedBuildState *
BloomSlicedBuildStateCreate(Relation index, const BloomShape *shape,
							BloomSlicedShared *shared)
{
	BloomSlicedBuildState *bs = palloc0(sizeof(BloomSlicedBuildState));

	BloomInitState(&bs->state, index, shape);
	bs->index = index;
	bs->tmpCtx = AllocSetContextCreate(CurrentMemoryContext,
									   "bloomidx sliced build temporary context",
									   ALLOCSET_DEFAULT_SIZES);
	bs->slices = palloc0(sizeof(uint64) * BLOOMIDX_STRIPE_WORDS * shape->sigBits);
	bs->sliceUsed = palloc0(sizeof(bool) * shape->sigBits);
	bs->tids = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	bs->shared = shared;
	return bs;
}

/*
 * Size of the shared state of a parallel sliced build with nparticipants
 * participants (leader included): the list of full stripes, then each
 * participant's leftover rows (a partial stripe, as signature words and
 * TIDs).
 */
Size
BloomSlicedSharedSize(const BloomShape *shape, int nparticipants)
{
	Size		perParticipant = MAXALIGN(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS) +
		sizeof(uint64) * shape->sigWords * BLOOMIDX_STRIPE_ROWS;

	return add_size(MAXALIGN(offsetof(BloomSlicedShared, leftovers) +
							 sizeof(int) * nparticipants),
					mul_size(perParticipant, nparticipants));
}

/* Leftover TIDs and signature words of participant p */
static ItemPointer
BloomLeftoverTids(BloomSlicedShared *shared, int p)
{
	Size		perParticipant = MAXALIGN(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS) +
		sizeof(uint64) * shared->sigWords * BLOOMIDX_STRIPE_ROWS;

	return (ItemPointer) ((char *) shared +
						  MAXALIGN(offsetof(BloomSlicedShared, leftovers) +
								   sizeof(int) * shared->nparticipants) +
						  perParticipant * p);
}

static uint64 *
BloomLeftoverWords(BloomSlicedShared *shared, int p)
{
	return (uint64 *) ((char *) BloomLeftoverTids(shared, p) +
					   MAXALIGN(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS));
}

/*
 * Initialize the shared state of a parallel sliced build.
 */
void
BloomSlicedSharedInit(BloomSlicedShared *shared, const BloomShape *shape,
					  int nparticipants)
{
	memset(shared, 0, offsetof(BloomSlicedShared, leftovers) +
		   sizeof(int) * nparticipants);
	SpinLockInit(&shared->mutex);
	shared->nparticipants = nparticipants;
	shared->sigWords = shape->sigWords;
}

/*
 * One participant's share of a parallel sliced build: its part of the
 * heap scan, written as full stripes; its last, partial stripe is left in
 * shared memory, as signatures and TIDs, for the leader to combine.
 */
void
BloomSlicedBuildParticipant(Relation heap, Relation index, IndexInfo *indexInfo,
							const BloomShape *shape, TableScanDesc scan,
							bool progress, BloomSlicedShared *shared,
							int participant, double *reltuples,
							double *indtuples, uint64 *bitsSet)
{
	BloomSlicedBuildState *bs = BloomSlicedBuildStateCreate(index, shape, shared);
	ItemPointer tids = BloomLeftoverTids(shared, participant);
	uint64	   *words = BloomLeftoverWords(shared, participant);
	int			b,
				r;

	*reltuples = table_index_build_scan(heap, index, indexInfo, true, progress,
										BloomSlicedBuildCallback, bs, scan);

	/* The rows of the partial stripe: their bits back from the slices */
	memcpy(tids, bs->tids, sizeof(ItemPointerData) * bs->nrows);
	memset(words, 0, sizeof(uint64) * shape->sigWords * bs->nrows);
	for (b = 0; b < shape->sigBits; b++)
	{
		const uint64 *slice = bs->slices + (Size) b * BLOOMIDX_STRIPE_WORDS;

		if (!bs->sliceUsed[b])
			continue;
		for (r = 0; r < bs->nrows; r++)
		{
			if (slice[r / 64] & (UINT64CONST(1) << (r % 64)))
				words[(Size) r * shape->sigWords + b / 64] |= UINT64CONST(1) << (b % 64);
		}
	}
	shared->leftovers[participant] = bs->nrows;
	*indtuples = bs->indtuples;
	*bitsSet = bs->bitsSet;
	MemoryContextDelete(bs->tmpCtx);
}

/*
 * Build a sliced index: the rows of the table, in table order, become the
 * first row numbers; the metapage is block 0.  With a parallel build's
 * shared state, the full stripes the participants wrote come first, then
 * their leftover rows, combined into the last stripes.
 */
void
BloomSlicedBuild(Relation heap, Relation index, IndexInfo *indexInfo,
				 const BloomShape *shape, BloomSlicedShared *shared,
				 double *reltuples, double *indtuples, uint64 *bitsSet)
{
	BloomSlicedBuildState *bs = BloomSlicedBuildStateCreate(index, shape, NULL);
	Buffer		metabuf;
	BloomMetaPage meta;
	uint64		rows;

	if (shared == NULL)
	{
		*reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
											BloomSlicedBuildCallback, bs, NULL);
		*indtuples = bs->indtuples;
		*bitsSet = bs->bitsSet;
		rows = 0;
	}
	else
	{
		int			p,
					r;

		memcpy(bs->stripes, shared->stripes, sizeof(BlockNumber) * shared->nStripes);
		bs->nStripes = shared->nStripes;
		rows = (uint64) shared->nStripes * BLOOMIDX_STRIPE_ROWS;
		for (p = 0; p < shared->nparticipants; p++)
		{
			ItemPointer tids = BloomLeftoverTids(shared, p);
			uint64	   *words = BloomLeftoverWords(shared, p);

			for (r = 0; r < shared->leftovers[p]; r++)
				BloomSlicedAddRow(bs, words + (Size) r * shape->sigWords, &tids[r]);
			rows += shared->leftovers[p];
		}
	}
	if (bs->nrows > 0)
		BloomSlicedFlushStripe(bs);
	if (shared == NULL)
		rows = (uint64) *indtuples;

	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	meta->mergedRows = rows;
	meta->nStripes = bs->nStripes;
	memcpy(meta->stripes, bs->stripes, sizeof(BlockNumber) * bs->nStripes);
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	MemoryContextDelete(bs->tmpCtx);
}

/* ---------------------------------------------------------------------
 * Insert: the pending pages
 * ---------------------------------------------------------------------
 */

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
		GenericXLogState *xlogState = GenericXLogStart(index);
		Page		page = GenericXLogRegisterBuffer(xlogState, buffer, 0);

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
static bool
BloomPendingAdd(Relation index, BloomState state, const uint8 *sig,
				int nbitsSet, ItemPointer tid)
{
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
			BloomSlicedMerge(index, true);
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

/* ---------------------------------------------------------------------
 * Merge
 * ---------------------------------------------------------------------
 */

/*
 * Take the rows of one pending page into the batch, freezing the page so
 * that no more rows are added to it.  Returns false if it is not a pending
 * page with rows (a merge interrupted by a crash after its metapage record
 * may have freed it already).
 */
static bool
BloomTakePendingPage(Relation index, BloomState state, BlockNumber blkno,
					 BloomRowBatch *batch)
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
	if (!BloomPageHasFlag(page, BLOOMIDX_FROZEN))
	{
		GenericXLogState *xlogState = GenericXLogStart(index);

		page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
		BloomPageGetOpaque(page)->flags |= BLOOMIDX_FROZEN;
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
 * Get the page a link of a (locked) stripe page points to, locked
 * exclusively and registered in a new WAL record; if there is none yet,
 * allocate it and set the link in the same record.
 */
static Page
BloomStripeGetPage(Relation index, Buffer stripebuf, BlockNumber *link,
				   uint16 flag, int sigBits, GenericXLogState **xlogState,
				   Buffer *buffer)
{
	Page		page;

	*xlogState = GenericXLogStart(index);
	if (*link == InvalidBlockNumber)
	{
		Page		stripePage;
		BlockNumber *stripeLink;

		*buffer = BloomNewBuffer(index);
		page = GenericXLogRegisterBuffer(*xlogState, *buffer, GENERIC_XLOG_FULL_IMAGE);
		BloomInitSlicedPage(page, flag, sigBits);

		/* Link it, in the same WAL record */
		stripePage = GenericXLogRegisterBuffer(*xlogState, stripebuf, 0);
		stripeLink = (BlockNumber *) ((char *) stripePage +
									  ((char *) link - (char *) BufferGetPage(stripebuf)));
		*stripeLink = BufferGetBlockNumber(*buffer);
	}
	else
	{
		*buffer = ReadBuffer(index, *link);
		LockBuffer(*buffer, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(*buffer);
		if (PageIsNew(page) || !BloomPageHasFlag(page, flag))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" contains corrupted page at block %u",
							RelationGetRelationName(index), *link),
					 errhint("Please REINDEX it.")));
		page = GenericXLogRegisterBuffer(*xlogState, *buffer, 0);
	}
	return page;
}

/*
 * Write rows [first, first + n) of the batch into stripe s at row
 * numbers [r0, r0 + n) of the stripe.  The stripe page is locked
 * exclusively by the caller.
 */
static void
BloomWriteStripe(Relation index, BloomState state, Buffer stripebuf,
				 BloomRowBatch *batch, int first, int n, int r0,
				 uint64 *sliceWords)
{
	int			sigBits = state->shape.sigBits;
	int			sigWords = state->shape.sigWords;
	BloomStripe stripe = BloomPageGetStripe(BufferGetPage(stripebuf));
	int			w0 = r0 / 64;
	int			w1 = (r0 + n - 1) / 64;
	int			nw = w1 - w0 + 1;
	int			i,
				b,
				t;

	/* Transpose the rows' signatures into the words of each slice */
	memset(sliceWords, 0, sizeof(uint64) * nw * sigBits);
	for (i = 0; i < n; i++)
	{
		const uint64 *words = batch->words + (Size) (first + i) * sigWords;
		int			r = r0 + i;
		int			w;

		for (w = 0; w < sigWords; w++)
		{
			uint64		x = words[w];

			while (x != 0)
			{
				b = w * 64 + pg_rightmost_one_pos64(x);
				sliceWords[(Size) b * nw + (r / 64 - w0)] |= UINT64CONST(1) << (r % 64);
				x &= x - 1;
			}
		}
	}

	for (b = 0; b < sigBits; b++)
	{
		const uint64 *src = sliceWords + (Size) b * nw;
		GenericXLogState *xlogState;
		Buffer		buffer;
		uint64	   *dst;
		int			w;
		bool		any = false;

		CHECK_FOR_INTERRUPTS();
		for (w = 0; w < nw && !any; w++)
			any = src[w] != 0;
		if (!any)
			continue;

		dst = BloomPageGetSlice(BloomStripeGetPage(index, stripebuf,
												   &stripe->slices[b],
												   BLOOMIDX_SLICE, sigBits,
												   &xlogState, &buffer));
		for (w = 0; w < nw; w++)
			dst[w0 + w] |= src[w];
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}

	for (t = r0 / BLOOMIDX_TIDS_PER_PAGE; t <= (r0 + n - 1) / BLOOMIDX_TIDS_PER_PAGE; t++)
	{
		int			lo = Max(r0, t * (int) BLOOMIDX_TIDS_PER_PAGE);
		int			hi = Min(r0 + n, (t + 1) * (int) BLOOMIDX_TIDS_PER_PAGE);
		GenericXLogState *xlogState;
		Buffer		buffer;
		ItemPointer map;

		map = BloomPageGetTidMap(BloomStripeGetPage(index, stripebuf,
													&stripe->tidPages[t],
													BLOOMIDX_TIDMAP, sigBits,
													&xlogState, &buffer));
		for (i = lo; i < hi; i++)
			map[i - t * BLOOMIDX_TIDS_PER_PAGE] = batch->tids[first + (i - r0)];
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}
}

/*
 * Merge the pending rows into the slices; the caller holds the merge lock.
 * Returns the number of rows merged.
 */
static int64
BloomSlicedMergeLocked(Relation index)
{
	BloomState	state = BloomGetState(index);
	int			sigBits = state->shape.sigBits;
	BloomSlicedSnapshot *snap;
	BloomRowBatch batch;
	BlockNumber *taken;
	int			ntaken = 0;
	uint64		pos;
	int			nStripes;
	int			done;
	uint64	   *sliceWords;
	Buffer		metabuf;
	GenericXLogState *xlogState;
	BloomMetaPage meta;
	int			i;

	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap);
	if (snap->nPending == 0)
	{
		pfree(snap);
		return 0;
	}

	/* Freeze the pending pages and take their rows */
	batch.nrows = 0;
	batch.maxrows = snap->nPending * state->tuplesPerPage;
	batch.words = palloc(sizeof(uint64) * state->shape.sigWords * batch.maxrows);
	batch.tids = palloc(sizeof(ItemPointerData) * batch.maxrows);
	batch.bitsSet = 0;
	taken = palloc(sizeof(BlockNumber) * snap->nPending);
	for (i = 0; i < snap->nPending; i++)
	{
		CHECK_FOR_INTERRUPTS();
		BloomTakePendingPage(index, state, snap->pending[i], &batch);
		taken[ntaken++] = snap->pending[i];
	}

	/* Write them into the stripes, past the rows merged so far */
	sliceWords = palloc(sizeof(uint64) * BLOOMIDX_STRIPE_WORDS * sigBits);
	pos = snap->mergedRows;
	nStripes = snap->nStripes;
	done = 0;
	while (done < batch.nrows)
	{
		int			s = (int) (pos / BLOOMIDX_STRIPE_ROWS);
		int			r0 = (int) (pos % BLOOMIDX_STRIPE_ROWS);
		int			n = Min(batch.nrows - done, (int) BLOOMIDX_STRIPE_ROWS - r0);
		Buffer		stripebuf;
		GenericXLogState *stripeXlog;
		Page		stripePage;

		if (s >= BLOOMIDX_MAX_STRIPES)
			BloomTooManyRows(index);

		if (s >= nStripes)
		{
			/* A new stripe page */
			Assert(s == nStripes);
			stripebuf = BloomNewBuffer(index);
			stripeXlog = GenericXLogStart(index);
			stripePage = GenericXLogRegisterBuffer(stripeXlog, stripebuf,
												   GENERIC_XLOG_FULL_IMAGE);
			BloomInitSlicedPage(stripePage, BLOOMIDX_STRIPE, sigBits);
			GenericXLogFinish(stripeXlog);
			snap->stripes[nStripes++] = BufferGetBlockNumber(stripebuf);
		}
		else
		{
			if (snap->stripes[s] == InvalidBlockNumber)
				elog(ERROR, "stripe %d of bloomidx index \"%s\" was retired before it was full",
					 s, RelationGetRelationName(index));
			stripebuf = ReadBuffer(index, snap->stripes[s]);
			LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
		}

		BloomWriteStripe(index, state, stripebuf, &batch, done, n, r0, sliceWords);

		/* Count the stripe's new live rows */
		stripeXlog = GenericXLogStart(index);
		stripePage = GenericXLogRegisterBuffer(stripeXlog, stripebuf, 0);
		BloomPageGetStripe(stripePage)->nlive += n;
		GenericXLogFinish(stripeXlog);
		UnlockReleaseBuffer(stripebuf);

		pos += n;
		done += n;
	}

	/* Publish: advance mergedRows and drop the pages from the list */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	meta->mergedRows = pos;
	meta->nStripes = nStripes;
	meta->statTuples += batch.nrows;
	meta->statBitsSet += batch.bitsSet;
	memcpy(meta->stripes, snap->stripes, sizeof(BlockNumber) * nStripes);
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
		{
			xlogState = GenericXLogStart(index);
			BloomInitDeletedPage(GenericXLogRegisterBuffer(xlogState, buffer,
														   GENERIC_XLOG_FULL_IMAGE));
			GenericXLogFinish(xlogState);
			RecordFreeIndexPage(index, taken[i]);
			/* The map's upper levels too, so that searches find it now */
			FreeSpaceMapVacuumRange(index, taken[i], taken[i] + 1);
		}
		UnlockReleaseBuffer(buffer);
	}

	pfree(sliceWords);
	pfree(taken);
	pfree(batch.words);
	pfree(batch.tids);
	pfree(snap);
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

/*
 * Sizes the cost model needs: stripes in use and pending pages.
 */
void
BloomSlicedSizes(Relation index, double *stripes, double *pendingPages)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	int			s;

	BloomTakeSnapshot(index, snap);
	*stripes = 0;
	for (s = 0; s < snap->nStripes; s++)
		*stripes += snap->stripes[s] != InvalidBlockNumber ? 1 : 0;
	*pendingPages = snap->nPending;
	pfree(snap);
}

/*
 * Copy the pending list of a sliced index into pages (room for
 * BLOOMIDX_PENDING_SIZE entries); returns its length.
 */
int
BloomSlicedPendingPages(Relation index, BlockNumber *pages)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	int			n;

	BloomTakeSnapshot(index, snap);
	n = snap->nPending;
	memcpy(pages, snap->pending, sizeof(BlockNumber) * n);
	pfree(snap);
	return n;
}

/*
 * Free a pending page that a merge froze and published but a crash kept
 * from freeing (a frozen data page no longer in the pending list).  The
 * caller holds the merge lock, so no merge is between freezing and
 * publishing.
 */
void
BloomSlicedFreeOrphan(Relation index, BloomState state, BlockNumber blkno)
{
	Buffer		buffer = ReadBuffer(index, blkno);
	Page		page;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buffer);
	if (BloomPageIsData(index, page, blkno, state->tuplesPerPage) &&
		BloomPageHasFlag(page, BLOOMIDX_FROZEN))
	{
		GenericXLogState *xlogState = GenericXLogStart(index);

		BloomInitDeletedPage(GenericXLogRegisterBuffer(xlogState, buffer,
													   GENERIC_XLOG_FULL_IMAGE));
		GenericXLogFinish(xlogState);
	}
	UnlockReleaseBuffer(buffer);
}

/*
 * bloomidx_merge(index regclass): merge the pending rows of a sliced
 * index into its slices now; returns the number of rows merged.
 */
Datum
bloomidx_merge(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	BloomState	state;
	int64		merged;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("bloomidx_merge() cannot be run during recovery.")));

	index = relation_open(indexoid, RowExclusiveLock);
	BloomCheckIndexRelation(index);
	/* Like VACUUM, this is for the owner */
	if (!pg_class_ownercheck(indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX,
					   RelationGetRelationName(index));

	state = BloomGetState(index);
	if (state->shape.layout != BLOOMIDX_LAYOUT_SLICED)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" uses the row layout, which has nothing to merge",
						RelationGetRelationName(index)),
				 errhint("bloomidx_merge() is for indexes built WITH (layout = sliced).")));

	merged = BloomSlicedMerge(index, true);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_INT64(merged);
}

/* ---------------------------------------------------------------------
 * Scan
 * ---------------------------------------------------------------------
 */

/*
 * AND slice page blkno (or nothing, for a slice with no bit set) into the
 * first nw words of r.  Returns whether any bit of r remains.
 */
static bool
BloomAndSlice(Relation index, BlockNumber blkno, uint64 *r, int nw,
			  BufferAccessStrategy bas)
{
	Buffer		buffer;
	Page		page;
	const uint64 *slice;
	uint64		any = 0;
	int			w;

	if (blkno == InvalidBlockNumber)
	{
		memset(r, 0, sizeof(uint64) * nw);
		return false;
	}

	buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, bas);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (PageIsNew(page) || !BloomPageHasFlag(page, BLOOMIDX_SLICE))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno),
				 errdetail("A slice page was expected."),
				 errhint("Please REINDEX it.")));
	slice = BloomPageGetSlice(page);
	for (w = 0; w < nw; w++)
	{
		r[w] &= slice[w];
		any |= r[w];
	}
	UnlockReleaseBuffer(buffer);
	return any != 0;
}

/*
 * AND the slices of every bit of mask (sigWords words) into r.
 */
static bool
BloomAndMask(Relation index, const BloomStripePages *pages,
			 const uint64 *mask, int sigWords, uint64 *r, int nw,
			 BufferAccessStrategy bas)
{
	int			w;

	for (w = 0; w < sigWords; w++)
	{
		uint64		x = mask[w];

		while (x != 0)
		{
			int			b = w * 64 + pg_rightmost_one_pos64(x);

			if (!BloomAndSlice(index, pages->slices[b], r, nw, bas))
				return false;
			x &= x - 1;
		}
	}
	return true;
}

/*
 * Add the TIDs of the rows set in r (of a stripe) to the bitmap; returns
 * how many.
 */
static int64
BloomAddStripeTids(Relation index, const BloomStripePages *pages,
				   const uint64 *r, int nw, TIDBitmap *tbm,
				   BufferAccessStrategy bas, ItemPointerData *tids)
{
	Buffer		buffer = InvalidBuffer;
	int			curPage = -1;
	const ItemPointerData *map = NULL;
	int			ntids = 0;
	int64		total = 0;
	int			w;

	for (w = 0; w < nw; w++)
	{
		uint64		x = r[w];

		while (x != 0)
		{
			int			row = w * 64 + pg_rightmost_one_pos64(x);
			int			t = row / BLOOMIDX_TIDS_PER_PAGE;
			const ItemPointerData *tid;

			x &= x - 1;
			if (t != curPage)
			{
				if (BufferIsValid(buffer))
					UnlockReleaseBuffer(buffer);
				buffer = InvalidBuffer;
				curPage = t;
				if (pages->tidPages[t] == InvalidBlockNumber)
					elog(ERROR, "row %d of a stripe of bloomidx index \"%s\" has no TID page",
						 row, RelationGetRelationName(index));
				buffer = ReadBufferExtended(index, MAIN_FORKNUM, pages->tidPages[t],
											RBM_NORMAL, bas);
				LockBuffer(buffer, BUFFER_LOCK_SHARE);
				if (PageIsNew(BufferGetPage(buffer)) ||
					!BloomPageHasFlag(BufferGetPage(buffer), BLOOMIDX_TIDMAP))
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("index \"%s\" contains corrupted page at block %u",
									RelationGetRelationName(index), pages->tidPages[t]),
							 errdetail("A TID-map page was expected."),
							 errhint("Please REINDEX it.")));
				map = BloomPageGetTidMap(BufferGetPage(buffer));
			}
			tid = &map[row % BLOOMIDX_TIDS_PER_PAGE];
			if (!ItemPointerIsValid(tid))
				continue;		/* removed by VACUUM */
			tids[ntids++] = *tid;
			if (ntids == BLOOMIDX_TIDS_PER_PAGE)
			{
				tbm_add_tuples(tbm, tids, ntids, true);
				total += ntids;
				ntids = 0;
			}
		}
	}
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);
	if (ntids > 0)
		tbm_add_tuples(tbm, tids, ntids, true);
	return total + ntids;
}

/*
 * Bitmap scan of a sliced index: the pending pages as in the row layout,
 * then for each stripe the AND of the query's slices.
 */
int64
BloomSlicedGetBitmap(Relation index, BloomState state, BloomScanOpaque so,
					 TIDBitmap *tbm)
{
	const BloomShape *shape = &state->shape;
	BloomSlicedSnapshot *snap;
	BloomSlicedSnapshot *snap2;
	BloomStripePages *pages;
	BufferAccessStrategy bas;
	ItemPointerData *tids;
	uint64	   *r;
	uint64	   *t;
	uint64	   *g;
	int64		ntids = 0;
	int			i,
				s;

	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap);
	pages = palloc(sizeof(BloomStripePages));
	tids = palloc(sizeof(ItemPointerData) * Max(state->tuplesPerPage,
												(int) BLOOMIDX_TIDS_PER_PAGE));
	r = palloc(sizeof(uint64) * BLOOMIDX_STRIPE_WORDS);
	t = palloc(sizeof(uint64) * BLOOMIDX_STRIPE_WORDS);
	g = palloc(sizeof(uint64) * BLOOMIDX_STRIPE_WORDS);
	bas = GetAccessStrategy(BAS_BULKREAD);

	/* Pending pages: their rows are not below this snapshot's mergedRows */
	for (i = 0; i < snap->nPending; i++)
	{
		Buffer		buffer;
		Page		page;
		int			nfound = 0;

		CHECK_FOR_INTERRUPTS();
		buffer = ReadBufferExtended(index, MAIN_FORKNUM, snap->pending[i],
									RBM_NORMAL, bas);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!PageIsNew(page) &&
			BloomPageGetOpaque(page)->page_id == BLOOMIDX_PAGE_ID &&
			!BloomPageHasFlag(page, BLOOMIDX_META | BLOOMIDX_SLICE |
							  BLOOMIDX_TIDMAP | BLOOMIDX_STRIPE) &&
			BloomPageGetOpaque(page)->maxtuples == state->tuplesPerPage &&
			BloomPageGetNTuples(page) <= state->tuplesPerPage)
			nfound = BloomScanRowPage(so, page, shape->sigBytes,
									  shape->sigWords, tids);
		UnlockReleaseBuffer(buffer);
		if (nfound > 0)
		{
			tbm_add_tuples(tbm, tids, nfound, true);
			ntids += nfound;
		}
	}

	/*
	 * Stripes.  mergedRows is read again now: rows merged while the pending
	 * pages were read (their pages may have been freed since) are below it.
	 * The stripes listed before stay those to read: VACUUM may have retired
	 * one since, moving its rows to pending pages read already, but its
	 * pages stay intact until no transaction as old as this one remains.
	 */
	snap2 = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap2);
	for (s = 0; s < snap2->nStripes; s++)
	{
		int			rows = BloomStripeRows(snap2->mergedRows, s);
		int			nw = (rows + 63) / 64;
		BlockNumber stripe = s < snap->nStripes ? snap->stripes[s] : snap2->stripes[s];
		bool		any;
		int			a;

		CHECK_FOR_INTERRUPTS();
		if (rows == 0)
			break;
		if (stripe == InvalidBlockNumber)
			continue;
		BloomReadStripe(index, stripe, shape->sigBits, pages);

		/* Start from every row of the stripe */
		memset(r, 0xFF, sizeof(uint64) * nw);
		if (rows % 64 != 0)
			r[nw - 1] = (UINT64CONST(1) << (rows % 64)) - 1;

		any = BloomAndMask(index, pages, so->mask, shape->sigWords, r, nw, bas);

		/* Each group of alternatives: the OR of its masks' ANDs */
		for (a = 0; any && a < so->nalternatives; a++)
		{
			BloomAlternatives *alt = &so->alternatives[a];
			int			j,
						w;

			memset(g, 0, sizeof(uint64) * nw);
			for (j = 0; j < alt->nmasks; j++)
			{
				memcpy(t, r, sizeof(uint64) * nw);
				if (BloomAndMask(index, pages,
								 alt->masks + (Size) j * shape->sigWords,
								 shape->sigWords, t, nw, bas))
				{
					for (w = 0; w < nw; w++)
						g[w] |= t[w];
				}
			}
			any = false;
			for (w = 0; w < nw; w++)
			{
				r[w] = g[w];
				any |= r[w] != 0;
			}
		}

		if (any)
			ntids += BloomAddStripeTids(index, pages, r, nw, tbm, bas, tids);
	}

	FreeAccessStrategy(bas);
	pfree(g);
	pfree(t);
	pfree(r);
	pfree(tids);
	pfree(pages);
	pfree(snap2);
	pfree(snap);
	return ntids;
}

/* ---------------------------------------------------------------------
 * Reading rows back
 * ---------------------------------------------------------------------
 */

/*
 * Read back the rows of stripe s that VACUUM has not removed: their row
 * numbers, TIDs and signature words (sigWords words each), in row order.
 * Returns how many; the arrays are palloc'd.
 */
static int
BloomReadStripeRows(Relation index, const BloomShape *shape,
					const BloomStripePages *pages, int rows,
					int **rowOf, ItemPointerData **tids, uint64 **words)
{
	int			sigWords = shape->sigWords;
	int			nlive = 0;
	int			t,
				b,
				i;

	*rowOf = palloc(sizeof(int) * Max(rows, 1));
	*tids = palloc(sizeof(ItemPointerData) * Max(rows, 1));

	for (t = 0; t * (int) BLOOMIDX_TIDS_PER_PAGE < rows; t++)
	{
		Buffer		buffer;
		Page		page;
		const ItemPointerData *map;
		int			n = Min(rows - t * (int) BLOOMIDX_TIDS_PER_PAGE,
							(int) BLOOMIDX_TIDS_PER_PAGE);

		if (pages->tidPages[t] == InvalidBlockNumber)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" is corrupted: rows %d to %d of a stripe have no TID-map page",
							RelationGetRelationName(index),
							t * (int) BLOOMIDX_TIDS_PER_PAGE,
							t * (int) BLOOMIDX_TIDS_PER_PAGE + n - 1),
					 errhint("REINDEX the index.")));
		buffer = ReadBuffer(index, pages->tidPages[t]);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (PageIsNew(page) || !BloomPageHasFlag(page, BLOOMIDX_TIDMAP))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" is corrupted at block %u",
							RelationGetRelationName(index), pages->tidPages[t]),
					 errdetail("A TID-map page was expected."),
					 errhint("REINDEX the index.")));
		map = BloomPageGetTidMap(page);
		for (i = 0; i < n; i++)
		{
			if (ItemPointerIsValid(&map[i]))
			{
				(*tids)[nlive] = map[i];
				(*rowOf)[nlive++] = t * BLOOMIDX_TIDS_PER_PAGE + i;
			}
		}
		UnlockReleaseBuffer(buffer);
	}

	*words = palloc0(sizeof(uint64) * sigWords * Max(nlive, 1));
	for (b = 0; b < shape->sigBits; b++)
	{
		Buffer		buffer;
		Page		page;
		const uint64 *slice;

		if (pages->slices[b] == InvalidBlockNumber)
			continue;
		CHECK_FOR_INTERRUPTS();
		buffer = ReadBuffer(index, pages->slices[b]);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (PageIsNew(page) || !BloomPageHasFlag(page, BLOOMIDX_SLICE))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" is corrupted at block %u",
							RelationGetRelationName(index), pages->slices[b]),
					 errdetail("A slice page was expected."),
					 errhint("REINDEX the index.")));
		slice = BloomPageGetSlice(page);
		for (i = 0; i < nlive; i++)
		{
			int			r = (*rowOf)[i];

			if (slice[r / 64] & (UINT64CONST(1) << (r % 64)))
				(*words)[(Size) i * sigWords + b / 64] |= UINT64CONST(1) << (b % 64);
		}
		UnlockReleaseBuffer(buffer);
	}
	return nlive;
}

/*
 * Call fn for every row in the slices of a sliced index that VACUUM has
 * not removed, with its TID, its signature (sigBytes bytes) and the block
 * of its stripe page, and return the number of rows.  The caller holds the merge lock (LockPage on the
 * metapage's block), so that rows do not move while it reads.
 */
uint64
BloomSlicedForEachRow(Relation index, const BloomShape *shape,
					  BloomRowCallback fn, void *arg)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomStripePages *pages = palloc(sizeof(BloomStripePages));
	uint64		total = 0;
	int			s;

	BloomTakeSnapshot(index, snap);
	for (s = 0; s < snap->nStripes; s++)
	{
		int			rows = BloomStripeRows(snap->mergedRows, s);
		int		   *rowOf;
		ItemPointerData *tids;
		uint64	   *words;
		int			nlive,
					i;

		if (rows == 0)
			break;
		if (snap->stripes[s] == InvalidBlockNumber)
			continue;
		BloomReadStripe(index, snap->stripes[s], shape->sigBits, pages);
		nlive = BloomReadStripeRows(index, shape, pages, rows, &rowOf, &tids, &words);
		for (i = 0; i < nlive; i++)
		{
			uint8		sig[BLOOMIDX_SLICED_MAX_LENGTH / 8];

			BloomStoreWords(sig, words + (Size) i * shape->sigWords, shape->sigBytes);
			fn(&tids[i], sig, snap->stripes[s], arg);
		}
		total += nlive;
		pfree(rowOf);
		pfree(tids);
		pfree(words);
	}
	pfree(pages);
	pfree(snap);
	return total;
}

/* ---------------------------------------------------------------------
 * VACUUM
 * ---------------------------------------------------------------------
 */

/*
 * Move the live rows of a mostly dead stripe back to the pending pages,
 * reading their signatures back from the slices, and retire the stripe.
 */
static void
BloomReclaimStripe(Relation index, BloomState state, int s, BlockNumber stripeBlkno,
				   const BloomStripePages *pages, int rows)
{
	const BloomShape *shape = &state->shape;
	int			sigWords = shape->sigWords;
	ItemPointerData *tids;
	int		   *rowOf;
	uint64	   *words;
	int			nlive;
	int			i;
	Buffer		metabuf;
	GenericXLogState *xlogState;
	BloomMetaPage meta;

	nlive = BloomReadStripeRows(index, shape, pages, rows, &rowOf, &tids, &words);

	/* Back to the pending pages */
	for (i = 0; i < nlive; i++)
	{
		uint8		sig[BLOOMIDX_SLICED_MAX_LENGTH / 8];
		int			nbits = 0;
		int			w;

		for (w = 0; w < sigWords; w++)
			nbits += pg_popcount64(words[(Size) i * sigWords + w]);
		BloomStoreWords(sig, words + (Size) i * sigWords, shape->sigBytes);
		(void) BloomPendingAdd(index, state, sig, nbits, &tids[i]);
	}

	/* Take the stripe out of the list, then retire its pages */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	xlogState = GenericXLogStart(index);
	meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
	meta->stripes[s] = InvalidBlockNumber;
	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(metabuf);

	for (i = -1; i < shape->sigBits + (int) BLOOMIDX_STRIPE_TIDPAGES; i++)
	{
		BlockNumber blkno;
		Buffer		buffer;

		if (i < 0)
			blkno = stripeBlkno;
		else if (i < shape->sigBits)
			blkno = pages->slices[i];
		else
			blkno = pages->tidPages[i - shape->sigBits];
		if (blkno == InvalidBlockNumber)
			continue;
		buffer = ReadBuffer(index, blkno);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		xlogState = GenericXLogStart(index);
		BloomRetirePage(GenericXLogRegisterBuffer(xlogState, buffer, 0));
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}

	pfree(words);
	pfree(rowOf);
	pfree(tids);
}

/*
 * Remove dead rows from a sliced index (ambulkdelete): merge the pending
 * rows, compact pending pages added since, invalidate dead TIDs in the TID
 * maps, and move the live rows of mostly dead full stripes back through
 * the pending pages.
 */
IndexBulkDeleteResult *
BloomSlicedBulkDelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BloomState	state = BloomGetState(index);
	BloomSlicedSnapshot *snap;
	BloomStripePages *pages;
	int			i,
				s;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	BloomSlicedMergeLocked(index);

	snap = palloc(sizeof(BloomSlicedSnapshot));
	pages = palloc(sizeof(BloomStripePages));
	BloomTakeSnapshot(index, snap);

	/* Pending pages added since the merge */
	for (i = 0; i < snap->nPending; i++)
	{
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, snap->pending[i],
												RBM_NORMAL, info->strategy);
		Page		page;
		GenericXLogState *xlogState = NULL;

		vacuum_delay_point();
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buffer);
		if (BloomPageIsData(index, page, snap->pending[i], state->tuplesPerPage))
			xlogState = BloomPageRemoveDead(index, buffer, &page,
											state->shape.sigBytes, callback,
											callback_state, stats);
		if (xlogState != NULL)
			GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}

	/* Stripes: invalidate dead TIDs, count the live ones */
	for (s = 0; s < snap->nStripes; s++)
	{
		int			rows = BloomStripeRows(snap->mergedRows, s);
		int			nlive = 0;
		int			t;
		Buffer		stripebuf;
		GenericXLogState *xlogState;

		if (rows == 0)
			break;
		if (snap->stripes[s] == InvalidBlockNumber)
			continue;
		BloomReadStripe(index, snap->stripes[s], state->shape.sigBits, pages);

		for (t = 0; t * (int) BLOOMIDX_TIDS_PER_PAGE < rows; t++)
		{
			Buffer		buffer;
			Page		page;
			ItemPointer map;
			int			n = Min(rows - t * (int) BLOOMIDX_TIDS_PER_PAGE,
								(int) BLOOMIDX_TIDS_PER_PAGE);
			int			j;

			if (pages->tidPages[t] == InvalidBlockNumber)
				continue;
			vacuum_delay_point();
			buffer = ReadBufferExtended(index, MAIN_FORKNUM, pages->tidPages[t],
										RBM_NORMAL, info->strategy);
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			page = BufferGetPage(buffer);
			map = BloomPageGetTidMap(page);
			xlogState = NULL;
			for (j = 0; j < n; j++)
			{
				if (!ItemPointerIsValid(&map[j]))
					continue;
				if (!callback(&map[j], callback_state))
				{
					nlive++;
					continue;
				}
				if (xlogState == NULL)
				{
					xlogState = GenericXLogStart(index);
					page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
					map = BloomPageGetTidMap(page);
				}
				ItemPointerSetInvalid(&map[j]);
				stats->tuples_removed += 1;
			}
			if (xlogState != NULL)
				GenericXLogFinish(xlogState);
			UnlockReleaseBuffer(buffer);
		}

		stripebuf = ReadBuffer(index, snap->stripes[s]);
		LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
		xlogState = GenericXLogStart(index);
		BloomPageGetStripe(GenericXLogRegisterBuffer(xlogState, stripebuf, 0))->nlive = nlive;
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(stripebuf);

		/* A full stripe that is mostly dead gives its live rows back */
		if (rows == BLOOMIDX_STRIPE_ROWS && nlive < rows / 4)
			BloomReclaimStripe(index, state, s, snap->stripes[s], pages, rows);
	}

	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	pfree(pages);
	pfree(snap);
	return stats;
}
