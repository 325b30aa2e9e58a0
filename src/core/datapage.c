/*-------------------------------------------------------------------------
 *
 * datapage.c
 *	  Reading and changing the data pages of the row layout, which are the
 *	  pending pages of the sliced layout too: testing their signatures
 *	  against a query, removing dead rows.
 *
 * A query is one mask of the bits every matching signature must have
 * (equalities, IS NULL, one-element arrays), plus one group of
 * alternative masks per "= ANY (array)" key, of which a matching
 * signature must contain at least one.  Signatures are tested 64 bits at
 * a time on the words the masks touch.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/datapage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"
#include "signature.h"

/*
 * Does the signature contain every bit of mask, on the given words?
 */
static inline bool
BloomSignatureContains(const uint8 *sig, const uint64 *mask,
					   const int *words, int nwords)
{
	int			i;

	for (i = 0; i < nwords; i++)
	{
		int			w = words[i];

		if ((BloomLoadWord(sig + 8 * w) & mask[w]) != mask[w])
			return false;
	}
	return true;
}

/*
 * Does the signature contain every bit of a whole mask of sigWords words?
 */
static inline bool
BloomSignatureContainsAll(const uint8 *sig, const uint64 *mask, int sigWords)
{
	int			w;

	for (w = 0; w < sigWords; w++)
	{
		if ((BloomLoadWord(sig + 8 * w) & mask[w]) != mask[w])
			return false;
	}
	return true;
}

/*
 * Does the signature satisfy the alternatives, if any?
 */
static bool
BloomSignatureMatchesAlternatives(BloomScanOpaque so, const uint8 *sig,
								  int sigWords)
{
	int			a;

	for (a = 0; a < so->nalternatives; a++)
	{
		BloomAlternatives *alt = &so->alternatives[a];
		int			j;
		bool		found = false;

		for (j = 0; j < alt->nmasks && !found; j++)
		{
			/* Effective only on a copy of the page, see BloomScanRowPage */
			if ((j & 1023) == 1023)
				CHECK_FOR_INTERRUPTS();
			found = BloomSignatureContainsAll(sig,
											  alt->masks + (Size) j * sigWords,
											  sigWords);
		}
		if (!found)
			return false;
	}
	return true;
}

/*
 * Collect the TIDs of the candidate rows on one data page (of the row
 * layout, or pending page of the sliced layout) of slots slotBytes long
 * into tids; returns how many.
 *
 * A signature starts its slot (keys may follow it, see page.h) and is
 * tested in 8-byte words; the last word may run into the keys, the next
 * slot or the TID array, which is harmless as the mask has no bits there,
 * and never past the page.
 *
 * With alternatives (= ANY) a page can take long, as long as the array;
 * the interrupt checks in the loop are held off while a buffer is locked,
 * so callers then scan a copy of the page, unlocked (BloomScanRowPageBuffer).
 */
int
BloomScanRowPage(BloomScanOpaque so, Page page, int slotBytes, int sigWords,
				 ItemPointerData *tids)
{
	int			ntuples = BloomPageGetNTuples(page);
	const uint8 *sig = BloomPageGetSignature(page, slotBytes, 0);
	int			nfound = 0;
	int			i;

	if (so->nwords == 1 && so->nalternatives == 0)
	{
		/* The common case: all the query's bits are in one word */
		int			w = so->words[0];
		uint64		m = so->mask[w];
		const uint8 *p = sig + 8 * w;

		for (i = 0; i < ntuples; i++, p += slotBytes)
		{
			if ((BloomLoadWord(p) & m) == m)
				tids[nfound++] = *BloomPageGetTid(page, slotBytes, i);
		}
		return nfound;
	}

	for (i = 0; i < ntuples; i++, sig += slotBytes)
	{
		if (!BloomSignatureContains(sig, so->mask, so->words, so->nwords))
			continue;
		if (so->nalternatives > 0 &&
			!BloomSignatureMatchesAlternatives(so, sig, sigWords))
			continue;
		tids[nfound++] = *BloomPageGetTid(page, slotBytes, i);
	}
	return nfound;
}

/*
 * Remove the tuples of dead rows from a data page (of the row layout, or a
 * pending page) of slots slotBytes long that is locked exclusively.
 * Changes go into a WAL record started at the first one, which is
 * returned for the caller to finish (NULL if nothing changed); *page is
 * then the page to go on changing.
 */
GenericXLogState *
BloomPageRemoveDead(Relation index, Buffer buffer, Page *page, int slotBytes,
					IndexBulkDeleteCallback callback, void *callback_state,
					IndexBulkDeleteResult *stats)
{
	GenericXLogState *xlogState = NULL;
	int			i;

	BloomCheckDataPageBounds(index, *page, BufferGetBlockNumber(buffer), slotBytes);

	/* Walk backwards so that moving the last slot down is safe */
	for (i = BloomPageGetNTuples(*page) - 1; i >= 0; i--)
	{
		if (!callback(BloomPageGetTid(*page, slotBytes, i), callback_state))
			continue;
		if (xlogState == NULL)
		{
			xlogState = GenericXLogStart(index);
			*page = GenericXLogRegisterBuffer(xlogState, buffer, 0);
		}
		BloomPageDeleteTuple(*page, slotBytes, i);
		stats->tuples_removed += 1;
	}
	return xlogState;
}

/*
 * BloomScanRowPage on the page of a buffer locked in share mode, which it
 * unlocks and releases: with alternatives, on a copy of the page made
 * first, so that a long scan can be cancelled.  copy is BLCKSZ bytes.
 */
int
BloomScanRowPageBuffer(BloomScanOpaque so, Buffer buffer, int slotBytes,
					   int sigWords, ItemPointerData *tids, char *copy)
{
	Page		page = BufferGetPage(buffer);
	int			nfound;

	if (so->nalternatives == 0)
	{
		nfound = BloomScanRowPage(so, page, slotBytes, sigWords, tids);
		UnlockReleaseBuffer(buffer);
		return nfound;
	}
	memcpy(copy, page, BLCKSZ);
	UnlockReleaseBuffer(buffer);
	return BloomScanRowPage(so, (Page) copy, slotBytes, sigWords, tids);
}
