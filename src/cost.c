/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  Planner cost model of a bloomidx scan, aware of false positives.
 *
 * A bloomidx scan reads every index page in order and tests every
 * signature.  It returns the rows that match plus the false positives: a
 * row that does not match passes when all the bits the query tests happen
 * to be set, with probability fill^k per tested value, where fill is the
 * fraction of signature bits set (kept in the metapage).  The selectivity
 * handed to the bitmap heap scan is therefore
 *
 *		s + (1 - s) * fpr(q)
 *
 * with s the clauses' own selectivity, so the heap scan above is charged
 * for the rows it will recheck and throw away.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloomidx_estimate);

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
		return (double) bitsSet / ((double) tuples * shape->sigBits);

	for (i = 0; i < shape->nColumns; i++)
		totalBits += shape->bitsPerColumn[i];
	return BloomExpectedFill(shape->sigBits, 1, totalBits);
}

/*
 * Probability that a row not matching a clause on column col passes the
 * signature test anyway: fill^k for one value, 1 - (1 - fill^k)^n for any
 * of n values.
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
 * Estimate the cost of a bloomidx bitmap scan (amcostestimate).
 */
void
bloomidx_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					  Cost *indexStartupCost, Cost *indexTotalCost,
					  Selectivity *indexSelectivity, double *indexCorrelation,
					  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	Relation	indexRel;
	BloomState	state;
	double		fill;
	double		fpr = 1.0;
	double		testsPerTuple = 1.0;
	double		s;
	double		selectivity;
	ListCell   *lc;

	/* The clauses' own selectivity, from the usual machinery */
	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);
	s = costs.indexSelectivity;

	indexRel = index_open(index->indexoid, NoLock);
	state = BloomGetState(indexRel);
	fill = BloomIndexFill(indexRel, &state->shape);

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			Expr	   *clause = rinfo->clause;
			double		nvalues = 1;

			if (IsA(clause, NullTest))
			{
				if (((NullTest *) clause)->nulltesttype == IS_NOT_NULL)
					continue;	/* the index cannot narrow IS NOT NULL */
			}
			else if (IsA(clause, ScalarArrayOpExpr))
			{
				ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) clause;

				nvalues = estimate_array_length(lsecond(saop->args));
				if (nvalues > 1)
					testsPerTuple += nvalues;
			}
			fpr *= BloomClauseFpr(&state->shape, fill, iclause->indexcol, nvalues);
		}
	}
	index_close(indexRel, NoLock);

	selectivity = s + (1.0 - s) * fpr;
	CLAMP_PROBABILITY(selectivity);

	/*
	 * Every page is read, in order; every signature is tested (a few
	 * operator costs: one 64-bit word per value, more for arrays); every
	 * candidate goes into the bitmap.
	 */
	*indexStartupCost = 0;
	*indexTotalCost = seq_page_cost * index->pages +
		cpu_operator_cost * testsPerTuple * index->tuples +
		cpu_index_tuple_cost * selectivity * index->tuples;
	*indexSelectivity = selectivity;
	*indexCorrelation = 0;
	*indexPages = index->pages;
}

/*
 * bloomidx_estimate(index regclass, columns text[]): what the cost model
 * expects of an equality on the given columns of the index: the
 * false-positive rate and the number of rows it lets through that the
 * recheck removes, with the fill it assumes.
 */
Datum
bloomidx_estimate(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ArrayType  *columns = PG_GETARG_ARRAYTYPE_P(1);
	Relation	index;
	BloomState	state;
	TupleDesc	tupdesc;
	Datum	   *names;
	bool	   *nulls;
	int			nnames;
	double		fill;
	double		fpr = 1.0;
	double		reltuples;
	Datum		values[4];
	bool		isnull[4] = {false, false, false, false};
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	index = relation_open(indexoid, AccessShareLock);
	if (index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_indam->amgetbitmap != bloomidx_getbitmap)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a bloomidx index",
						RelationGetRelationName(index))));
	state = BloomGetState(index);
	fill = BloomIndexFill(index, &state->shape);

	deconstruct_array(columns, TEXTOID, -1, false, TYPALIGN_INT,
					  &names, &nulls, &nnames);
	for (i = 0; i < nnames; i++)
	{
		char	   *name;
		int			col;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("column names must not be null")));
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
		fpr *= BloomClauseFpr(&state->shape, fill, col, 1);
	}

	reltuples = Max(index->rd_rel->reltuples, 0);
	values[0] = Float8GetDatum(fpr);
	values[1] = Float8GetDatum(rint(fpr * reltuples));
	values[2] = Float8GetDatum(fill);
	values[3] = Int64GetDatum(RelationGetNumberOfBlocks(index));
	relation_close(index, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, isnull)));
}
