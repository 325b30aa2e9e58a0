/*-------------------------------------------------------------------------
 *
 * row_scan.c
 *	  Bitmap scan of an index of the row layout: every data page is read
 *	  once, in order, and each signature tested against the query.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/row/row_scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "optimizer/cost.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "row.h"

/*
 * Add the TIDs of all rows whose signature matches the query to the
 * bitmap; returns how many.
 */
int64
BloomRowGetBitmap(Relation index, BloomState state, BloomScanOpaque so,
				  TIDBitmap *tbm)
{
	int			sigBytes = state->shape.sigBytes;
	int			sigWords = state->shape.sigWords;
	BufferAccessStrategy bas;
	BlockNumber npages;
	BloomBlockRange range;
	ReadStream *stream;
	Buffer		buffer;
	ItemPointerData *tids;
	char	   *copy;
	int64		ntids = 0;

	tids = palloc(sizeof(ItemPointerData) * state->tuplesPerPage);
	copy = palloc(BLCKSZ);
	npages = BloomBlocksCovering(index, InvalidBlockNumber);	/* asks */
	bas = BloomScanStrategy(npages);

	/* Every data page, in order, read ahead (all of them) */
	range.next = BLOOMIDX_METAPAGE_BLKNO + 1;
	range.end = npages;
	stream = read_stream_begin_relation(READ_STREAM_FULL, bas, index, MAIN_FORKNUM,
										BloomBlockRangeNext, &range, 0);
	while ((buffer = read_stream_next_buffer(stream, NULL)) != InvalidBuffer)
	{
		BlockNumber blkno = BufferGetBlockNumber(buffer);
		Page		page;
		int			nfound = 0;

		CHECK_FOR_INTERRUPTS();

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (BloomRowPageIsData(index, page, blkno, state->tuplesPerPage))
			nfound = BloomScanRowPageBuffer(so, buffer, sigBytes, sigWords,
											tids, copy);
		else
			UnlockReleaseBuffer(buffer);

		if (nfound > 0)
		{
			BloomCheckHeapTidsInTable(index, blkno, tids, nfound, &so->heapBlocks);
			tbm_add_tuples(tbm, tids, nfound, true);
			ntids += nfound;
		}
	}

	read_stream_end(stream);
	FreeAccessStrategy(bas);
	pfree(tids);
	pfree(copy);
	return ntids;
}

/*
 * Pages and signature words a bitmap scan reads, for the cost model: every
 * page, in order, re-read on each loop of a nested loop except for what
 * stays cached; every signature tested.
 */
void
BloomRowScanPages(Relation index, BloomState state,
				  const BloomScanPagesInput *in, BloomScanPages *out)
{
	if (in->loopCount > 1)
		out->pagesFetched = index_pages_fetched(in->indexPages * in->loopCount,
												(BlockNumber) in->indexPages,
												in->heapPages,
												in->root) / in->loopCount;
	else
		out->pagesFetched = in->indexPages;
	out->wordsTested = in->wordsPerRow * in->indexTuples;
}
