/*-------------------------------------------------------------------------
 *
 * build.c
 *	  Building a bloomidx index: ambuild and ambuildempty.
 *
 * The build fills data pages in local memory, writes each full page through
 * shared buffers, and WAL-logs the whole index once at the end with
 * log_newpage_range, as SP-GiST's build does.
 *
 * Builds run in parallel when max_parallel_maintenance_workers allows (as
 * B-tree builds do): the leader and its workers share a parallel heap
 * scan, each fills and writes its own pages (extending the index under the
 * relation extension lock), and the leader then records every
 * participant's last, partly filled page in the metapage's free list and
 * the summed fill statistics.  In the sliced layout each participant
 * writes full stripes, and the leader combines their leftover rows into
 * the last stripes (see BloomSlicedBuild).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/am/am_build.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/parallel.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xloginsert.h"
#include "commands/progress.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"

/* Key of the shared state in a parallel build's shared memory */
#define PARALLEL_KEY_BLOOM_SHARED	UINT64CONST(0xB10031D800000001)

/*
 * State shared by the participants of a parallel build, followed in shared
 * memory by the parallel heap scan's descriptor.
 */
typedef struct BloomBuildShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	BloomShape	shape;

	int			nparticipants;	/* leader included */
	Size		layoutOffset;	/* the layout's shared state */
	Size		scanOffset;		/* the parallel heap scan */

	/* Rows indexed by every participant, for the progress report */
	pg_atomic_uint64 rowsDone;

	/* Results, under mutex */
	slock_t		mutex;
	BloomBuildCounts counts;
} BloomBuildShared;

#define ParallelTableScanFromBloomShared(shared) \
	((ParallelTableScanDesc) ((char *) (shared) + (shared)->scanOffset))
#define LayoutSharedFromBloomShared(shared) \
	((void *) ((char *) (shared) + (shared)->layoutOffset))

PGDLLEXPORT void BloomParallelBuildMain(dsm_segment *seg, shm_toc *toc);

/*
 * One participant's share of a parallel build: its part of the parallel
 * heap scan, then its results into the shared state.  participant is the
 * worker's number, or nparticipants - 1 for the leader.
 */
static void
BloomParallelScanAndBuild(BloomBuildShared *shared, Relation heap,
						  Relation index, IndexInfo *indexInfo, bool progress,
						  int participant)
{
	const BloomLayoutRoutine *layout = BloomGetLayout(&shared->shape);
	TableScanDesc scan;
	BloomBuildCounts counts;
	BloomBuildProgress rowsDone = {progress, &shared->rowsDone, 0};

	scan = table_beginscan_parallel(heap, ParallelTableScanFromBloomShared(shared),
									SO_NONE);
	layout->buildparticipant(heap, index, indexInfo, &shared->shape, scan,
							 &rowsDone, LayoutSharedFromBloomShared(shared),
							 participant, &counts);

	SpinLockAcquire(&shared->mutex);
	shared->counts.reltuples += counts.reltuples;
	shared->counts.indtuples += counts.indtuples;
	shared->counts.bitsSet += counts.bitsSet;
	SpinLockRelease(&shared->mutex);
}

/*
 * Entry point of a parallel build's worker.
 */
void
BloomParallelBuildMain(dsm_segment *seg, shm_toc *toc)
{
	BloomBuildShared *shared = shm_toc_lookup(toc, PARALLEL_KEY_BLOOM_SHARED, false);
	LOCKMODE	heapLockmode;
	LOCKMODE	indexLockmode;
	Relation	heap;
	Relation	index;
	IndexInfo  *indexInfo;

	/* The locks the leader holds, as a B-tree build's workers take them */
	if (!shared->isconcurrent)
	{
		heapLockmode = ShareLock;
		indexLockmode = AccessExclusiveLock;
	}
	else
	{
		heapLockmode = ShareUpdateExclusiveLock;
		indexLockmode = RowExclusiveLock;
	}
	heap = table_open(shared->heaprelid, heapLockmode);
	index = index_open(shared->indexrelid, indexLockmode);
	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = shared->isconcurrent;

	BloomParallelScanAndBuild(shared, heap, index, indexInfo, false,
							  ParallelWorkerNumber);

	index_close(index, indexLockmode);
	table_close(heap, heapLockmode);
}

/*
 * Run the heap scan of a build with nworkers parallel workers besides the
 * leader.  Returns false, having done nothing, if no parallel context
 * could be set up; else fills in the results.
 */
static bool
BloomParallelBuild(Relation heap, Relation index, IndexInfo *indexInfo,
				   const BloomShape *shape, int nworkers,
				   BloomBuildCounts *counts)
{
	const BloomLayoutRoutine *layout = BloomGetLayout(shape);
	ParallelContext *pcxt;
	Snapshot	snapshot;
	Size		size;
	BloomBuildShared *shared;

	EnterParallelMode();
	pcxt = CreateParallelContext("bloomidx", "BloomParallelBuildMain", nworkers);

	/* Concurrent builds see an MVCC snapshot; others every tuple */
	if (!indexInfo->ii_Concurrent)
		snapshot = SnapshotAny;
	else
		snapshot = RegisterSnapshot(GetTransactionSnapshot());

	size = BUFFERALIGN(sizeof(BloomBuildShared));
	size = add_size(size, BUFFERALIGN(layout->buildsharedsize(shape, nworkers + 1)));
	size = add_size(size, table_parallelscan_estimate(heap, snapshot));
	shm_toc_estimate_chunk(&pcxt->estimator, size);
	shm_toc_estimate_keys(&pcxt->estimator, 1);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		/* No shared memory to be had: build alone */
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return false;
	}

	shared = (BloomBuildShared *) shm_toc_allocate(pcxt->toc, size);
	memset(shared, 0, sizeof(BloomBuildShared));
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = indexInfo->ii_Concurrent;
	shared->shape = *shape;
	shared->nparticipants = nworkers + 1;
	shared->layoutOffset = BUFFERALIGN(sizeof(BloomBuildShared));
	layout->buildsharedinit(LayoutSharedFromBloomShared(shared), shape,
							nworkers + 1);
	shared->scanOffset = shared->layoutOffset +
		BUFFERALIGN(layout->buildsharedsize(shape, nworkers + 1));
	SpinLockInit(&shared->mutex);
	pg_atomic_init_u64(&shared->rowsDone, 0);
	table_parallelscan_initialize(heap, ParallelTableScanFromBloomShared(shared),
								  snapshot);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_BLOOM_SHARED, shared);

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg_internal("parallel workers planned for bloomidx index \"%s\": %d",
							 RelationGetRelationName(index), nworkers)));
	ereport(DEBUG2,
			(errmsg_internal("parallel workers launched: %d",
							 pcxt->nworkers_launched)));

	/* The leader takes its share too */
	BloomParallelScanAndBuild(shared, heap, index, indexInfo, true, nworkers);
	WaitForParallelWorkersToFinish(pcxt);

	*counts = shared->counts;

	/* The layout completes the index, while the shared memory is there */
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 BLOOMIDX_PHASE_FINISH);
	layout->buildfinish(heap, index, indexInfo, shape,
						LayoutSharedFromBloomShared(shared));

	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return true;
}

/*
 * How the columns of an index being built count for its shape: as its
 * options say, and for a column of sets that leaves elements out, the
 * elements per value of a sample of the table (am_sample.c): the mean,
 * rounded, as if given, or more where the values' sizes spread
 * (BloomSizeMeasuredElements, which also says how much more the rows load
 * their signatures than the mean: *loadFactor, 0 without a measured
 * column); the operator class's default where the sample has no element
 * (an empty table, NULLs or empty sets only).
 */
static void
BloomBuildColumnElements(Relation heap, Relation index, IndexInfo *indexInfo,
						 BloomColumnElements *ce, double *loadFactor)
{
	BloomElementsSample sample;
	uint32		measure;
	int			i;

	*loadFactor = 0;
	BloomGetColumnElements(index, RelationGetNumberOfAttributes(index), ce);
	measure = ce->setColumns & ~ce->givenColumns;
	if (measure == 0)
		return;
	BloomMeasureElements(heap, index, indexInfo, measure, &sample);
	BloomSizeMeasuredElements(index, &sample, measure, ce, loadFactor);
	if (ce->measuredColumns == 0)
		*loadFactor = 0;
	for (i = 0; i < RelationGetNumberOfAttributes(index); i++)
		if (ce->measuredColumns & (1U << i))
			ereport(DEBUG1,
					(errmsg_internal("bloomidx index \"%s\": column %d has %.2f elements per value in " INT64_FORMAT " values of " INT64_FORMAT " rows from %u blocks, sized for %d (load factor %.2f)",
									 RelationGetRelationName(index), i + 1,
									 sample.mean[i], sample.values[i],
									 sample.rows, sample.blocks,
									 (int) ce->elements[i], *loadFactor)));
}

/*
 * Build a new bloomidx index (ambuild).
 */
IndexBuildResult *
bloomidx_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BloomShape	shape;
	BloomColumnElements ce;
	double		loadFactor;
	BloomBuildCounts counts;
	Buffer		metabuf;
	BloomMetaPage meta;
	int			nworkers;
	BlockNumber estPages;
	double		estTuples;
	double		allVisFrac;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	BloomTrgmCheckBuild(index);
	BloomBuildColumnElements(heap, index, indexInfo, &ce, &loadFactor);
	BloomResolveOptions(index, BLOOMIDX_DEFAULT_LAYOUT, &ce, &shape);
	shape.loadFactor = (float4) loadFactor;
	BloomReportOptions(index, &shape);

	/* The metapage is block 0 */
	metabuf = ReadBuffer(index, P_NEW);
	Assert(BufferGetBlockNumber(metabuf) == BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomInitMetaPage(BufferGetPage(metabuf), &shape);
	BloomInitMetaAreas(BloomPageGetMeta(BufferGetPage(metabuf)));
	MarkBufferDirty(metabuf);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/* Progress: the rows the table is estimated to have, as the planner would */
	estimate_rel_size(heap, NULL, &estPages, &estTuples, &allVisFrac);
	pgstat_progress_update_multi_param(2,
									   (const int[]) {PROGRESS_CREATEIDX_SUBPHASE,
													  PROGRESS_CREATEIDX_TUPLES_TOTAL},
									   (const int64[]) {BLOOMIDX_PHASE_SCAN,
														(int64) estTuples});

	/* Workers, as many as a B-tree build of this table would get */
	memset(&counts, 0, sizeof(counts));
	nworkers = BloomBuildWorkers(heap, index, indexInfo);
	nworkers = Min(nworkers, BLOOMIDX_MAX_PARTICIPANTS - 1);
	if (nworkers <= 0 ||
		!BloomParallelBuild(heap, index, indexInfo, &shape, nworkers, &counts))
		BloomGetLayout(&shape)->build(heap, index, indexInfo, &shape, &counts);
	/* Every row, the last batch of fewer than BLOOMIDX_PROGRESS_ROWS too */
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
								 (int64) counts.indtuples);

	/* The fill statistics */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	meta->statTuples = (uint64) counts.indtuples;
	meta->statBitsSet = counts.bitsSet;
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (RelationNeedsWAL(index))
	{
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 BLOOMIDX_PHASE_WAL);
		log_newpage_range(index, MAIN_FORKNUM, 0,
						  RelationGetNumberOfBlocks(index), true);
	}

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = counts.reltuples;
	result->index_tuples = counts.indtuples;
	return result;
}

/*
 * Name of a sub-phase of a build, for pg_stat_progress_create_index
 * (amphasename).
 */
char *
bloomidx_buildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case BLOOMIDX_PHASE_SCAN:
			return "scanning table";
		case BLOOMIDX_PHASE_FINISH:
			return "combining parallel results";
		case BLOOMIDX_PHASE_WAL:
			return "WAL-logging index";
		default:
			return NULL;
	}
}

/*
 * Build the empty index of an unlogged table into its init fork
 * (ambuildempty): just a metapage.
 */
void
bloomidx_buildempty(Relation index)
{
	BloomShape	shape;
	BloomColumnElements ce;
	Buffer		metabuf;
	float4		builtLoad = 0;

	BloomTrgmCheckBuild(index);

	/*
	 * The shape of the main fork, which ambuild has just built: the
	 * elements it measured from the table, where it did
	 */
	if (RelationGetNumberOfBlocks(index) > 0)
	{
		BloomShape	built;

		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
		LockBuffer(metabuf, BUFFER_LOCK_SHARE);
		BloomCheckMetaPage(index, BufferGetPage(metabuf));
		BloomMetaGetShape(BloomPageGetMeta(BufferGetPage(metabuf)), &built);
		UnlockReleaseBuffer(metabuf);
		BloomGetBuiltColumnElements(index, &built, &ce);
		builtLoad = built.loadFactor;
	}
	else
		BloomGetColumnElements(index, RelationGetNumberOfAttributes(index),
							   &ce);
	BloomResolveOptions(index, BLOOMIDX_DEFAULT_LAYOUT, &ce, &shape);
	shape.loadFactor = builtLoad;

	/*
	 * Through shared buffers, as GIN does: a checkpoint writes the init
	 * fork's buffers like a permanent relation's, and the WAL record
	 * carries the page.
	 */
	metabuf = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	Assert(BufferGetBlockNumber(metabuf) == BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	BloomInitMetaPage(BufferGetPage(metabuf), &shape);
	BloomInitMetaAreas(BloomPageGetMeta(BufferGetPage(metabuf)));
	MarkBufferDirty(metabuf);
	log_newpage_buffer(metabuf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(metabuf);
}
