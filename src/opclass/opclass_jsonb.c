/*-------------------------------------------------------------------------
 *
 * opclass_jsonb.c
 *	  jsonb_path_ops: jsonb documents as sets of paths to values,
 *	  answering @> (containment), as GIN's jsonb_path_ops does.
 *
 * Every scalar of a document is one element: the hash of the keys on the
 * way to it, combined with the hash of its value.  Array positions are not
 * part of a path, and a top-level scalar is the element of a one-element
 * top-level array, as jsonb containment sees them, so that whenever a
 * document contains a query every path of the query is a path of the
 * document.  A query with no scalar ('{}', '[]', '{"a": {}}') tests no
 * bit: every row is a candidate, as with GIN.  Key existence (?, ?|, ?&)
 * is not answered: it would take one more element for every key, which a
 * path already covers only with its value; GIN's jsonb_ops answers it.
 *
 * Memory: the document is walked with a JsonbIterator, its elements going
 * to the sink as they are found; the walk keeps one path hash per level
 * of nesting.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/opclass/opclass_jsonb.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"

#include "bloomidx.h"

PG_FUNCTION_INFO_V1(bloomidx_jsonb_extract);
PG_FUNCTION_INFO_V1(bloomidx_jsonb_extract_query);
PG_FUNCTION_INFO_V1(bloomidx_jsonb_options);

/* Seeds that keep keys, strings and other scalars apart */
#define BLOOM_JSONB_KEY_SEED		UINT64CONST(0x6b6579)
#define BLOOM_JSONB_STRING_SEED		UINT64CONST(0x737472)
#define BLOOM_JSONB_NULL_HASH		UINT64CONST(0x9e3779b97f4a7c15)
#define BLOOM_JSONB_TRUE_HASH		UINT64CONST(0xc2b2ae3d27d4eb4f)
#define BLOOM_JSONB_FALSE_HASH		UINT64CONST(0x165667b19e3779f9)

/*
 * Hash of a scalar: equal scalars (1 and 1.0 among them) hash alike.
 */
static uint64
BloomJsonbScalarHash(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return BLOOM_JSONB_NULL_HASH;
		case jbvBool:
			return v->val.boolean ? BLOOM_JSONB_TRUE_HASH : BLOOM_JSONB_FALSE_HASH;
		case jbvString:
			return hash_bytes_extended((const unsigned char *) v->val.string.val,
									   v->val.string.len,
									   BLOOM_JSONB_STRING_SEED);
		case jbvNumeric:
			return DatumGetUInt64(DirectFunctionCall2(hash_numeric_extended,
													  NumericGetDatum(v->val.numeric),
													  Int64GetDatum(0)));
		default:
			elog(ERROR, "unexpected jsonb value type %d", (int) v->type);
	}
	return 0;					/* keep compiler quiet */
}

/*
 * Give sink the path-to-value hash of every scalar of a document.
 */
static void
BloomJsonbAddPaths(Jsonb *jb, BloomElementSink *sink)
{
	JsonbIterator *it = JsonbIteratorInit(&jb->root);
	JsonbIteratorToken token;
	JsonbValue	v;
	int			depth = 0;
	int			maxdepth = 8;
	uint64	   *path = palloc(sizeof(uint64) * maxdepth);	/* at each level */
	uint32		n = 0;

	path[0] = 0;
	while ((token = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		switch (token)
		{
			case WJB_BEGIN_ARRAY:
			case WJB_BEGIN_OBJECT:
				/* A container's paths start where its parent's path is */
				if (depth + 1 >= maxdepth)
				{
					maxdepth *= 2;
					path = repalloc(path, sizeof(uint64) * maxdepth);
				}
				path[depth + 1] = path[depth];
				depth++;
				break;
			case WJB_KEY:
				path[depth] = hash_combine64(path[depth - 1],
											 hash_bytes_extended((const unsigned char *) v.val.string.val,
																 v.val.string.len,
																 BLOOM_JSONB_KEY_SEED));
				break;
			case WJB_VALUE:
			case WJB_ELEM:
				BloomAddElement(sink, hash_combine64(path[depth],
													 BloomJsonbScalarHash(&v)));
				break;
			case WJB_END_ARRAY:
			case WJB_END_OBJECT:
				depth--;
				break;
			default:
				elog(ERROR, "unexpected jsonb iterator token %d", (int) token);
		}
	}
	pfree(path);
}

/*
 * bloomidx_jsonb_extract(jsonb, internal): the paths of a stored document
 * (support function 2).
 */
Datum
bloomidx_jsonb_extract(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	BloomElementSink *sink = (BloomElementSink *) PG_GETARG_POINTER(1);

	BloomJsonbAddPaths(jb, sink);
	PG_RETURN_VOID();
}

/*
 * bloomidx_jsonb_extract_query(jsonb, int2, internal): the paths a query
 * document tests, all of which a document that contains it has (support
 * function 3).
 */
Datum
bloomidx_jsonb_extract_query(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	int16		strategy = PG_GETARG_INT16(1);
	BloomElementSink *sink = (BloomElementSink *) PG_GETARG_POINTER(2);

	if (strategy != BLOOMIDX_CONTAINS_STRATEGY)
		elog(ERROR, "jsonb_path_ops has no strategy %d", strategy);
	sink->mode = BLOOM_ELEMENTS_ALL;
	BloomJsonbAddPaths(jb, sink);
	PG_RETURN_VOID();
}

/*
 * bloomidx_jsonb_options(internal): elements (default 16 scalars a
 * document) and query_elements (default 1: a query for one key and value
 * is as selective as an equality) (support function 4).
 */
Datum
bloomidx_jsonb_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	BloomSetOptionsInit(relopts, 16, 1);
	PG_RETURN_VOID();
}
