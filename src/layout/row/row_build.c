/*-------------------------------------------------------------------------
 *
 * row_build.c
 *	  Building an index of the row layout, serially or as one participant
 *	  of a parallel build.
 *
 * The build fills data pages in local memory and writes each full page
 * through shared buffers (am_build.c WAL-logs the whole index at the end).
 * In a parallel build each participant fills and writes its own pages,
 * extending the index under the relation extension lock, and the leader
 * then records every participant's last, partly filled page in the
 * metapage's free list.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/row/row_build.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "commands/progress.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "row.h"
#include "signature.h"

typedef struct BloomBuildState
{
	BloomStateData state;		/* shape and hash functions */
	Relation	index;
	MemoryContext tmpCtx;		/* reset after every row */
	PGAlignedBlock page;		/* data page being filled */
	bool		pageHasTuples;
	uint8	   *sig;			/* signature of the current row */
	double		indtuples;
	uint64		bitsSet;		/* fill statistics */
	bool		parallel;		/* other participants extend the index too */
	BloomBuildProgress *progress;	/* rows indexed, for the progress report */
} BloomBuildState;

/* Shared state of a parallel build: each participant's last page */
typedef struct BloomRowShared
{
	slock_t		mutex;
	int			nlastPages;
	BlockNumber lastPages[BLOOMIDX_MAX_PARTICIPANTS];
} BloomRowShared;

/*
 * Write the data page being filled to a new block of the index.
 */
static BlockNumber
BloomFlushBuildPage(BloomBuildState *buildstate)
{
	Buffer		buffer;
	BlockNumber blkno;

	if (buildstate->parallel)
		LockRelationForExtension(buildstate->index, ExclusiveLock);
	buffer = ReadBuffer(buildstate->index, P_NEW);
	if (buildstate->parallel)
		UnlockRelationForExtension(buildstate->index, ExclusiveLock);
	blkno = BufferGetBlockNumber(buffer);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(buffer), buildstate->page.data, BLCKSZ);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);

	BloomInitDataPage(buildstate->page.data, buildstate->state.shape.sigBytes);
	buildstate->pageHasTuples = false;
	return blkno;
}

/*
 * Add one heap row to the index being built.
 */
static void
BloomBuildCallback(Relation index, ItemPointer tid, Datum *values,
				   bool *isnull, bool tupleIsAlive, void *state)
{
	BloomBuildState *buildstate = (BloomBuildState *) state;
	int			sigBytes = buildstate->state.shape.sigBytes;
	MemoryContext oldCtx;

	oldCtx = MemoryContextSwitchTo(buildstate->tmpCtx);
	buildstate->bitsSet += BloomFormSignature(&buildstate->state, values, isnull,
											  buildstate->sig);
	MemoryContextSwitchTo(oldCtx);
	MemoryContextReset(buildstate->tmpCtx);

	if (!BloomPageAddTuple(buildstate->page.data, sigBytes, buildstate->sig, tid))
	{
		(void) BloomFlushBuildPage(buildstate);
		if (!BloomPageAddTuple(buildstate->page.data, sigBytes, buildstate->sig, tid))
			elog(ERROR, "could not add a tuple to an empty bloomidx page");
	}
	buildstate->pageHasTuples = true;
	buildstate->indtuples += 1;

	if (((uint64) buildstate->indtuples % BLOOMIDX_PROGRESS_ROWS) == 0)
		BloomBuildProgressAdd(buildstate->progress, BLOOMIDX_PROGRESS_ROWS);
}

/*
 * Set up a participant's build state for an index of the given shape.
 */
static void
BloomBuildStateInit(BloomBuildState *buildstate, Relation index,
					const BloomShape *shape, bool parallel)
{
	memset(buildstate, 0, sizeof(BloomBuildState));
	BloomInitState(&buildstate->state, index, shape);
	buildstate->index = index;
	buildstate->tmpCtx = AllocSetContextCreate(CurrentMemoryContext,
											   "bloomidx build temporary context",
											   ALLOCSET_DEFAULT_SIZES);
	buildstate->sig = palloc0(shape->sigBytes);
	buildstate->parallel = parallel;
	BloomInitDataPage(buildstate->page.data, shape->sigBytes);
}

/*
 * Scan the heap (all of it, or a participant's share of a parallel scan)
 * into data pages.  Returns the last page written, partly filled, or
 * InvalidBlockNumber.
 */
static BlockNumber
BloomRowBuildScan(Relation heap, Relation index, IndexInfo *indexInfo,
				  const BloomShape *shape, TableScanDesc scan,
				  BloomBuildProgress *progress, BloomBuildCounts *counts)
{
	BloomBuildState buildstate;
	BlockNumber lastPage = InvalidBlockNumber;

	BloomBuildStateInit(&buildstate, index, shape, scan != NULL);
	buildstate.progress = progress;
	counts->reltuples = table_index_build_scan(heap, index, indexInfo, true,
											   progress->report, BloomBuildCallback,
											   &buildstate, scan);
	if (buildstate.pageHasTuples)
		lastPage = BloomFlushBuildPage(&buildstate);
	counts->indtuples = buildstate.indtuples;
	counts->bitsSet = buildstate.bitsSet;
	MemoryContextDelete(buildstate.tmpCtx);
	return lastPage;
}

/*
 * Record the last pages of a build, which have free slots, in the
 * metapage's free list.
 */
static void
BloomRowListLastPages(Relation index, const BlockNumber *pages, int npages)
{
	Buffer		metabuf;
	BloomMetaPage meta;
	int			i;

	if (npages == 0)
		return;
	metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	for (i = 0; i < npages; i++)
		BloomMetaAddFreePage(meta, pages[i]);
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Build an index of the row layout serially.
 */
void
BloomRowBuild(Relation heap, Relation index, IndexInfo *indexInfo,
			  const BloomShape *shape, BloomBuildCounts *counts)
{
	BloomBuildProgress progress = {true, NULL, 0};
	BlockNumber lastPage;

	lastPage = BloomRowBuildScan(heap, index, indexInfo, shape, NULL, &progress,
								 counts);
	if (lastPage != InvalidBlockNumber)
		BloomRowListLastPages(index, &lastPage, 1);
}

/*
 * Size of the shared state of a parallel build.
 */
Size
BloomRowSharedSize(const BloomShape *shape, int nparticipants)
{
	return sizeof(BloomRowShared);
}

/*
 * Initialize the shared state of a parallel build.
 */
void
BloomRowSharedInit(void *sharedSpace, const BloomShape *shape,
				   int nparticipants)
{
	BloomRowShared *shared = (BloomRowShared *) sharedSpace;

	memset(shared, 0, sizeof(BloomRowShared));
	SpinLockInit(&shared->mutex);
}

/*
 * One participant's share of a parallel build: its part of the parallel
 * heap scan, its last page into the shared state.
 */
void
BloomRowBuildParticipant(Relation heap, Relation index, IndexInfo *indexInfo,
						 const BloomShape *shape, TableScanDesc scan,
						 BloomBuildProgress *progress, void *sharedSpace,
						 int participant,
						 BloomBuildCounts *counts)
{
	BloomRowShared *shared = (BloomRowShared *) sharedSpace;
	BlockNumber lastPage;

	lastPage = BloomRowBuildScan(heap, index, indexInfo, shape, scan,
								 progress, counts);
	SpinLockAcquire(&shared->mutex);
	if (lastPage != InvalidBlockNumber &&
		shared->nlastPages < BLOOMIDX_MAX_PARTICIPANTS)
		shared->lastPages[shared->nlastPages++] = lastPage;
	SpinLockRelease(&shared->mutex);
}

/*
 * Complete a parallel build in the leader: the participants' last pages
 * into the metapage's free list.
 */
void
BloomRowBuildFinish(Relation heap, Relation index, IndexInfo *indexInfo,
					const BloomShape *shape, void *sharedSpace)
{
	BloomRowShared *shared = (BloomRowShared *) sharedSpace;

	BloomRowListLastPages(index, shared->lastPages, shared->nlastPages);
}
