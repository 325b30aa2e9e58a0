/*-------------------------------------------------------------------------
 *
 * am_insert.c
 *	  Inserting a row into a bloomidx index (aminsert): the row's
 *	  signature, handed to the index's layout.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/am/am_insert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "bloomidx.h"
#include "layout.h"

/*
 * Insert the signature of one heap row (aminsert).
 */
bool
bloomidx_insert(Relation index, Datum *values, bool *isnull,
				ItemPointer ht_ctid, Relation heapRel,
				IndexUniqueCheck checkUnique,
				bool indexUnchanged,
				IndexInfo *indexInfo)
{
	BloomState	state = BloomGetState(index);
	uint8		sig[BLOOMIDX_MAX_LENGTH / 8];
	uint64		mixed[BLOOMIDX_MAX_COLUMNS];
	bool		keyed = state->shape.summaries && !state->hasSets;
	int			nbitsSet;

	/*
	 * Hashing may allocate; the executor resets this context per row.  An
	 * index that keys its rows (stripe summaries) takes the keys from the
	 * mixes the signature computed; with columns of sets, those would cost
	 * an equality column's hash again, so the layout hashes for the keys.
	 */
	nbitsSet = BloomFormSignatureMixed(state, values, isnull, sig,
									   keyed ? mixed : NULL);
	BloomGetStateLayout(index, state)->insert(index, state, sig, nbitsSet,
											  keyed ? mixed : NULL,
											  values, isnull, ht_ctid);
	return false;
}

/*
 * The executor is done inserting into the index (aminsertcleanup, 17 and
 * later): write the rows gathered for it.
 */
void
bloomidx_insertcleanup(Relation index, IndexInfo *indexInfo)
{
	BloomFlushGathered(index);
}
