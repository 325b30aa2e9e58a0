/*-------------------------------------------------------------------------
 *
 * elements.c
 *	  The one entry through which an operator class sets a value's bits:
 *	  a value, or a query's key, is a set of elements, each of which sets
 *	  a column's k bits.
 *
 * An equality operator class (support function 1, the type's extended
 * hash) makes every value one element, its hash.  An operator class whose
 * values are sets (words, trigrams, array elements, jsonb paths) gives two
 * more support functions, in the manner of GIN's extractValue and
 * extractQuery:
 *
 *	2  void extract(opcintype value, internal sink)
 *	   the elements of a value stored in the index;
 *	3  void extractquery(keytype key, int2 strategy, internal sink)
 *	   the elements a key of a query with the given strategy tests, and
 *	   whether a matching row has all of them or any of them.
 *
 * Both hand each element's 64-bit hash to BloomAddElement(sink, hash); a
 * query's extraction first sets sink->mode.  The signature code (state.c),
 * the scan (am_scan.c) and the cost model (cost.c) call the functions
 * below and never a support function themselves, so a new operator class
 * is one more pair of C functions and its SQL definition.
 *
 * A query key whose elements must all be present sets their bits in one
 * mask, which every match contains; zero elements leave every row a
 * candidate.  A key of which any element may be present gives one mask per
 * element, of which a match contains at least one; zero elements match no
 * row.  An "= ANY (array)" key is one alternative per array element,
 * each the elements of that element.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/opclass/elements.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/reloptions.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"

/* A sink that sets each element's bits in one mask */
typedef struct BloomMaskSink
{
	BloomElementSink base;
	uint64	   *mask;
	int			sigBits;
	int			col;
	int			k;
} BloomMaskSink;

static void
BloomMaskSinkAdd(BloomElementSink *sink, uint64 hash)
{
	BloomMaskSink *ms = (BloomMaskSink *) sink;

	BloomSetMaskBits(ms->mask, ms->sigBits, hash, ms->col, ms->k);
}

static void
BloomInitMaskSink(BloomMaskSink *ms, const BloomShape *shape, int col,
				  uint64 *mask)
{
	ms->base.add = BloomMaskSinkAdd;
	ms->base.mode = BLOOM_ELEMENTS_ALL;
	ms->base.nelements = 0;
	ms->base.legacyFold = shape->legacyFold;
	ms->mask = mask;
	ms->sigBits = shape->sigBits;
	ms->col = col;
	ms->k = shape->bitsPerColumn[col];
}

/*
 * Declare the options of an operator class of sets (its support function
 * 4 calls this with its defaults): elements, the elements a value has, for
 * sizing, and query_elements, the elements a typical query tests.
 */
void
BloomSetOptionsInit(local_relopts *relopts, int elements, int queryElements)
{
	init_local_reloptions(relopts, sizeof(BloomSetOptions));
	add_local_int_reloption(relopts, "elements",
							"Elements a value has, for sizing the signature",
							elements, 1, BLOOMIDX_MAX_SET_ELEMENTS,
							offsetof(BloomSetOptions, elements));
	add_local_int_reloption(relopts, "query_elements",
							"Elements a typical query tests: each element sets 1/query_elements of a column's bits",
							queryElements, 1, BLOOMIDX_MAX_QUERY_ELEMENTS,
							offsetof(BloomSetOptions, queryElements));
}

/*
 * Does column col of an index give its operator class the option named?
 */
static bool
BloomColumnGivesOption(Relation index, int col, const char *name)
{
	Datum		raw = get_attoptions(RelationGetRelid(index), col + 1);
	ListCell   *lc;

	if (raw == (Datum) 0)
		return false;
	foreach(lc, untransformRelOptions(raw))
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, name) == 0)
			return true;
	}
	return false;
}

/*
 * Look up optional support function procnum of every column into fns[]
 * (fn_oid InvalidOid where a column's operator class has none).
 * Returns true if any column has one.
 */
bool
BloomInitOptionalProcs(Relation index, int nColumns, uint16 procnum,
					   FmgrInfo *fns)
{
	bool		any = false;
	int			i;

	for (i = 0; i < nColumns; i++)
	{
		fns[i].fn_oid = InvalidOid;
		if (procnum > index->rd_indam->amsupport ||
			!OidIsValid(index_getprocid(index, i + 1, procnum)))
			continue;
		fmgr_info_copy(&fns[i], index_getprocinfo(index, i + 1, procnum),
					   CurrentMemoryContext);
		any = true;
	}
	return any;
}

/*
 * Give sink the elements of a value of column col as the index stores it:
 * a NULL is one element, the stand-in hash; a value of an operator class
 * with an extract function, what it extracts; any other value one element,
 * its hash.
 */
void
BloomValueElements(BloomState state, int col, Datum value, bool isnull,
				   BloomElementSink *sink)
{
	sink->legacyFold = state->shape.legacyFold;
	if (isnull)
		BloomAddElement(sink, BLOOM_NULL_HASH);
	else if (OidIsValid(state->extractFn[col].fn_oid))
		FunctionCall2Coll(&state->extractFn[col], state->collations[col],
						  value, PointerGetDatum(sink));
	else
		BloomAddElement(sink, BloomHashDatum(&state->hashFn[col],
											 state->collations[col], value));
}

/*
 * Set the bits of a stored value of column col in mask (sigWords words,
 * not cleared first).  Returns the number of elements.
 */
int64
BloomValueMask(BloomState state, int col, Datum value, bool isnull,
			   uint64 *mask)
{
	BloomMaskSink ms;

	BloomInitMaskSink(&ms, &state->shape, col, mask);
	BloomValueElements(state, col, value, isnull, &ms.base);
	return ms.base.nelements;
}

/*
 * Give sink the elements a query's key tests: value compared with column
 * col by an operator of the given strategy, its right-hand type keytype.
 * An operator class with an extract-query function says what they are and
 * how they combine (sink->mode); otherwise the key is an equality, one
 * element hashed by the family's function for keytype (hashFn, looked up
 * by the caller with BloomKeyHashFunction).
 */
void
BloomKeyElements(BloomState state, int col, FmgrInfo *hashFn, int strategy,
				 Datum value, BloomElementSink *sink)
{
	sink->mode = BLOOM_ELEMENTS_ALL;
	sink->legacyFold = state->shape.legacyFold;
	if (OidIsValid(state->extractQueryFn[col].fn_oid))
		FunctionCall3Coll(&state->extractQueryFn[col], state->collations[col],
						  value, Int16GetDatum((int16) strategy),
						  PointerGetDatum(sink));
	else
	{
		Assert(strategy == BLOOMIDX_EQUAL_STRATEGY);
		BloomAddElement(sink, BloomHashDatum(hashFn, state->collations[col],
											 value));
	}
}

/*
 * Set the bits of the elements a query's key tests in mask (sigWords
 * words, not cleared first), for the cost model; *mode says whether a
 * match has all of them or any.  Returns the number of elements.
 */
int64
BloomKeyMask(BloomState state, int col, FmgrInfo *hashFn, int strategy,
			 Datum value, uint64 *mask, BloomElementMode *mode)
{
	BloomMaskSink ms;

	BloomInitMaskSink(&ms, &state->shape, col, mask);
	BloomKeyElements(state, col, hashFn, strategy, value, &ms.base);
	*mode = ms.base.mode;
	return ms.base.nelements;
}

/*
 * A sink that gathers a query key's masks: all elements in the current
 * mask, or each element in a mask of its own.
 */
typedef struct BloomQuerySink
{
	BloomElementSink base;
	BloomMaskList *list;
	const BloomShape *shape;
	int			col;
	bool		open;			/* the last mask takes more elements */
} BloomQuerySink;

static void
BloomQuerySinkAdd(BloomElementSink *sink, uint64 hash)
{
	BloomQuerySink *qs = (BloomQuerySink *) sink;
	BloomMaskList *list = qs->list;

	if (!qs->open || sink->mode == BLOOM_ELEMENTS_ANY)
	{
		BloomMaskListReserve(list, list->nmasks + 1);
		list->nmasks++;
		qs->open = sink->mode == BLOOM_ELEMENTS_ALL;
	}
	BloomSetMaskBits(list->masks + (Size) (list->nmasks - 1) * list->sigWords,
					 qs->shape->sigBits, hash, qs->col,
					 qs->shape->bitsPerColumn[qs->col]);
}

/*
 * An empty list of masks of the index's signatures, for a query key.
 */
void
BloomInitMaskList(BloomMaskList *list, Relation index, const BloomShape *shape)
{
	list->index = index;
	list->priorBytes = 0;
	list->sigWords = shape->sigWords;
	list->nmasks = 0;
	list->maxmasks = 0;
	list->masks = NULL;
}

/*
 * Make room for n masks in the list, all of them within work_mem.
 */
void
BloomMaskListReserve(BloomMaskList *list, int n)
{
	Size		maskBytes = sizeof(uint64) * list->sigWords;

	if (n <= list->maxmasks)
		return;
	if (list->priorBytes + maskBytes * (Size) n > (Size) work_mem * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("scan keys of index \"%s\" need %zu kB, more than work_mem (%d kB)",
						RelationGetRelationName(list->index),
						(list->priorBytes + maskBytes * (Size) n + 1023) / 1024,
						work_mem),
				 errdetail_plural("Each of the %d value searched for takes %d bytes.",
								  "Each of the %d values searched for takes %d bytes.",
								  n, n, (int) maskBytes),
				 errhint("Raise work_mem, or use fewer elements in the array.")));
	if (list->masks == NULL)
		list->masks = palloc0(maskBytes * (Size) n);
	else
	{
		n = Max(n, Min(list->maxmasks * 2,
					   (int) (((Size) work_mem * 1024 - list->priorBytes) /
							  maskBytes)));
		list->masks = repalloc(list->masks, maskBytes * (Size) n);
		memset(list->masks + (Size) list->maxmasks * list->sigWords, 0,
			   maskBytes * (Size) (n - list->maxmasks));
	}
	list->maxmasks = n;
}

/*
 * The masks of a query key on column col, into list (empty on entry):
 * values[0 .. nvalues - 1] are the key's values, one for a plain key, the
 * array's elements (NULL ones left out) for "= ANY (array)", each compared
 * by an operator of the given strategy.  A matching row contains at least
 * one of the masks.  Returns false if the key leaves every row a
 * candidate (a value with no element to test); with true and no mask, no
 * row matches.
 */
bool
BloomKeyAlternatives(BloomState state, int col, FmgrInfo *hashFn,
					 int strategy, const Datum *values, int nvalues,
					 BloomMaskList *list)
{
	BloomQuerySink qs;
	int			i;

	qs.base.add = BloomQuerySinkAdd;
	qs.list = list;
	qs.shape = &state->shape;
	qs.col = col;
	for (i = 0; i < nvalues; i++)
	{
		CHECK_FOR_INTERRUPTS();
		qs.base.nelements = 0;
		qs.open = false;
		BloomKeyElements(state, col, hashFn, strategy, values[i], &qs.base);
		if (qs.base.nelements == 0 && qs.base.mode == BLOOM_ELEMENTS_ALL)
			return false;
	}
	return true;
}

/*
 * Read how each column of an index counts for its shape from its operator
 * classes' options (see BloomColumnElements); a column of sets that
 * leaves elements out gets the operator class's default, which the build
 * replaces by a measured one (givenColumns says which gave it).
 */
void
BloomGetColumnElements(Relation index, int n, BloomColumnElements *ce)
{
	bytea	  **attoptions = RelationGetIndexAttOptions(index, false);
	int			i;

	ce->setColumns = 0;
	ce->givenColumns = 0;
	ce->measuredColumns = 0;
	for (i = 0; i < n; i++)
	{
		const BloomSetOptions *so = (const BloomSetOptions *) attoptions[i];
		bool		isSet = OidIsValid(index_getprocid(index, i + 1,
													   BLOOMIDX_EXTRACT_PROC));

		ce->elements[i] = isSet && so != NULL ? so->elements : 1;
		ce->queryElements[i] = isSet && so != NULL ? so->queryElements : 1;
		if (!isSet)
			continue;
		ce->setColumns |= 1U << i;
		if (BloomColumnGivesOption(index, i, "elements"))
			ce->givenColumns |= 1U << i;
	}
}

/*
 * The elements of an index's columns as built: its options', and where
 * the build measured a column's elements (built is the shape in its
 * metapage), the measured ones, so that the options give the shape again.
 */
void
BloomGetBuiltColumnElements(Relation index, const BloomShape *built,
							BloomColumnElements *ce)
{
	int			i;

	BloomGetColumnElements(index, built->nColumns, ce);
	for (i = 0; i < built->nColumns; i++)
		if ((built->measuredColumns & ce->setColumns & ~ce->givenColumns &
			 (1U << i)) && built->elements[i] > 0)
		{
			ce->elements[i] = built->elements[i];
			ce->measuredColumns |= 1U << i;
		}
}

/*
 * Fill in the query elements of the columns of sets of an index built
 * before its metapage recorded them, from its operator classes' options
 * (as every index did then), and the bits a typical query tests.
 */
void
BloomShapeFillQueryElements(Relation index, BloomShape *shape)
{
	BloomColumnElements ce;
	bool		missing = false;
	int			i;

	for (i = 0; i < shape->nColumns; i++)
		if ((shape->setColumns & (1U << i)) && shape->queryElements[i] == 0)
			missing = true;
	if (missing)
	{
		BloomGetColumnElements(index, shape->nColumns, &ce);
		for (i = 0; i < shape->nColumns; i++)
			if ((shape->setColumns & (1U << i)) && shape->queryElements[i] == 0)
				shape->queryElements[i] = (int) ce.queryElements[i];
	}
	BloomShapeSetQueryBits(shape);
}

/* A sink that only counts the elements */
static void
BloomCountSinkAdd(BloomElementSink *sink, uint64 hash)
{
}

/*
 * The number of elements that a column's extract function gives a value
 * (not NULL), for measuring a column of sets (BloomMeasureElements).
 */
int64
BloomCountElements(FmgrInfo *extractFn, Oid collation, Datum value)
{
	BloomElementSink sink;

	sink.add = BloomCountSinkAdd;
	sink.mode = BLOOM_ELEMENTS_ALL;
	sink.nelements = 0;
	sink.legacyFold = false;
	FunctionCall2Coll(extractFn, collation, value, PointerGetDatum(&sink));
	return sink.nelements;
}
