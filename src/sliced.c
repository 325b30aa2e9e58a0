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
 *	- A scan copies the pending list and the stripe list, reads the
 *	  pending pages, then reads mergedRows again: a row that left a pending
 *	  page meanwhile had been merged below it.  So merged pending pages are
 *	  freed at once.  Stripes that VACUUM empties move the other way (their
 *	  live rows go back to pending pages, then the stripe leaves the list
 *	  and its pages are freed at once): a scan keeps reading the stripes it
 *	  listed first, and every page of a stripe carries the stripe's number,
 *	  never reused, so a scan that finds a page freed or reused under it
 *	  starts over, with the rows now in pending pages or newer stripes.
 *	- Lock order: metapage, then a stripe-list page or one data page;
 *	  stripe page, then its slice or TID-map pages.  No one holds a page
 *	  lock while locking the metapage.  Stripe-list pages change only under
 *	  an exclusive metapage lock, so a snapshot taken under a shared one is
 *	  consistent.
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

/*
 * A copy of the metapage's lists, and of the stripe lists, taken under one
 * metapage lock.
 */
typedef struct BloomSlicedSnapshot
{
	uint64		mergedRows;
	uint32		firstStripe;
	uint32		nStripes;
	int			nPending;
	BlockNumber pending[BLOOMIDX_PENDING_SIZE];
	BlockNumber stripeLists[BLOOMIDX_MAX_STRIPELISTS];
	BlockNumber *stripes;		/* of stripes firstStripe on, palloc'd */
} BloomSlicedSnapshot;

/* Row numbers the stripe lists have left, past mergedRows */
static inline uint64
BloomSnapRowsLeft(const BloomSlicedSnapshot *snap)
{
	return (uint64) (snap->firstStripe + BLOOMIDX_MAX_STRIPES) * BLOOMIDX_STRIPE_ROWS -
		snap->mergedRows;
}

/* Stripe page of stripe s in a snapshot taken with stripes */
static inline BlockNumber
BloomSnapStripe(const BloomSlicedSnapshot *snap, uint32 s)
{
	if (s < snap->firstStripe || s >= snap->nStripes)
		return InvalidBlockNumber;
	return snap->stripes[s - snap->firstStripe];
}

/* The pages of one stripe, copied from its stripe page */
typedef struct BloomStripePages
{
	uint32		stripe;			/* its number */
	int			nTidPages;
	BlockNumber tidPages[BLOOMIDX_STRIPE_TIDPAGES];
	uint16		tidFirstRow[BLOOMIDX_STRIPE_TIDPAGES];
	BlockNumber slices[BLOOMIDX_SLICED_MAX_LENGTH];
} BloomStripePages;

/*
 * Shared state of a parallel sliced build: the full stripes the
 * participants wrote, by number, then (see BloomSlicedSharedSize) each
 * participant's leftover rows.
 */
struct BloomSlicedShared
{
	slock_t		mutex;
	int			nparticipants;
	int			sigWords;
	uint32		nStripes;		/* stripe numbers taken, under mutex */
	BlockNumber stripes[BLOOMIDX_MAX_STRIPES];	/* their stripe pages */
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
 * Complain about a page of a sliced index that is not what its list says.
 */
static void
BloomSlicedCorrupted(Relation index, BlockNumber blkno, const char *what)
{
	BloomReportCorruption(index, blkno, psprintf("A %s was expected.", what));
}

/*
 * Copy the metapage's lists; with stripes, the stripe lists too.
 */
static void
BloomTakeSnapshot(Relation index, BloomSlicedSnapshot *snap, bool stripes)
{
	Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	BloomMetaPage meta;
	uint32		k;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	snap->mergedRows = meta->mergedRows;
	snap->firstStripe = meta->firstStripe;
	snap->nStripes = Max(meta->nStripes, meta->firstStripe);
	snap->nStripes = Min(snap->nStripes, meta->firstStripe + BLOOMIDX_MAX_STRIPES);
	snap->nPending = Min(meta->nPending, BLOOMIDX_PENDING_SIZE);
	memcpy(snap->pending, meta->pendingPages, sizeof(BlockNumber) * snap->nPending);
	memcpy(snap->stripeLists, meta->stripeLists, sizeof(snap->stripeLists));
	snap->stripes = NULL;
	if (stripes)
	{
		uint32		nlisted = snap->nStripes - snap->firstStripe;

		snap->stripes = palloc(sizeof(BlockNumber) * Max(nlisted, 1));
		for (k = 0; k * BLOOMIDX_STRIPELIST_ENTRIES < nlisted; k++)
		{
			uint32		n = Min(nlisted - k * BLOOMIDX_STRIPELIST_ENTRIES,
								BLOOMIDX_STRIPELIST_ENTRIES);
			Buffer		buffer;

			if (snap->stripeLists[k] == InvalidBlockNumber)
				BloomSlicedCorrupted(index, BLOOMIDX_METAPAGE_BLKNO,
									 "metapage listing every stripe-list page");
			buffer = ReadBuffer(index, snap->stripeLists[k]);
			LockBuffer(buffer, BUFFER_LOCK_SHARE);
			if (!BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_STRIPELIST,
								   snap->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES + k))
				BloomSlicedCorrupted(index, snap->stripeLists[k], "stripe-list page");
			memcpy(snap->stripes + k * BLOOMIDX_STRIPELIST_ENTRIES,
				   BloomPageGetStripeList(BufferGetPage(buffer)),
				   sizeof(BlockNumber) * n);
			UnlockReleaseBuffer(buffer);
		}
	}
	UnlockReleaseBuffer(metabuf);
}

static void
BloomFreeSnapshot(BloomSlicedSnapshot *snap)
{
	if (snap->stripes != NULL)
		pfree(snap->stripes);
	pfree(snap);
}

/*
 * Is stripe s still listed, at stripe page blkno?  A page of a stripe
 * that is not what it should be is corruption if so, else a page freed
 * (and maybe reused) since the caller listed the stripe.
 */
static bool
BloomStripeIsListed(Relation index, uint32 s, BlockNumber blkno)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	bool		listed;

	BloomTakeSnapshot(index, snap, true);
	listed = BloomSnapStripe(snap, s) == blkno;
	BloomFreeSnapshot(snap);
	return listed;
}

/*
 * Copy the page lists of stripe s, whose stripe page is blkno.  Returns
 * false if the page is no longer that stripe's (see BloomStripeIsListed).
 */
static bool
BloomReadStripe(Relation index, uint32 s, BlockNumber blkno, int sigBits,
				BloomStripePages *pages)
{
	Buffer		buffer = ReadBuffer(index, blkno);
	Page		page;
	BloomStripe stripe;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (!BloomPageIsSliced(page, BLOOMIDX_STRIPE, s))
	{
		UnlockReleaseBuffer(buffer);
		if (BloomStripeIsListed(index, s, blkno))
			BloomSlicedCorrupted(index, blkno, "stripe page");
		return false;
	}
	stripe = BloomPageGetStripe(page);
	pages->stripe = s;
	pages->nTidPages = Min(stripe->nTidPages, BLOOMIDX_STRIPE_TIDPAGES);
	memcpy(pages->tidPages, stripe->tidPages, sizeof(pages->tidPages));
	memcpy(pages->tidFirstRow, stripe->tidFirstRow, sizeof(pages->tidFirstRow));
	memcpy(pages->slices, stripe->slices, sizeof(BlockNumber) * sigBits);
	UnlockReleaseBuffer(buffer);
	return true;
}

/*
 * Read and share-lock page blkno of stripe pages->stripe, which should be
 * of kind flag.  Returns InvalidBuffer if the stripe was emptied since it
 * was listed (see BloomStripeIsListed).
 */
static Buffer
BloomReadStripePage(Relation index, const BloomStripePages *pages,
					BlockNumber stripeBlkno, BlockNumber blkno, uint16 flag,
					BufferAccessStrategy bas)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno,
											RBM_NORMAL, bas);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	if (BloomPageIsSliced(BufferGetPage(buffer), flag, pages->stripe))
		return buffer;
	UnlockReleaseBuffer(buffer);
	if (BloomStripeIsListed(index, pages->stripe, stripeBlkno))
		BloomSlicedCorrupted(index, blkno,
							 flag == BLOOMIDX_SLICE ? "slice page" : "TID-map page");
	return InvalidBuffer;
}

/*
 * Rows in stripe s: a whole stripe, or what mergedRows leaves of it.
 */
static int
BloomStripeRows(uint64 mergedRows, uint32 s)
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
			 errmsg("index \"%s\" is full: the sliced layout keeps at most %u stripes of %d rows between its oldest and newest rows",
					RelationGetRelationName(index), (uint32) BLOOMIDX_MAX_STRIPES,
					(int) BLOOMIDX_STRIPE_ROWS),
			 errhint("VACUUM the table, which moves the oldest rows forward, or REINDEX the index.")));
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
	uint64	   *block;			/* signatures of up to 64 rows, not yet in slices */
	int			nblock;			/* rows in block */
	ItemPointerData *tids;		/* BLOOMIDX_STRIPE_ROWS */
	int			nrows;			/* rows in the stripe being filled */
	double		indtuples;
	uint64		bitsSet;
	uint32		nStripes;		/* stripes written (serial build) */
	uint32		maxStripes;		/* room in stripes */
	BlockNumber *stripes;		/* their stripe pages */

	/* In a parallel build: full stripes go to the shared list */
	BloomSlicedShared *shared;
} BloomSlicedBuildState;

static void BloomSlicedFlushBlock(BloomSlicedBuildState *bs);

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
	bool		parallel = bs->shared != NULL;
	PGAlignedBlock stripeImage;
	PGAlignedBlock image;
	BloomStripe stripe;
	BlockNumber blkno;
	uint32		s;
	int			b,
				t,
				first;

	if (bs->nblock > 0)
		BloomSlicedFlushBlock(bs);

	/* The stripe's number */
	if (parallel)
	{
		SpinLockAcquire(&bs->shared->mutex);
		s = bs->shared->nStripes;
		if (s < BLOOMIDX_MAX_STRIPES)
			bs->shared->nStripes++;
		SpinLockRelease(&bs->shared->mutex);
	}
	else
		s = bs->nStripes;
	if (s >= BLOOMIDX_MAX_STRIPES)
		BloomTooManyRows(bs->index);

	BloomInitSlicedPage(stripeImage.data, BLOOMIDX_STRIPE, sigBits, s);
	stripe = BloomPageGetStripe(stripeImage.data);

	for (b = 0; b < sigBits; b++)
	{
		if (!bs->sliceUsed[b])
			continue;
		BloomInitSlicedPage(image.data, BLOOMIDX_SLICE, sigBits, s);
		memcpy(BloomPageGetSlice(image.data),
			   bs->slices + (Size) b * BLOOMIDX_STRIPE_WORDS,
			   sizeof(uint64) * BLOOMIDX_STRIPE_WORDS);
		stripe->slices[b] = BloomBuildWritePage(bs->index, image.data, parallel);
	}

	for (t = 0, first = 0; first < bs->nrows; t++)
	{
		BloomInitSlicedPage(image.data, BLOOMIDX_TIDMAP, sigBits, s);
		stripe->tidFirstRow[t] = first;
		first += BloomTidMapPack(image.data, first, bs->tids + first,
								 bs->nrows - first);
		stripe->tidPages[t] = BloomBuildWritePage(bs->index, image.data, parallel);
	}
	stripe->nTidPages = t;
	stripe->nlive = bs->nrows;

	blkno = BloomBuildWritePage(bs->index, stripeImage.data, parallel);
	if (parallel)
		bs->shared->stripes[s] = blkno;
	else
	{
		if (bs->nStripes == bs->maxStripes)
		{
			bs->maxStripes *= 2;
			bs->stripes = repalloc(bs->stripes, sizeof(BlockNumber) * bs->maxStripes);
		}
		bs->stripes[bs->nStripes++] = blkno;
	}

	memset(bs->slices, 0, sizeof(uint64) * BLOOMIDX_STRIPE_WORDS * sigBits);
	memset(bs->sliceUsed, 0, sizeof(bool) * sigBits);
	bs->nrows = 0;
}

/*
 * Transpose a 64 x 64 bit matrix: bit j of a[i] becomes bit i of a[j]
 * (Hacker's Delight, 7-3).
 */
static void
BloomTranspose64(uint64 a[64])
{
	uint64		m = UINT64CONST(0x00000000FFFFFFFF);
	int			j,
				k;

	for (j = 32; j != 0; j >>= 1, m ^= m << j)
	{
		for (k = 0; k < 64; k = ((k | j) + 1) & ~j)
		{
			uint64		t = ((a[k] >> j) ^ a[k | j]) & m;

			a[k | j] ^= t;
			a[k] ^= t << j;
		}
	}
}

/*
 * Move the rows of the block into the slices: for each 64 bits of the
 * signatures, one transposition gives the word of 64 rows of each slice.
 * The block starts at a multiple of 64 rows.
 */
static void
BloomSlicedFlushBlock(BloomSlicedBuildState *bs)
{
	int			sigBits = bs->state.shape.sigBits;
	int			sigWords = bs->state.shape.sigWords;
	int			word = (bs->nrows - bs->nblock) / 64;
	uint64		m[64];
	int			i,
				w;

	Assert((bs->nrows - bs->nblock) % 64 == 0);
	for (w = 0; w < sigWords; w++)
	{
		for (i = 0; i < 64; i++)
			m[i] = i < bs->nblock ? bs->block[i * sigWords + w] : 0;
		BloomTranspose64(m);
		for (i = 0; i < 64 && w * 64 + i < sigBits; i++)
		{
			if (m[i] == 0)
				continue;
			bs->slices[(Size) (w * 64 + i) * BLOOMIDX_STRIPE_WORDS + word] = m[i];
			bs->sliceUsed[w * 64 + i] = true;
		}
	}
	bs->nblock = 0;
}

/*
 * Add a row, given its signature words, to the stripe being built.
 */
static void
BloomSlicedAddRow(BloomSlicedBuildState *bs, const uint64 *words, ItemPointer tid)
{
	int			sigWords = bs->state.shape.sigWords;

	memcpy(bs->block + bs->nblock * sigWords, words, sizeof(uint64) * sigWords);
	bs->nblock++;
	bs->tids[bs->nrows++] = *tid;
	if (bs->nblock == 64)
		BloomSlicedFlushBlock(bs);
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
	bs->block = palloc(sizeof(uint64) * 64 * shape->sigWords);
	bs->tids = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	bs->maxStripes = 64;
	bs->stripes = palloc(sizeof(BlockNumber) * bs->maxStripes);
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
	if (bs->nblock > 0)
		BloomSlicedFlushBlock(bs);
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
	uint32		k;

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

		/* The full stripes the participants wrote, then their leftovers */
		if (shared->nStripes > bs->maxStripes)
		{
			bs->maxStripes = shared->nStripes;
			bs->stripes = repalloc(bs->stripes, sizeof(BlockNumber) * bs->maxStripes);
		}
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

	/* The stripe lists, then the metapage */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	for (k = 0; k * BLOOMIDX_STRIPELIST_ENTRIES < bs->nStripes; k++)
	{
		PGAlignedBlock image;
		uint32		n = Min(bs->nStripes - k * BLOOMIDX_STRIPELIST_ENTRIES,
							BLOOMIDX_STRIPELIST_ENTRIES);

		BloomInitSlicedPage(image.data, BLOOMIDX_STRIPELIST, shape->sigBits, k);
		memcpy(BloomPageGetStripeList(image.data),
			   bs->stripes + k * BLOOMIDX_STRIPELIST_ENTRIES, sizeof(BlockNumber) * n);
		meta->stripeLists[k] = BloomBuildWritePage(index, image.data, false);
	}
	meta->mergedRows = rows;
	meta->nStripes = bs->nStripes;
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	pfree(bs->stripes);
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
 * Get the page a link of a (locked) stripe page of stripe s points to,
 * locked exclusively and registered in a new WAL record; if there is none
 * yet, allocate it and set the link in the same record.  With init, the
 * page is initialized afresh either way.
 */
static Page
BloomStripeGetPage(Relation index, Buffer stripebuf, BlockNumber *link,
				   uint16 flag, int sigBits, uint32 s, bool init,
				   GenericXLogState **xlogState, Buffer *buffer)
{
	Page		page;

	*xlogState = GenericXLogStart(index);
	if (*link == InvalidBlockNumber)
	{
		Page		stripePage;
		BlockNumber *stripeLink;

		*buffer = BloomNewBuffer(index);
		page = GenericXLogRegisterBuffer(*xlogState, *buffer, GENERIC_XLOG_FULL_IMAGE);
		BloomInitSlicedPage(page, flag, sigBits, s);

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
		if (!BloomPageIsSliced(BufferGetPage(*buffer), flag, s))
			BloomSlicedCorrupted(index, *link,
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
	BloomStripe stripe = BloomPageGetStripe(BufferGetPage(stripebuf));
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
	int			i;

	/* The last TID map starting at or before r0: its rows before r0 */
	while (t + 1 < stripe->nTidPages && stripe->tidFirstRow[t + 1] <= r0)
		t++;
	if (t < stripe->nTidPages)
	{
		first = stripe->tidFirstRow[t];
		buffer = ReadBuffer(index, stripe->tidPages[t]);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!BloomPageIsSliced(page, BLOOMIDX_TIDMAP, s) ||
			BloomPageGetTidMap(page)->firstRow != first ||
			first + BloomPageGetTidMap(page)->nrows < r0)
			BloomSlicedCorrupted(index, stripe->tidPages[t], "TID-map page");
		(void) BloomTidMapUnpack(page, all);
		UnlockReleaseBuffer(buffer);
	}
	else if (r0 != 0)
		BloomSlicedCorrupted(index, BufferGetBlockNumber(stripebuf),
							 "stripe page listing its TID maps");
	nall = r0 - first;
	memcpy(all + nall, tids, sizeof(ItemPointerData) * n);
	nall += n;

	/* Pack them, into the pages listed already, then new ones */
	t0 = t;
	for (done = 0; done < nall; t++)
	{
		if (t >= BLOOMIDX_STRIPE_TIDPAGES)
			elog(ERROR, "stripe %u of bloomidx index \"%s\" needs more than %d TID maps",
				 s, RelationGetRelationName(index), (int) BLOOMIDX_STRIPE_TIDPAGES);
		page = BloomStripeGetPage(index, stripebuf, &stripe->tidPages[t],
								  BLOOMIDX_TIDMAP, sigBits, s, true,
								  &xlogState, &buffer);
		firstRows[t] = first + done;
		done += BloomTidMapPack(page, first + done, all + done, nall - done);
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(buffer);
	}

	/* List them; pages listed past them are left to VACUUM to free */
	xlogState = GenericXLogStart(index);
	stripe = BloomPageGetStripe(GenericXLogRegisterBuffer(xlogState, stripebuf, 0));
	stripe->nTidPages = t;
	for (i = t0; i < t; i++)
		stripe->tidFirstRow[i] = firstRows[i];
	for (i = t; i < BLOOMIDX_STRIPE_TIDPAGES; i++)
		stripe->tidPages[i] = InvalidBlockNumber;
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
	BloomStripe stripe = BloomPageGetStripe(BufferGetPage(stripebuf));
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
												   BLOOMIDX_SLICE, sigBits, s,
												   false, &xlogState, &buffer));
		for (w = 0; w < nw; w++)
			dst[w0 + w] |= src[w];
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
	BlockNumber *list;
	Page		page;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
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
		listed = BloomPageGetStripeList(BufferGetPage(listbuf))[s % BLOOMIDX_STRIPELIST_ENTRIES];
	}

	if (listed != InvalidBlockNumber)
	{
		/* Left by a merge a crash cut short: take it up again */
		stripebuf = ReadBuffer(index, listed);
		LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
		if (BloomPageIsSliced(BufferGetPage(stripebuf), BLOOMIDX_STRIPE, s))
		{
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
	list = BloomPageGetStripeList(page);

	stripebuf = BloomNewBuffer(index);
	BloomInitSlicedPage(GenericXLogRegisterBuffer(xlogState, stripebuf,
												  GENERIC_XLOG_FULL_IMAGE),
						BLOOMIDX_STRIPE, state->shape.sigBits, s);
	list[s % BLOOMIDX_STRIPELIST_ENTRIES] = BufferGetBlockNumber(stripebuf);
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
		}

		BloomWriteStripe(index, state, stripebuf, s, &batch, done, n, r0, sliceWords);

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

/*
 * Sizes the cost model and bloomidx_stats need: stripes in use, pending
 * pages, the row numbers the stripe lists span.
 */
void
BloomSlicedSizes(Relation index, BloomSlicedSizesData *sizes)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	uint32		s;

	BloomTakeSnapshot(index, snap, true);
	sizes->stripes = 0;
	for (s = snap->firstStripe; s < snap->nStripes; s++)
		sizes->stripes += BloomSnapStripe(snap, s) != InvalidBlockNumber ? 1 : 0;
	sizes->pendingPages = snap->nPending;
	sizes->firstRow = (uint64) snap->firstStripe * BLOOMIDX_STRIPE_ROWS;
	sizes->nextRow = Max(snap->mergedRows, sizes->firstRow);
	BloomFreeSnapshot(snap);
}

/*
 * Mark in referenced (npages entries) the blocks a sliced index lists:
 * stripe lists, stripes, their slices and TID maps, pending pages.  The
 * caller holds the merge lock, so that no merge or VACUUM changes them.
 */
void
BloomSlicedReferenced(Relation index, const BloomShape *shape, bool *referenced,
					  BlockNumber npages)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomStripePages *pages = palloc(sizeof(BloomStripePages));
	uint32		s;
	int			i;

#define BLOOM_REFERENCE(blkno) \
	do { \
		if ((blkno) < npages) \
			referenced[(blkno)] = true; \
	} while (0)

	BloomTakeSnapshot(index, snap, true);
	for (i = 0; i < snap->nPending; i++)
		BLOOM_REFERENCE(snap->pending[i]);
	for (i = 0; i < BLOOMIDX_MAX_STRIPELISTS; i++)
	{
		if (snap->stripeLists[i] != InvalidBlockNumber)
			BLOOM_REFERENCE(snap->stripeLists[i]);
	}
	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		BlockNumber blkno = BloomSnapStripe(snap, s);

		if (blkno == InvalidBlockNumber)
			continue;
		CHECK_FOR_INTERRUPTS();
		BLOOM_REFERENCE(blkno);
		if (!BloomReadStripe(index, s, blkno, shape->sigBits, pages))
			continue;
		for (i = 0; i < pages->nTidPages; i++)
			BLOOM_REFERENCE(pages->tidPages[i]);
		for (i = 0; i < shape->sigBits; i++)
		{
			if (pages->slices[i] != InvalidBlockNumber)
				BLOOM_REFERENCE(pages->slices[i]);
		}
	}
#undef BLOOM_REFERENCE
	pfree(pages);
	BloomFreeSnapshot(snap);
}

/*
 * Free a page of a sliced index that nothing lists any more: a pending
 * page that a merge froze and published, or a page of a stripe that a
 * merge wrote, but a crash kept from freeing or listing.  The caller holds
 * the merge lock and found the block missing from BloomSlicedReferenced;
 * a free page, or a pending page added since, is left as it is.  Returns
 * whether the page was freed.
 */
bool
BloomSlicedFreeOrphan(Relation index, BloomState state, BlockNumber blkno)
{
	Buffer		buffer = ReadBuffer(index, blkno);
	Page		page;
	bool		orphan;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buffer);
	if (PageIsNew(page) || BloomPageIsDeleted(page))
		orphan = false;
	else if (BloomPageHasFlag(page, BLOOMIDX_SLICED_FLAGS))
		orphan = true;
	else
		orphan = BloomPageIsData(index, page, blkno, state->tuplesPerPage) &&
			BloomPageHasFlag(page, BLOOMIDX_FROZEN);
	if (orphan)
		BloomFreePage(index, buffer);
	UnlockReleaseBuffer(buffer);
	return orphan;
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

/* Result of reading a slice: rows left, none left, or the stripe is gone */
#define BLOOM_SLICE_ANY		1
#define BLOOM_SLICE_NONE	0
#define BLOOM_SLICE_GONE	(-1)

/* Working space of a sliced scan */
typedef struct BloomSlicedScanData
{
	BloomStripePages pages;
	uint64		r[BLOOMIDX_STRIPE_WORDS];	/* rows left */
	uint64		t[BLOOMIDX_STRIPE_WORDS];	/* one alternative's rows */
	uint64		g[BLOOMIDX_STRIPE_WORDS];	/* a group's rows */
	ItemPointerData *tids;		/* a batch of TIDs for the bitmap */
	int			maxtids;
	BufferAccessStrategy bas;
} BloomSlicedScanData;

/*
 * AND slice page blkno of a stripe (or nothing, for a slice with no bit
 * set) into the first nw words of r.
 */
static int
BloomAndSlice(Relation index, const BloomStripePages *pages, BlockNumber stripeBlkno,
			  BlockNumber blkno, uint64 *r, int nw, BufferAccessStrategy bas)
{
	Buffer		buffer;
	const uint64 *slice;
	uint64		any = 0;
	int			w;

	if (blkno == InvalidBlockNumber)
	{
		memset(r, 0, sizeof(uint64) * nw);
		return BLOOM_SLICE_NONE;
	}

	buffer = BloomReadStripePage(index, pages, stripeBlkno, blkno, BLOOMIDX_SLICE, bas);
	if (!BufferIsValid(buffer))
		return BLOOM_SLICE_GONE;
	slice = BloomPageGetSlice(BufferGetPage(buffer));
	for (w = 0; w < nw; w++)
	{
		r[w] &= slice[w];
		any |= r[w];
	}
	UnlockReleaseBuffer(buffer);
	return any != 0 ? BLOOM_SLICE_ANY : BLOOM_SLICE_NONE;
}

/*
 * AND the slices of every bit of mask (sigWords words) into r.
 */
static int
BloomAndMask(Relation index, const BloomStripePages *pages, BlockNumber stripeBlkno,
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
			int			result = BloomAndSlice(index, pages, stripeBlkno,
											   pages->slices[b], r, nw, bas);

			if (result != BLOOM_SLICE_ANY)
				return result;
			x &= x - 1;
		}
	}
	return BLOOM_SLICE_ANY;
}

/*
 * Add the TIDs of the rows set in r (of a stripe) to the bitmap, counting
 * them in *ntids.  Returns false if the stripe is gone.
 */
static bool
BloomAddStripeTids(Relation index, BloomSlicedScanData *work,
				   BlockNumber stripeBlkno, int nw, TIDBitmap *tbm, int64 *ntids)
{
	const BloomStripePages *pages = &work->pages;
	Buffer		buffer = InvalidBuffer;
	BloomTidMap map = NULL;
	int			t = 0;
	int			curPage = -1;
	int			n = 0;
	int			w;

	for (w = 0; w < nw; w++)
	{
		uint64		x = work->r[w];

		while (x != 0)
		{
			int			row = w * 64 + pg_rightmost_one_pos64(x);
			int			i;

			x &= x - 1;
			while (t + 1 < pages->nTidPages && pages->tidFirstRow[t + 1] <= row)
				t++;
			if (t != curPage)
			{
				if (BufferIsValid(buffer))
					UnlockReleaseBuffer(buffer);
				if (t >= pages->nTidPages)
					BloomSlicedCorrupted(index, stripeBlkno,
										 "stripe page listing its TID maps");
				buffer = BloomReadStripePage(index, pages, stripeBlkno,
											 pages->tidPages[t], BLOOMIDX_TIDMAP,
											 work->bas);
				if (!BufferIsValid(buffer))
					return false;
				map = BloomPageGetTidMap(BufferGetPage(buffer));
				curPage = t;
			}
			i = row - map->firstRow;
			if (i < 0 || i >= map->nrows)
				BloomSlicedCorrupted(index, pages->tidPages[t],
									 "TID-map page holding the stripe's rows");
			BloomTidMapGet(map, i, &work->tids[n]);
			if (!ItemPointerIsValid(&work->tids[n]))
				continue;		/* removed by VACUUM */
			if (++n == work->maxtids)
			{
				tbm_add_tuples(tbm, work->tids, n, true);
				*ntids += n;
				n = 0;
			}
		}
	}
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);
	if (n > 0)
		tbm_add_tuples(tbm, work->tids, n, true);
	*ntids += n;
	return true;
}

/*
 * The rows of stripe s (at stripe page blkno, rows rows) that the query
 * may match, in work->r.  Returns BLOOM_SLICE_GONE if the stripe is gone.
 */
static int
BloomStripeCandidates(Relation index, const BloomShape *shape, BloomScanOpaque so,
					  BloomSlicedScanData *work, uint32 s, BlockNumber blkno,
					  int rows)
{
	int			nw = (rows + 63) / 64;
	int			result;
	int			a;

	if (!BloomReadStripe(index, s, blkno, shape->sigBits, &work->pages))
		return BLOOM_SLICE_GONE;

	/* Start from every row of the stripe */
	memset(work->r, 0xFF, sizeof(uint64) * nw);
	if (rows % 64 != 0)
		work->r[nw - 1] = (UINT64CONST(1) << (rows % 64)) - 1;

	result = BloomAndMask(index, &work->pages, blkno, so->mask, shape->sigWords,
						  work->r, nw, work->bas);

	/* Each group of alternatives: the OR of its masks' ANDs */
	for (a = 0; result == BLOOM_SLICE_ANY && a < so->nalternatives; a++)
	{
		BloomAlternatives *alt = &so->alternatives[a];
		uint64		any = 0;
		int			j,
					w;

		memset(work->g, 0, sizeof(uint64) * nw);
		for (j = 0; j < alt->nmasks; j++)
		{
			int			altResult;

			memcpy(work->t, work->r, sizeof(uint64) * nw);
			altResult = BloomAndMask(index, &work->pages, blkno,
									 alt->masks + (Size) j * shape->sigWords,
									 shape->sigWords, work->t, nw, work->bas);
			if (altResult == BLOOM_SLICE_GONE)
				return BLOOM_SLICE_GONE;
			if (altResult == BLOOM_SLICE_ANY)
			{
				for (w = 0; w < nw; w++)
					work->g[w] |= work->t[w];
			}
		}
		for (w = 0; w < nw; w++)
		{
			work->r[w] = work->g[w];
			any |= work->r[w];
		}
		result = any != 0 ? BLOOM_SLICE_ANY : BLOOM_SLICE_NONE;
	}
	return result;
}

/*
 * One pass of a bitmap scan of a sliced index; returns false if a stripe
 * it listed was emptied by VACUUM under it, and the scan must start over.
 */
static bool
BloomSlicedScanOnce(Relation index, BloomState state, BloomScanOpaque so,
					TIDBitmap *tbm, BloomSlicedScanData *work, int64 *ntids)
{
	const BloomShape *shape = &state->shape;
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomSlicedSnapshot *snap2 = palloc(sizeof(BloomSlicedSnapshot));
	bool		complete = true;
	uint32		s;
	int			i;

	BloomTakeSnapshot(index, snap, true);

	/* Pending pages: their rows are not below this snapshot's mergedRows */
	for (i = 0; i < snap->nPending; i++)
	{
		Buffer		buffer;
		Page		page;
		int			nfound = 0;

		CHECK_FOR_INTERRUPTS();
		buffer = ReadBufferExtended(index, MAIN_FORKNUM, snap->pending[i],
									RBM_NORMAL, work->bas);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!PageIsNew(page) &&
			BloomPageGetOpaque(page)->page_id == BLOOMIDX_PAGE_ID &&
			!BloomPageHasFlag(page, BLOOMIDX_META | BLOOMIDX_DELETED |
							  BLOOMIDX_SLICED_FLAGS) &&
			BloomPageGetOpaque(page)->maxtuples == state->tuplesPerPage &&
			BloomPageGetNTuples(page) <= state->tuplesPerPage)
			nfound = BloomScanRowPage(so, page, shape->sigBytes,
									  shape->sigWords, work->tids);
		UnlockReleaseBuffer(buffer);
		if (nfound > 0)
		{
			tbm_add_tuples(tbm, work->tids, nfound, true);
			*ntids += nfound;
		}
	}

	/*
	 * Stripes.  mergedRows is read again now: rows merged while the pending
	 * pages were read (their pages may have been freed since) are below it.
	 * The stripes listed before stay those to read: VACUUM may have emptied
	 * one since, moving its rows to pending pages read already; if it freed
	 * a page the stripe's number on the pages tells.
	 */
	BloomTakeSnapshot(index, snap2, true);
	for (s = snap->firstStripe; s < snap2->nStripes && complete; s++)
	{
		int			rows = BloomStripeRows(snap2->mergedRows, s);
		BlockNumber blkno = s < snap->nStripes ? BloomSnapStripe(snap, s) :
			BloomSnapStripe(snap2, s);

		CHECK_FOR_INTERRUPTS();
		if (rows == 0)
			break;
		if (blkno == InvalidBlockNumber)
			continue;
		switch (BloomStripeCandidates(index, shape, so, work, s, blkno, rows))
		{
			case BLOOM_SLICE_ANY:
				complete = BloomAddStripeTids(index, work, blkno, (rows + 63) / 64,
											  tbm, ntids);
				break;
			case BLOOM_SLICE_GONE:
				complete = false;
				break;
		}
	}

	BloomFreeSnapshot(snap2);
	BloomFreeSnapshot(snap);
	return complete;
}

/*
 * Bitmap scan of a sliced index: the pending pages as in the row layout,
 * then for each stripe the AND of the query's slices.  Returns the number
 * of TIDs added (counting again those of a pass that had to start over).
 */
int64
BloomSlicedGetBitmap(Relation index, BloomState state, BloomScanOpaque so,
					 TIDBitmap *tbm)
{
	BloomSlicedScanData *work = palloc(sizeof(BloomSlicedScanData));
	int64		ntids = 0;

	work->maxtids = Max(state->tuplesPerPage, 1024);
	work->tids = palloc(sizeof(ItemPointerData) * work->maxtids);
	work->bas = GetAccessStrategy(BAS_BULKREAD);

	while (!BloomSlicedScanOnce(index, state, so, tbm, work, &ntids))
		elog(DEBUG1, "bloomidx index \"%s\": a stripe was emptied during a scan, starting over",
			 RelationGetRelationName(index));

	FreeAccessStrategy(work->bas);
	pfree(work->tids);
	pfree(work);
	return ntids;
}

/* ---------------------------------------------------------------------
 * Reading rows back
 * ---------------------------------------------------------------------
 */

/*
 * Read back the rows of stripe s that VACUUM has not removed: their row
 * numbers, TIDs and signature words (sigWords words each), in row order.
 * Returns how many; the arrays are palloc'd.  The caller holds the merge
 * lock, so that the stripe stays.
 */
static int
BloomReadStripeRows(Relation index, const BloomShape *shape,
					const BloomStripePages *pages, BlockNumber stripeBlkno,
					int rows, int **rowOf, ItemPointerData **tids, uint64 **words)
{
	int			sigWords = shape->sigWords;
	ItemPointerData *map = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	int			nlive = 0;
	int			t,
				b,
				i;

	*rowOf = palloc(sizeof(int) * Max(rows, 1));
	*tids = palloc(sizeof(ItemPointerData) * Max(rows, 1));

	for (t = 0; t < pages->nTidPages; t++)
	{
		Buffer		buffer;
		int			first,
					n;

		buffer = BloomReadStripePage(index, pages, stripeBlkno, pages->tidPages[t],
									 BLOOMIDX_TIDMAP, NULL);
		if (!BufferIsValid(buffer))
			elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied while it was read",
				 pages->stripe, RelationGetRelationName(index));
		first = BloomPageGetTidMap(BufferGetPage(buffer))->firstRow;
		n = BloomTidMapUnpack(BufferGetPage(buffer), map);
		UnlockReleaseBuffer(buffer);
		if (first != pages->tidFirstRow[t] || (t == 0 && first != 0) ||
			(t > 0 && first < pages->tidFirstRow[t - 1]))
			BloomSlicedCorrupted(index, pages->tidPages[t],
								 "TID-map page starting where the stripe page says");
		for (i = 0; i < n && first + i < rows; i++)
		{
			if (ItemPointerIsValid(&map[i]))
			{
				(*tids)[nlive] = map[i];
				(*rowOf)[nlive++] = first + i;
			}
		}
	}
	pfree(map);

	*words = palloc0(sizeof(uint64) * sigWords * Max(nlive, 1));
	for (b = 0; b < shape->sigBits; b++)
	{
		Buffer		buffer;
		const uint64 *slice;

		if (pages->slices[b] == InvalidBlockNumber)
			continue;
		CHECK_FOR_INTERRUPTS();
		buffer = BloomReadStripePage(index, pages, stripeBlkno, pages->slices[b],
									 BLOOMIDX_SLICE, NULL);
		if (!BufferIsValid(buffer))
			elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied while it was read",
				 pages->stripe, RelationGetRelationName(index));
		slice = BloomPageGetSlice(BufferGetPage(buffer));
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
 * of its stripe page, and return the number of rows.  The caller holds
 * the merge lock (LockPage on the metapage's block), so that rows do not
 * move while it reads.
 */
uint64
BloomSlicedForEachRow(Relation index, const BloomShape *shape,
					  BloomRowCallback fn, void *arg)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomStripePages *pages = palloc(sizeof(BloomStripePages));
	uint64		total = 0;
	uint32		s;

	BloomTakeSnapshot(index, snap, true);
	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		int			rows = BloomStripeRows(snap->mergedRows, s);
		BlockNumber blkno = BloomSnapStripe(snap, s);
		int		   *rowOf;
		ItemPointerData *tids;
		uint64	   *words;
		int			nlive,
					i;

		if (rows == 0)
			break;
		if (blkno == InvalidBlockNumber)
			continue;
		if (!BloomReadStripe(index, s, blkno, shape->sigBits, pages))
			elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied while it was read",
				 s, RelationGetRelationName(index));
		nlive = BloomReadStripeRows(index, shape, pages, blkno, rows,
									&rowOf, &tids, &words);
		for (i = 0; i < nlive; i++)
		{
			uint8		sig[BLOOMIDX_SLICED_MAX_LENGTH / 8];

			BloomStoreWords(sig, words + (Size) i * shape->sigWords, shape->sigBytes);
			fn(&tids[i], sig, blkno, arg);
		}
		total += nlive;
		pfree(rowOf);
		pfree(tids);
		pfree(words);
	}
	pfree(pages);
	BloomFreeSnapshot(snap);
	return total;
}

/* ---------------------------------------------------------------------
 * VACUUM
 * ---------------------------------------------------------------------
 */

/*
 * Move the live rows of a mostly dead stripe back to the pending pages,
 * reading their signatures back from the slices, take the stripe out of
 * its list and free its pages.
 */
static void
BloomReclaimStripe(Relation index, BloomState state, uint32 s, BlockNumber stripeBlkno,
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
	Buffer		listbuf;
	GenericXLogState *xlogState;
	BloomMetaPage meta;
	uint32		listNo = s / BLOOMIDX_STRIPELIST_ENTRIES;
	uint32		k;

	nlive = BloomReadStripeRows(index, shape, pages, stripeBlkno, rows,
								&rowOf, &tids, &words);

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

	/* Take the stripe out of its list */
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	k = listNo - meta->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES;
	if (s < meta->firstStripe || k >= BLOOMIDX_MAX_STRIPELISTS ||
		meta->stripeLists[k] == InvalidBlockNumber)
		elog(ERROR, "stripe %u of bloomidx index \"%s\" is outside its stripe lists",
			 s, RelationGetRelationName(index));
	listbuf = ReadBuffer(index, meta->stripeLists[k]);
	LockBuffer(listbuf, BUFFER_LOCK_EXCLUSIVE);
	if (!BloomPageIsSliced(BufferGetPage(listbuf), BLOOMIDX_STRIPELIST, listNo))
		BloomSlicedCorrupted(index, meta->stripeLists[k], "stripe-list page");
	xlogState = GenericXLogStart(index);
	BloomPageGetStripeList(GenericXLogRegisterBuffer(xlogState, listbuf, 0))
		[s % BLOOMIDX_STRIPELIST_ENTRIES] = InvalidBlockNumber;
	GenericXLogFinish(xlogState);
	UnlockReleaseBuffer(listbuf);
	UnlockReleaseBuffer(metabuf);

	/* Free its pages; a scan still reading them finds out by their tags */
	for (i = -1; i < shape->sigBits + pages->nTidPages; i++)
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
		if (BloomPageHasFlag(BufferGetPage(buffer), BLOOMIDX_SLICED_FLAGS) &&
			BloomPageGetTag(BufferGetPage(buffer)) == s)
			BloomFreePage(index, buffer);
		UnlockReleaseBuffer(buffer);
	}

	pfree(words);
	pfree(rowOf);
	pfree(tids);
}

/*
 * Are the stripe lists nearly full?  Then VACUUM moves the rows of the
 * first list's stripes forward.
 */
static bool
BloomSnapCrowded(const BloomSlicedSnapshot *snap)
{
	return snap->nStripes - snap->firstStripe >
		BLOOMIDX_MAX_STRIPES - 2 * BLOOMIDX_STRIPELIST_ENTRIES;
}

/*
 * Does a sliced index need a VACUUM's pass over its stripes even though
 * no row is dead: are its stripe lists nearly full?
 */
bool
BloomSlicedNeedsRenumbering(Relation index)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	bool		crowded;

	BloomTakeSnapshot(index, snap, false);
	crowded = BloomSnapCrowded(snap);
	BloomFreeSnapshot(snap);
	return crowded;
}

/*
 * Rows a sliced index can still take without a VACUUM renumbering its
 * oldest ones: the row numbers left in its stripe lists, and room in the
 * pending list, less the rows pending.
 */
static uint64
BloomSlicedRoom(Relation index, BloomState state)
{
	BloomSlicedSnapshot *snap = palloc(sizeof(BloomSlicedSnapshot));
	uint64		room;

	BloomTakeSnapshot(index, snap, false);
	room = BloomSnapRowsLeft(snap);
	if (room >= (uint64) snap->nPending * state->tuplesPerPage)
		room -= (uint64) snap->nPending * state->tuplesPerPage;
	else
		room = 0;
	room += (uint64) (BLOOMIDX_PENDING_SIZE - snap->nPending) * state->tuplesPerPage;
	BloomFreeSnapshot(snap);
	return room;
}

/*
 * Drop the first stripe-list pages while every stripe they list is full
 * and emptied: the metapage lists the stripe lists from the next one.
 * Scans copy the stripes they read under the metapage lock, so the pages
 * are freed at once.  The caller holds the merge lock.
 */
static void
BloomDropEmptyStripeLists(Relation index)
{
	for (;;)
	{
		Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
		Buffer		listbuf;
		BloomMetaPage meta;
		GenericXLogState *xlogState;
		BlockNumber *list;
		bool		empty = true;
		int			i;

		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		meta = BloomPageGetMeta(BufferGetPage(metabuf));
		if (meta->stripeLists[0] == InvalidBlockNumber ||
			(uint64) (meta->firstStripe + BLOOMIDX_STRIPELIST_ENTRIES) *
			BLOOMIDX_STRIPE_ROWS > meta->mergedRows)
		{
			UnlockReleaseBuffer(metabuf);
			return;
		}
		listbuf = ReadBuffer(index, meta->stripeLists[0]);
		LockBuffer(listbuf, BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(listbuf), BLOOMIDX_STRIPELIST,
							   meta->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES))
			BloomSlicedCorrupted(index, meta->stripeLists[0], "stripe-list page");
		list = BloomPageGetStripeList(BufferGetPage(listbuf));
		for (i = 0; i < BLOOMIDX_STRIPELIST_ENTRIES && empty; i++)
			empty = list[i] == InvalidBlockNumber;
		if (!empty)
		{
			UnlockReleaseBuffer(listbuf);
			UnlockReleaseBuffer(metabuf);
			return;
		}

		xlogState = GenericXLogStart(index);
		meta = BloomPageGetMeta(GenericXLogRegisterBuffer(xlogState, metabuf, 0));
		memmove(meta->stripeLists, meta->stripeLists + 1,
				sizeof(BlockNumber) * (BLOOMIDX_MAX_STRIPELISTS - 1));
		meta->stripeLists[BLOOMIDX_MAX_STRIPELISTS - 1] = InvalidBlockNumber;
		meta->firstStripe += BLOOMIDX_STRIPELIST_ENTRIES;
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(metabuf);

		BloomFreePage(index, listbuf);
		UnlockReleaseBuffer(listbuf);
	}
}

/*
 * Remove dead rows from a sliced index (ambulkdelete): compact the pending
 * pages and merge their rows, mark dead rows in the TID maps,
 * move the live rows of full stripes at least half dead back through the
 * pending pages, and merge those.
 */
IndexBulkDeleteResult *
BloomSlicedBulkDelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BloomState	state = BloomGetState(index);
	BloomSlicedSnapshot *snap;
	BloomStripePages *pages;
	ItemPointerData *map;
	bool		reclaimed = false;
	bool		crowded;
	uint32		s;
	int			i;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	LockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);

	snap = palloc(sizeof(BloomSlicedSnapshot));
	pages = palloc(sizeof(BloomStripePages));
	map = palloc(sizeof(ItemPointerData) * BLOOMIDX_STRIPE_ROWS);
	BloomTakeSnapshot(index, snap, false);

	/* Pending pages: dead rows out, then the rest into the stripes */
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

	BloomFreeSnapshot(snap);
	BloomSlicedMergeLocked(index);
	snap = palloc(sizeof(BloomSlicedSnapshot));
	BloomTakeSnapshot(index, snap, true);

	/*
	 * Stripes: mark dead rows, count the live ones.  When the stripe lists
	 * are nearly full, the stripes of the first list are emptied whatever
	 * their live rows, so that the list can go.
	 */
	crowded = BloomSnapCrowded(snap);
	for (s = snap->firstStripe; s < snap->nStripes; s++)
	{
		int			rows = BloomStripeRows(snap->mergedRows, s);
		BlockNumber blkno = BloomSnapStripe(snap, s);
		int			nlive = 0;
		int			t;
		Buffer		stripebuf;
		GenericXLogState *xlogState;

		if (rows == 0)
			break;
		if (blkno == InvalidBlockNumber)
			continue;
		if (!BloomReadStripe(index, s, blkno, state->shape.sigBits, pages))
			elog(ERROR, "stripe %u of bloomidx index \"%s\" was emptied during VACUUM",
				 s, RelationGetRelationName(index));

		for (t = 0; t < pages->nTidPages; t++)
		{
			Buffer		buffer;
			Page		page;
			BloomTidMap tidmap;
			int			n;
			int			j;

			vacuum_delay_point();
			buffer = ReadBufferExtended(index, MAIN_FORKNUM, pages->tidPages[t],
										RBM_NORMAL, info->strategy);
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			page = BufferGetPage(buffer);
			if (!BloomPageIsSliced(page, BLOOMIDX_TIDMAP, s))
				BloomSlicedCorrupted(index, pages->tidPages[t], "TID-map page");
			tidmap = BloomPageGetTidMap(page);
			n = BloomTidMapUnpack(page, map);
			xlogState = NULL;
			for (j = 0; j < n && tidmap->firstRow + j < rows; j++)
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
					tidmap = BloomPageGetTidMap(page);
				}
				BloomTidMapKill(tidmap, j);
				stats->tuples_removed += 1;
			}
			if (xlogState != NULL)
				GenericXLogFinish(xlogState);
			UnlockReleaseBuffer(buffer);
		}

		stripebuf = ReadBuffer(index, blkno);
		LockBuffer(stripebuf, BUFFER_LOCK_EXCLUSIVE);
		xlogState = GenericXLogStart(index);
		BloomPageGetStripe(GenericXLogRegisterBuffer(xlogState, stripebuf, 0))->nlive = nlive;
		GenericXLogFinish(xlogState);
		UnlockReleaseBuffer(stripebuf);

		/*
		 * A full stripe at least half dead gives its live rows back, if they
		 * can be numbered again.
		 */
		if (rows == BLOOMIDX_STRIPE_ROWS &&
			(nlive <= rows / 2 ||
			 (crowded && s < snap->firstStripe + BLOOMIDX_STRIPELIST_ENTRIES)) &&
			(uint64) nlive <= BloomSlicedRoom(index, state))
		{
			BloomReclaimStripe(index, state, s, blkno, pages, rows);
			reclaimed = true;
		}
	}

	/* The rows moved back, into the stripes again */
	if (reclaimed)
	{
		BloomDropEmptyStripeLists(index);
		BloomSlicedMergeLocked(index);
	}

	UnlockPage(index, BLOOMIDX_METAPAGE_BLKNO, ExclusiveLock);
	pfree(map);
	pfree(pages);
	BloomFreeSnapshot(snap);
	return stats;
}
