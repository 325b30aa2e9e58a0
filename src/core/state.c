/*-------------------------------------------------------------------------
 *
 * state.c
 *	  Per-index state: the frozen signature shape and the hash functions,
 *	  forming the signature of a row, and the buffer reads the layouts
 *	  share.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/state.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"
#include "signature.h"

/*
 * How values hashed by the extended hash function hashproc can be hashed
 * (BloomHashKind): PostgreSQL's integer hashes directly, as they compute
 * (src/backend/access/hash/hashfunc.c), any other through fmgr.
 */
static BloomHashKind
BloomHashKindOf(Oid hashproc)
{
	switch (hashproc)
	{
		case F_HASHINT2EXTENDED:
			return BLOOM_HASH_INT2;
		case F_HASHINT4EXTENDED:
			return BLOOM_HASH_INT4;
		case F_HASHINT8EXTENDED:
			return BLOOM_HASH_INT8;
		case F_HASHOIDEXTENDED:
			return BLOOM_HASH_OID;
		default:
			return BLOOM_HASH_FMGR;
	}
}

/*
 * Fill in the state of an index of the given shape: hash functions and
 * collations of its columns.  The FmgrInfos live in the current memory
 * context.
 */
void
BloomInitState(BloomState state, Relation index, const BloomShape *shape)
{
	int			i;

	state->shape = *shape;
	state->tuplesPerPage = BloomTuplesPerPage(BloomShapeSlotBytes(shape));
	for (i = 0; i < shape->nColumns; i++)
	{
		fmgr_info_copy(&state->hashFn[i],
					   index_getprocinfo(index, i + 1, BLOOMIDX_HASH_PROC),
					   CurrentMemoryContext);
		state->collations[i] = index->rd_indcollation[i];
		state->hashKind[i] = BloomHashKindOf(state->hashFn[i].fn_oid);
	}
	state->hasSets = BloomInitOptionalProcs(index, shape->nColumns,
											BLOOMIDX_EXTRACT_PROC,
											state->extractFn);
	if (state->hasSets)
		BloomShapeFillQueryElements(index, &state->shape);
	BloomInitOptionalProcs(index, shape->nColumns, BLOOMIDX_EXTRACT_QUERY_PROC,
						   state->extractQueryFn);
}

/*
 * The state of an index, read from its metapage once and cached in the
 * relcache entry (rd_amcache) until the entry is rebuilt.
 */
BloomState
BloomGetState(Relation index)
{
	if (index->rd_amcache == NULL)
	{
		Buffer		buffer;
		Page		page;
		BloomShape	shape;
		BloomState	state;
		MemoryContext oldcxt;

		buffer = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		BloomCheckMetaPage(index, page);
		BloomCheckMeta(index, page, NULL, NULL);
		BloomMetaGetShape(BloomPageGetMeta(page), &shape);
		UnlockReleaseBuffer(buffer);

		if (shape.nColumns != RelationGetNumberOfAttributes(index))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("metapage of index \"%s\" describes %d columns, but the index has %d",
							RelationGetRelationName(index), shape.nColumns,
							RelationGetNumberOfAttributes(index))));

		oldcxt = MemoryContextSwitchTo(index->rd_indexcxt);
		state = palloc0(sizeof(BloomStateData));
		BloomInitState(state, index, &shape);
		MemoryContextSwitchTo(oldcxt);
		index->rd_amcache = state;
	}
	return (BloomState) index->rd_amcache;
}

/*
 * (Re)allocate the recent buffers of an index for the length it had last
 * (knownBlocks): a power of two from 64 to BLOOMIDX_RECENT_BUFFERS, all
 * unknown.
 */
static void
BloomSizeRecentBuffers(Relation index, BloomState state)
{
	uint32		n = 64;

	while (n < BLOOMIDX_RECENT_BUFFERS && n < state->knownBlocks)
		n *= 2;
	if (state->recent != NULL)
		pfree(state->recent);
	state->recent = MemoryContextAlloc(index->rd_indexcxt,
									   n * sizeof(BloomRecentBuffer));
	memset(state->recent, 0xFF, n * sizeof(BloomRecentBuffer));
	state->recentMask = n - 1;
}

/*
 * Read block blkno of the index and pin it, as ReadBufferExtended does, but
 * trying first the shared buffer where this backend last found the block
 * (ReadRecentBuffer, which checks that the buffer still holds it).  A
 * sliced scan reads a few thousand pages, each once, and looking each up in
 * the shared buffer table was a fifth of a two-column query's time on a
 * 10M-row table: a miss in a large hash table, where the buffer header
 * the recent buffer names is one cache line.  The buffers are remembered in
 * the relcache entry's state, BLOOMIDX_RECENT_BUFFERS blocks at most, by
 * block number modulo a power of two; not for temporary indexes, whose
 * buffers are local.
 */
Buffer
BloomReadBufferRecent(Relation index, BlockNumber blkno, BufferAccessStrategy bas)
{
	BloomState	state = (BloomState) index->rd_amcache;
	BloomRecentBuffer *entry = NULL;
	Buffer		buffer;

	if (state != NULL && blkno != P_NEW && !RelationUsesLocalBuffers(index))
	{
		if (state->recent == NULL ||
			(state->recentMask + 1 < BLOOMIDX_RECENT_BUFFERS &&
			 state->knownBlocks > state->recentMask + 1))
			BloomSizeRecentBuffers(index, state);
		entry = &state->recent[blkno & state->recentMask];
		if (entry->blkno == blkno &&
			ReadRecentBuffer(BloomRelationLocator(index), MAIN_FORKNUM, blkno, entry->buffer))
		{
			/* Counted as ReadBufferExtended counts a hit */
			pgstat_count_buffer_read(index);
			pgstat_count_buffer_hit(index);
			return entry->buffer;
		}
	}
	buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, bas);
	if (entry != NULL)
	{
		entry->blkno = blkno;
		entry->buffer = buffer;
	}
	return buffer;
}

/*
 * Hash of column i of a row: its value's, or the stand-in for NULL.
 */
static inline uint64
BloomColumnHash(BloomState state, int i, Datum *values, bool *isnull)
{
	Datum		value = values[i];

	if (isnull[i])
		return BLOOM_NULL_HASH;

	/*
	 * The integer hashes as hashint2extended, hashint4extended,
	 * hashint8extended and hashoidextended compute them (the same hash,
	 * without the fmgr call: a build hashes every value of every row)
	 */
	switch ((BloomHashKind) state->hashKind[i])
	{
		case BLOOM_HASH_INT2:
			return hash_bytes_uint32_extended((uint32) (int32) DatumGetInt16(value),
											  BLOOM_HASH_SEED);
		case BLOOM_HASH_INT4:
			return hash_bytes_uint32_extended((uint32) DatumGetInt32(value),
											  BLOOM_HASH_SEED);
		case BLOOM_HASH_INT8:
			{
				int64		v = DatumGetInt64(value);
				uint32		lohalf = (uint32) v;
				uint32		hihalf = (uint32) (v >> 32);

				lohalf ^= v >= 0 ? hihalf : ~hihalf;
				return hash_bytes_uint32_extended(lohalf, BLOOM_HASH_SEED);
			}
		case BLOOM_HASH_OID:
			return hash_bytes_uint32_extended((uint32) DatumGetObjectId(value),
											  BLOOM_HASH_SEED);
		case BLOOM_HASH_FMGR:
			break;
	}
	return BloomHashDatum(&state->hashFn[i], state->collations[i], value);
}

/*
 * Form the signature of one row as 64-bit words (bit i of word w is
 * signature bit 64 * w + i): every element of every column sets its k
 * bits (elements.c); a NULL is one element, and so is any value of an
 * equality operator class.  Returns the number of bits set.
 *
 * With equality operator classes only, each column is hashed here
 * directly, its bits gathered in a register when the signature is one word
 * long (the default up to six columns).
 */
int
BloomFormSignatureWords(BloomState state, Datum *values, bool *isnull,
						uint64 *words)
{
	return BloomFormSignatureWordsMixed(state, values, isnull, words, NULL);
}

/*
 * BloomFormSignatureWords, giving also in mixed (if not NULL) each column's
 * salted mix of its value's hash, BloomColumnMix(hash, column), which
 * starts the column's probe sequence (0 for a column of sets): a caller
 * that needs the column's hash again (a stripe summary's key) takes it
 * from there rather than calling the type's hash function a second time.
 */
int
BloomFormSignatureWordsMixed(BloomState state, Datum *values, bool *isnull,
							 uint64 *words, uint64 *mixed)
{
	const BloomShape *shape = &state->shape;
	int			nbits = 0;
	int			i;

	if (state->hasSets)
	{
		memset(words, 0, sizeof(uint64) * shape->sigWords);
		for (i = 0; i < shape->nColumns; i++)
		{
			BloomValueMask(state, i, values[i], isnull[i], words);
			if (mixed != NULL)
				mixed[i] = (shape->setColumns & (1U << i)) != 0 ? 0 :
					BloomColumnMix(BloomColumnHash(state, i, values, isnull), i);
		}
	}
	else if (shape->sigWords == 1)
	{
		uint64		acc = 0;

		for (i = 0; i < shape->nColumns; i++)
		{
			uint64		x = BloomColumnMix(BloomColumnHash(state, i, values, isnull), i);
			BloomProbe	probe;
			int			k;

			if (mixed != NULL)
				mixed[i] = x;
			BloomProbeInitMixed(&probe, x, shape->sigBits);
			for (k = shape->bitsPerColumn[i]; k > 0; k--)
				acc |= UINT64CONST(1) << BloomProbeNext(&probe);
		}
		words[0] = acc;
	}
	else
	{
		memset(words, 0, sizeof(uint64) * shape->sigWords);
		for (i = 0; i < shape->nColumns; i++)
		{
			uint64		x = BloomColumnMix(BloomColumnHash(state, i, values, isnull), i);
			BloomProbe	probe;
			int			k;

			if (mixed != NULL)
				mixed[i] = x;
			BloomProbeInitMixed(&probe, x, shape->sigBits);
			for (k = shape->bitsPerColumn[i]; k > 0; k--)
			{
				uint64		pos = BloomProbeNext(&probe);

				words[pos >> 6] |= UINT64CONST(1) << (pos & 63);
			}
		}
	}

	for (i = 0; i < shape->sigWords; i++)
		nbits += pg_popcount64(words[i]);
	return nbits;
}

/*
 * Form the signature of one row into sig (sigBytes bytes).  Returns the
 * number of bits set.
 */
int
BloomFormSignature(BloomState state, Datum *values, bool *isnull, uint8 *sig)
{
	return BloomFormSignatureMixed(state, values, isnull, sig, NULL);
}

/*
 * BloomFormSignature, giving also in mixed (if not NULL) each column's
 * salted mix, as BloomFormSignatureWordsMixed does.
 */
int
BloomFormSignatureMixed(BloomState state, Datum *values, bool *isnull,
						uint8 *sig, uint64 *mixed)
{
	uint64		words[BLOOMIDX_MAX_LENGTH / 64];
	int			nbits = BloomFormSignatureWordsMixed(state, values, isnull,
													 words, mixed);

	BloomStoreWords(sig, words, state->shape.sigBytes);
	return nbits;
}

/*
 * Open the relation that an OID given to one of the extension's SQL
 * functions names, under lockmode, complaining cleanly if there is none
 * (relation_open fails with an internal error), and with mustBeIndex if it
 * is no index, as index_open does.
 */
Relation
BloomOpenIndexRelation(Oid relid, LOCKMODE lockmode, bool mustBeIndex)
{
	Relation	rel = try_relation_open(relid, lockmode);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (mustBeIndex && rel->rd_rel->relkind != RELKIND_INDEX &&
		rel->rd_rel->relkind != RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index",
						RelationGetRelationName(rel))));
	return rel;
}

/*
 * Complain unless a relation given to one of the extension's SQL functions
 * is a bloomidx index with storage that this session can read.
 */
void
BloomCheckIndexRelation(Relation rel)
{
	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a partitioned index",
						RelationGetRelationName(rel)),
				 errhint("Use the index of each partition.")));
	if (rel->rd_rel->relkind != RELKIND_INDEX ||
		rel->rd_indam->amvalidate != bloomidx_validate)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a bloomidx index",
						RelationGetRelationName(rel))));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
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
 * The routines of the layout of an index whose state the caller has, for
 * the shells: the first time for a state (a relcache entry), the metapage's
 * fields of that layout are checked, before the layout reads anything by
 * them.  The state itself was read with the checks every metapage shares
 * (BloomGetState knows no layout).
 */
const BloomLayoutRoutine *
BloomGetStateLayout(Relation index, BloomState state)
{
	const BloomLayoutRoutine *layout = BloomGetLayout(&state->shape);

	if (!state->layoutChecked)
	{
		Buffer		buffer = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		BloomCheckMeta(index, BufferGetPage(buffer), layout->metaproblem,
					   layout->metablocksproblem);
		UnlockReleaseBuffer(buffer);
		state->layoutChecked = true;
	}
	return layout;
}
