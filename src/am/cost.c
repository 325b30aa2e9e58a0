/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  Planner cost model of a bloomidx scan, aware of false positives.
 *
 * A bloomidx scan reads every index page in order, tests every signature
 * and hands the heap TIDs of the candidates to a bitmap heap scan, which
 * rechecks them.  The candidates are the rows that match plus the false
 * positives, and the selectivity given to the planner counts both, so that
 * the bitmap heap scan above is charged for every row it will fetch and
 * throw away:
 *
 *		selectivity = s + p * fp
 *
 * where s is the selectivity of the clauses the index tests (the planner's
 * usual machinery), p the fraction of the table's rows in the index (1
 * unless the index is partial), and fp the fraction of the index's rows
 * that pass the signature test without matching, which the false-positive
 * model of fpmodel.c works out from the bits the query tests and the
 * frequent values of the index's columns.  This file is the planner's side:
 * it hashes the query's constants, reads the columns' statistics and the
 * index's fill, and prices the pages and signatures a scan reads.
 *
 * The scan costs every index page at seq_page_cost (the index is read in
 * order with a bulk-read strategy), each signature test a fraction of
 * cpu_operator_cost per 64-bit word tested (a load, an AND and a compare),
 * and each candidate cpu_index_tuple_cost for its entry in the bitmap plus
 * BLOOM_FETCH_TUPLE_COST for its fetch by TID, and each heap page the
 * candidates lie on BLOOM_FETCH_PAGE_COST: the bitmap heap scan prices a
 * fetched tuple like a tuple of a sequential scan, but with the data in
 * memory a tuple alone on its page takes two to three times as long
 * (measured at 1M rows: 100 to 160 ns against 45 to 55 ns), and false
 * positives make bloomidx scans fetch many.  Most of that is the page's
 * (pin, buffer lookup, line pointers out of the CPU cache): when the
 * candidates fill every page, the bitmap heap scan is about as fast as a
 * sequential scan, which it overtakes between 40% and 50% of the rows.
 *
 * When the candidates lie on more heap pages than the bitmap holds within
 * work_mem, the bitmap turns pages lossy and the heap scan rechecks every
 * tuple of a lossy page, which costs more than a sequential scan's tuple
 * (BLOOM_LOSSY_TUPLE_COST beyond it): see BloomLossyPages.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/am/cost.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/index.h"
#include "catalog/pg_index.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/tidbitmap.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "bloomidx.h"
#include "fpmodel.h"
#include "layout.h"
#include "page.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloomidx_estimate);

/*
 * Testing one 64-bit word of a signature is a load, an AND and a compare,
 * much cheaper than calling an operator: measured at 1 to 1.5 ns, about a
 * tenth of the time a sequential scan spends per cpu_operator_cost.
 */
#define BLOOM_WORD_TEST_COST	(0.1 * cpu_operator_cost)

/*
 * What fetching by TID costs beyond what the bitmap heap scan charges for
 * a tuple (cpu_tuple_cost and its quals, like a sequential tuple): with the
 * data in memory a tuple alone on its page takes 2 to 3 times a sequential
 * tuple (cpu_tuple_cost + quals + a share of its page, about 0.019 at the
 * default settings), measured on 1M to 10M rows; two thirds of the extra
 * is the page's, a third the tuple's.  The split puts the point where the
 * planner prefers a sequential scan within 10% of the faster plan on every
 * = ANY query of the benchmark's plan-choice grid with 30% to 90% of the
 * rows as candidates (1M rows; with the extra all per tuple the index plan
 * lost queries it won by 20% at 37%, all per page it won queries it lost by
 * 15% to 30% at 53% to 62%).
 */
#define BLOOM_FETCH_TUPLE_COST	(cpu_tuple_cost)
#define BLOOM_FETCH_PAGE_COST	(2 * cpu_tuple_cost)

/*
 * What rechecking a tuple of a lossy heap page costs beyond what the bitmap
 * heap scan charges for it (cpu_tuple_cost and its quals, like a
 * sequential tuple): the page is not read in page-at-a-time mode, so every
 * tuple has its visibility checked and is stored in a slot and rechecked
 * one by one.  Measured with the data in memory at 10M rows: 58 ns a tuple
 * against a sequential scan's 45 (97 tuples a page) and 48 against 32 (157
 * a page), which is 0.6 to 0.9 cpu_tuple_cost at the default settings.
 */
#define BLOOM_LOSSY_TUPLE_COST	(0.7 * cpu_tuple_cost)

/* Elements of a constant array hashed; longer arrays are sampled evenly */
#define BLOOM_COST_MAX_ELEMENTS	256

/*
 * Fraction of signature bits set: measured (metapage statistics) when the
 * index has rows, else what a full index of this shape is expected to have.
 */
double
BloomIndexFill(Relation index, const BloomShape *shape)
{
	Buffer		buffer;
	BloomMetaPage meta;
	uint64		tuples;
	uint64		bitsSet;
	double		totalBits = 0;
	int			i;

	buffer = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	meta = BloomPageGetMeta(BufferGetPage(buffer));
	tuples = meta->statTuples;
	bitsSet = meta->statBitsSet;
	UnlockReleaseBuffer(buffer);

	if (tuples > 0)
		return BloomShapeEffectiveFill(shape, (double) bitsSet /
									   ((double) tuples * shape->sigBits));

	for (i = 0; i < shape->nColumns; i++)
		totalBits += shape->bitsPerColumn[i];
	return BloomExpectedFill(shape->sigBits, 1, totalBits);
}

/*
 * The fill at which a typical row fails a query as often as the index's
 * rows do, from the fill measured over them: more than it where the rows'
 * sets spread in size (an index whose elements were measured records how
 * much more, BloomShape.loadFactor, the load being -log(1 - fill)).
 */
double
BloomShapeEffectiveFill(const BloomShape *shape, double fill)
{
	if (shape->loadFactor <= 1 || fill <= 0 || fill >= 1)
		return fill;
	return -expm1(shape->loadFactor * log1p(-fill));
}

/*
 * The part of an index's shape the false-positive model needs.
 */
static BloomModelShape
BloomModelShapeOf(const BloomShape *shape)
{
	BloomModelShape result;

	result.sigBits = shape->sigBits;
	result.sigWords = shape->sigWords;
	result.nColumns = shape->nColumns;
	result.bitsPerColumn = shape->queryBits;
	return result;
}

/*
 * Hash function for the values of a clause with operator opno on column
 * col: the column's own, or the family's for the operator's right-hand
 * type; NULL if the family has none.
 */
static FmgrInfo *
BloomCostHashFunction(Relation index, BloomState state, int col, Oid opno,
					  FmgrInfo *flinfo, int *strategy)
{
	Oid			lefttype;
	Oid			righttype;

	get_op_opfamily_properties(opno, index->rd_opfamily[col], false,
							   strategy, &lefttype, &righttype);
	return BloomKeyHashFunction(index, state, col, righttype, flinfo, true);
}

/*
 * Describe a clause whose key is a set of elements (an operator of a set
 * operator class): the masks of its elements, one if a match has all of
 * them, one per element if it has any (tested as the elements of an
 * "= ANY" are).  Returns false if the key tests no bit.
 */
static bool
BloomCostSetClause(Relation index, BloomState state, int col,
				   FmgrInfo *hashFn, int strategy, Datum value,
				   BloomCostQuery *query, BloomCostClause *clause)
{
	BloomMaskList list;

	BloomInitMaskList(&list, index, &state->shape);
	if (!BloomKeyAlternatives(state, col, hashFn, strategy, &value, 1, &list))
		return false;
	if (list.nmasks == 0)
		query->noMatch = true;
	clause->masks = list.masks;
	clause->nknown = list.nmasks;
	clause->isArray = list.nmasks > 1;
	clause->knownWeight = 1;
	query->valuesHashed += Max(list.nmasks, 1);
	return true;
}

/*
 * The mask of the bits an equality with one value tests in column col.
 */
static void
BloomCostValueMask(BloomState state, int col, FmgrInfo *hashFn, Datum value,
				   uint64 *mask)
{
	BloomElementMode mode;

	memset(mask, 0, sizeof(uint64) * state->shape.sigWords);
	BloomKeyMask(state, col, hashFn, BLOOMIDX_EQUAL_STRATEGY, value, mask,
				 &mode);
	Assert(mode == BLOOM_ELEMENTS_ALL);
}

/*
 * Where the statistics of index column col live: the table's column, or
 * for an expression the index's own (ANALYZE keeps them there).
 */
static void
BloomColumnStatsKey(Relation index, int col, Oid *relid, AttrNumber *attnum)
{
	*relid = index->rd_index->indrelid;
	*attnum = index->rd_index->indkey.values[col];
	if (*attnum == 0)
	{
		*relid = RelationGetRelid(index);
		*attnum = col + 1;
	}
}

/*
 * The frequent values of index column col, and NULL if frequent, from the
 * column's statistics (none without statistics).
 */
static void
BloomGetFrequentValues(Relation index, BloomState state, int col,
					   BloomFrequentValues *fv)
{
	const BloomShape *shape = &state->shape;
	int			nwords = shape->sigWords;
	Oid			relid;
	AttrNumber	attnum;
	HeapTuple	statsTuple;
	AttStatsSlot sslot;
	int			j;

	memset(fv, 0, sizeof(*fv));
	BloomColumnStatsKey(index, col, &relid, &attnum);
	statsTuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
								 Int16GetDatum(attnum), BoolGetDatum(false));
	if (!HeapTupleIsValid(statsTuple))
		return;

	fv->masks = palloc0(sizeof(uint64) * nwords * BLOOM_MODEL_MAX_FREQUENT);
	fv->freqs = palloc0(sizeof(double) * BLOOM_MODEL_MAX_FREQUENT);

	if (((Form_pg_statistic) GETSTRUCT(statsTuple))->stanullfrac >= BLOOM_MODEL_FREQUENT_MIN)
	{
		BloomValueMask(state, col, (Datum) 0, true, fv->masks);
		fv->freqs[0] = ((Form_pg_statistic) GETSTRUCT(statsTuple))->stanullfrac;
		fv->nvalues = 1;
	}

	/* Most common values come most common first */
	if (get_attstatsslot(&sslot, statsTuple, STATISTIC_KIND_MCV, InvalidOid,
						 ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
	{
		for (j = 0; j < sslot.nvalues && j < sslot.nnumbers &&
			 fv->nvalues < BLOOM_MODEL_MAX_FREQUENT; j++)
		{
			if (sslot.numbers[j] < BLOOM_MODEL_FREQUENT_MIN)
				break;
			BloomValueMask(state, col, sslot.values[j], false,
						   fv->masks + (Size) fv->nvalues * nwords);
			fv->freqs[fv->nvalues++] = sslot.numbers[j];
		}
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(statsTuple);
}

/*
 * The correlation of index column col's values with the physical order of
 * the table's rows, from the column's statistics; 0 without them.  A
 * layout that keeps rows in table order (the sliced layout's stripes) can
 * tell from it how many of its parts hold a value.
 */
static double
BloomColumnCorrelation(Relation index, int col)
{
	Oid			relid;
	AttrNumber	attnum;
	HeapTuple	statsTuple;
	AttStatsSlot sslot;
	double		result = 0;

	BloomColumnStatsKey(index, col, &relid, &attnum);
	statsTuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
								 Int16GetDatum(attnum), BoolGetDatum(false));
	if (!HeapTupleIsValid(statsTuple))
		return 0;
	if (get_attstatsslot(&sslot, statsTuple, STATISTIC_KIND_CORRELATION,
						 InvalidOid, ATTSTATSSLOT_NUMBERS))
	{
		if (sslot.nnumbers == 1)
			result = sslot.numbers[0];
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(statsTuple);
	return result;
}

/*
 * Describe one index qual for the model: its value(s), hashed when they are
 * known at plan time.  Returns false for a qual the index does not test
 * (IS NOT NULL).
 */
static bool
BloomCostDescribeQual(PlannerInfo *root, Relation index, BloomState state,
					  int col, Expr *qual, BloomCostQuery *query,
					  BloomCostClause *clause)
{
	const BloomShape *shape = &state->shape;
	int			nwords = shape->sigWords;
	FmgrInfo	flinfo;
	FmgrInfo   *hashFn;
	Node	   *value;

	memset(clause, 0, sizeof(*clause));
	clause->col = col;

	if (IsA(qual, NullTest))
	{
		if (((NullTest *) qual)->nulltesttype == IS_NOT_NULL)
			return false;
		clause->nknown = 1;
		clause->masks = palloc0(sizeof(uint64) * nwords);
		BloomValueMask(state, col, (Datum) 0, true, clause->masks);
		return true;
	}

	if (IsA(qual, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) qual;

		int			strategy;

		value = estimate_expression_value(root, (Node *) lsecond(op->args));
		hashFn = BloomCostHashFunction(index, state, col, op->opno, &flinfo,
									   &strategy);
		if (IsA(value, Const) && ((Const *) value)->constisnull)
			query->noMatch = true;	/* "col = NULL" matches nothing */
		else if (IsA(value, Const) && hashFn != NULL &&
				 (strategy != BLOOMIDX_EQUAL_STRATEGY ||
				  OidIsValid(state->extractQueryFn[col].fn_oid)))
			return BloomCostSetClause(index, state, col, hashFn, strategy,
									  ((Const *) value)->constvalue, query,
									  clause);
		else if (IsA(value, Const) && hashFn != NULL)
		{
			clause->nknown = 1;
			clause->masks = palloc(sizeof(uint64) * nwords);
			BloomCostValueMask(state, col, hashFn, ((Const *) value)->constvalue,
							   clause->masks);
		}
		else
			clause->nunknown = 1;
		query->valuesHashed += 1;
		return true;
	}

	if (IsA(qual, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) qual;
		Node	   *arrayexpr = (Node *) lsecond(saop->args);

		int			strategy;

		clause->isArray = true;
		value = estimate_expression_value(root, arrayexpr);
		hashFn = BloomCostHashFunction(index, state, col, saop->opno, &flinfo,
									   &strategy);
		if (IsA(value, Const) && ((Const *) value)->constisnull)
			query->noMatch = true;
		else if (IsA(value, Const) && hashFn != NULL &&
				 strategy == BLOOMIDX_EQUAL_STRATEGY &&
				 !OidIsValid(state->extractQueryFn[col].fn_oid))
		{
			ArrayType  *array = DatumGetArrayTypeP(((Const *) value)->constvalue);
			int16		elmlen;
			bool		elmbyval;
			char		elmalign;
			Datum	   *elems;
			bool	   *nulls;
			int			nelems;
			int			nonnull = 0;
			int			step;
			int			i;

			get_typlenbyvalalign(ARR_ELEMTYPE(array), &elmlen, &elmbyval, &elmalign);
			deconstruct_array(array, ARR_ELEMTYPE(array), elmlen, elmbyval,
							  elmalign, &elems, &nulls, &nelems);
			for (i = 0; i < nelems; i++)
				if (!nulls[i])
					elems[nonnull++] = elems[i];
			if (nonnull == 0)
			{
				query->noMatch = true;	/* NULL elements equal nothing */
				return true;
			}

			/* Hash all elements, or an even sample of a long array */
			step = (nonnull + BLOOM_COST_MAX_ELEMENTS - 1) / BLOOM_COST_MAX_ELEMENTS;
			clause->masks = palloc(sizeof(uint64) * nwords *
								   ((nonnull + step - 1) / step));
			for (i = 0; i < nonnull; i += step)
			{
				CHECK_FOR_INTERRUPTS();
				BloomCostValueMask(state, col, hashFn, elems[i],
								   clause->masks + (Size) clause->nknown * nwords);
				clause->nknown++;
			}
			clause->knownWeight = (double) nonnull / clause->nknown;
			query->valuesHashed += nonnull;
		}
		else
		{
			clause->nunknown = Max((int) estimate_array_length(root, arrayexpr), 1);
			query->valuesHashed += clause->nunknown;
		}
		return true;
	}

	elog(ERROR, "unsupported bloomidx index qual type: %d", (int) nodeTag(qual));
	return false;				/* keep compiler quiet */
}

/*
 * Index pages a scan reads (pagesFetched) and signature words it tests
 * (wordsTested), for the query and its candidates: the one part of the
 * cost that depends on the layout, which the layout's scanpages routine
 * gives from the query as the false-positive model sees it.
 */
static void
BloomCostScanPages(PlannerInfo *root, IndexOptInfo *index, Relation indexRel,
				   BloomState state, double loop_count,
				   const BloomCostQuery *query, const BloomCostResult *est,
				   double matching, double falsePositives,
				   BloomScanPages *out)
{
	BloomModelShape mshape = BloomModelShapeOf(&state->shape);
	BloomScanPagesInput in;

	in.root = root;
	in.loopCount = loop_count;
	in.indexPages = index->pages;
	in.indexTuples = index->tuples;
	in.heapPages = index->rel->pages;
	in.heapTuples = index->rel->tuples;
	in.matching = matching;
	in.falsePositives = falsePositives;
	in.selectivity = matching + falsePositives;
	CLAMP_PROBABILITY(in.selectivity);
	in.shape = &mshape;
	in.query = query;
	in.wordsPerRow = est->wordsTested;
	out->falsePositiveShare = 1.0;
	BloomGetStateLayout(indexRel, state)->scanpages(indexRel, state, &in, out);
	CLAMP_PROBABILITY(out->falsePositiveShare);
}

/*
 * Heap pages a bitmap of candidates on heapPages pages holds lossy.
 *
 * A bitmap holds tbm_calculate_entries(work_mem) pages exactly; when it
 * outgrows that, tbm_lossify() turns whole chunks of pages lossy until
 * half of it is left.  The planner's own estimate (compute_bitmap_pages)
 * counts every page beyond that half as lossy, which is right for TIDs
 * added in random order.  A bloomidx scan adds them in about heap order
 * (signatures are stored in the order of their rows), so the pages seen
 * so far are all in the bitmap when it fills: each time it fills, half of
 * it turns lossy and the pages that follow are held exactly until it
 * fills again.  Lossy pages come in steps of half the bitmap, one step
 * each time the exact pages outgrow it (measured at 10M rows, 4MB of
 * work_mem and 65,536 entries: 94,950 pages, 33,053 lossy; 102,787 pages,
 * 65,930 lossy; the planner's estimate is 70,000 for both).
 */
static double
BloomLossyPages(double heapPages)
{
	double		maxEntries = tbm_calculate_entries((double) work_mem * 1024.0);
	double		half = floor(maxEntries / 2);

	if (half < 1 || heapPages <= maxEntries)
		return 0;
	return half * floor((heapPages - half) / half);
}

/*
 * Estimate the cost of a bloomidx bitmap scan (amcostestimate).
 */
void
bloomidx_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					  Cost *indexStartupCost, Cost *indexTotalCost,
					  Selectivity *indexSelectivity, double *indexCorrelation,
					  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	Relation	indexRel;
	BloomState	state;
	BloomModelShape mshape;
	BloomSignatureModel model;
	BloomCostQuery query;
	BloomCostResult est;
	List	   *allQuals = NIL;
	List	   *testedQuals = NIL;
	int			maxClauses;
	double		inIndex;
	double		s;
	double		selectivity;
	BloomScanPages scanPages;
	double		pagesFetched;
	double		wordsTested;
	double		candidates;
	double		heapPagesVisited;
	double		lossyTuples;
	ListCell   *lc;
	int			col;

	indexRel = index_open(index->indexoid, NoLock);
	state = BloomGetState(indexRel);
	if (state->shape.legacyFold)
		BloomTrgmReportLegacyFold(indexRel, true);
	mshape = BloomModelShapeOf(&state->shape);
	BloomSignatureModelInit(&model, &mshape, BloomIndexFill(indexRel, &state->shape));

	memset(&query, 0, sizeof(query));
	maxClauses = 0;
	foreach(lc, path->indexclauses)
		maxClauses += list_length(lfirst_node(IndexClause, lc)->indexquals);
	query.clauses = palloc0(sizeof(BloomCostClause) *
							Max(Min(maxClauses, BLOOM_MODEL_MAX_CLAUSES), 1));
	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			BloomCostClause *clause;

			allQuals = lappend(allQuals, rinfo);
			if (query.nclauses >= BLOOM_MODEL_MAX_CLAUSES)
				continue;		/* beyond what a clause set holds: ignored */
			clause = &query.clauses[query.nclauses];
			if (!BloomCostDescribeQual(root, indexRel, state, iclause->indexcol,
									   rinfo->clause, &query, clause))
				continue;
			clause->selectivity = clause_selectivity(root, (Node *) rinfo,
													 index->rel->relid,
													 JOIN_INNER, NULL);
			clause->correlation = BloomColumnCorrelation(indexRel,
														 iclause->indexcol);
			testedQuals = lappend(testedQuals, rinfo);
			query.nclauses++;
		}
	}

	query.frequent = palloc0(sizeof(BloomFrequentValues) * state->shape.nColumns);
	for (col = 0; col < state->shape.nColumns && !query.noMatch; col++)
		BloomGetFrequentValues(indexRel, state, col, &query.frequent[col]);

	BloomEstimateQuery(&mshape, &model, &query, &est);

	/*
	 * Candidates: the rows matching the quals the index tests (not IS NOT
	 * NULL), plus the false positives among the index's rows.
	 */
	s = clauselist_selectivity(root, add_predicate_to_index_quals(index, testedQuals),
							   index->rel->relid, JOIN_INNER, NULL);
	inIndex = index->rel->tuples > 0 ? index->tuples / index->rel->tuples : 1.0;
	CLAMP_PROBABILITY(inIndex);

	/*
	 * The pages and signatures the scan reads, and the share of the false
	 * positives it meets (a layout may skip rows without testing them);
	 * every candidate goes into the bitmap and is fetched, from the heap
	 * pages that hold candidates (at random: a page holds none with
	 * probability e^(-candidates/pages)).
	 */
	if (query.noMatch)
	{
		scanPages.pagesFetched = 0;
		scanPages.wordsTested = 0;
		selectivity = 0.0;
	}
	else
	{
		BloomCostScanPages(root, index, indexRel, state, loop_count, &query,
						   &est, s, inIndex * est.falsePositives, &scanPages);
		selectivity = s + inIndex * est.falsePositives *
			scanPages.falsePositiveShare;
	}
	CLAMP_PROBABILITY(selectivity);
	pagesFetched = scanPages.pagesFetched;
	wordsTested = scanPages.wordsTested;
	index_close(indexRel, NoLock);
	candidates = selectivity * index->rel->tuples;
	heapPagesVisited = candidates;
	if (index->rel->pages > 0)
		heapPagesVisited = Min(candidates, index->rel->pages *
							   (1.0 - exp(-candidates / index->rel->pages)));
	lossyTuples = 0;
	if (index->rel->pages > 0)
		lossyTuples = BloomLossyPages(heapPagesVisited) *
			index->rel->tuples / index->rel->pages;

	*indexStartupCost = index_other_operands_eval_cost(root, allQuals) +
		query.valuesHashed * cpu_operator_cost;
	*indexTotalCost = *indexStartupCost;
	if (!query.noMatch)
		*indexTotalCost += seq_page_cost * pagesFetched +
			BLOOM_WORD_TEST_COST * wordsTested +
			(cpu_index_tuple_cost + BLOOM_FETCH_TUPLE_COST) * candidates +
			BLOOM_FETCH_PAGE_COST * heapPagesVisited +
			BLOOM_LOSSY_TUPLE_COST * lossyTuples;
	*indexSelectivity = selectivity;
	*indexCorrelation = 0;
	*indexPages = index->pages;
}

/*
 * The textbook false-positive rate of an equality on one column of an
 * index of this shape and fill: fill^k for one value, 1 - (1 - fill^k)^n
 * for any of n values.  It takes every value to set k distinct bits at
 * random; BloomEqualityFpr is what the planner expects.
 */
double
BloomClauseFpr(const BloomShape *shape, double fill, int col, double nvalues)
{
	double		one = BloomFalsePositiveRate(fill, shape->bitsPerColumn[col]);

	if (nvalues <= 1)
		return one;
	return -expm1(nvalues * log1p(-Min(one, 0.999999)));
}

/*
 * False-positive rate the planner expects of an equality on each of ncols
 * columns (cols[], 0-based) of an index of this shape and fill, for values
 * not known in advance.
 */
double
BloomEqualityFpr(const BloomShape *shape, double fill, int ncols, const int *cols)
{
	BloomModelShape mshape = BloomModelShapeOf(shape);

	return BloomModelEqualityFpr(&mshape, fill, ncols, cols);
}

/*
 * Selectivity of an equality on a typical value of index column col (the
 * planner's estimate for a value it does not know: the non-null rows over
 * the number of distinct values), from the statistics of the table column
 * or index expression.  Returns -1 without statistics.
 */
static double
BloomTypicalSelectivity(Relation index, int col, double heapTuples)
{
	Oid			relid;
	AttrNumber	attnum;
	HeapTuple	statsTuple;
	Form_pg_statistic stats;
	double		ndistinct;
	double		result = -1;

	BloomColumnStatsKey(index, col, &relid, &attnum);
	statsTuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
								 Int16GetDatum(attnum), BoolGetDatum(false));
	if (!HeapTupleIsValid(statsTuple))
		return -1;
	stats = (Form_pg_statistic) GETSTRUCT(statsTuple);
	ndistinct = stats->stadistinct;
	if (ndistinct < 0)
		ndistinct = -ndistinct * heapTuples;
	if (ndistinct >= 1)
		result = (1.0 - stats->stanullfrac) / ndistinct;
	ReleaseSysCache(statsTuple);
	return result;
}

/*
 * May the current user see the statistics of index column col?  pg_stats'
 * rule: SELECT on the relation the statistics belong to (the table, or the
 * index for an expression) or on the column.
 */
static bool
BloomCanSeeColumnStats(Relation index, int col)
{
	Oid			relid;
	AttrNumber	attnum;
	Oid			userid = GetUserId();

	BloomColumnStatsKey(index, col, &relid, &attnum);
	return pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck(relid, attnum, userid, ACL_SELECT) == ACLCHECK_OK;
}

/*
 * Refuse a caller who may read neither the index's table nor the table
 * columns of the index columns named.  Called before the index is locked,
 * as core commands check privileges before they lock, so that a refused
 * caller does not queue behind DDL; the catalogs are read through the
 * syscache without a lock.  A name that is no column of the index is
 * reported here, as it is under the lock, to a caller who may not read the
 * table; an OID that is no index is left to opening it.
 */
static void
BloomEstimateCheckAccess(Oid indexoid, Datum *names, int nnames)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Oid			userid = GetUserId();
	HeapTuple	indexTuple;
	Form_pg_index indexForm;
	int			i;

	/* No index, or dropped meanwhile: opening it reports that */
	if (!OidIsValid(heapoid))
		return;
	if (pg_class_aclcheck(heapoid, userid, ACL_SELECT) == ACLCHECK_OK)
		return;

	indexTuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(indexTuple))
		return;
	indexForm = (Form_pg_index) GETSTRUCT(indexTuple);
	for (i = 0; i < nnames; i++)
	{
		char	   *name;
		AttrNumber	indexAttnum;
		AttrNumber	heapAttnum;

		name = TextDatumGetCString(names[i]);
		indexAttnum = get_attnum(indexoid, name);
		if (indexAttnum <= 0 || indexAttnum > indexForm->indnatts)
		{
			/* As it is reported under the lock, but without waiting for it */
			ReleaseSysCache(indexTuple);
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("index \"%s\" has no column \"%s\"",
							get_rel_name(indexoid), name),
					 errhint("Use the index's column names, as \\d shows them.")));
		}
		heapAttnum = indexForm->indkey.values[indexAttnum - 1];

		/* An expression: only SELECT on the table covers it */
		if (heapAttnum == 0 ||
			pg_attribute_aclcheck(heapoid, heapAttnum, userid,
								  ACL_SELECT) != ACLCHECK_OK)
		{
			/* As a query names it: the table, not the column */
			ReleaseSysCache(indexTuple);
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE,
						   get_rel_name(heapoid));
		}
	}
	ReleaseSysCache(indexTuple);
}

/*
 * bloomidx_estimate(index regclass, columns text[]): what the cost model
 * expects of an equality on a typical value of each of the given columns:
 * the false-positive rate (of a row matching none of them), the rows the
 * index lets through without matching, the rows that match (from the
 * table's statistics; NULL without them), the candidates (both), with the
 * fill it assumes and the pages a scan reads.  The values are unknown, as
 * in a generic plan; the frequent values of the columns are known.
 *
 * bloomidx_estimate(index, columns, elements int4) (1.2): a query of each
 * named column of sets tests that many elements (the trigrams of a LIKE
 * pattern, the elements of an @> array) rather than its operator class's
 * query_elements; columns of equality are as above.
 */
Datum
bloomidx_estimate(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ArrayType  *columns = PG_GETARG_ARRAYTYPE_P(1);
	int32		elements = PG_NARGS() > 2 ? PG_GETARG_INT32(2) : 0;
	Relation	index;
	Relation	heap;
	BloomState	state;
	BloomShape	eshape;
	BloomModelShape mshape;
	BloomSignatureModel model;
	BloomCostQuery query;
	BloomCostResult est;
	TupleDesc	tupdesc;
	Datum	   *names;
	bool	   *nulls;
	int			nnames;
	int		   *cols;
	double		reltuples;
	double		heapTuples;
	double		fill;
	double		trueFraction = 1.0;
	bool		haveStats;
	Datum		values[6];
	bool		isnull[6] = {false, false, false, false, false, false};
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	deconstruct_array(columns, TEXTOID, -1, false, TYPALIGN_INT,
					  &names, &nulls, &nnames);

	/* The arguments need no lock: checked before it, for every caller */
	if (PG_NARGS() > 2 && elements < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("elements must be at least 1, not %d", elements),
				 errhint("Give the number of elements a query tests in each column of sets, such as the trigrams of a LIKE pattern.")));
	if (nnames == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("columns must name at least one column of the index")));
	for (i = 0; i < nnames; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("column names must not be null")));
	}

	/* Privileges first, then the lock; again under the lock, as they hold */
	BloomEstimateCheckAccess(indexoid, names, nnames);
	index = BloomOpenIndexRelation(indexoid, AccessShareLock, false);
	BloomCheckIndexRelation(index);
	BloomEstimateCheckAccess(indexoid, names, nnames);
	state = BloomGetState(index);

	cols = palloc(sizeof(int) * nnames);
	for (i = 0; i < nnames; i++)
	{
		char	   *name;
		int			col;
		int			j;

		name = TextDatumGetCString(names[i]);
		for (col = 0; col < state->shape.nColumns; col++)
		{
			if (strcmp(NameStr(TupleDescAttr(RelationGetDescr(index), col)->attname),
					   name) == 0)
				break;
		}
		if (col >= state->shape.nColumns)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("index \"%s\" has no column \"%s\"",
							RelationGetRelationName(index), name),
					 errhint("Use the index's column names, as \\d shows them.")));
		for (j = 0; j < i; j++)
			if (cols[j] == col)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("column \"%s\" is listed more than once", name)));
		cols[i] = col;
	}

	reltuples = Max(index->rd_rel->reltuples, 0);
	heap = relation_open(index->rd_index->indrelid, AccessShareLock);
	heapTuples = heap->rd_rel->reltuples >= 0 ? heap->rd_rel->reltuples : reltuples;
	relation_close(heap, AccessShareLock);

	/*
	 * One equality on an unknown, typical value per column, with the
	 * statistics the caller may see in pg_stats: the true rows need those
	 * of every column named, the frequent values of a column are left out
	 * when hidden.
	 */
	haveStats = true;
	for (i = 0; i < nnames; i++)
		if (!BloomCanSeeColumnStats(index, cols[i]))
			haveStats = false;
	memset(&query, 0, sizeof(query));
	query.frequent = palloc0(sizeof(BloomFrequentValues) * state->shape.nColumns);
	for (i = 0; i < state->shape.nColumns; i++)
		if (BloomCanSeeColumnStats(index, i))
			BloomGetFrequentValues(index, state, i, &query.frequent[i]);
	query.nclauses = Min(nnames, BLOOM_MODEL_MAX_CLAUSES);
	query.clauses = palloc0(sizeof(BloomCostClause) * query.nclauses);
	for (i = 0; i < query.nclauses; i++)
	{
		double		sel = haveStats ?
			BloomTypicalSelectivity(index, cols[i], heapTuples) : -1;

		if (sel < 0)
			haveStats = false;
		query.clauses[i].col = cols[i];
		query.clauses[i].nunknown = 1;
		query.clauses[i].selectivity = Max(sel, 0);
		if (haveStats)
			query.clauses[i].correlation = BloomColumnCorrelation(index, cols[i]);
		trueFraction *= Max(sel, 0);
	}

	/*
	 * A query of a column of sets tests query_elements elements of it, or
	 * as many as given (in 64 bits: elements up to INT_MAX times the bits
	 * of one; past BLOOM_MODEL_MAX_QUERY_BITS every bit is tested anyway)
	 */
	eshape = state->shape;
	if (elements > 0)
	{
		for (i = 0; i < nnames; i++)
			if (eshape.setColumns & (1U << cols[i]))
				eshape.queryElements[cols[i]] = elements;
		BloomShapeSetQueryBits(&eshape);
	}
	fill = BloomIndexFill(index, &state->shape);
	mshape = BloomModelShapeOf(&eshape);
	BloomSignatureModelInit(&model, &mshape, fill);
	BloomEstimateQuery(&mshape, &model, &query, &est);

	/*
	 * The false positives the scan meets: those of the rows it tests (a
	 * layout may skip some, as the sliced layout's stripe summaries do)
	 */
	if (haveStats)
	{
		BloomScanPagesInput in;
		BloomScanPages out;

		memset(&in, 0, sizeof(in));
		in.loopCount = 1;
		in.indexPages = RelationGetNumberOfBlocks(index);
		in.indexTuples = reltuples;
		in.heapTuples = heapTuples;
		in.heapPages = Max(in.indexPages, 1);
		in.matching = trueFraction;
		in.falsePositives = est.falsePositives;
		in.selectivity = Min(trueFraction + est.falsePositives, 1.0);
		in.shape = &mshape;
		in.query = &query;
		in.wordsPerRow = est.wordsTested;
		out.falsePositiveShare = 1.0;
		BloomGetStateLayout(index, state)->scanpages(index, state, &in, &out);
		CLAMP_PROBABILITY(out.falsePositiveShare);
		est.falsePositives *= out.falsePositiveShare;
	}

	values[0] = Float8GetDatum(est.falsePositiveRate);
	values[1] = Float8GetDatum(est.falsePositives * reltuples);
	if (haveStats)
	{
		values[2] = Float8GetDatum(trueFraction * reltuples);
		values[3] = Float8GetDatum((trueFraction + est.falsePositives) * reltuples);
	}
	else
		isnull[2] = isnull[3] = true;
	values[4] = Float8GetDatum(fill);
	values[5] = Int64GetDatum(RelationGetNumberOfBlocks(index));
	relation_close(index, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, isnull)));
}
