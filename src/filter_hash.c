/*-------------------------------------------------------------------------
 *
 * filter_hash.c
 *	  How the bloomfilter type hashes values, and which types it can hash
 *	  the same in every database.
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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
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
