/*-------------------------------------------------------------------------
 *
 * filter_ops.c
 *	  SQL functions that make, combine and describe bloomfilters of any
 *	  variant: bloom_empty (but its keyed form, in filter_keyed.c),
 *	  bloom_empty_raw, bloom_union, bloom_intersect, bloom_cardinality and
 *	  bloom_info.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_ops.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "filter_variant.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloom_empty);
PG_FUNCTION_INFO_V1(bloom_empty_raw);
PG_FUNCTION_INFO_V1(bloom_empty_variant);
PG_FUNCTION_INFO_V1(bloom_union);
PG_FUNCTION_INFO_V1(bloom_intersect);
PG_FUNCTION_INFO_V1(bloom_cardinality);
PG_FUNCTION_INFO_V1(bloom_info);

/*
 * bloom_empty(capacity, false_positive_rate): an empty filter sized for
 * capacity values at that false-positive rate.
 */
Datum
bloom_empty(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		fpr = PG_GETARG_FLOAT8(1);
	BloomFilterHeader hdr;
	uint64		nbits;
	int			nhashes;

	BloomChooseSize(capacity, fpr, &nbits, &nhashes);
	BloomHeaderInit(&hdr, nbits, nhashes, capacity, fpr);
	PG_RETURN_BYTEA_P(BloomFilterAllocate(CurrentMemoryContext, &hdr));
}

/*
 * bloom_empty_raw(nbits, nhashes): an empty filter of exactly that shape.
 */
Datum
bloom_empty_raw(PG_FUNCTION_ARGS)
{
	int64		nbits = PG_GETARG_INT64(0);
	int32		nhashes = PG_GETARG_INT32(1);
	BloomFilterHeader hdr;

	if (nbits < 1 || (uint64) nbits > BLOOM_FILTER_MAX_NBITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nbits must be between 1 and " UINT64_FORMAT,
						BLOOM_FILTER_MAX_NBITS),
				 errhint("Use between 1 and " UINT64_FORMAT " bits (256 MB).",
						 BLOOM_FILTER_MAX_NBITS)));
	if (nhashes < 1 || nhashes > BLOOM_FILTER_MAX_NHASHES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nhashes must be between 1 and %d",
						BLOOM_FILTER_MAX_NHASHES),
				 errhint("Use between 1 and %d hash functions.",
						 BLOOM_FILTER_MAX_NHASHES)));

	BloomHeaderInit(&hdr, nbits, nhashes, 0, 0);
	PG_RETURN_BYTEA_P(BloomFilterAllocate(CurrentMemoryContext, &hdr));
}

/*
 * bloom_empty(capacity, false_positive_rate, growth, counting, blocked): an
 * empty filter of the chosen variant sized for capacity values at that
 * false-positive rate.
 */
Datum
bloom_empty_variant(PG_FUNCTION_ARGS)
{
	BloomFilterHeader hdr;
	BloomVariantOptions opts = {0};

	opts.growth = PG_GETARG_INT32(2);
	opts.counting = PG_GETARG_BOOL(3);
	opts.blocked = PG_GETARG_BOOL(4);
	BloomHeaderInitVariant(&hdr, PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1),
						   &opts);
	PG_RETURN_BYTEA_P(BloomFilterAllocate(CurrentMemoryContext, &hdr));
}

/*
 * bloom_union(a, b), the | operator: a filter of the values of either.
 */
Datum
bloom_union(PG_FUNCTION_ARGS)
{
	bytea	   *a = PG_GETARG_BYTEA_PP(0);
	bytea	   *b = PG_GETARG_BYTEA_PP(1);

	PG_RETURN_BYTEA_P(BloomCombineInto(CurrentMemoryContext,
									   BloomFilterCopy(CurrentMemoryContext, a),
									   b, false));
}

/*
 * bloom_intersect(a, b), the & operator: a filter that may contain the
 * values of both.
 */
Datum
bloom_intersect(PG_FUNCTION_ARGS)
{
	bytea	   *a = PG_GETARG_BYTEA_PP(0);
	bytea	   *b = PG_GETARG_BYTEA_PP(1);

	PG_RETURN_BYTEA_P(BloomCombineInto(CurrentMemoryContext,
									   BloomFilterCopy(CurrentMemoryContext, a),
									   b, true));
}

/*
 * bloom_cardinality(filter): estimated number of distinct values added.
 */
Datum
bloom_cardinality(PG_FUNCTION_ARGS)
{
	BloomFilterData f;
	BloomFilterStatsData st;

	BloomFilterOpen(PG_GETARG_BYTEA_PP(0), &f);
	BloomFilterStats(&f, &st);
	PG_RETURN_FLOAT8(st.cardinality);
}

/*
 * bloom_info(filter): one record describing the filter.
 */
Datum
bloom_info(PG_FUNCTION_ARGS)
{
	bytea	   *datum = PG_GETARG_BYTEA_PP(0);
	BloomFilterData f;
	BloomFilterStatsData st;
	TupleDesc	tupdesc;
	Datum		values[14];
	bool		nulls[14];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/* 1.0 declares the first 11 columns, 1.1 all 14 */
	if (tupdesc->natts > lengthof(values))
		elog(ERROR, "bloom_info returns at most %d columns", (int) lengthof(values));
	tupdesc = BlessTupleDesc(tupdesc);

	BloomFilterOpen(datum, &f);
	BloomFilterStats(&f, &st);

	memset(nulls, 0, sizeof(nulls));
	values[0] = Int32GetDatum(f.hdr.version);
	values[1] = ObjectIdGetDatum(f.hdr.elemtype);
	nulls[1] = (f.hdr.elemtype == 0);
	values[2] = Int64GetDatum((int64) st.ncells);
	values[3] = Int32GetDatum((int32) f.hdr.nhashes);
	values[4] = Int64GetDatum((int64) f.hdr.capacity);
	nulls[4] = (f.hdr.capacity == 0);
	values[5] = Float8GetDatum(f.hdr.target_fpr);
	nulls[5] = (f.hdr.capacity == 0);
	values[6] = Int64GetDatum((int64) st.nset);
	values[7] = Float8GetDatum((double) st.nset / (double) st.ncells);
	values[8] = Float8GetDatum(st.cardinality);
	values[9] = Float8GetDatum(st.fpr);
	values[10] = Int64GetDatum((int64) VARSIZE_ANY_EXHDR(datum));
	values[11] = CStringGetTextDatum(BloomVariantName(f.hdr.flags));
	values[12] = Int32GetDatum((int32) f.hdr.nlayers);
	values[13] = Int32GetDatum((int32) f.hdr.growth);
	nulls[13] = (f.hdr.growth == 0);	/* not growing */

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
