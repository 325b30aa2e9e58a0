/*-------------------------------------------------------------------------
 *
 * sliced_scan.c
 *	  Bitmap scan of an index of the sliced layout: the pending pages as
 *	  in the row layout, then for each stripe the AND of the query's
 *	  slices, 64 rows at a time.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/layout/sliced/sliced_scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "bloomidx.h"
#include "fpmodel.h"
#include "page.h"
#include "signature.h"
#include "sliced.h"

/* Result of reading a slice: rows left, none left, or the stripe is gone */
#define BLOOM_SLICE_ANY		1
#define BLOOM_SLICE_NONE	0
#define BLOOM_SLICE_GONE	(-1)

/*
 * Passes a scan makes at most: a pass starts over when VACUUM empties a
 * stripe it is reading, which a scan meets rarely, and twice in a row only
 * under a VACUUM that keeps emptying stripes faster than the scan reads
 * them.
 */
#define BLOOMIDX_MAX_SCAN_RESTARTS	100

/*
 * Rows of a stripe a query may still match: a bit a row, and once most
 * words are zero, the list of those that are not, so that a slice is read
 * only where rows are left.
 */
typedef struct BloomRowsLeft
{
	uint64		r[BLOOMIDX_STRIPE_WORDS];
	uint16		live[BLOOMIDX_STRIPE_WORDS];	/* non-zero words of r */
	int			nlive;			/* their number, or -1: not listed */
} BloomRowsLeft;

/* Working space of a sliced scan */
typedef struct BloomSlicedScanData
{
	BloomStripePages pages;
	BloomRowsLeft r;			/* rows left */
	BloomRowsLeft t;			/* one alternative's rows */
	uint64		g[BLOOMIDX_STRIPE_WORDS];	/* a group's rows */
	ItemPointerData *tids;		/* a batch of TIDs for the bitmap */
	int			maxtids;
	char	   *copy;			/* a copy of a pending page, BLCKSZ */
	BufferAccessStrategy bas;
	BloomReader stripeReader;	/* the stripe pages */
	BloomReader reader;			/* a stripe's slices, then its TID maps */
	BlockNumber blocks[Max(BLOOMIDX_SLICED_MAX_LENGTH, BLOOMIDX_STRIPE_TIDPAGES)];
	/* The query's summary keys: so->keyhashes' hashes made keys */
	uint32	  **sumKeys;		/* per entry of so->keyhashes */
	int64		stripesSkipped; /* by their summaries */
} BloomSlicedScanData;

/*
 * Rows a slice that follows must leave, by the slices' fill, for it to be
 * read ahead before the slices before it are ANDed: then those slices
 * leave no row with a probability of about exp(-16), and pages read ahead
 * in vain are as good as none.
 */
#define BLOOM_READ_AHEAD_ROWS	16

/* Rows set in the first nw words of rows */
static int
BloomRowsLeftCount(const BloomRowsLeft *rows, int nw)
{
	int			n = 0;
	int			i;

	if (rows->nlive < 0)
	{
		for (i = 0; i < nw; i++)
			n += pg_popcount64(rows->r[i]);
	}
	else
	{
		for (i = 0; i < rows->nlive; i++)
			n += pg_popcount64(rows->r[rows->live[i]]);
	}
	return n;
}

/*
 * Slices past the next that a chain of ANDs with left rows left will
 * almost surely read, if each leaves a share fill of the rows.
 */
static int
BloomSlicesAhead(int left, double fill)
{
	double		expected = left;
	int			n = 0;

	fill = Min(Max(fill, 0.05), 0.95);
	while (n < BLOOMIDX_SLICED_MAX_LENGTH &&
		   (expected *= fill) >= BLOOM_READ_AHEAD_ROWS)
		n++;
	return n;
}

/*
 * Hint that a slice page will be read next, where rows are left: its
 * header and special space, which are checked first, and the lines of the
 * words to be ANDed (all of them, or those listed).
 */
static inline void
BloomPrefetchSlice(Page page, const BloomRowsLeft *rows, int nw)
{
	const char *words = (const char *) BloomPageGetSlice(page);
	int			i;

	BloomPrefetch(page);
	BloomPrefetch((char *) page + BLCKSZ - 1);
	if (rows->nlive < 0 || rows->nlive > nw / 2)
	{
		for (i = 0; i < nw * (int) sizeof(uint64); i += 64)
			BloomPrefetch(words + i);
	}
	else
	{
		for (i = 0; i < rows->nlive; i++)
			BloomPrefetch(words + rows->live[i] * sizeof(uint64));
	}
}

/*
 * AND the slices of every bit of mask (sigWords words) into the first nw
 * words of rows.  A slice with no bit set (no page) leaves no row.  The
 * next slice page is pinned and its first lines fetched while one is
 * ANDed; once fewer than half the words are left, only those are read.
 */
static int
BloomAndMask(Relation index, const BloomStripePages *pages, BlockNumber stripeBlkno,
			 const uint64 *mask, int sigWords, BloomRowsLeft *rows, int nw,
			 BloomSlicedScanData *work)
{
	BlockNumber *blocks = work->blocks;
	BloomReader *reader = &work->reader;
	Buffer		next;
	int			left = -1;
	int			nb = 0;
	int			i,
				w;

	for (w = 0; w < sigWords; w++)
	{
		uint64		x = mask[w];

		for (; x != 0; x &= x - 1)
		{
			BlockNumber blkno = pages->slices[w * 64 + pg_rightmost_one_pos64(x)];

			if (blkno == InvalidBlockNumber)
			{
				memset(rows->r, 0, sizeof(uint64) * nw);
				rows->nlive = 0;
				return BLOOM_SLICE_NONE;
			}
			blocks[nb++] = blkno;
		}
	}
	if (nb == 0)
		return BLOOM_SLICE_ANY;

	/*
	 * Slice i + 1 is read before slice i is ANDed.  Once pages come from
	 * the file, the slices that follow are read ahead too, as far as the
	 * rows left make it almost sure that they will be read.
	 */
	BloomReaderStart(reader, blocks, nb, 2);
	if (reader->streaming)
		BloomReaderAllow(reader, 2 + BloomSlicesAhead(BloomRowsLeftCount(rows, nw),
													  BLOOMIDX_SLICED_FILL));
	next = BloomReaderNext(reader);
	for (i = 0; i < nb; i++)
	{
		Buffer		buffer = next;
		Page		page;

		next = InvalidBuffer;
		if (i + 1 < nb)
		{
			next = BloomReaderNext(reader);
			BloomPrefetchSlice(BufferGetPage(next), rows, nw);
		}
		if (!BloomLockStripePage(index, pages, stripeBlkno, buffer, BLOOMIDX_SLICE))
		{
			if (BufferIsValid(next))
				ReleaseBuffer(next);
			return BLOOM_SLICE_GONE;
		}
		page = BufferGetPage(buffer);
		if (rows->nlive < 0 || rows->nlive > nw / 2)
			rows->nlive = BloomSliceAndWords(page, rows->r, nw, rows->live);
		else
			rows->nlive = BloomSliceAndLiveWords(page, rows->r, rows->live,
												 rows->nlive);
		UnlockReleaseBuffer(buffer);
		if (rows->nlive == 0)
		{
			if (BufferIsValid(next))
				ReleaseBuffer(next);
			return BLOOM_SLICE_NONE;
		}
		if (reader->streaming && i + 2 < nb)
		{
			int			before = left;

			left = BloomRowsLeftCount(rows, nw);
			BloomReaderAllow(reader, i + 3 +
							 BloomSlicesAhead(left, before > 0 ?
											  (double) left / before :
											  BLOOMIDX_SLICED_FILL));
		}
	}
	return BLOOM_SLICE_ANY;
}

/*
 * Add the TIDs of the rows set in r (of a stripe of rows rows) to the
 * bitmap, counting them in *ntids.  Returns false if the stripe is gone.
 * *heapBlocks: see BloomCheckHeapTidsInTable.
 */
static bool
BloomAddStripeTids(Relation index, BloomSlicedScanData *work,
				   BlockNumber stripeBlkno, int rows, TIDBitmap *tbm, int64 *ntids,
				   BlockNumber *heapBlocks)
{
	const BloomStripePages *pages = &work->pages;
	int			nw = (rows + 63) / 64;
	Buffer		buffer = InvalidBuffer;
	Page		map = NULL;
	int			mapFirstRow = 0;
	int			mapRows = 0;
	int			t = 0;
	int			curPage = -1;
	int			n = 0;
	int			nmaps = 0;
	int			lastMap = -1;
	int			w;

	/* The TID maps holding the rows, in order, read ahead */
	for (w = 0; w < nw && pages->nTidPages > 0; w++)
	{
		uint64		x = work->r.r[w];

		while (x != 0)
		{
			int			row = w * 64 + pg_rightmost_one_pos64(x);

			x &= x - 1;
			while (t + 1 < pages->nTidPages && pages->tidFirstRow[t + 1] <= row)
				t++;
			if (t != lastMap)
				work->blocks[nmaps++] = pages->tidPages[t];
			lastMap = t;
		}
	}
	BloomReaderStart(&work->reader, work->blocks, nmaps, nmaps);
	t = 0;

	for (w = 0; w < nw; w++)
	{
		uint64		x = work->r.r[w];

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
				buffer = BloomReaderNext(&work->reader);
				if (!BloomLockStripePage(index, pages, stripeBlkno, buffer,
										 BLOOMIDX_TIDMAP))
					return false;
				map = BufferGetPage(buffer);
				mapFirstRow = BloomTidMapGetFirstRow(map);
				mapRows = BloomTidMapGetNRows(map);
				curPage = t;
				BloomCheckTidMapRows(index, pages, t, mapFirstRow, mapRows, rows);
			}
			i = row - mapFirstRow;
			if (i < 0 || i >= mapRows)
				BloomSlicedCorrupted(index, pages->tidPages[t],
									 "TID-map page holding the stripe's rows");
			BloomTidMapPageGet(map, i, &work->tids[n]);
			if (!ItemPointerIsValid(&work->tids[n]))
				continue;		/* removed by VACUUM */
			BloomCheckHeapTidsInTable(index, pages->tidPages[t], &work->tids[n], 1,
									  heapBlocks);
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
 * Read summary page blkno of the stripe read into pages (at stripe page
 * stripeBlkno), share-locked, as BloomReadStripePage does; but if it is no
 * longer one and the stripe page now says the stripe is sealed in its
 * group (VACUUM sealed it and freed the page since the stripe page was
 * read, BloomSealOneStripe), return InvalidBuffer with *sealed set: the
 * caller takes the stripe as one that may match.  A stripe once sealed stays so while
 * it is listed, and its stripe number is never reused, so a page that is
 * not the stripe's summary page and a stripe page that does not say so
 * mean what they meant before: the stripe emptied, or corruption.
 */
static Buffer
BloomReadSummaryPage(Relation index, const BloomStripePages *pages,
					 BlockNumber stripeBlkno, BlockNumber blkno,
					 BufferAccessStrategy bas, bool *sealed)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno,
											RBM_NORMAL, bas);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	if (BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_SUMMARY, pages->stripe))
		return buffer;
	UnlockReleaseBuffer(buffer);

	buffer = ReadBufferExtended(index, MAIN_FORKNUM, stripeBlkno, RBM_NORMAL, bas);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	*sealed = BloomPageIsSliced(BufferGetPage(buffer), BLOOMIDX_STRIPE, pages->stripe) &&
		(BloomStripeGetFlags(BufferGetPage(buffer)) & BLOOMIDX_STRIPE_SUMMARY_GROUPED) != 0;
	UnlockReleaseBuffer(buffer);
	if (*sealed)
		return InvalidBuffer;
	return BloomReadStripePage(index, pages, stripeBlkno, blkno,
							   BLOOMIDX_SUMMARY, bas);
}

/*
 * Does the summary of the stripe just read (work->pages, at stripe page
 * blkno) rule the query out: a key on a summarized column none of whose
 * values the summary may hold?  Returns BLOOM_SLICE_NONE if so,
 * BLOOM_SLICE_ANY if not (or the stripe has no complete summary), and
 * BLOOM_SLICE_GONE if the stripe is gone.
 */
static int
BloomStripeSummaryTest(Relation index, BloomScanOpaque so,
					   BloomSlicedScanData *work, BlockNumber blkno)
{
	const BloomStripePages *pages = &work->pages;
	Buffer		buffer = InvalidBuffer;
	int			curPage = -1;
	int			result = BLOOM_SLICE_ANY;
	bool		sealed = false;
	int			k;

	/* A sealed stripe's summary was tested in its group's region */
	if (pages->summaryColumns == 0 ||
		(pages->flags & (BLOOMIDX_STRIPE_SUMMARY_INCOMPLETE |
						 BLOOMIDX_STRIPE_SUMMARY_GROUPED)) != 0)
		return BLOOM_SLICE_ANY;
	for (k = 0; k < so->nkeyhashes && result == BLOOM_SLICE_ANY; k++)
	{
		const BloomKeyHashes *kh = &so->keyhashes[k];
		int			nblocks;
		int			start;
		bool		maybe = false;
		int			j;

		if (kh->col >= pages->summaryColumns ||
			(nblocks = pages->summaryBlocks[kh->col]) == 0)
			continue;
		start = BloomSummaryColumnStart(pages->summaryBlocks, kh->col);
		for (j = 0; j < kh->nhashes && !maybe; j++)
		{
			uint32		key = work->sumKeys[k][j];
			int			g = start + BloomSummaryBlockFor(key, nblocks);
			int			p = g / BLOOMIDX_SUMMARY_PAGE_BLOCKS;

			if (p >= pages->nSummaryPages)
				BloomSlicedCorrupted(index, blkno, "stripe page listing its summary pages");
			if (p != curPage)
			{
				if (BufferIsValid(buffer))
					UnlockReleaseBuffer(buffer);
				buffer = BloomReadSummaryPage(index, pages, blkno,
											  pages->summaryPages[p], work->bas,
											  &sealed);
				if (sealed)
					return BLOOM_SLICE_ANY;
				if (!BufferIsValid(buffer))
					return BLOOM_SLICE_GONE;
				curPage = p;
			}
			maybe = BloomSummaryTestBlock(BloomSummaryPageBlocks(BufferGetPage(buffer)) +
										  (Size) (g % BLOOMIDX_SUMMARY_PAGE_BLOCKS) *
										  BLOOMIDX_SUMMARY_BLOCK_WORDS, key);
		}
		if (!maybe)
			result = BLOOM_SLICE_NONE;
	}
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);
	if (result == BLOOM_SLICE_NONE)
		work->stripesSkipped++;
	return result;
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

	if (!BloomReadStripeBuffer(index, s, BloomReaderNext(&work->stripeReader),
							   shape->sigBits, &work->pages))
		return BLOOM_SLICE_GONE;

	/* A summary that rules the query out spares the slices */
	if (work->sumKeys != NULL &&
		(result = BloomStripeSummaryTest(index, so, work, blkno)) != BLOOM_SLICE_ANY)
		return result;

	/* Start from every row of the stripe */
	memset(work->r.r, 0xFF, sizeof(uint64) * nw);
	if (rows % 64 != 0)
		work->r.r[nw - 1] = (UINT64CONST(1) << (rows % 64)) - 1;
	work->r.nlive = -1;

	result = BloomAndMask(index, &work->pages, blkno, so->mask, shape->sigWords,
						  &work->r, nw, work);

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

			CHECK_FOR_INTERRUPTS();
			memcpy(work->t.r, work->r.r, sizeof(uint64) * nw);
			work->t.nlive = work->r.nlive;
			if (work->r.nlive > 0)
				memcpy(work->t.live, work->r.live, sizeof(uint16) * work->r.nlive);
			altResult = BloomAndMask(index, &work->pages, blkno,
									 alt->masks + (Size) j * shape->sigWords,
									 shape->sigWords, &work->t, nw, work);
			if (altResult == BLOOM_SLICE_GONE)
				return BLOOM_SLICE_GONE;
			if (altResult == BLOOM_SLICE_ANY)
			{
				for (w = 0; w < nw; w++)
					work->g[w] |= work->t.r[w];
			}
		}
		for (w = 0; w < nw; w++)
		{
			work->r.r[w] = work->g[w];
			any |= work->g[w];
		}
		work->r.nlive = -1;
		result = any != 0 ? BLOOM_SLICE_ANY : BLOOM_SLICE_NONE;
	}
	return result;
}

/* Does a summary key of the scan test a column the groups' regions hold? */
static inline bool
BloomGroupKeyTested(const BloomSlicedSnapshot *snap, const BloomKeyHashes *kh)
{
	return kh->col >= 0 && kh->col < BLOOMIDX_MAX_COLUMNS &&
		snap->groupBlocks[kh->col] > 0;
}

/*
 * The sealed stripes of the groups g0 .. g0 + ngroups - 1 (their slots in
 * snap) that the query's summary keys rule out, in skip[g - g0] (bit p for
 * the stripe at position p): for each key, the page of its block in the
 * group's region, read once for the group, and its block for each sealed
 * stripe, as BloomStripeSummaryTest tests a stripe's own.  *blocksOut: the
 * pages' list, palloc'd, for the caller to free once work->reader is
 * started again.  Returns false if a region was freed under the scan,
 * which must start over.
 */
static bool
BloomGroupVerdicts(Relation index, BloomScanOpaque so, BloomSlicedScanData *work,
				   const BloomSlicedSnapshot *snap, uint32 g0, int ngroups,
				   uint64 *skip, BlockNumber **blocksOut)
{
	const uint16 *wide = snap->groupBlocks;
	BlockNumber *blocks;
	int			nblocks = 0;
	int			i,
				k,
				j,
				pass;

	for (i = 0; i < snap->nGroups; i++)
	{
		const BloomSlicedGroupSlot *slot = &snap->groups[i];

		if (slot->sealed == 0 || slot->groupPlus1 - 1 < g0 ||
			slot->groupPlus1 - 1 >= g0 + ngroups)
			continue;
		for (k = 0; k < so->nkeyhashes; k++)
			if (BloomGroupKeyTested(snap, &so->keyhashes[k]))
				nblocks += so->keyhashes[k].nhashes;
	}
	*blocksOut = blocks = palloc(sizeof(BlockNumber) * Max(nblocks, 1));
	if (nblocks == 0)
		return true;

	/* The pages, listed for the reader, then read in that order */
	for (pass = 0; pass < 2; pass++)
	{
		int			n = 0;

		if (pass == 1)
			BloomReaderStart(&work->reader, blocks, nblocks, nblocks);
		for (i = 0; i < snap->nGroups; i++)
		{
			const BloomSlicedGroupSlot *slot = &snap->groups[i];
			uint32		g = slot->groupPlus1 - 1;
			uint64		alive = slot->sealed;

			if (slot->sealed == 0 || g < g0 || g >= g0 + ngroups)
				continue;
			for (k = 0; k < so->nkeyhashes; k++)
			{
				const BloomKeyHashes *kh = &so->keyhashes[k];
				uint64		any = 0;

				if (!BloomGroupKeyTested(snap, kh))
					continue;
				for (j = 0; j < kh->nhashes; j++)
				{
					uint32		key = work->sumKeys[k][j];
					int			b = BloomSummaryBlockFor(key, wide[kh->col]);
					int			at;
					BlockNumber blkno = BloomGroupBlockPage(slot, wide, kh->col,
															b, 0, &at);
					Buffer		buffer;
					Page		page;
					uint64		x;

					if (pass == 0)
					{
						blocks[n++] = blkno;
						continue;
					}
					CHECK_FOR_INTERRUPTS();
					buffer = BloomReaderNext(&work->reader);
					LockBuffer(buffer, BUFFER_LOCK_SHARE);
					page = BufferGetPage(buffer);
					if (!BloomPageIsSliced(page, BLOOMIDX_GROUP,
										   BloomGroupFirstStripe(slot)))
					{
						UnlockReleaseBuffer(buffer);
						if (BloomGroupStillHeld(index, g, slot->first))
							BloomReportCorruption(index, blkno,
												  psprintf("Page %u of the region of summary group %u is not a page of the group.",
														   blkno - slot->first, g));
						return false;
					}
					for (x = alive & ~any; x != 0; x &= x - 1)
					{
						int			p = pg_rightmost_one_pos64(x);

						if (BloomSummaryTestBlock(BloomSummaryPageBlocks(page) +
												  (Size) (at + p * slot->perStripe) *
												  BLOOMIDX_SUMMARY_BLOCK_WORDS, key))
							any |= UINT64CONST(1) << p;
					}
					UnlockReleaseBuffer(buffer);
				}
				alive &= any;
			}
			if (pass == 1)
				skip[g - g0] = slot->sealed & ~alive;
		}
	}
	return true;
}

/* Did BloomGroupVerdicts rule stripe s out? */
static inline bool
BloomStripeRuledOut(const uint64 *skip, uint32 g0, int ngroups, uint32 s)
{
	uint32		g = s / BLOOMIDX_GROUP_STRIPES;

	return skip != NULL && g >= g0 && g < g0 + ngroups &&
		((skip[g - g0] >> (s % BLOOMIDX_GROUP_STRIPES)) & 1) != 0;
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
	BlockNumber *stripes;
	int			nstripes = 0;
	uint64	   *skip = NULL;	/* sealed stripes ruled out, per group */
	BlockNumber *groupBlocks = NULL;
	uint32		g0;
	int			ngroups = 0;
	uint32		s;
	int			i;

	BloomTakeSnapshot(index, snap, true);

	/* Pending pages: their rows are not below this snapshot's mergedRows */
	BloomReaderStart(&work->reader, snap->pending, snap->nPending, snap->nPending);
	for (i = 0; i < snap->nPending; i++)
	{
		Buffer		buffer;
		Page		page;
		int			nfound = 0;

		CHECK_FOR_INTERRUPTS();
		buffer = BloomReaderNext(&work->reader);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (BloomPageIsRowPage(page, state->tuplesPerPage))
		{
			if (!BloomDataPagePaddingIsClear(page, shape->sigBits,
											 BloomShapeSlotBytes(shape),
											 BLOOMIDX_PADDING_ROWS))
				BloomReportCorruption(index, snap->pending[i],
									  psprintf("A signature has bits set past the %d bits of the index's signatures.",
											   shape->sigBits));
			nfound = BloomScanRowPageBuffer(so, buffer, BloomShapeSlotBytes(shape),
											shape->sigWords, work->tids,
											work->copy);
		}
		else
		{
			/* Merged and freed since, unless still listed */
			UnlockReleaseBuffer(buffer);
			BloomCheckPendingGone(index, state, snap->pending[i]);
		}
		if (nfound > 0)
		{
			BloomCheckHeapTidsInTable(index, snap->pending[i], work->tids, nfound,
									  &so->heapBlocks);
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

	/*
	 * The sealed stripes the summary groups rule out (as the first snapshot
	 * has them: a stripe sealed since is tested as any other) are read no
	 * further.
	 */
	g0 = snap->firstStripe / BLOOMIDX_GROUP_STRIPES;
	if (work->sumKeys != NULL && snap->nGroups > 0 &&
		snap2->nStripes > snap->firstStripe)
	{
		ngroups = (snap2->nStripes - 1) / BLOOMIDX_GROUP_STRIPES - g0 + 1;
		skip = palloc0(sizeof(uint64) * ngroups);
		if (!BloomGroupVerdicts(index, so, work, snap, g0, ngroups, skip,
								&groupBlocks))
			complete = false;
	}

	stripes = palloc(sizeof(BlockNumber) *
					 Max(snap2->nStripes - Min(snap->firstStripe, snap2->nStripes), 1));
	for (s = snap->firstStripe; s < snap2->nStripes && complete; s++)
	{
		BlockNumber blkno = s < snap->nStripes ? BloomSnapStripe(snap, s) :
			BloomSnapStripe(snap2, s);

		if (BloomStripeRows(snap2->mergedRows, s) == 0)
			break;
		if (blkno != InvalidBlockNumber &&
			!BloomStripeRuledOut(skip, g0, ngroups, s))
			stripes[nstripes++] = blkno;
	}
	BloomReaderStart(&work->stripeReader, stripes, nstripes, nstripes);
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
		if (BloomStripeRuledOut(skip, g0, ngroups, s))
		{
			work->stripesSkipped++;
			continue;
		}
		switch (BloomStripeCandidates(index, shape, so, work, s, blkno, rows))
		{
			case BLOOM_SLICE_ANY:
				complete = BloomAddStripeTids(index, work, blkno, rows,
											  tbm, ntids, &so->heapBlocks);
				break;
			case BLOOM_SLICE_GONE:
				complete = false;
				break;
		}
	}

	BloomReaderEnd(&work->stripeReader);
	BloomReaderEnd(&work->reader);
	if (skip != NULL)
		pfree(skip);
	if (groupBlocks != NULL)
		pfree(groupBlocks);
	pfree(stripes);
	BloomFreeSnapshot(snap2);
	BloomFreeSnapshot(snap);
	return complete;
}

/*
 * The buffer access strategy of a scan reading, per stripe, the slices of
 * the query's bits and those of its alternatives, and the pending pages.
 */
static BufferAccessStrategy
BloomSlicedScanStrategy(Relation index, BloomState state, BloomScanOpaque so)
{
	BloomLayoutSizesData sizes;
	double		slices = 0;
	int			a,
				w;

	for (w = 0; w < state->shape.sigWords; w++)
		slices += pg_popcount64(so->mask[w]);
	for (a = 0; a < so->nalternatives; a++)
	{
		BloomAlternatives *alt = &so->alternatives[a];

		for (w = 0; w < alt->nmasks * state->shape.sigWords; w++)
			slices += pg_popcount64(alt->masks[w]);
	}
	BloomSlicedSizes(index, &sizes);
	return BloomScanStrategy(sizes.pendingPages + sizes.stripes * (1 + slices));
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
	int			restarts;

	BloomSlicedCheckSigBits(index, state->shape.sigBits);
	work->maxtids = Max(state->tuplesPerPage, 1024);
	work->tids = palloc(sizeof(ItemPointerData) * work->maxtids);
	work->copy = palloc(BLCKSZ);
	work->bas = BloomSlicedScanStrategy(index, state, so);
	work->stripesSkipped = 0;
	work->sumKeys = NULL;
	if (state->shape.summaries && so->nkeyhashes > 0)
	{
		int			k,
					j;

		work->sumKeys = palloc(sizeof(uint32 *) * so->nkeyhashes);
		for (k = 0; k < so->nkeyhashes; k++)
		{
			const BloomKeyHashes *kh = &so->keyhashes[k];

			work->sumKeys[k] = palloc(sizeof(uint32) * Max(kh->nhashes, 1));
			for (j = 0; j < kh->nhashes; j++)
				work->sumKeys[k][j] = BloomSummaryKey(kh->hashes[j], kh->col);
		}
	}
	BloomReaderInit(&work->stripeReader, index, NULL, READ_STREAM_FULL);
	BloomReaderInit(&work->reader, index, work->bas, READ_STREAM_FULL);

	for (restarts = 0; !BloomSlicedScanOnce(index, state, so, tbm, work, &ntids);
		 restarts++)
	{
		if (restarts >= BLOOMIDX_MAX_SCAN_RESTARTS)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not complete a scan of index \"%s\"",
							RelationGetRelationName(index)),
					 errdetail("VACUUM emptied a stripe the scan was reading %d times in a row.",
							   restarts + 1),
					 errhint("Retry the query.")));
		elog(DEBUG1, "bloomidx index \"%s\": a stripe was emptied during a scan, starting over",
			 RelationGetRelationName(index));
	}

	FreeAccessStrategy(work->bas);
	pfree(work->tids);
	pfree(work->copy);
	pfree(work);
	return ntids;
}

/*
 * Which index columns the stripes' summaries cover (a column of sets has
 * none), the rate at which a summary lets through a value its stripe does
 * not hold, and how many stripes have a complete summary; 0 if the index
 * has no summaries; and the pages the summaries take.
 */
static uint32
BloomSlicedSummaryPlanInfo(Relation index, BloomState state, double *fpr,
						   double *completeStripes, double *summaryPages,
						   double *sealedStripes, double *sealedGroups)
{
	BloomSummaryInfoData info;
	uint32		summarized = 0;
	int			c;

	*fpr = 1.0;
	*completeStripes = 0;
	BloomSlicedSummaryInfo(index, &info);
	*summaryPages = info.summaryPages;
	*sealedStripes = info.sealedStripes;
	*sealedGroups = info.sealedGroups;
	if (info.bitsPerKey <= 0)
		return 0;
	for (c = 0; c < state->shape.nColumns; c++)
	{
		if ((state->shape.setColumns & ((uint32) 1 << c)) == 0 &&
			info.meanBlocks[c] > 0)
			summarized |= (uint32) 1 << c;
	}
	*fpr = BloomSummaryFpr(info.bitsPerKey);
	*completeStripes = info.completeStripes;
	return summarized;
}

/*
 * Share of the stripes whose summaries let a query through (the model of
 * the cost estimate): for each clause on a summarized column, the chance
 * that a stripe holds one of its values, plus the summary's false
 * positives among the others, and the clauses' chances multiplied.  A
 * stripe holds a value of selectivity sel at random with probability
 * 1 - (1 - sel)^rows; if the column's values follow the rows' order
 * (correlation 1), a value's rows fill sel * rows of table / stripe rows
 * consecutive stripes and touch one more; between the two, as the planner
 * interpolates a B-tree's page fetches, by the correlation squared.
 * *keysTested: summary blocks a stripe tests.
 */
static double
BloomSlicedStripeShare(const BloomScanPagesInput *in, uint32 summarized,
					   double fpr, double stripes, double *keysTested)
{
	const BloomCostQuery *query = in->query;
	double		rows = BLOOMIDX_STRIPE_ROWS;
	double		total = Max(in->indexTuples, 1.0);
	double		share = 1.0;
	double		maxC2 = 0.0;
	double		match = Min(Max(in->matching, 0.0), 1.0);
	double		holdMatch;
	int			i;

	*keysTested = 0;
	if (summarized == 0 || stripes < 1)
		return 1.0;
	for (i = 0; i < query->nclauses; i++)
	{
		const BloomCostClause *clause = &query->clauses[i];
		double		sel = clause->selectivity;
		double		nvalues = Max(clause->nknown + clause->nunknown, 1.0);
		double		c2 = clause->correlation * clause->correlation;
		double		atRandom,
					inOrder,
					holds,
					pass;

		if ((summarized & ((uint32) 1 << clause->col)) == 0)
			continue;
		CLAMP_PROBABILITY(sel);
		atRandom = sel >= 1.0 ? 1.0 : -expm1(rows * log1p(-sel));
		inOrder = Min(1.0, (sel * total / rows + nvalues) / stripes);
		holds = c2 * inOrder + (1.0 - c2) * atRandom;
		pass = holds + (1.0 - holds) * -expm1(nvalues * log1p(-fpr));
		share *= pass;
		maxC2 = Max(maxC2, c2);
		*keysTested += nvalues;
	}

	/* No fewer stripes than those holding the rows that match */
	holdMatch = maxC2 * Min(1.0, (match * total / rows + 1.0) / stripes) +
		(1.0 - maxC2) * (match >= 1.0 ? 1.0 : -expm1(rows * log1p(-match)));
	return Min(Max(share, holdMatch), 1.0);
}

/*
 * Pages and words a scan reads (the routine table's scanpages): every
 * stripe page and, where the stripes have summaries, one summary block a
 * stripe for each value tested (for the stripes sealed in summary groups,
 * one page a group and value, and the stripe pages of those the summaries
 * let through only); the slices the query tests of the stripes the
 * summaries let through, every pending page, and the TID-map pages of the
 * candidates.  The false positives of the stripes skipped are never met.
 */
void
BloomSlicedScanPages(Relation index, BloomState state,
					 const BloomScanPagesInput *in, BloomScanPages *out)
{
	BloomLayoutSizesData sizes;
	double		slices = Min(BloomQuerySlices(in->shape, in->query),
							 (double) state->shape.sigBits *
							 (1 + in->query->nclauses));
	double		tidPages;
	double		candidates;
	double		pendingRows;
	double		fpr;
	double		complete;
	double		summaryPages;
	double		sealed;
	double		sealedGroups;
	uint32		summarized;
	double		share;
	double		keysTested;
	double		stripeRows;

	BloomSlicedSizes(index, &sizes);
	pendingRows = sizes.pendingPages * state->tuplesPerPage;
	summarized = BloomSlicedSummaryPlanInfo(index, state, &fpr, &complete,
											&summaryPages, &sealed,
											&sealedGroups);
	share = BloomSlicedStripeShare(in, summarized, fpr, sizes.stripes,
								   &keysTested);

	/* Stripes whose summary a merge left incomplete are always read */
	complete = Min(complete, sizes.stripes);
	if (sizes.stripes > 0)
		share = (complete * share + (sizes.stripes - complete)) / sizes.stripes;

	/* False positives are met in the stripes read and the pending rows */
	stripeRows = Max(in->indexTuples - pendingRows, 0.0);
	if (share < 1.0 && in->indexTuples > 0)
		out->falsePositiveShare = (stripeRows * share + pendingRows) /
			Max(stripeRows + pendingRows, 1.0);
	candidates = (in->matching + in->falsePositives * out->falsePositiveShare) *
		in->heapTuples;

	/* TID maps are compressed: what the other pages leave of the index */
	tidPages = in->indexPages - sizes.stripes * (1 + state->shape.sigBits) -
		sizes.pendingPages - summaryPages;
	tidPages = Max(tidPages, sizes.stripes);
	tidPages = Min(tidPages, sizes.stripes * BLOOMIDX_STRIPE_TIDPAGES);

	/*
	 * A stripe sealed in its group is read (its stripe page too) only if
	 * the summaries let it through; its group's page of each value tested
	 * is read once for the group
	 */
	sealed = keysTested > 0 ? Min(sealed, sizes.stripes) : 0;
	out->pagesFetched = (sizes.stripes - sealed) * (1 + keysTested + share * slices) +
		sealed * share * (1 + slices) + sealedGroups * keysTested +
		sizes.pendingPages +
		(tidPages > 0 ? tidPages * -expm1(-candidates / tidPages) : 0);
	out->pagesFetched = Min(out->pagesFetched, in->indexPages);
	out->wordsTested = sizes.stripes * share * slices * BLOOMIDX_STRIPE_WORDS +
		sizes.stripes * keysTested * 4 +
		in->wordsPerRow * pendingRows;
}
