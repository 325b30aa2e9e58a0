/*-------------------------------------------------------------------------
 *
 * sliced_stripe.c
 *	  Writing rows into a stripe of the sliced layout: its stripe page,
 *	  slices and TID maps, allocated a few pages at a time or at once.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_stripe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"
#include "sliced.h"

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
 * bloomidx.debug_merge_stop_after: for tests of crash safety, a merge
 * stops with an error after this many of its WAL records (0: never), as a
 * crash would stop it there (see BloomMergeXLogFinish).
 */
static int	bloomDebugMergeStopAfter = 0;

/* WAL records the running merge has written (BloomMergeRecordsReset) */
static int	bloomMergeRecords = 0;

static void BloomMergeRecordWritten(Relation index);

/*
 * Module load: define bloomidx.debug_merge_stop_after.
 */
void
BloomMergeDefineSettings(void)
{
	DefineCustomIntVariable("bloomidx.debug_merge_stop_after",
							"Stops a merge of a sliced bloomidx index with an error after this many of its WAL records.",
							"For tests of crash safety: 0, the default, never stops.",
							&bloomDebugMergeStopAfter,
							0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
}

/*
 * A merge begins: count its WAL records from zero.
 */
void
BloomMergeRecordsReset(void)
{
	bloomMergeRecords = 0;
}

/*
 * Finish a WAL record of a merge; with bloomidx.debug_merge_stop_after
 * set, stop the merge after that many, leaving the index as a crash at
 * that point would (its pages are WAL-logged, the metapage not yet
 * advanced).
 */
void
BloomMergeXLogFinish(Relation index, GenericXLogState *xlogState)
{
	GenericXLogFinish(xlogState);
	BloomMergeRecordWritten(index);
}

/*
 * BloomMergeXLogFinish for a record of marked changes (deltawal.c).
 */
static void
BloomMergeDeltaFinish(Relation index, BloomDeltaXLog x)
{
	BloomDeltaXLogFinish(x);
	BloomMergeRecordWritten(index);
}

/*
 * A WAL record of a merge is written: with bloomidx.debug_merge_stop_after
 * set, stop the merge after that many.
 */
static void
BloomMergeRecordWritten(Relation index)
{
	if (bloomDebugMergeStopAfter > 0 &&
		++bloomMergeRecords >= bloomDebugMergeStopAfter)
		ereport(ERROR,
				(errcode(ERRCODE_OPERATOR_INTERVENTION),
				 errmsg("merge of index \"%s\" stopped after %d WAL records",
						RelationGetRelationName(index), bloomMergeRecords),
				 errdetail("bloomidx.debug_merge_stop_after is %d.",
						   bloomDebugMergeStopAfter)));
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
		BloomMergeXLogFinish(index, xlogState);
		UnlockReleaseBuffer(buffer);
	}

	/* List them; pages listed past them are left to VACUUM to free */
	xlogState = GenericXLogStart(index);
	BloomStripeSetTidPages(GenericXLogRegisterBuffer(xlogState, stripebuf, 0),
						   t, t0, firstRows);
	BloomMergeXLogFinish(index, xlogState);
	pfree(all);
}

/*
 * Give stripe s, whose stripe page (locked exclusively) lists no summary
 * yet, summary pages sized as the metapage says (the build's measure of
 * the data) or, if the build measured no full stripe, from the n rows of
 * the batch from first that the merge writes there first; all bits clear,
 * in one WAL record per page with the stripe page.  Returns false, leaving
 * the stripe without summary, if the metapage gives no sizes.
 */
static bool
BloomStripeAddSummaryPages(Relation index, BloomState state, Buffer stripebuf,
						   uint32 s, const BloomRowBatch *batch, int first,
						   int n)
{
	const BloomShape *shape = &state->shape;
	uint16		blocks[BLOOMIDX_MAX_COLUMNS];
	BlockNumber pages[BLOOMIDX_SUMMARY_MAX_PAGES];
	Buffer		metabuf = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	BloomSlicedSummaryMetaData *sm;
	GenericXLogState *xlogState;
	int			total,
				npages,
				p;

	bool		measured;
	int			bitsPerKey;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	sm = BloomSlicedSummaryMeta(BloomPageGetMeta(BufferGetPage(metabuf)));
	memcpy(blocks, sm->blocks, sizeof(uint16) * shape->nColumns);
	measured = (sm->flags & BLOOMIDX_SUMMARY_MEASURED) != 0;
	bitsPerKey = sm->bitsPerKey;
	UnlockReleaseBuffer(metabuf);
	if (!measured && n > 0 && bitsPerKey > 0 &&
		bitsPerKey <= BLOOMIDX_SUMMARY_MAX_BITS_PER_KEY)
	{
		uint32	   *scratch = palloc(sizeof(uint32) * BLOOMIDX_STRIPE_ROWS);

		BloomSummarySizeBlocksFromRows(shape, bitsPerKey,
									   batch->keys + (Size) first * shape->nColumns,
									   n, blocks, scratch);
		pfree(scratch);
	}
	for (p = 0; p < shape->nColumns; p++)
		if ((shape->setColumns & (1U << p)) != 0 ||
			blocks[p] > BLOOMIDX_SUMMARY_MAX_BLOCKS)
			blocks[p] = 0;
	total = BloomSummaryTotalBlocks(blocks, shape->nColumns);
	npages = (total + BLOOMIDX_SUMMARY_PAGE_BLOCKS - 1) / BLOOMIDX_SUMMARY_PAGE_BLOCKS;
	if (total == 0 || npages > BLOOMIDX_SUMMARY_MAX_PAGES)
		return false;

	/* The pages first, then the stripe page lists them all at once */
	for (p = 0; p < npages; p++)
	{
		Buffer		buffer = BloomNewBuffer(index);

		xlogState = GenericXLogStart(index);
		BloomInitSlicedPage(GenericXLogRegisterBuffer(xlogState, buffer,
													  GENERIC_XLOG_FULL_IMAGE),
							BLOOMIDX_SUMMARY, shape->sigBits, s);
		BloomMergeXLogFinish(index, xlogState);
		pages[p] = BufferGetBlockNumber(buffer);
		UnlockReleaseBuffer(buffer);
	}
	xlogState = GenericXLogStart(index);
	BloomStripeSetSummary(GenericXLogRegisterBuffer(xlogState, stripebuf, 0),
						  shape->sigBits, shape->nColumns, blocks, pages, npages);
	BloomMergeXLogFinish(index, xlogState);
	return true;
}

/*
 * Add the summary keys of rows [first, first + n) of the batch to the
 * summary of the stripe whose stripe page (locked exclusively) is
 * stripebuf, or, for rows without keys, mark its summary incomplete: the
 * stripe is then always read.  A stripe with no summary yet (started by
 * a merge) gets one if its rows are all it holds and they have keys.
 */
static void
BloomWriteStripeSummary(Relation index, BloomState state, Buffer stripebuf,
						uint32 s, const BloomRowBatch *batch, int first, int n,
						int r0)
{
	const BloomShape *shape = &state->shape;
	BloomStripePages *pages;
	GenericXLogState *xlogState;
	int			p;

	pages = palloc(sizeof(BloomStripePages));
	BloomStripeGetPages(BufferGetPage(stripebuf), shape->sigBits, pages);
	if ((pages->flags & BLOOMIDX_STRIPE_SUMMARY_INCOMPLETE) != 0)
	{
		pfree(pages);
		return;
	}
	if (pages->summaryColumns == 0 && batch->keys != NULL && r0 == 0)
	{
		if (BloomStripeAddSummaryPages(index, state, stripebuf, s, batch,
									   first, n))
			BloomStripeGetPages(BufferGetPage(stripebuf), shape->sigBits, pages);
	}
	if (pages->summaryColumns == 0)
	{
		/* No summary: the stripe is read whatever the query */
		pfree(pages);
		return;
	}
	if (batch->keys == NULL || pages->summaryColumns != shape->nColumns)
	{
		xlogState = GenericXLogStart(index);
		BloomStripeSetFlags(GenericXLogRegisterBuffer(xlogState, stripebuf, 0),
							pages->flags | BLOOMIDX_STRIPE_SUMMARY_INCOMPLETE);
		BloomMergeXLogFinish(index, xlogState);
		pfree(pages);
		return;
	}

	/*
	 * The keys, a summary page at a time: each row's key of each column
	 * goes to one block (g, counted over the stripe's summary), so sort the
	 * (block, key) pairs by page first, counting them a page.
	 */
	{
		int			npages = pages->nSummaryPages;
		int			nentries = 0;
		int		   *pageStart = palloc0(sizeof(int) * (npages + 1));
		uint32	   *entries = palloc(sizeof(uint32) * 2 * Max(1, n * shape->nColumns));
		uint32	   *sorted = palloc(sizeof(uint32) * 2 * Max(1, n * shape->nColumns));
		int			start = 0;
		int			c,
					r,
					e;

		for (c = 0; c < shape->nColumns; c++)
		{
			int			nb = pages->summaryBlocks[c];

			if (nb > 0)
			{
				for (r = first; r < first + n; r++)
				{
					uint32		key = batch->keys[(Size) r * shape->nColumns + c];
					int			g = start + BloomSummaryBlockFor(key, nb);

					if (g / BLOOMIDX_SUMMARY_PAGE_BLOCKS >= npages)
						continue;
					entries[2 * nentries] = (uint32) g;
					entries[2 * nentries + 1] = key;
					nentries++;
					pageStart[g / BLOOMIDX_SUMMARY_PAGE_BLOCKS + 1]++;
				}
			}
			start += nb;
		}
		for (p = 0; p < npages; p++)
			pageStart[p + 1] += pageStart[p];
		{
			int		   *fill = palloc(sizeof(int) * Max(1, npages));

			memcpy(fill, pageStart, sizeof(int) * npages);
			for (e = 0; e < nentries; e++)
			{
				int			at = fill[entries[2 * e] / BLOOMIDX_SUMMARY_PAGE_BLOCKS]++;

				sorted[2 * at] = entries[2 * e];
				sorted[2 * at + 1] = entries[2 * e + 1];
			}
			pfree(fill);
		}

		for (p = 0; p < npages; p++)
		{
			Buffer		buffer;
			Page		page;
			BloomDeltaXLog x;
			int			lo = p * BLOOMIDX_SUMMARY_PAGE_BLOCKS;

			CHECK_FOR_INTERRUPTS();
			buffer = ReadBuffer(index, pages->summaryPages[p]);
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			if (!BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_SUMMARY, s))
				BloomSlicedCorrupted(index, pages->summaryPages[p], "summary page");
			x = BloomDeltaXLogStart(index);
			page = BloomDeltaXLogRegister(x, buffer);
			for (e = pageStart[p]; e < pageStart[p + 1]; e++)
			{
				uint32	   *block = BloomSummaryPageBlocks(page) +
					(Size) (sorted[2 * e] - lo) * BLOOMIDX_SUMMARY_BLOCK_WORDS;

				uint32		changed = BloomSummaryAddToBlock(block, sorted[2 * e + 1]);

				if (changed != 0)
					BloomDeltaXLogMarkBytes(x, page, block, changed);
			}
			BloomMergeDeltaFinish(index, x);
			UnlockReleaseBuffer(buffer);
		}
		pfree(pageStart);
		pfree(entries);
		pfree(sorted);
	}
	pfree(pages);
}

/*
 * The end of the words of a slice page that have bits set, from word from
 * on (from if none): past the rows a merge writes, only a merge that a
 * crash cut short leaves bits, and a build's partial stripe uses its
 * whole pages with those words zero.
 */
static int
BloomSliceBitsEnd(Page page, int from)
{
	const uint64 *slice = BloomPageGetSlice(page);
	int			used = (((PageHeader) page)->pd_lower -
						(int) MAXALIGN(SizeOfPageHeaderData)) / (int) sizeof(uint64);
	int			w;

	for (w = Min(used, BLOOMIDX_STRIPE_WORDS); w > from; w--)
	{
		if (slice[w - 1] != 0)
			break;
	}
	return Max(w, from);
}

/*
 * Write rows [first, first + n) of the batch into stripe s at row numbers
 * [r0, r0 + n) of the stripe.  The stripe page is locked exclusively by
 * the caller.
 */
void
BloomWriteStripe(Relation index, BloomState state, Buffer stripebuf, uint32 s,
				 BloomRowBatch *batch, int first, int n, int r0,
				 uint64 *sliceWords)
{
	int			sigBits = state->shape.sigBits;
	int			sigWords = state->shape.sigWords;
	int			w0 = r0 / 64;
	int			w1 = (r0 + n - 1) / 64;
	int			nw = w1 - w0 + 1;
	BloomDeltaXLog xlog = NULL;
	Buffer		group[MAX_GENERIC_XLOG_PAGES];
	int			ngroup = 0;
	int			wr,
				i,
				b;

	/* The summary first: it must hold the rows before a scan sees them */
	if (state->shape.summaries)
		BloomWriteStripeSummary(index, state, stripebuf, s, batch, first, n, r0);

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
	 * Write them into the slice pages, those that exist several to a WAL
	 * record; a slice with no page yet gets one, linked in its own record.
	 * A page where these rows set no bit is written only if a merge that a
	 * crash cut short left bits of theirs on it (BloomSliceWriteRows clears
	 * them where it writes).
	 */
	for (b = 0; b < sigBits; b++)
	{
		const uint64 *src = sliceWords + (Size) b * nw;
		BlockNumber link;
		Buffer		buffer;
		Page		page;
		int			w;
		int			end;
		bool		any = false;

		CHECK_FOR_INTERRUPTS();
		for (w = 0; w < nw && !any; w++)
			any = src[w] != 0;

		link = BloomStripeGetLink(BufferGetPage(stripebuf), BLOOMIDX_SLICE, b);
		if (link == InvalidBlockNumber)
		{
			GenericXLogState *newXlog;

			if (!any)
				continue;
			page = BloomStripeGetPage(index, stripebuf, BLOOMIDX_SLICE, b, sigBits,
									  s, false, &newXlog, &buffer);
			BloomSliceWriteRows(page, r0, src, nw);
			BloomMergeXLogFinish(index, newXlog);
			UnlockReleaseBuffer(buffer);
			continue;
		}

		buffer = ReadBuffer(index, link);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_SLICE, s))
			BloomSlicedCorrupted(index, link, "slice page");
		if (!any && !BloomSliceHasRowsFrom(BufferGetPage(buffer), r0))
		{
			UnlockReleaseBuffer(buffer);
			continue;
		}
		if (xlog == NULL)
			xlog = BloomDeltaXLogStart(index);
		page = BloomDeltaXLogRegister(xlog, buffer);
		end = Max(w0 + nw, BloomSliceBitsEnd(page, w0 + nw));
		BloomSliceWriteRows(page, r0, src, nw);
		/* Its pd_lower, and its words from r0's to the last it changed */
		BloomDeltaXLogMarkChanged(xlog, page, &((PageHeader) page)->pd_lower,
								  sizeof(LocationIndex));
		BloomDeltaXLogMarkChanged(xlog, page, BloomPageGetSlice(page) + w0,
								  sizeof(uint64) * (end - w0));
		group[ngroup++] = buffer;
		if (ngroup == MAX_GENERIC_XLOG_PAGES)
		{
			BloomMergeDeltaFinish(index, xlog);
			xlog = NULL;
			while (ngroup > 0)
				UnlockReleaseBuffer(group[--ngroup]);
		}
	}
	if (xlog != NULL)
	{
		BloomMergeDeltaFinish(index, xlog);
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
Buffer
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
	BloomSlicedCheckMeta(index, BufferGetPage(metabuf));
	meta = BloomPageGetMeta(BufferGetPage(metabuf));
	k = listNo - BloomSlicedMeta(meta)->firstStripe / BLOOMIDX_STRIPELIST_ENTRIES;
	if (s < BloomSlicedMeta(meta)->firstStripe || k >= BLOOMIDX_MAX_STRIPELISTS)
		elog(ERROR, "stripe %u of bloomidx index \"%s\" is outside its stripe lists",
			 s, RelationGetRelationName(index));
	if (BloomSlicedMeta(meta)->stripeLists[k] != InvalidBlockNumber)
	{
		listbuf = ReadBuffer(index, BloomSlicedMeta(meta)->stripeLists[k]);
		LockBuffer(listbuf, BUFFER_LOCK_EXCLUSIVE);
		if (!BloomPageIsSliced(BufferGetPage(listbuf), BLOOMIDX_STRIPELIST, listNo))
			BloomSlicedCorrupted(index, BloomSlicedMeta(meta)->stripeLists[k], "stripe-list page");
		listed = BloomStripeListGet(BufferGetPage(listbuf),
									s % BLOOMIDX_STRIPELIST_ENTRIES);
		if (listed != InvalidBlockNumber)
			BloomCheckLink(index, BloomSlicedMeta(meta)->stripeLists[k], listed, "stripe page");
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
		BloomSlicedMeta(meta)->stripeLists[k] = BufferGetBlockNumber(listbuf);
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
	BloomMergeXLogFinish(index, xlogState);
	(*allocated)++;

	UnlockReleaseBuffer(listbuf);
	UnlockReleaseBuffer(metabuf);
	return stripebuf;
}

/*
 * The stripe page of stripe s, where the rows past those of a snapshot go,
 * locked exclusively: a stripe the snapshot lists, or one past them (see
 * BloomMergeStripePage), whose allocated pages are added to *allocated.
 */
Buffer
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
int
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
bool
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
		BloomMergeXLogFinish(index, xlogState);
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
