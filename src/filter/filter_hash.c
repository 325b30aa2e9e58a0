/*-------------------------------------------------------------------------
 *
 * filter_hash.c
 *	  How the bloomfilter type hashes values, which types it can hash the
 *	  same in every database, and the per-call-site cache of how to hash a
 *	  function's value argument.
 *
 * A value is hashed with its type's extended hash function, but for enums
 * in a filter of hash scheme 2: an enum value is hashed by its label, as
 * text with a deterministic collation hashes the label's bytes, so that a
 * filter answers the same in every database whatever OIDs the labels have
 * there.  Arrays of enums combine their elements' label hashes as
 * hash_array_extended combines element hashes, so an array of enum values
 * hashes as the array of their labels as text does.  Other types whose
 * hash goes through OIDs local to a database (reg* types, aclitem, and
 * composites, ranges and multiranges containing those or an enum) have no
 * such form: no new filter of them is built.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_hash.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "filter.h"
#include "signature.h"

/*
 * How the extended hash of values of typid depends on OIDs that differ from
 * one database to another: not at all; through enum labels' OIDs only,
 * for an enum, a domain over one, or an array of those, which hash scheme
 * 2 hashes by label; or otherwise.  Otherwise are reg* types and aclitem
 * (the OIDs of what they name), anonymous records (whose columns may be any
 * of these), and arrays, ranges, multiranges, domains and composite types
 * whose hash goes through a type that is not portable.
 */
BloomTypeHashing
BloomTypeHashingOf(Oid typid)
{
	Oid			elemtype;

	check_stack_depth();
	typid = getBaseType(typid);
	switch (typid)
	{
		case RECORDOID:
		case RECORDARRAYOID:
		case ACLITEMOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCLASSOID:
		case REGCOLLATIONOID:
		case REGTYPEOID:
		case REGROLEOID:
		case REGNAMESPACEOID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
			return BLOOM_HASH_OIDS;
		default:
			break;
	}

	switch (get_typtype(typid))
	{
		case TYPTYPE_ENUM:
			return BLOOM_HASH_LABELS;
		case TYPTYPE_RANGE:
			return BloomTypeHashingOf(get_range_subtype(typid)) == BLOOM_HASH_PORTABLE ?
				BLOOM_HASH_PORTABLE : BLOOM_HASH_OIDS;
		case TYPTYPE_MULTIRANGE:
			return BloomTypeHashingOf(get_multirange_range(typid)) == BLOOM_HASH_PORTABLE ?
				BLOOM_HASH_PORTABLE : BLOOM_HASH_OIDS;
		case TYPTYPE_COMPOSITE:
			{
				TupleDesc	tupdesc = lookup_rowtype_tupdesc(typid, -1);
				BloomTypeHashing result = BLOOM_HASH_PORTABLE;
				int			i;

				for (i = 0; i < tupdesc->natts && result == BLOOM_HASH_PORTABLE; i++)
				{
					Form_pg_attribute att = TupleDescAttr(tupdesc, i);

					if (!att->attisdropped &&
						BloomTypeHashingOf(att->atttypid) != BLOOM_HASH_PORTABLE)
						result = BLOOM_HASH_OIDS;
				}
				ReleaseTupleDesc(tupdesc);
				return result;
			}
		default:
			break;
	}

	/* an array hashes as its elements do */
	elemtype = get_element_type(typid);
	return OidIsValid(elemtype) ? BloomTypeHashingOf(elemtype) : BLOOM_HASH_PORTABLE;
}

/*
 * Error out if a new filter of typid, which hashes as hashing says, would
 * answer right only in this database.
 */
void
BloomCheckNewType(Oid typid, BloomTypeHashing hashing)
{
	if (hashing == BLOOM_HASH_OIDS)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot build a bloom filter of type %s",
						BloomTypeName(typid)),
				 errdetail("Values of type %s hash by object identifiers (OIDs), which differ from one database to another.",
						   BloomTypeName(typid)),
				 errhint("Build the filter from the values cast to text, for example bloom_agg(col::text).")));
}

/*
 * The hash of an enum value: that of its label's bytes, as hashtextextended
 * computes it for any deterministic collation.
 */
static uint64
BloomEnumLabelHash(Oid label)
{
	HeapTuple	tup = SearchSysCache1(ENUMOID, ObjectIdGetDatum(label));
	const char *name;
	uint64		hash;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid internal value for enum: %u", label)));
	name = NameStr(((Form_pg_enum) GETSTRUCT(tup))->enumlabel);
	hash = hash_bytes_extended((const unsigned char *) name, strlen(name),
							   BLOOM_HASH_SEED);
	ReleaseSysCache(tup);
	return hash;
}

/*
 * The hash by label (hash scheme 2) of a value of typid, an enum, a domain
 * over one or an array of those (BLOOM_HASH_LABELS).  An array combines
 * its elements' hashes, 0 for a NULL, as hash_array_extended does.
 */
uint64
BloomLabelHash(Oid typid, Datum value)
{
	Oid			basetype = getBaseType(typid);
	ArrayType  *array;
	ArrayIterator iterator;
	Oid			elemtype;
	bool		elem_is_enum;
	Datum		elem;
	bool		isnull;
	uint64		result = 1;
	int			i = 0;

	check_stack_depth();
	if (type_is_enum(basetype))
		return BloomEnumLabelHash(DatumGetObjectId(value));

	array = DatumGetArrayTypeP(value);
	elemtype = getBaseType(ARR_ELEMTYPE(array));
	elem_is_enum = type_is_enum(elemtype);
	iterator = array_create_iterator(array, 0, NULL);
	while (array_iterate(iterator, &elem, &isnull))
	{
		uint64		elthash = 0;

		if ((++i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!isnull)
			elthash = elem_is_enum ?
				BloomEnumLabelHash(DatumGetObjectId(elem)) :
				BloomLabelHash(elemtype, elem);
		result = (result << 5) - result + elthash;
	}
	array_free_iterator(iterator);
	if ((void *) array != (void *) DatumGetPointer(value))
		pfree(array);
	return result;
}

/*
 * The 64-bit hash of a value of the call site's element type, for a filter
 * of hash scheme scheme.
 */
uint64
BloomValueHash(BloomFnCache *cache, uint16 scheme, Datum value)
{
	if (scheme == BLOOM_FILTER_HASH_SCHEME_LABELS &&
		cache->hashing == BLOOM_HASH_LABELS)
		return BloomLabelHash(cache->elemtype, value);
	return BloomHashDatum(&cache->typentry->hash_extended_proc_finfo,
						  cache->collation, value);
}

/*
 * Collation to hash values of typid with, given the call's collation.
 *
 * Deterministic collations all hash strings by their bytes, so a filter
 * does not depend on which one built or probes it.  Without a collation
 * (a collation conflict) use the database default, which is deterministic.
 * Nondeterministic collations would make the answer depend on the
 * collation of each call, which the filter does not record: refuse them.
 */
static Oid
BloomHashCollation(Oid typid, Oid collation)
{
	if (!OidIsValid(collation))
		return type_is_collatable(typid) ? DEFAULT_COLLATION_OID : InvalidOid;
	if (!get_collation_isdeterministic(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloom filters do not support nondeterministic collations"),
				 errhint("Apply a deterministic collation to the values, for example COLLATE \"C\".")));
	return collation;
}

/*
 * Type cache entry of typid, with its extended hash function.
 */
TypeCacheEntry *
BloomLookupHash(Oid typid)
{
	TypeCacheEntry *typentry;

	typentry = lookup_type_cache(typid, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
	if (!OidIsValid(typentry->hash_extended_proc_finfo.fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an extended hash function for type %s",
						format_type_be(typid)),
				 errhint("Bloom filters hash values with the default hash operator class of their type; cast the values to a type that has one, such as text.")));
	return typentry;
}

/*
 * Type of argument argno of a call: from the call's expression, or, when
 * the function was looked up without one, the type it declares, unless that
 * is a pseudo-type (anyelement).  Citus' worker_partial_agg calls an
 * aggregate's transition function so, through fmgr alone; the typed forms
 * of bloom_agg have transition functions that declare the type.
 */
static Oid
BloomCallArgType(FmgrInfo *flinfo, int argno)
{
	Oid			argtype = get_fn_expr_argtype(flinfo, argno);
	Oid		   *argtypes;
	int			nargs;

	if (OidIsValid(argtype) || !OidIsValid(flinfo->fn_oid))
		return argtype;
	(void) get_func_signature(flinfo->fn_oid, &argtypes, &nargs);
	if (argno < nargs && get_typtype(argtypes[argno]) != TYPTYPE_PSEUDO)
		argtype = argtypes[argno];
	pfree(argtypes);
	return argtype;
}

/*
 * The fn_extra cache of a call site whose argument argno is a value (or,
 * with is_array, an array of values) to hash, set up on first use.
 */
BloomFnCache *
BloomGetFnCache(FunctionCallInfo fcinfo, int argno, bool is_array)
{
	BloomFnCache *cache = (BloomFnCache *) fcinfo->flinfo->fn_extra;
	Oid			argtype;
	Oid			collation = PG_GET_COLLATION();

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
									   sizeof(BloomFnCache));
		fcinfo->flinfo->fn_extra = cache;
	}
	if (argno < 0)
		return cache;

	/* the argument type and collation of a call site do not change */
	if (OidIsValid(cache->argtype) && collation == cache->inputcollation)
		return cache;

	argtype = BloomCallArgType(fcinfo->flinfo, argno);
	if (!OidIsValid(argtype))
		elog(ERROR, "could not determine the data type of argument %d", argno);

	if (argtype != cache->argtype)
	{
		Oid			basetype = getBaseType(argtype);

		if (is_array)
		{
			Oid			elemtype = get_element_type(basetype);

			if (!OidIsValid(elemtype))
				elog(ERROR, "argument %d is not an array", argno);
			cache->arraytype = basetype;
			cache->arrayentry = NULL;
			get_typlenbyvalalign(elemtype, &cache->elmlen, &cache->elmbyval,
								 &cache->elmalign);
			basetype = getBaseType(elemtype);
		}
		cache->elemtype = basetype;
		cache->typentry = BloomLookupHash(basetype);
		/* an array hashes by OIDs exactly when its elements do */
		cache->hashing = BloomTypeHashingOf(basetype);
		cache->argtype = argtype;
		cache->inputcollation = InvalidOid;
		cache->collation = BloomHashCollation(basetype, InvalidOid);
	}
	if (collation != cache->inputcollation)
	{
		cache->collation = BloomHashCollation(cache->elemtype, collation);
		cache->inputcollation = collation;
	}
	return cache;
}
