/*-------------------------------------------------------------------------
 *
 * build.c
 *	  Building a bloomidx index: ambuild and ambuildempty.
 *
 * The build fills data pages in local memory, writes each full page through
 * shared buffers, and WAL-logs the whole index once at the end with
 * log_newpage_range, as SP-GiST's build does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
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
} BloomBuildState;

/*
 * Write the data page being filled to a new block of the index.
 */
static void
BloomFlushBuildPage(BloomBuildState *buildstate)
{
	Buffer		buffer;

	buffer = ReadBuffer(buildstate->index, P_NEW);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(buffer), buildstate->page.data, BLCKSZ);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);

	BloomInitDataPage(buildstate->page.data, buildstate->state.shape.sigBytes);
	buildstate->pageHasTuples = false;
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
		BloomFlushBuildPage(buildstate);
		if (!BloomPageAddTuple(buildstate->page.data, sigBytes, buildstate->sig, tid))
			elog(ERROR, "could not add a tuple to an empty bloomidx page");
	}
	buildstate->pageHasTuples = true;
	buildstate->indtuples += 1;

	if (((uint64) buildstate->indtuples & 1023) == 0)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
									 (int64) buildstate->indtuples);
}

/*
 * Build a new bloomidx index (ambuild).
 */
IndexBuildResult *
bloomidx_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BloomBuildState buildstate;
	BloomShape	shape;
	Buffer		metabuf;
	Page		metapage;
	BloomMetaPage meta;
	double		reltuples;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	BloomResolveOptions(index, &shape);
	if (shape.layout == BLOOMIDX_LAYOUT_SLICED)
		return BloomSlicedBuild(heap, index, indexInfo, &shape);

	memset(&buildstate, 0, sizeof(buildstate));
	BloomInitState(&buildstate.state, index, &shape);
	buildstate.index = index;
	buildstate.tmpCtx = AllocSetContextCreate(CurrentMemoryContext,
											  "bloomidx build temporary context",
											  ALLOCSET_DEFAULT_SIZES);
	buildstate.sig = palloc0(shape.sigBytes);
	BloomInitDataPage(buildstate.page.data, shape.sigBytes);

	/* The metapage is block 0 */
	metabuf = ReadBuffer(index, P_NEW);
	Assert(BufferGetBlockNumber(metabuf) == BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	BloomInitMetaPage(BufferGetPage(metabuf), &shape);
	MarkBufferDirty(metabuf);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   BloomBuildCallback, &buildstate, NULL);

	/* Write the last page and remember it as having free slots */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	metapage = BufferGetPage(metabuf);
	meta = BloomPageGetMeta(metapage);
	if (buildstate.pageHasTuples)
	{
		BlockNumber lastblk = RelationGetNumberOfBlocks(index);

		BloomFlushBuildPage(&buildstate);
		BloomMetaAddFreePage(meta, lastblk);
	}
	meta->statTuples = (uint64) buildstate.indtuples;
	meta->statBitsSet = buildstate.bitsSet;
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0,
						  RelationGetNumberOfBlocks(index), true);

	MemoryContextDelete(buildstate.tmpCtx);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = buildstate.indtuples;
	return result;
}

/*
 * Build the empty index of an unlogged table into its init fork
 * (ambuildempty): just a metapage.
 */
void
bloomidx_buildempty(Relation index)
{
	BloomShape	shape;
	PGAlignedBlock metapage;

	BloomResolveOptions(index, &shape);
	BloomInitMetaPage(metapage.data, &shape);

	/*
	 * Write and WAL-log the page directly, then sync: the write bypassed
	 * shared buffers, so a checkpoint may have moved the redo pointer past
	 * the WAL record.
	 */
	PageSetChecksumInplace(metapage.data, BLOOMIDX_METAPAGE_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, BLOOMIDX_METAPAGE_BLKNO,
			  metapage.data, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
				BLOOMIDX_METAPAGE_BLKNO, metapage.data, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
}
