/*-------------------------------------------------------------------------
 *
 * filter_compare.c
 *	  Equality, ordering and hashing of bloomfilter values: =, DISTINCT,
 *	  GROUP BY, UNION, sorts, hash and merge joins, and the row matching
 *	  of logical replication's REPLICA IDENTITY FULL.
 *
 * Two filters are equal when their bytes are, but for the element type's
 * names: a filter of a type that is not built in carries the schema and
 * name the type had when the filter was written, beside its OID, and the
 * OID decides (reading a filter resolves the names to the local type's
 * OID).  The order sorts the fixed header first, then the rest, bytewise,
 * as bytea's does; it has no meaning beyond being a total order consistent
 * with equality.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_compare.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"

#include "filter.h"
#include "filter_format.h"

PG_FUNCTION_INFO_V1(bloomfilter_eq);
PG_FUNCTION_INFO_V1(bloomfilter_ne);
PG_FUNCTION_INFO_V1(bloomfilter_lt);
PG_FUNCTION_INFO_V1(bloomfilter_le);
PG_FUNCTION_INFO_V1(bloomfilter_gt);
PG_FUNCTION_INFO_V1(bloomfilter_ge);
PG_FUNCTION_INFO_V1(bloomfilter_cmp);
PG_FUNCTION_INFO_V1(bloomfilter_hash);
PG_FUNCTION_INFO_V1(bloomfilter_hash_extended);

/* Bytes of the fixed header before the names' lengths */
#define BLOOM_COMPARED_HEADER	(BLOOM_FILTER_FIXED_HEADER_SIZE - 2)

/* A filter's bytes as compared: the fixed header, and all after the names */
typedef struct BloomCompared
{
	const uint8 *head;			/* BLOOM_COMPARED_HEADER bytes, or NULL */
	const uint8 *rest;
	size_t		restlen;
} BloomCompared;

/*
 * Split a filter's bytes for comparing.  Stored filters were validated on
 * input; bytes too short for their header are compared whole.
 */
static void
BloomCompareParts(const bytea *datum, BloomCompared *c)
{
	const uint8 *data = (const uint8 *) VARDATA_ANY(datum);
	size_t		len = VARSIZE_ANY_EXHDR(datum);
	size_t		names;

	if (len >= BLOOM_FILTER_FIXED_HEADER_SIZE)
	{
		names = (size_t) data[BLOOM_COMPARED_HEADER] + data[BLOOM_COMPARED_HEADER + 1];
		if (BLOOM_FILTER_FIXED_HEADER_SIZE + names <= len)
		{
			c->head = data;
			c->rest = data + BLOOM_FILTER_FIXED_HEADER_SIZE + names;
			c->restlen = len - BLOOM_FILTER_FIXED_HEADER_SIZE - names;
			return;
		}
	}
	c->head = NULL;
	c->rest = data;
	c->restlen = len;
}

/*
 * Three-way comparison of two filters.
 */
static int
BloomFilterCompare(FunctionCallInfo fcinfo)
{
	bytea	   *a = PG_GETARG_BYTEA_PP(0);
	bytea	   *b = PG_GETARG_BYTEA_PP(1);
	BloomCompared ca;
	BloomCompared cb;
	int			cmp;

	BloomCompareParts(a, &ca);
	BloomCompareParts(b, &cb);
	/* A filter whose bytes are compared whole sorts first */
	if ((ca.head == NULL) != (cb.head == NULL))
		cmp = ca.head == NULL ? -1 : 1;
	else if (ca.head != NULL &&
			 (cmp = memcmp(ca.head, cb.head, BLOOM_COMPARED_HEADER)) != 0)
		;
	else
	{
		size_t		len = Min(ca.restlen, cb.restlen);
		size_t		off;

		cmp = 0;
		for (off = 0; off < len && cmp == 0; off += BLOOM_CHUNK_BYTES)
		{
			CHECK_FOR_INTERRUPTS();
			cmp = memcmp(ca.rest + off, cb.rest + off,
						 Min(len - off, BLOOM_CHUNK_BYTES));
		}
		if (cmp == 0 && ca.restlen != cb.restlen)
			cmp = ca.restlen < cb.restlen ? -1 : 1;
	}
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	return cmp;
}

Datum
bloomfilter_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomFilterCompare(fcinfo) == 0);
}

Datum
bloomfilter_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomFilterCompare(fcinfo) != 0);
}

Datum
bloomfilter_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomFilterCompare(fcinfo) < 0);
}

Datum
bloomfilter_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomFilterCompare(fcinfo) <= 0);
}

Datum
bloomfilter_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomFilterCompare(fcinfo) > 0);
}

Datum
bloomfilter_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(BloomFilterCompare(fcinfo) >= 0);
}

Datum
bloomfilter_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(BloomFilterCompare(fcinfo));
}

/*
 * Hash of the bytes equality compares, from seed.
 */
static uint64
BloomFilterHashBytes(bytea *datum, uint64 seed)
{
	BloomCompared c;
	uint64		h;

	BloomCompareParts(datum, &c);
	h = hash_bytes_extended(c.rest, (int) c.restlen, seed);
	if (c.head != NULL)
		h = hash_combine64(hash_bytes_extended(c.head, BLOOM_COMPARED_HEADER, seed), h);
	return h;
}

Datum
bloomfilter_hash(PG_FUNCTION_ARGS)
{
	bytea	   *f = PG_GETARG_BYTEA_PP(0);
	uint32		h = (uint32) BloomFilterHashBytes(f, 0);

	PG_FREE_IF_COPY(f, 0);
	PG_RETURN_INT32((int32) h);
}

Datum
bloomfilter_hash_extended(PG_FUNCTION_ARGS)
{
	bytea	   *f = PG_GETARG_BYTEA_PP(0);
	uint64		h = BloomFilterHashBytes(f, (uint64) PG_GETARG_INT64(1));

	PG_FREE_IF_COPY(f, 0);
	PG_RETURN_INT64((int64) h);
}
