/*-------------------------------------------------------------------------
 *
 * filter_ops.c
 *	  SQL functions that make, combine, convert and describe bloomfilters:
 *	  bloom_empty in all its forms, bloom_remove, bloom_plain, bloom_fold,
 *	  bloom_union, bloom_intersect, bloom_cardinality and bloom_info.
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
PG_FUNCTION_INFO_V1(bloom_remove);
PG_FUNCTION_INFO_V1(bloom_plain);
PG_FUNCTION_INFO_V1(bloom_fold);
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
 * bloom_remove(filter, value): a copy of a counting filter with the value
 * removed.
 */
Datum
bloom_remove(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	BloomFilterData f;
	bytea	   *out;

	BloomFilterOpen(PG_GETARG_BYTEA_PP(0), &f);
	BloomCheckKey(&f.hdr, NULL);
	if (!BloomVariantCanRemove(f.hdr.flags))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot remove a value from a %s bloom filter",
						BloomVariantName(f.hdr.flags)),
				 errhint("Only counting filters, created with bloom_empty(..., counting => true), can forget values.")));
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f.hdr, cache->hashing);
	if (f.hdr.elemtype == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot remove a value that is not in the counting bloom filter"),
				 errdetail("The filter is empty."),
				 errhint("Remove only values that were added, once for each time they were added.")));

	out = BloomFilterCopy(CurrentMemoryContext, f.datum);
	BloomFilterOpen(out, &f);
	BloomFilterRemoveHash(&f, BloomValueHash(cache, f.hdr.hash_scheme,
										  PG_GETARG_DATUM(1)));
	PG_RETURN_BYTEA_P(out);
}

/*
 * bloom_plain(filter): a plain filter with the same answers.  A counting
 * filter gives the filter of its nonzero counters, of the same shape; a
 * plain filter is returned as it is.
 */
Datum
bloom_plain(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	BloomFilterData f;
	BloomFilterData r;
	BloomFilterHeader hdr;
	bytea	   *out;
	const BloomVariantRoutine *v;

	BloomFilterOpen(in, &f);
	if (f.hdr.flags == 0)
		PG_RETURN_BYTEA_P(in);
	v = BloomGetVariant(f.hdr.flags);
	if (v->toplain == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot convert a %s bloom filter to a plain one",
						BloomVariantName(f.hdr.flags)),
				 errhint("Only counting filters convert to plain filters.")));

	hdr = f.hdr;
	hdr.version = BLOOM_FILTER_FORMAT_VERSION;
	hdr.flags = 0;
	out = BloomFilterAllocate(CurrentMemoryContext, &hdr);
	BloomFilterOpen(out, &r);
	v->toplain(f.data + f.hdr.layers[0].offset, &f.hdr.layers[0], r.bits);
	PG_RETURN_BYTEA_P(out);
}

/*
 * bloom_fold(filter, factor): a plain filter folded to nbits / factor bits.
 *
 * A value's positions are multiply-shift images of 64-bit numbers onto
 * [0, m), and the image onto [0, m / f) of the same number is the image
 * onto [0, m) divided by f (when f divides m): so bit p of the folded
 * filter is the OR of bits p * f .. p * f + f - 1, and the folded filter
 * holds every value the original held.  Its fill is about 1 - (1 - fill)^f,
 * so its rate rises; capacity and target rate no longer describe it and
 * are cleared (bloom_info reports the expected rate).
 */
Datum
bloom_fold(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	int32		factor = PG_GETARG_INT32(1);
	BloomFilterData f;
	BloomFilterData r;
	BloomFilterHeader hdr;
	bytea	   *out;
	uint64		p;

	BloomFilterOpen(in, &f);
	if (f.hdr.flags != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot fold a %s bloom filter", BloomVariantName(f.hdr.flags)),
				 errhint("Only plain filters can be folded.")));
	if (factor < 1 || (factor & (factor - 1)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fold factor must be a power of two"),
				 errhint("Use 1, 2, 4, 8 or another power of two that divides the filter's " UINT64_FORMAT " bits.",
						 f.hdr.nbits)));
	if (f.hdr.nbits % factor != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot fold a bloom filter of " UINT64_FORMAT " bits by %d",
						f.hdr.nbits, factor),
				 errdetail("The factor must divide the number of bits."),
				 errhint("Fold by a power of two that divides " UINT64_FORMAT ", or create the filters with bloom_empty_raw and a number of bits divisible by the factors to come.",
						 f.hdr.nbits)));
	if (factor == 1)
		PG_RETURN_BYTEA_P(in);

	hdr = f.hdr;
	hdr.nbits = f.hdr.nbits / factor;
	hdr.layers[0].nbits = hdr.nbits;
	hdr.capacity = 0;
	hdr.target_fpr = 0;
	out = BloomFilterAllocate(CurrentMemoryContext, &hdr);
	BloomFilterOpen(out, &r);
	for (p = 0; p < f.hdr.nbits; p++)
	{
		if ((p & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (BloomTestBit(f.bits, p))
			BloomSetBit(r.bits, p / factor);
	}
	PG_RETURN_BYTEA_P(out);
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
