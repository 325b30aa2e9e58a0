/*-------------------------------------------------------------------------
 *
 * sliced_batch.c
 *	  The rows a statement inserts into an index of the sliced layout,
 *	  gathered in backend memory and added to the pending list a page at a
 *	  time.
 *
 * A row added to a pending page on its own is a generic WAL record, whose
 * delta compares every used byte of the page before and after the change:
 * half of an insert's time.  Rows are gathered here instead, up to a
 * pending page's worth per index, and added together (BloomPendingAddRows):
 * a page filled at once is one full-page record.
 *
 * The rows must be in the index before anything can look for them there,
 * and must not be written once their (sub)transaction has aborted.  They
 * are written when an index's batch fills a page, and:
 *	- at the start, the finish (before AFTER triggers fire) and the end of
 *	  every query the executor runs: a statement's rows are in the index
 *	  when it ends, and before any query a trigger or function runs
 *	  meanwhile starts (so before a parallel worker could scan the index).
 *	  The end is the ExecutorEnd hook on 15 and 16, aminsertcleanup (when
 *	  the executor closes the index) on 17 and later;
 *	- before and after every utility statement other than transaction
 *	  control (COPY's rows; TRUNCATE, REINDEX or DROP after rows were
 *	  added);
 *	- before the transaction commits or prepares;
 *	- when the index is scanned, vacuumed, merged, counted or checked.
 * Rows of an aborted subtransaction are dropped when it aborts, every row
 * when the transaction aborts, and rows of an index that was given new
 * storage since they were added (TRUNCATE run by logical replication,
 * which bypasses the utility hook): the heap rows they point to are gone.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_batch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"
#include "sliced.h"

/* The rows gathered for one index */
typedef struct BloomInsertBatch
{
	struct BloomInsertBatch *next;
	Oid			indexOid;
	RelFileLocator locator;			/* the index's storage when they were added */
	int			sigWords;
	int			nkeys;			/* keys a row: nColumns if the pending pages
								 * carry keys, else 0 */
	int			nrows;
	int			maxrows;		/* a pending page's worth */
	uint64	   *words;			/* maxrows * sigWords signature words */
	uint32	   *keys;			/* maxrows * nkeys keys, or NULL */
	ItemPointerData *tids;
	SubTransactionId *subids;	/* the subtransaction that added each */
	Size		bytes;			/* taken by the four arrays */
} BloomInsertBatch;

/*
 * The batches of the current transaction, in TopTransactionContext; the
 * one a row was last added to; the memory their rows take, which work_mem
 * bounds (an insert into many partitions fills many batches at once).
 */
static BloomInsertBatch *bloomBatches = NULL;
static BloomInsertBatch *bloomLastBatch = NULL;
static Size bloomBatchBytes = 0;

static ExecutorStart_hook_type prevExecutorStart = NULL;
static ExecutorFinish_hook_type prevExecutorFinish = NULL;
static ExecutorEnd_hook_type prevExecutorEnd = NULL;
static ProcessUtility_hook_type prevProcessUtility = NULL;

/*
 * Write a batch's rows to its index's pending pages, and take the merge
 * steps their new pages call for, as single inserts do.  The batch is
 * empty afterwards, whatever happens.
 */
static void
BloomBatchWrite(BloomInsertBatch *batch)
{
	int			n = batch->nrows;
	Relation	index;

	if (n == 0)
		return;
	batch->nrows = 0;

	/*
	 * Locked since the inserts (whoever calls aminsert holds a lock on the
	 * index until the transaction ends), so no one else can drop it; not
	 * even this backend, which writes the rows before any utility
	 * statement.  Were it gone, so would be its rows.
	 */
	index = RelationIdGetRelation(batch->indexOid);
	if (!RelationIsValid(index))
		return;
	if (RelFileLocatorEquals(BloomRelationLocator(index), batch->locator))
	{
		BloomState	state = BloomGetState(index);

		if (state->shape.layout != BLOOMIDX_LAYOUT_SLICED ||
			state->shape.sigWords != batch->sigWords ||
			(BloomSlicedPendingHasKeys(state) ? state->shape.nColumns : 0) != batch->nkeys)
			elog(ERROR, "rows gathered for bloomidx index \"%s\" do not fit its shape",
				 RelationGetRelationName(index));
		if (n == 1)
		{
			/* A single-row statement: the last pending page's own lock */
			uint8		slot[BLOOMIDX_SLICED_MAX_SLOT];

			BloomSlicedCheckSigBits(index, state->shape.sigBits);
			BloomPendingFormSlot(state, slot, batch->words, batch->keys);
			BloomPendingInsert(index, state, slot,
							   BloomCountBits(slot, state->shape.sigBytes),
							   &batch->tids[0]);
		}
		else
		{
			int			started = BloomPendingAddRows(index, state, batch->words,
													  batch->keys, batch->tids,
													  n, true);

			while (started-- > 0)
				BloomSlicedMerge(index, false, BLOOM_MERGE_STEP);
		}
	}
	RelationClose(index);
}

/*
 * Write every batch of the transaction.
 */
static void
BloomBatchWriteAll(void)
{
	BloomInsertBatch *batch;

	for (batch = bloomBatches; batch != NULL; batch = batch->next)
		BloomBatchWrite(batch);
}

/*
 * Forget every batch (their memory goes with the transaction's).
 */
static void
BloomBatchForget(void)
{
	bloomBatches = NULL;
	bloomLastBatch = NULL;
	bloomBatchBytes = 0;
}

/*
 * Free the arrays of a batch's rows (their bytes no longer count).
 */
static void
BloomBatchFreeRows(BloomInsertBatch *batch)
{
	pfree(batch->words);
	if (batch->keys != NULL)
		pfree(batch->keys);
	pfree(batch->tids);
	pfree(batch->subids);
	bloomBatchBytes -= batch->bytes;
	batch->nrows = 0;
}

/*
 * Write every batch and free them.
 */
static void
BloomBatchWriteAndFree(void)
{
	BloomInsertBatch *batch = bloomBatches;

	BloomBatchWriteAll();
	while (batch != NULL)
	{
		BloomInsertBatch *next = batch->next;

		BloomBatchFreeRows(batch);
		pfree(batch);
		batch = next;
	}
	BloomBatchForget();
}

/*
 * The batch of an index, or NULL.
 */
static BloomInsertBatch *
BloomBatchFind(Oid indexOid)
{
	BloomInsertBatch *batch;

	if (bloomLastBatch != NULL && bloomLastBatch->indexOid == indexOid)
		return bloomLastBatch;
	for (batch = bloomBatches; batch != NULL; batch = batch->next)
	{
		if (batch->indexOid == indexOid)
			return batch;
	}
	return NULL;
}

/*
 * Write the rows gathered for an index, if any: before it is read.
 */
void
BloomBatchFlush(Relation index)
{
	BloomInsertBatch *batch = BloomBatchFind(RelationGetRelid(index));

	if (batch != NULL)
		BloomBatchWrite(batch);
}

/*
 * The summary keys of a row: from the mixes its signature took where the
 * caller gives them, else from its values
 */
static inline void
BloomBatchKeys(BloomState state, const uint64 *mixed, Datum *values,
			   bool *isnull, uint32 *keys)
{
	if (mixed != NULL)
		BloomSummaryKeysFromMixed(&state->shape, mixed, keys);
	else
		BloomFormSummaryKeys(state, values, isnull, keys);
}

/*
 * Insert a row into a sliced index (the layout's insert routine): gather it,
 * with its keys if the index's pending pages carry them (computed from its
 * values), with the other rows its statement inserts, and write the
 * index's rows into the pending pages once they fill one.  Each pending
 * page started then takes one merge step, of at most BloomMergeStepRows
 * rows, if one is due (see BloomMergeWant) and no other backend is
 * merging: inserts never pay for a whole stripe.
 */
void
BloomBatchAdd(Relation index, BloomState state, const uint8 *sig,
			  int nbitsSet, const uint64 *mixed, Datum *values, bool *isnull,
			  ItemPointer tid)
{
	const BloomShape *shape = &state->shape;
	int			nkeys = BloomSlicedPendingHasKeys(state) ? shape->nColumns : 0;
	BloomInsertBatch *batch;
	uint64	   *words;
	int			i;

	BloomSlicedCheckSigBits(index, shape->sigBits);

	/* Written directly where nothing may be deferred */
	if (IsInParallelMode())
	{
		uint8		slot[BLOOMIDX_SLICED_MAX_SLOT];
		uint32		keys[BLOOMIDX_MAX_COLUMNS];

		memcpy(slot, sig, shape->sigBytes);
		if (nkeys > 0)
		{
			BloomBatchKeys(state, mixed, values, isnull, keys);
			BloomPendingSetKeys(state, slot, keys);
		}
		BloomPendingInsert(index, state, slot, nbitsSet, tid);
		return;
	}

	batch = BloomBatchFind(RelationGetRelid(index));
	if (batch == NULL || !RelFileLocatorEquals(batch->locator, BloomRelationLocator(index)))
	{
		Size		rowBytes = sizeof(uint64) * shape->sigWords +
			sizeof(uint32) * nkeys +
			sizeof(ItemPointerData) + sizeof(SubTransactionId);
		Size		bytes = rowBytes * state->tuplesPerPage;

		if (batch != NULL)
		{
			/*
			 * New storage (see the file's header), maybe of another shape:
			 * the rows gathered before are gone with the heap rows they
			 * point to.
			 */
			BloomBatchFreeRows(batch);
		}
		else
		{
			/* Room for one more within work_mem, or write them all first */
			if (bloomBatchBytes + bytes > (Size) work_mem * 1024 &&
				bloomBatches != NULL)
				BloomBatchWriteAndFree();
			batch = MemoryContextAllocZero(TopTransactionContext,
										   sizeof(BloomInsertBatch));
			batch->indexOid = RelationGetRelid(index);
			batch->next = bloomBatches;
			bloomBatches = batch;
		}
		batch->locator = BloomRelationLocator(index);
		batch->sigWords = shape->sigWords;
		batch->nkeys = nkeys;
		batch->maxrows = state->tuplesPerPage;
		batch->words = MemoryContextAlloc(TopTransactionContext,
										  sizeof(uint64) * shape->sigWords * batch->maxrows);
		batch->keys = nkeys == 0 ? NULL :
			MemoryContextAlloc(TopTransactionContext,
							   sizeof(uint32) * nkeys * batch->maxrows);
		batch->tids = MemoryContextAlloc(TopTransactionContext,
										 sizeof(ItemPointerData) * batch->maxrows);
		batch->subids = MemoryContextAlloc(TopTransactionContext,
										   sizeof(SubTransactionId) * batch->maxrows);
		batch->bytes = bytes;
		bloomBatchBytes += bytes;
	}
	bloomLastBatch = batch;

	words = batch->words + (Size) batch->nrows * batch->sigWords;
	memset(words, 0, sizeof(uint64) * batch->sigWords);
	for (i = 0; i < shape->sigBytes; i++)
		words[i / 8] |= (uint64) sig[i] << (8 * (i % 8));
	if (nkeys > 0)
		BloomBatchKeys(state, mixed, values, isnull,
					   batch->keys + (Size) batch->nrows * nkeys);
	batch->tids[batch->nrows] = *tid;
	batch->subids[batch->nrows] = GetCurrentSubTransactionId();
	if (++batch->nrows == batch->maxrows)
		BloomBatchWrite(batch);
}

/*
 * Transaction events: write the rows before commit or prepare; forget
 * them (their memory goes with the transaction's) at its end.
 */
static void
BloomBatchXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			BloomBatchWriteAll();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			BloomBatchForget();
			break;
		default:
			break;
	}
}

/*
 * Subtransaction abort: drop the rows it added, and its children's (every
 * subtransaction started since it began has a higher id).
 */
static void
BloomBatchSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	BloomInsertBatch *batch;

	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	for (batch = bloomBatches; batch != NULL; batch = batch->next)
	{
		int			kept = 0;
		int			i;

		for (i = 0; i < batch->nrows; i++)
		{
			if (batch->subids[i] >= mySubid)
				continue;
			if (kept != i)
			{
				memcpy(batch->words + (Size) kept * batch->sigWords,
					   batch->words + (Size) i * batch->sigWords,
					   sizeof(uint64) * batch->sigWords);
				if (batch->nkeys > 0)
					memcpy(batch->keys + (Size) kept * batch->nkeys,
						   batch->keys + (Size) i * batch->nkeys,
						   sizeof(uint32) * batch->nkeys);
				batch->tids[kept] = batch->tids[i];
				batch->subids[kept] = batch->subids[i];
			}
			kept++;
		}
		batch->nrows = kept;
	}
}

static void
BloomExecutorStart(QueryDesc *queryDesc, int eflags)
{
	BloomBatchWriteAll();
	if (prevExecutorStart)
		prevExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
BloomExecutorFinish(QueryDesc *queryDesc)
{
	BloomBatchWriteAll();
	if (prevExecutorFinish)
		prevExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
}

static void
BloomExecutorEnd(QueryDesc *queryDesc)
{
	BloomBatchWriteAll();
	if (prevExecutorEnd)
		prevExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

static void
BloomProcessUtility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	/* COMMIT and PREPARE write them, ROLLBACK drops them */
	bool		control = IsA(pstmt->utilityStmt, TransactionStmt);

	if (!control)
		BloomBatchWriteAll();
	if (prevProcessUtility)
		prevProcessUtility(pstmt, queryString, readOnlyTree, context,
						   params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
	if (!control)
		BloomBatchWriteAll();
}

/*
 * Module load: install the hooks and callbacks above.
 */
void
BloomBatchInit(void)
{
	prevExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = BloomExecutorStart;
	prevExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = BloomExecutorFinish;
	/* 17 and later call aminsertcleanup where ExecutorEnd would write them */
	if (!BLOOM_HAVE_AMINSERTCLEANUP)
	{
		prevExecutorEnd = ExecutorEnd_hook;
		ExecutorEnd_hook = BloomExecutorEnd;
	}
	prevProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = BloomProcessUtility;
	RegisterXactCallback(BloomBatchXactCallback, NULL);
	RegisterSubXactCallback(BloomBatchSubXactCallback, NULL);
}
