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
 * Hash function to use for a key compared with a column of the index: the
 * column's own, or for a cross-type key (int4 column = int8 value) the
 * function the operator family has for the key's type.  Within a family
 * the hashes of equal values agree, as in hash operator families.  With
 * missing_ok, NULL if the family has none (the cost model then guesses).
 */
FmgrInfo *
BloomKeyHashFunction(Relation index, BloomState state, int col, Oid keytype,
					 FmgrInfo *flinfo, bool missing_ok)
{
	Oid			opfamily = index->rd_opfamily[col];
	Oid			proc;

	if (!OidIsValid(keytype) || keytype == index->rd_opcintype[col])
		return &state->hashFn[col];

	proc = get_opfamily_proc(opfamily, keytype, keytype, BLOOMIDX_HASH_PROC);
	if (!OidIsValid(proc) && missing_ok)
		return NULL;
	if (!OidIsValid(proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator family of index \"%s\" has no hash function for type %s",
						RelationGetRelationName(index), format_type_be(keytype)),
				 errhint("Add FUNCTION %d for the type to the operator family.",
						 BLOOMIDX_HASH_PROC)));
	fmgr_info_cxt(proc, flinfo, CurrentMemoryContext);
	return flinfo;
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

	for (i = 0; i < scan->numberOfKeys && !so->noMatch; i++)
	{
		ScanKey		key = &scan->keyData[i];
		int			col = key->sk_attno - 1;
		int			k = shape->bitsPerColumn[col];
		FmgrInfo	flinfo;
		FmgrInfo   *hashFn;

		if (key->sk_flags & SK_SEARCHNOTNULL)
			continue;			/* every row may match: left to the recheck */
		if (key->sk_flags & SK_SEARCHNULL)
		{
			BloomSetMaskBits(so->mask, shape->sigBits, BLOOM_NULL_HASH, col, k);
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

		if (key->sk_flags & SK_SEARCHARRAY)
		{
			ArrayType  *array = DatumGetArrayTypeP(key->sk_argument);
			Oid			elemtype = ARR_ELEMTYPE(array);
			int16		elmlen;
			bool		elmbyval;
			char		elmalign;
			Datum	   *elems;
			bool	   *nulls;
			int			nelems;
			int			j;
			BloomAlternatives *alt = &so->alternatives[so->nalternatives];

			get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
			deconstruct_array(array, elemtype, elmlen, elmbyval, elmalign,
							  &elems, &nulls, &nelems);

			/* One mask per element, all of them within work_mem */
			maskBytes += sizeof(uint64) * sigWords * (Size) Max(nelems, 1);
			if (maskBytes > (Size) work_mem * 1024)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("scan keys of index \"%s\" need %zu kB, more than work_mem (%d kB)",
								RelationGetRelationName(index),
								(maskBytes + 1023) / 1024, work_mem),
						 errdetail_plural("Each of the %d value searched for takes %d bytes.",
										  "Each of the %d values searched for takes %d bytes.",
										  nelems, nelems,
										  (int) (sizeof(uint64) * sigWords)),
						 errhint("Raise work_mem, or use fewer elements in the array.")));

			alt->nmasks = 0;
			alt->masks = palloc0(sizeof(uint64) * sigWords * Max(nelems, 1));
			for (j = 0; j < nelems; j++)
			{
				uint64		hash;

				CHECK_FOR_INTERRUPTS();
				if (nulls[j])
					continue;	/* NULL equals nothing */
				hash = BloomHashDatum(hashFn, state->collations[col], elems[j]);
				BloomSetMaskBits(alt->masks + (Size) alt->nmasks * sigWords,
								 shape->sigBits, hash, col, k);
				alt->nmasks++;
			}

			if (alt->nmasks == 0)
				so->noMatch = true;
			else if (alt->nmasks == 1)
			{
				/* A single alternative is just one more required mask */
				for (j = 0; j < sigWords; j++)
					so->mask[j] |= alt->masks[j];
			}
			else
				so->nalternatives++;
		}
		else
		{
			uint64		hash = BloomHashDatum(hashFn, state->collations[col],
											  key->sk_argument);

			BloomSetMaskBits(so->mask, shape->sigBits, hash, col, k);
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
	BloomBatchFlush(index);
	pgstat_count_index_scan(index);
	BloomCountIndexSearch(scan);

	return BloomGetLayout(&state->shape)->getbitmap(index, state, so, tbm);
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

/*
 * The buffer access strategy of a scan that reads about this many index
 * pages.  As for a sequential scan of a table, one reading more than a
 * quarter of shared buffers goes through a small ring, so as not to push
 * out what other queries use; a smaller one leaves its pages in shared
 * buffers for the next query.
 */
BufferAccessStrategy
BloomScanStrategy(double pages)
{
	return pages > NBuffers / 4 ? GetAccessStrategy(BAS_BULKREAD) : NULL;
}
