/*-------------------------------------------------------------------------
 *
 * am_scan.c
 *	  Bitmap scan of a bloomidx index: the scan callbacks.
 *
 * The scan keys become a query: one mask of the bits every matching
 * signature must have (equalities, IS NULL, one-element arrays), plus one
 * group of alternative masks per "= ANY (array)" key, of which a matching
 * signature must contain at least one.  The index's layout then finds the
 * rows whose signatures may match.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/am/am_scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "layout.h"
#include "signature.h"

/*
 * Start a scan (ambeginscan).
 */
IndexScanDesc
bloomidx_beginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan;
	BloomScanOpaque so;

	scan = RelationGetIndexScan(r, nkeys, norderbys);
	so = (BloomScanOpaque) palloc0(sizeof(BloomScanOpaqueData));
	so->queryCxt = AllocSetContextCreate(CurrentMemoryContext,
										 "bloomidx scan query",
										 ALLOCSET_SMALL_SIZES);
	scan->opaque = so;
	return scan;
}

/*
 * Turn the scan keys into the query tested against each signature.
 */
static void
BloomPrepareQuery(IndexScanDesc scan)
{
	Relation	index = scan->indexRelation;
	BloomState	state = BloomGetState(index);
	BloomScanOpaque so = (BloomScanOpaque) scan->opaque;
	const BloomShape *shape = &state->shape;
	int			sigWords = shape->sigWords;
	MemoryContext oldcxt;
	Size		maskBytes = 0;
	int			i;

	MemoryContextReset(so->queryCxt);
	oldcxt = MemoryContextSwitchTo(so->queryCxt);

	so->noMatch = false;
	so->mask = palloc0(sizeof(uint64) * sigWords);
	so->nalternatives = 0;
	so->alternatives = palloc(sizeof(BloomAlternatives) * Max(scan->numberOfKeys, 1));
	so->nkeyhashes = 0;
	so->keyhashes = palloc(sizeof(BloomKeyHashes) * Max(scan->numberOfKeys, 1));

	for (i = 0; i < scan->numberOfKeys && !so->noMatch; i++)
	{
		ScanKey		key = &scan->keyData[i];
		int			col = key->sk_attno - 1;
		FmgrInfo	flinfo;
		FmgrInfo   *hashFn;
		BloomMaskList list;
		Datum	   *values = &key->sk_argument;
		int			nvalues = 1;
		int			j;

		if (key->sk_flags & SK_SEARCHNOTNULL)
			continue;			/* every row may match: left to the recheck */
		if (key->sk_flags & SK_SEARCHNULL)
		{
			BloomValueMask(state, col, (Datum) 0, true, so->mask);
			if ((shape->setColumns & (1U << col)) == 0)
			{
				BloomKeyHashes *kh = &so->keyhashes[so->nkeyhashes++];

				kh->col = col;
				kh->nhashes = 1;
				kh->hashes = palloc(sizeof(uint64));
				kh->hashes[0] = BLOOM_NULL_HASH;
			}
			continue;
		}
		if (key->sk_flags & SK_ISNULL)
		{
			/* "col = NULL", or "= ANY (NULL)": nothing is equal */
			so->noMatch = true;
			break;
		}

		hashFn = BloomKeyHashFunction(index, state, col, key->sk_subtype, &flinfo,
									  false);
		BloomInitMaskList(&list, index, shape);
		list.priorBytes = maskBytes;

		if (key->sk_flags & SK_SEARCHARRAY)
		{
			ArrayType  *array = DatumGetArrayTypeP(key->sk_argument);
			Oid			elemtype = ARR_ELEMTYPE(array);
			int16		elmlen;
			bool		elmbyval;
			char		elmalign;
			bool	   *nulls;
			int			nelems;

			get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
			deconstruct_array(array, elemtype, elmlen, elmbyval, elmalign,
							  &values, &nulls, &nelems);

			/* One mask per element, all of them within work_mem */
			BloomMaskListReserve(&list, Max(nelems, 1));

			/* NULL equals nothing */
			nvalues = 0;
			for (j = 0; j < nelems; j++)
				if (!nulls[j])
					values[nvalues++] = values[j];
		}

		if (!BloomKeyAlternatives(state, col, hashFn, key->sk_strategy,
								  values, nvalues, &list))
			continue;			/* every row may match */
		if ((key->sk_flags & SK_SEARCHARRAY) || list.nmasks > 1)
			maskBytes += sizeof(uint64) * sigWords * (Size) list.maxmasks;

		/* An equality's values, by their hashes, for the summaries */
		if ((shape->setColumns & (1U << col)) == 0 && nvalues > 0)
		{
			BloomKeyHashes *kh = &so->keyhashes[so->nkeyhashes++];

			kh->col = col;
			kh->nhashes = nvalues;
			kh->hashes = palloc(sizeof(uint64) * nvalues);
			for (j = 0; j < nvalues; j++)
				kh->hashes[j] = BloomHashDatum(hashFn, state->collations[col],
											   values[j]);
		}

		if (list.nmasks == 0)
			so->noMatch = true;
		else if (list.nmasks == 1)
		{
			/* A single alternative is just one more required mask */
			for (j = 0; j < sigWords; j++)
				so->mask[j] |= list.masks[j];
		}
		else
		{
			so->alternatives[so->nalternatives].nmasks = list.nmasks;
			so->alternatives[so->nalternatives].masks = list.masks;
			so->nalternatives++;
		}
	}

	/* The words of the mask worth testing */
	so->words = palloc(sizeof(int) * sigWords);
	so->nwords = 0;
	for (i = 0; i < sigWords; i++)
	{
		if (so->mask[i] != 0)
			so->words[so->nwords++] = i;
	}

	MemoryContextSwitchTo(oldcxt);
}

/*
 * Restart a scan with new keys (amrescan).
 */
void
bloomidx_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
				ScanKey orderbys, int norderbys)
{
	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	BloomPrepareQuery(scan);
}

/*
 * Add the TIDs of all rows whose signature matches the query to the
 * bitmap, to be rechecked against the heap (amgetbitmap).
 */
int64
bloomidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	Relation	index = scan->indexRelation;
	BloomState	state = BloomGetState(index);
	BloomScanOpaque so = (BloomScanOpaque) scan->opaque;

	if (so->mask == NULL)
		BloomPrepareQuery(scan);
	if (so->noMatch)
		return 0;

	/* Rows this backend's statement inserted are read from the index */
	BloomFlushGathered(index);
	pgstat_count_index_scan(index);
	BloomCountIndexSearch(scan);

	return BloomGetStateLayout(index, state)->getbitmap(index, state, so, tbm);
}

/*
 * End a scan (amendscan).
 */
void
bloomidx_endscan(IndexScanDesc scan)
{
	BloomScanOpaque so = (BloomScanOpaque) scan->opaque;

	MemoryContextDelete(so->queryCxt);
	pfree(so);
}

