/*-------------------------------------------------------------------------
 *
 * filter.c
 *	  The bloomfilter SQL type: ad hoc bloom filters built and probed in
 *	  queries, without an index.
 *
 * A bloomfilter datum is a varlena whose payload is the portable byte
 * format of filter_format.h, so that storing, sending, receiving and
 * casting to bytea all use the same bytes.  Values are hashed with their
 * type's extended hash function through BloomHashDatum, and their bits are
 * set and tested with salt 0 by the routines of signature.h that the index
 * uses too.
 *
 * A filter whose element type hashes by OIDs local to a database (enums,
 * reg* types, and whatever contains them) records its home database and
 * is refused everywhere else, since it would answer every value as absent
 * there (see filter_format.h).
 *
 * bloom_agg without a capacity collects the distinct 64-bit hashes of its
 * input in an open-addressing hash set, and sizes the filter for their
 * number when it finishes; with a capacity it sets bits directly.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "filter_format.h"
#include "signature.h"
#include "visibility.h"

StaticAssertDecl(BLOOM_FILTER_HASH_SCHEME == BLOOM_HASH_SCHEME,
				 "filter format and signature.h disagree on the hash scheme");
StaticAssertDecl(BLOOM_FILTER_FIRST_UNFIXED_OID == FirstGenbkiObjectId,
				 "filter format must store every non-built-in type by name");
StaticAssertDecl(BLOOM_FILTER_MAX_NAME_LEN == NAMEDATALEN - 1,
				 "filter format type names must fit in NameData");

/* Target rate of bloom_agg without a capacity */
#define BLOOM_DEFAULT_FPR		0.01

/* Salt of the filter type's bit positions (the index salts by column) */
#define BLOOM_FILTER_SALT		0

/* Initial number of slots of bloom_agg's hash set; a power of two */
#define BLOOM_SET_INITIAL_SLOTS	1024

/* Hashes bloom_agg buffers to insert together, prefetching their slots */
#define BLOOM_SET_BATCH			64
#define BLOOM_SET_PREFETCH		8

#if defined(__GNUC__) || defined(__clang__)
#define BloomPrefetch(p)		__builtin_prefetch(p, 1)
#else
#define BloomPrefetch(p)		((void) 0)
#endif

/* A filter datum and its decoded header */
typedef struct BloomFilterData
{
	bytea	   *datum;
	BloomFilterHeader hdr;
	uint8	   *bits;
} BloomFilterData;

/* Per-call-site cache of how to hash a value argument (fn_extra) */
typedef struct BloomFnCache
{
	Oid			argtype;		/* type of the value argument, as passed */
	Oid			inputcollation; /* collation the call site passed */
	Oid			elemtype;		/* base type of the values probed */
	Oid			collation;		/* collation to hash with */
	TypeCacheEntry *typentry;	/* hash function of elemtype */
	bool		oid_hashed;		/* elemtype hashes by database-local OIDs */
	/* for the array forms: the array itself as one value */
	Oid			arraytype;		/* base type of the array argument */
	TypeCacheEntry *arrayentry; /* its hash function, looked up on demand */
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	/* the last out-of-line or compressed filter argument, detoasted */
	char	   *toast_key;
	Size		toast_keylen;
	bytea	   *toast_filter;
} BloomFnCache;

/* Transition state of bloom_agg and bloom_union_agg */
typedef struct BloomAggState
{
	Oid			elemtype;		/* 0 for bloom_union_agg of untyped filters */
	Oid			collation;
	bool		sized;			/* a filter (true) or a set of hashes */
	/* sized: the filter, in the aggregate context, and its shape */
	bytea	   *filter;
	uint8	   *bits;
	uint64		nbits;
	int			nhashes;
	/*
	 * not sized: open-addressing set of nonzero hashes, and the zero hash;
	 * after bloom_agg_deserialfn, slots is a plain list of nslots hashes
	 */
	uint64	   *slots;
	uint64		nslots;
	uint64		nused;
	uint64		grow_at;
	int			shift;
	bool		has_zero;
	int			npending;		/* hashes in pending, not yet in slots */
	uint64		pending[BLOOM_SET_BATCH];
	MemoryContext cxt;
} BloomAggState;

/* Kinds of serialized aggregate state */
#define BLOOM_AGG_SERIAL_SET	1
#define BLOOM_AGG_SERIAL_FILTER	2

PG_FUNCTION_INFO_V1(bloomfilter_in);
PG_FUNCTION_INFO_V1(bloomfilter_out);
PG_FUNCTION_INFO_V1(bloomfilter_recv);
PG_FUNCTION_INFO_V1(bloomfilter_send);
PG_FUNCTION_INFO_V1(bloomfilter_from_bytea);
PG_FUNCTION_INFO_V1(bloom_empty);
PG_FUNCTION_INFO_V1(bloom_empty_raw);
PG_FUNCTION_INFO_V1(bloom_add);
PG_FUNCTION_INFO_V1(bloom_contains);
PG_FUNCTION_INFO_V1(bloom_contains_array);
PG_FUNCTION_INFO_V1(bloom_contains_any);
PG_FUNCTION_INFO_V1(bloom_contains_all);
PG_FUNCTION_INFO_V1(bloom_union);
PG_FUNCTION_INFO_V1(bloom_intersect);
PG_FUNCTION_INFO_V1(bloom_cardinality);
PG_FUNCTION_INFO_V1(bloom_info);
PG_FUNCTION_INFO_V1(bloom_agg_transfn);
PG_FUNCTION_INFO_V1(bloom_agg_sized_transfn);
PG_FUNCTION_INFO_V1(bloom_union_agg_transfn);
PG_FUNCTION_INFO_V1(bloom_agg_finalfn);
PG_FUNCTION_INFO_V1(bloom_agg_combinefn);
PG_FUNCTION_INFO_V1(bloom_agg_serialfn);
PG_FUNCTION_INFO_V1(bloom_agg_deserialfn);

/*
 * Name of a type for messages, even if it no longer exists.
 */
static char *
BloomTypeName(Oid typid)
{
	return format_type_extended(typid, -1, FORMAT_TYPE_ALLOW_INVALID);
}

/*
 * Decode the header of a filter datum that was validated when it entered
 * the server; a failure here means the stored value is corrupt.
 */
static void
BloomFilterOpen(bytea *datum, BloomFilterData *f)
{
	BloomFilterFormatError err;

	f->datum = datum;
	err = BloomFilterDecodeHeader((const uint8 *) VARDATA_ANY(datum),
								  VARSIZE_ANY_EXHDR(datum), &f->hdr, false);
	if (err != BLOOM_FORMAT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt bloom filter: %s",
						BloomFilterFormatErrorMessage(err))));
	f->bits = (uint8 *) VARDATA_ANY(datum) + f->hdr.bits_offset;
}

/*
 * Allocate a filter with the given header and all bits clear.
 */
static bytea *
BloomFilterAllocate(MemoryContext cxt, const BloomFilterHeader *hdr)
{
	size_t		hdrsize = BloomFilterHeaderSize(hdr);
	size_t		size = VARHDRSZ + hdrsize + BLOOM_FILTER_NBYTES(hdr->nbits);
	bytea	   *datum = (bytea *) MemoryContextAllocZero(cxt, size);

	SET_VARSIZE(datum, size);
	BloomFilterEncodeHeader((uint8 *) VARDATA(datum), hdr);
	return datum;
}

/*
 * Copy a filter datum into cxt, with a 4-byte header so that it can be
 * modified in place.
 */
static bytea *
BloomFilterCopy(MemoryContext cxt, const bytea *datum)
{
	Size		len = VARSIZE_ANY_EXHDR(datum);
	bytea	   *copy = (bytea *) MemoryContextAlloc(cxt, VARHDRSZ + len);

	SET_VARSIZE(copy, VARHDRSZ + len);
	memcpy(VARDATA(copy), VARDATA_ANY(datum), len);
	return copy;
}

/*
 * Fill in a header for a filter of nbits bits and nhashes hash functions,
 * sized for capacity values at target rate fpr (both 0 if unknown), with
 * no element type yet.
 */
static void
BloomHeaderInit(BloomFilterHeader *hdr, uint64 nbits, int nhashes,
				uint64 capacity, double fpr)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->version = BLOOM_FILTER_FORMAT_VERSION;
	hdr->hash_scheme = BLOOM_HASH_SCHEME;
	hdr->nhashes = nhashes;
	hdr->nbits = nbits;
	hdr->capacity = capacity;
	hdr->target_fpr = fpr;
}

/*
 * Does the extended hash of values of typid depend on OIDs that differ
 * from one database to another?  True for enums (their labels' OIDs), reg*
 * types and aclitem (the OIDs of what they name), anonymous records (whose
 * columns may be any of these, should they become hashable), and arrays,
 * ranges, multiranges, domains and composite types whose hash goes
 * through such a type.
 */
static bool
BloomTypeHashesOids(Oid typid)
{
	Oid			elemtype;

	check_stack_depth();
	typid = getBaseType(typid);
	/*
	 * Types whose values are OIDs of database objects; and anonymous
	 * records, which PostgreSQL 15 cannot hash, in case a later release can.
	 */
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
			return true;
		default:
			break;
	}

	switch (get_typtype(typid))
	{
		case TYPTYPE_ENUM:
			return true;
		case TYPTYPE_RANGE:
			return BloomTypeHashesOids(get_range_subtype(typid));
		case TYPTYPE_MULTIRANGE:
			return BloomTypeHashesOids(get_multirange_range(typid));
		case TYPTYPE_COMPOSITE:
			{
				TupleDesc	tupdesc = lookup_rowtype_tupdesc(typid, -1);
				bool		result = false;
				int			i;

				for (i = 0; i < tupdesc->natts && !result; i++)
				{
					Form_pg_attribute att = TupleDescAttr(tupdesc, i);

					if (!att->attisdropped)
						result = BloomTypeHashesOids(att->atttypid);
				}
				ReleaseTupleDesc(tupdesc);
				return result;
			}
		default:
			break;
	}

	elemtype = get_element_type(typid);
	return OidIsValid(elemtype) && BloomTypeHashesOids(elemtype);
}

/*
 * Record the element type in a header: by OID, for a type that is not
 * built in also by schema and name (allocated in the current context),
 * and, if its values hash by OIDs (oid_hashed), this database as the
 * filter's home.
 */
static void
BloomHeaderSetType(BloomFilterHeader *hdr, Oid typid, bool oid_hashed)
{
	hdr->elemtype = typid;
	hdr->nspname = hdr->typname = NULL;
	hdr->nspname_len = hdr->typname_len = 0;
	hdr->home_sysid = 0;
	hdr->home_dbid = hdr->home_typid = 0;
	if (oid_hashed)
	{
		hdr->home_sysid = GetSystemIdentifier();
		hdr->home_dbid = MyDatabaseId;
		hdr->home_typid = typid;
	}
	if (typid >= FirstGenbkiObjectId)
	{
		HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
		Form_pg_type typ;
		char	   *nspname;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for type %u", typid);
		typ = (Form_pg_type) GETSTRUCT(tup);
		nspname = get_namespace_name(typ->typnamespace);
		if (nspname == NULL)
			elog(ERROR, "cache lookup failed for namespace %u",
				 typ->typnamespace);
		hdr->nspname = nspname;
		hdr->nspname_len = strlen(nspname);
		hdr->typname = pstrdup(NameStr(typ->typname));
		hdr->typname_len = strlen(hdr->typname);
		ReleaseSysCache(tup);
	}
}

/*
 * Turn external bytes (text, binary or bytea input) into a filter datum:
 * validate them strictly and resolve a stored type name to the local type.
 */
static bytea *
BloomFilterFromBytes(const uint8 *data, size_t len)
{
	BloomFilterHeader hdr;
	BloomFilterFormatError err;
	bytea	   *datum;
	Oid			typid;

	if (len > BLOOM_FILTER_MAX_HEADER_SIZE +
		BLOOM_FILTER_NBYTES(BLOOM_FILTER_MAX_NBITS))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("invalid bloom filter: the data is larger than the largest bloom filter"),
				 errdetail("The data has %zu bytes.", len)));

	err = BloomFilterDecodeHeader(data, len, &hdr, true);
	if (err == BLOOM_FORMAT_TRUNCATED || err == BLOOM_FORMAT_LENGTH_MISMATCH)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("invalid bloom filter: %s",
						BloomFilterFormatErrorMessage(err)),
				 hdr.bits_offset > 0 ?
				 errdetail("The header calls for %zu bytes, the data has %zu.",
						   hdr.bits_offset + hdr.nbytes, len) : 0));
	if (err != BLOOM_FORMAT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("invalid bloom filter: %s",
						BloomFilterFormatErrorMessage(err))));

	typid = hdr.elemtype;
	if (hdr.elemtype >= FirstGenbkiObjectId)
	{
		char	   *nspname = pnstrdup(hdr.nspname, hdr.nspname_len);
		char	   *typname = pnstrdup(hdr.typname, hdr.typname_len);
		Oid			nspid = get_namespace_oid(nspname, true);

		typid = InvalidOid;
		if (OidIsValid(nspid))
			typid = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
									CStringGetDatum(typname),
									ObjectIdGetDatum(nspid));
		if (!OidIsValid(typid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("element type \"%s.%s\" of bloom filter does not exist",
							nspname, typname),
					 errhint("Create the type, or the extension that provides it, before reading the filter.")));
	}
	else if (hdr.elemtype != 0 &&
			 !SearchSysCacheExists1(TYPEOID, ObjectIdGetDatum(hdr.elemtype)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("invalid bloom filter: element type OID %u does not exist",
						hdr.elemtype)));

	datum = (bytea *) palloc(VARHDRSZ + len);
	SET_VARSIZE(datum, VARHDRSZ + len);
	memcpy(VARDATA(datum), data, len);

	/* point the OID at the local type of that name */
	if (typid != hdr.elemtype)
	{
		hdr.elemtype = typid;
		hdr.nspname = (const char *) VARDATA(datum) + BLOOM_FILTER_FIXED_HEADER_SIZE;
		hdr.typname = hdr.nspname + hdr.nspname_len;
		BloomFilterEncodeHeader((uint8 *) VARDATA(datum), &hdr);
	}
	return datum;
}

/*
 * Choose the number of hash functions and of bits for capacity values at
 * false-positive rate fpr, after checking both; errors if the filter would
 * exceed BLOOM_FILTER_MAX_NBITS.
 */
static void
BloomChooseSize(int64 capacity, double fpr, uint64 *nbits, int *nhashes)
{
	double		k;
	double		per_value;
	double		m;

	if (!(fpr > 0.0 && fpr < 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false_positive_rate must be between 0 and 1, exclusive"),
				 errhint("Use a rate greater than 0 and less than 1, such as 0.01.")));

	/* k near log2(1/p) minimizes m; m is then what makes (1-e^(-kn/m))^k = p */
	k = rint(-log2(fpr));
	k = Max(k, 1);
	k = Min(k, BLOOM_FILTER_MAX_NHASHES);
	per_value = -k / log1p(-pow(fpr, 1.0 / k));

	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be greater than zero"),
				 errhint("Use a capacity between 1 and %.0f for a false-positive rate of %g.",
						 floor((double) BLOOM_FILTER_MAX_NBITS / per_value),
						 fpr)));

	m = ceil(per_value * (double) capacity);
	if (!(m <= (double) BLOOM_FILTER_MAX_NBITS))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter for " INT64_FORMAT " values at false-positive rate %g would be larger than 256 MB",
						capacity, fpr),
				 errhint("Use a capacity between 1 and %.0f for this rate, or a larger false-positive rate.",
						 floor((double) BLOOM_FILTER_MAX_NBITS / per_value))));

	*nbits = (uint64) Max(m, 1.0);
	*nhashes = (int) k;
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
static TypeCacheEntry *
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
 * The fn_extra cache of a call site whose argument argno is a value (or,
 * with is_array, an array of values) to hash, set up on first use.
 */
static BloomFnCache *
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

	argtype = get_fn_expr_argtype(fcinfo->flinfo, argno);
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
		cache->oid_hashed = BloomTypeHashesOids(basetype);
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

/*
 * The filter argument argno, detoasted.  A filter stored out of line or
 * compressed is detoasted once per call site and kept while the same
 * stored value comes back, as when a filter from a subquery is probed for
 * every row of a scan.
 */
static bytea *
BloomGetFilterArg(FunctionCallInfo fcinfo, int argno, BloomFnCache *cache)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	Size		keylen;
	MemoryContext oldcxt;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw) && !VARATT_IS_COMPRESSED(raw))
		return (bytea *) PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(argno));

	/* toasted values never change, so equal pointers mean equal values */
	keylen = VARSIZE_ANY(raw);
	if (cache->toast_filter != NULL && cache->toast_keylen == keylen &&
		memcmp(cache->toast_key, raw, keylen) == 0)
		return cache->toast_filter;

	if (cache->toast_filter != NULL)
	{
		pfree(cache->toast_filter);
		pfree(cache->toast_key);
		cache->toast_filter = NULL;
	}
	oldcxt = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	cache->toast_filter = (bytea *) detoast_attr(raw);
	cache->toast_key = palloc(keylen);
	memcpy(cache->toast_key, raw, keylen);
	cache->toast_keylen = keylen;
	MemoryContextSwitchTo(oldcxt);
	return cache->toast_filter;
}

/*
 * Error out unless values of type valuetype may be probed in (or, with
 * adding, added to) a filter with element type elemtype.
 */
static void
BloomCheckValueType(Oid elemtype, Oid valuetype, bool adding)
{
	if (elemtype == 0 || elemtype == valuetype)
		return;
	if (adding)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot add a value of type %s to a bloom filter of type %s",
						BloomTypeName(valuetype), BloomTypeName(elemtype)),
				 errhint("Cast the value to %s.", BloomTypeName(elemtype))));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("cannot probe a bloom filter of type %s with a value of type %s",
					BloomTypeName(elemtype), BloomTypeName(valuetype)),
			 errhint("Cast the value to %s.", BloomTypeName(elemtype))));
}

/*
 * Error out unless a filter may be probed, extended or combined in this
 * database.  A filter with a home database may be used only there, and
 * only while its element type is the type it was built with.  A filter
 * without one may not be used if its element type hashes by OIDs
 * (oid_hashed, which the caller knows if it hashes values): it was made
 * elsewhere, or for another type of that name.
 */
static void
BloomCheckHome(const BloomFilterHeader *hdr, bool oid_hashed)
{
	if (hdr->elemtype == 0)
		return;

	if (hdr->home_dbid == 0)
	{
		if (oid_hashed)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot use a bloom filter of type %s that does not record the database that built it",
							BloomTypeName(hdr->elemtype)),
					 errdetail("Values of type %s hash by object identifiers (OIDs), which differ from one database to another.",
							   BloomTypeName(hdr->elemtype)),
					 errhint("Build the filter from the values cast to text, for example bloom_agg(col::text), or build it again in this database.")));
		return;
	}

	if (hdr->home_sysid != GetSystemIdentifier() ||
		hdr->home_dbid != MyDatabaseId)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot use a bloom filter of type %s outside the database that built it",
						BloomTypeName(hdr->elemtype)),
				 errdetail("Values of type %s hash by object identifiers (OIDs), which differ from one database to another.",
						   BloomTypeName(hdr->elemtype)),
				 errhint("Build the filter from the values cast to text, for example bloom_agg(col::text), or build it again in this database.")));

	if (hdr->home_typid != hdr->elemtype)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot use a bloom filter of type %s built for another type of that name",
						BloomTypeName(hdr->elemtype)),
				 errdetail("Values of type %s hash by object identifiers (OIDs), and the filter was built for a type that had the same name, since dropped or renamed.",
						   BloomTypeName(hdr->elemtype)),
				 errhint("Build the filter again.")));
}

/*
 * Error out unless two filters have the same element type (or one has
 * none yet), size, number of hash functions, hash scheme and home
 * database, and may be used in this database.
 */
static void
BloomCheckCompatible(const BloomFilterHeader *a, const BloomFilterHeader *b)
{
	if (a->elemtype != 0 && b->elemtype != 0 && a->elemtype != b->elemtype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot combine a bloom filter of type %s with a bloom filter of type %s",
						BloomTypeName(a->elemtype), BloomTypeName(b->elemtype))));
	if (a->nbits != b->nbits || a->nhashes != b->nhashes)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine a bloom filter of " UINT64_FORMAT " bits and %u hash functions with a bloom filter of " UINT64_FORMAT " bits and %u hash functions",
						a->nbits, a->nhashes, b->nbits, b->nhashes),
				 errhint("Combine filters created with the same capacity and false-positive rate, or the same nbits and nhashes.")));
	if (a->hash_scheme != b->hash_scheme)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine a bloom filter of hash scheme %u with a bloom filter of hash scheme %u",
						a->hash_scheme, b->hash_scheme)));
	BloomCheckHome(a, false);
	BloomCheckHome(b, false);
	/* both usable here, so a difference is one with a home and one without */
	if (a->elemtype != 0 && b->elemtype != 0 &&
		(a->home_sysid != b->home_sysid || a->home_dbid != b->home_dbid ||
		 a->home_typid != b->home_typid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot combine bloom filters of type %s built in different databases",
						BloomTypeName(a->elemtype)),
				 errdetail("Values of type %s hash by object identifiers (OIDs), which differ from one database to another, and only one of the filters records the database that built it.",
						   BloomTypeName(a->elemtype)),
				 errhint("Build the filters from the values cast to text, for example bloom_agg(col::text), or build them again in this database.")));
}

/*
 * Combine filter b into filter a, which is writable and in cxt, by OR
 * (union) or AND (intersection); returns the result, which replaces a.
 * The result has the element type of whichever has one, and keeps the
 * capacity and target rate only if both agree on them.
 */
static bytea *
BloomCombineInto(MemoryContext cxt, bytea *a, bytea *b, bool intersect)
{
	BloomFilterData fa;
	BloomFilterData fb;
	size_t		i;

	BloomFilterOpen(a, &fa);
	BloomFilterOpen(b, &fb);
	BloomCheckCompatible(&fa.hdr, &fb.hdr);

	/* take b's header (type and names) when a has no type yet */
	if (fa.hdr.elemtype == 0 && fb.hdr.elemtype != 0)
	{
		bytea	   *result = BloomFilterCopy(cxt, b);
		BloomFilterData fr;

		BloomFilterOpen(result, &fr);
		for (i = 0; i < fr.hdr.nbytes; i++)
			fr.bits[i] = intersect ? (fr.bits[i] & fa.bits[i]) : (fr.bits[i] | fa.bits[i]);
		pfree(a);
		a = result;
		fb = fa;				/* compare sizing with the old a below */
		BloomFilterOpen(a, &fa);
	}
	else if (intersect)
	{
		for (i = 0; i < fa.hdr.nbytes; i++)
			fa.bits[i] &= fb.bits[i];
	}
	else
	{
		for (i = 0; i < fa.hdr.nbytes; i++)
			fa.bits[i] |= fb.bits[i];
	}

	if (fa.hdr.capacity != fb.hdr.capacity ||
		fa.hdr.target_fpr != fb.hdr.target_fpr)
	{
		uint8		buf[BLOOM_FILTER_MAX_HEADER_SIZE];

		fa.hdr.capacity = 0;
		fa.hdr.target_fpr = 0;
		BloomFilterEncodeHeader(buf, &fa.hdr);
		memcpy(VARDATA(a), buf, BLOOM_FILTER_FIXED_HEADER_SIZE);
	}
	return a;
}

/*
 * Text input: "\x" followed by the hex digits of the byte format.
 */
Datum
bloomfilter_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	size_t		len = strlen(str);
	uint8	   *bytes;

	if (len < 2 || str[0] != '\\' || str[1] != 'x')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s", "bloomfilter"),
				 errdetail("A bloom filter is written as \\x followed by hexadecimal digits.")));
	len -= 2;
	if (len / 2 > BLOOM_FILTER_MAX_HEADER_SIZE +
		BLOOM_FILTER_NBYTES(BLOOM_FILTER_MAX_NBITS))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("invalid bloom filter: the data is larger than the largest bloom filter")));
	bytes = palloc(len / 2 + 1);
	if (!BloomFilterHexDecode(str + 2, len, bytes))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s", "bloomfilter"),
				 errdetail("A bloom filter is written as \\x followed by an even number of hexadecimal digits.")));
	PG_RETURN_BYTEA_P(BloomFilterFromBytes(bytes, len / 2));
}

/*
 * Text output: "\x" followed by the hex digits of the byte format.
 */
Datum
bloomfilter_out(PG_FUNCTION_ARGS)
{
	bytea	   *datum = PG_GETARG_BYTEA_PP(0);
	size_t		len = VARSIZE_ANY_EXHDR(datum);
	char	   *result = palloc(2 * len + 3);
	uint64		n;

	result[0] = '\\';
	result[1] = 'x';
	n = hex_encode(VARDATA_ANY(datum), len, result + 2);
	result[2 + n] = '\0';
	PG_RETURN_CSTRING(result);
}

/*
 * Binary input: the byte format.
 */
Datum
bloomfilter_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, len);

	PG_RETURN_BYTEA_P(BloomFilterFromBytes((const uint8 *) data, len));
}

/*
 * Binary output: the byte format.
 */
Datum
bloomfilter_send(PG_FUNCTION_ARGS)
{
	bytea	   *datum = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA_ANY(datum), VARSIZE_ANY_EXHDR(datum));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * Cast from bytea, validated like any other input.
 */
Datum
bloomfilter_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_BYTEA_P(BloomFilterFromBytes((const uint8 *) VARDATA_ANY(data),
										   VARSIZE_ANY_EXHDR(data)));
}

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
 * bloom_add(filter, value): a copy of the filter with the value added.
 */
Datum
bloom_add(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	BloomFilterData f;
	bytea	   *out;
	uint64		hash;

	BloomFilterOpen(in, &f);
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, true);
	BloomCheckHome(&f.hdr, cache->oid_hashed);

	if (f.hdr.elemtype == 0)
	{
		BloomFilterHeader hdr = f.hdr;

		BloomHeaderSetType(&hdr, cache->elemtype, cache->oid_hashed);
		out = BloomFilterAllocate(CurrentMemoryContext, &hdr);
	}
	else
		out = BloomFilterCopy(CurrentMemoryContext, in);
	BloomFilterOpen(out, &f);

	hash = BloomHashDatum(&cache->typentry->hash_extended_proc_finfo,
						  cache->collation, PG_GETARG_DATUM(1));
	BloomSetBits(f.bits, f.hdr.nbits, hash, BLOOM_FILTER_SALT, f.hdr.nhashes);
	PG_RETURN_BYTEA_P(out);
}

/*
 * bloom_contains(filter, value): might the filter contain the value?
 */
Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	BloomFilterData f;
	uint64		hash;

	BloomFilterOpen(BloomGetFilterArg(fcinfo, 0, cache), &f);
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f.hdr, cache->oid_hashed);
	if (f.hdr.elemtype == 0)
		PG_RETURN_BOOL(false);

	hash = BloomHashDatum(&cache->typentry->hash_extended_proc_finfo,
						  cache->collation, PG_GETARG_DATUM(1));
	PG_RETURN_BOOL(BloomTestBits(f.bits, f.hdr.nbits, hash, BLOOM_FILTER_SALT,
								 f.hdr.nhashes));
}

/* What the array forms of bloom_contains compute */
typedef enum BloomArrayProbe
{
	BLOOM_PROBE_EACH,
	BLOOM_PROBE_ANY,
	BLOOM_PROBE_ALL
} BloomArrayProbe;

/*
 * Probe each element of the array argument (or the whole array, if the
 * filter holds arrays of that type) and answer as mode asks, with SQL's
 * NULL semantics of = ANY and = ALL for the aggregate answers.
 */
static Datum
BloomContainsArray(FunctionCallInfo fcinfo, BloomArrayProbe mode)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, true);
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(1);
	BloomFilterData f;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	bool	   *answers;
	bool		any_null = false;
	int			i;

	BloomFilterOpen(BloomGetFilterArg(fcinfo, 0, cache), &f);

	/* a filter of arrays: the array is one value */
	if (f.hdr.elemtype != 0 && f.hdr.elemtype == cache->arraytype &&
		f.hdr.elemtype != cache->elemtype)
	{
		bool		found;

		BloomCheckHome(&f.hdr, cache->oid_hashed);
		if (cache->arrayentry == NULL)
			cache->arrayentry = BloomLookupHash(cache->arraytype);
		found = BloomTestBits(f.bits, f.hdr.nbits,
							  BloomHashDatum(&cache->arrayentry->hash_extended_proc_finfo,
											 cache->collation,
											 PointerGetDatum(array)),
							  BLOOM_FILTER_SALT, f.hdr.nhashes);
		if (mode == BLOOM_PROBE_EACH)
		{
			Datum		d = BoolGetDatum(found);

			PG_RETURN_ARRAYTYPE_P(construct_array(&d, 1, BOOLOID, 1, true,
												  TYPALIGN_CHAR));
		}
		PG_RETURN_BOOL(found);
	}
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f.hdr, cache->oid_hashed);

	deconstruct_array(array, ARR_ELEMTYPE(array), cache->elmlen,
					  cache->elmbyval, cache->elmalign,
					  &elems, &nulls, &nelems);
	answers = palloc(sizeof(bool) * Max(nelems, 1));
	for (i = 0; i < nelems; i++)
	{
		bool		found = false;

		if (nulls[i])
		{
			any_null = true;
			answers[i] = false;
			continue;
		}
		if (f.hdr.elemtype != 0)
			found = BloomTestBits(f.bits, f.hdr.nbits,
								  BloomHashDatum(&cache->typentry->hash_extended_proc_finfo,
												 cache->collation, elems[i]),
								  BLOOM_FILTER_SALT, f.hdr.nhashes);
		answers[i] = found;
		if (mode == BLOOM_PROBE_ANY && found)
			PG_RETURN_BOOL(true);
		if (mode == BLOOM_PROBE_ALL && !found)
			PG_RETURN_BOOL(false);
	}

	if (mode == BLOOM_PROBE_EACH)
	{
		Datum	   *values = palloc(sizeof(Datum) * Max(nelems, 1));
		int			ndims = ARR_NDIM(array);
		ArrayType  *result;

		for (i = 0; i < nelems; i++)
			values[i] = BoolGetDatum(answers[i]);
		if (ndims == 0)
			result = construct_empty_array(BOOLOID);
		else
			result = construct_md_array(values, nulls, ndims, ARR_DIMS(array),
										ARR_LBOUND(array), BOOLOID, 1, true,
										TYPALIGN_CHAR);
		PG_RETURN_ARRAYTYPE_P(result);
	}
	if (any_null)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(mode == BLOOM_PROBE_ALL);
}

/*
 * bloom_contains(filter, array): for each element, might the filter
 * contain it?  NULL elements answer NULL.
 */
Datum
bloom_contains_array(PG_FUNCTION_ARGS)
{
	return BloomContainsArray(fcinfo, BLOOM_PROBE_EACH);
}

/*
 * bloom_contains_any(filter, array): might the filter contain any element?
 */
Datum
bloom_contains_any(PG_FUNCTION_ARGS)
{
	return BloomContainsArray(fcinfo, BLOOM_PROBE_ANY);
}

/*
 * bloom_contains_all(filter, array): might the filter contain every
 * element?
 */
Datum
bloom_contains_all(PG_FUNCTION_ARGS)
{
	return BloomContainsArray(fcinfo, BLOOM_PROBE_ALL);
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
 * Estimated number of distinct values added to a filter with nset of its
 * bits set; infinite once every bit is set.
 */
static double
BloomEstimateCardinality(const BloomFilterHeader *hdr, uint64 nset)
{
	double		m = (double) hdr->nbits;

	if (nset == 0)
		return 0.0;
	if (nset >= hdr->nbits)
		return get_float8_infinity();
	return -(m / hdr->nhashes) * log1p(-(double) nset / m);
}

/*
 * bloom_cardinality(filter): estimated number of distinct values added.
 */
Datum
bloom_cardinality(PG_FUNCTION_ARGS)
{
	BloomFilterData f;

	BloomFilterOpen(PG_GETARG_BYTEA_PP(0), &f);
	PG_RETURN_FLOAT8(BloomEstimateCardinality(&f.hdr,
											  BloomCountBits(f.bits, f.hdr.nbytes)));
}

/*
 * bloom_info(filter): one record describing the filter.
 */
Datum
bloom_info(PG_FUNCTION_ARGS)
{
	bytea	   *datum = PG_GETARG_BYTEA_PP(0);
	BloomFilterData f;
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11];
	uint64		nset;
	double		fill;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	BloomFilterOpen(datum, &f);
	nset = BloomCountBits(f.bits, f.hdr.nbytes);
	fill = (double) nset / (double) f.hdr.nbits;

	memset(nulls, 0, sizeof(nulls));
	values[0] = Int32GetDatum(f.hdr.version);
	values[1] = ObjectIdGetDatum(f.hdr.elemtype);
	nulls[1] = (f.hdr.elemtype == 0);
	values[2] = Int64GetDatum((int64) f.hdr.nbits);
	values[3] = Int32GetDatum((int32) f.hdr.nhashes);
	values[4] = Int64GetDatum((int64) f.hdr.capacity);
	nulls[4] = (f.hdr.capacity == 0);
	values[5] = Float8GetDatum(f.hdr.target_fpr);
	nulls[5] = (f.hdr.capacity == 0);
	values[6] = Int64GetDatum((int64) nset);
	values[7] = Float8GetDatum(fill);
	values[8] = Float8GetDatum(BloomEstimateCardinality(&f.hdr, nset));
	values[9] = Float8GetDatum(BloomFalsePositiveRate(fill, f.hdr.nhashes));
	values[10] = Int64GetDatum((int64) VARSIZE_ANY_EXHDR(datum));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * Set up the hash set of an aggregate state with room for nslots hashes
 * (a power of two).
 */
static void
BloomSetAllocate(BloomAggState *state, uint64 nslots)
{
	state->slots = (uint64 *) MemoryContextAllocExtended(state->cxt,
														 nslots * sizeof(uint64),
														 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	state->nslots = nslots;
	state->shift = 64 - pg_leftmost_one_pos64(nslots);
	state->grow_at = nslots / 2 + nslots / 4;
	state->nused = 0;
}

/*
 * Most distinct values bloom_agg without a capacity can take: the most a
 * filter at the default rate holds within BLOOM_FILTER_MAX_NBITS.
 */
static uint64
BloomSetMaxDistinct(void)
{
	static uint64 max_distinct = 0;

	if (max_distinct == 0)
	{
		double		k = rint(-log2(BLOOM_DEFAULT_FPR));

		max_distinct = (uint64) floor((double) BLOOM_FILTER_MAX_NBITS *
									  -log1p(-pow(BLOOM_DEFAULT_FPR, 1.0 / k)) / k);
	}
	return max_distinct;
}

/*
 * Slot where the search for hash starts.
 */
static inline uint64
BloomSetHome(const BloomAggState *state, uint64 hash)
{
	return (hash * UINT64CONST(0x9e3779b97f4a7c15)) >> state->shift;
}

static void BloomSetInsert(BloomAggState *state, uint64 hash);

/*
 * Double the hash set of an aggregate state.
 */
static void
BloomSetGrow(BloomAggState *state)
{
	uint64	   *old = state->slots;
	uint64		oldn = state->nslots;
	uint64		i;

	if (state->nused + state->has_zero > BloomSetMaxDistinct())
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many distinct values for a bloom filter of at most 256 MB at false-positive rate %g",
						BLOOM_DEFAULT_FPR),
				 errhint("Use bloom_agg(value, capacity, false_positive_rate) with a capacity of at most " UINT64_FORMAT ", or a larger rate.",
						 BloomSetMaxDistinct())));

	BloomSetAllocate(state, oldn * 2);
	for (i = 0; i < oldn; i++)
	{
		if (old[i] != 0)
			BloomSetInsert(state, old[i]);
	}
	pfree(old);
}

/*
 * Add a hash to the hash set of an aggregate state (linear probing,
 * Fibonacci hashing of the 64-bit hash to a slot).
 */
static inline void
BloomSetInsert(BloomAggState *state, uint64 hash)
{
	uint64		mask = state->nslots - 1;
	uint64		i;

	if (hash == 0)
	{
		state->has_zero = true;
		return;
	}
	i = BloomSetHome(state, hash);
	for (;;)
	{
		uint64		cur = state->slots[i];

		if (cur == hash)
			return;
		if (cur == 0)
			break;
		i = (i + 1) & mask;
	}
	state->slots[i] = hash;
	if (++state->nused > state->grow_at)
		BloomSetGrow(state);
}

/*
 * Make filter (in the state's context) the filter of a sized state.
 */
static void
BloomAggStateSetFilter(BloomAggState *state, bytea *filter)
{
	BloomFilterData f;

	BloomFilterOpen(filter, &f);
	state->filter = filter;
	state->bits = f.bits;
	state->nbits = f.hdr.nbits;
	state->nhashes = f.hdr.nhashes;
	state->elemtype = f.hdr.elemtype;
}

/*
 * Insert the buffered hashes of an aggregate state into its hash set,
 * prefetching the slots of the hashes a few places ahead, so that the
 * cache misses of a large set overlap.
 */
static void
BloomSetFlush(BloomAggState *state)
{
	int			n = state->npending;
	int			i;

	state->npending = 0;
	for (i = 0; i < n; i++)
	{
		if (i + BLOOM_SET_PREFETCH < n)
			BloomPrefetch(&state->slots[BloomSetHome(state, state->pending[i + BLOOM_SET_PREFETCH])]);
		BloomSetInsert(state, state->pending[i]);
	}
}

/*
 * Add a hash to an aggregate state's set, through the batch buffer.
 */
static inline void
BloomSetAdd(BloomAggState *state, uint64 hash)
{
	state->pending[state->npending++] = hash;
	if (state->npending == BLOOM_SET_BATCH)
		BloomSetFlush(state);
}

/*
 * A new aggregate state in cxt: a set of hashes, or with filter (already
 * in cxt) a sized filter.
 */
static BloomAggState *
BloomAggStateCreate(MemoryContext cxt, Oid elemtype, Oid collation,
					bytea *filter)
{
	BloomAggState *state = MemoryContextAllocZero(cxt, sizeof(BloomAggState));

	state->cxt = cxt;
	state->elemtype = elemtype;
	state->collation = collation;
	state->sized = (filter != NULL);
	if (state->sized)
		BloomAggStateSetFilter(state, filter);
	else
		BloomSetAllocate(state, BLOOM_SET_INITIAL_SLOTS);
	return state;
}

/*
 * The aggregate memory context of a transition or combine function.
 */
static MemoryContext
BloomAggContext(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "%s called in non-aggregate context", fname);
	return aggcxt;
}

/*
 * bloom_agg(value) transition: add the value's hash to the set.
 */
Datum
bloom_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = BloomAggContext(fcinfo, "bloom_agg_transfn");
	BloomAggState *state = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomFnCache *cache;

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}

	cache = BloomGetFnCache(fcinfo, 1, false);
	if (state == NULL)
		state = BloomAggStateCreate(aggcxt, cache->elemtype, cache->collation,
									NULL);
	BloomSetAdd(state,
				BloomHashDatum(&cache->typentry->hash_extended_proc_finfo,
							   cache->collation, PG_GETARG_DATUM(1)));
	PG_RETURN_POINTER(state);
}

/*
 * bloom_agg(value, capacity, false_positive_rate) transition: set the
 * value's bits in a filter sized on the first value.
 */
Datum
bloom_agg_sized_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = BloomAggContext(fcinfo, "bloom_agg_sized_transfn");
	BloomAggState *state = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomFnCache *cache;

	if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("capacity and false_positive_rate of bloom_agg must not be null"),
				 errhint("Omit both to size the filter for the distinct values seen.")));
	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}

	cache = BloomGetFnCache(fcinfo, 1, false);
	if (state == NULL)
	{
		BloomFilterHeader hdr;
		uint64		nbits;
		int			nhashes;

		BloomChooseSize(PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3),
						&nbits, &nhashes);
		BloomHeaderInit(&hdr, nbits, nhashes, PG_GETARG_INT64(2),
						PG_GETARG_FLOAT8(3));
		BloomHeaderSetType(&hdr, cache->elemtype, cache->oid_hashed);
		state = BloomAggStateCreate(aggcxt, cache->elemtype, cache->collation,
									BloomFilterAllocate(aggcxt, &hdr));
	}

	BloomSetBits(state->bits, state->nbits,
				 BloomHashDatum(&cache->typentry->hash_extended_proc_finfo,
								cache->collation, PG_GETARG_DATUM(1)),
				 BLOOM_FILTER_SALT, state->nhashes);
	PG_RETURN_POINTER(state);
}

/*
 * bloom_union_agg(filter) transition: OR the filter into the state.
 */
Datum
bloom_union_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = BloomAggContext(fcinfo, "bloom_union_agg_transfn");
	BloomAggState *state = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	bytea	   *in;
	BloomFilterData f;

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}

	in = PG_GETARG_BYTEA_PP(1);
	if (state == NULL)
	{
		BloomFilterOpen(in, &f);
		state = BloomAggStateCreate(aggcxt, f.hdr.elemtype, InvalidOid,
									BloomFilterCopy(aggcxt, in));
	}
	else
		BloomAggStateSetFilter(state,
							   BloomCombineInto(aggcxt, state->filter, in, false));
	PG_RETURN_POINTER(state);
}

/*
 * Final function of the aggregates: the filter, or NULL if no non-NULL
 * value came.  Without a capacity, the filter is sized here for the number
 * of distinct hashes seen, at the default rate.
 */
Datum
bloom_agg_finalfn(PG_FUNCTION_ARGS)
{
	BloomAggState *state;
	BloomFilterHeader hdr;
	BloomFilterData f;
	bytea	   *result;
	uint64		ndistinct;
	uint64		nbits;
	int			nhashes;
	uint64		i;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_finalfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (BloomAggState *) PG_GETARG_POINTER(0);

	if (state->sized)
		PG_RETURN_BYTEA_P(BloomFilterCopy(CurrentMemoryContext, state->filter));

	/* the set does not change, only where some of its hashes are */
	BloomSetFlush(state);
	ndistinct = state->nused + state->has_zero;
	BloomChooseSize((int64) ndistinct, BLOOM_DEFAULT_FPR, &nbits, &nhashes);
	BloomHeaderInit(&hdr, nbits, nhashes, ndistinct, BLOOM_DEFAULT_FPR);
	BloomHeaderSetType(&hdr, state->elemtype,
					   BloomTypeHashesOids(state->elemtype));
	result = BloomFilterAllocate(CurrentMemoryContext, &hdr);
	BloomFilterOpen(result, &f);

	if (state->has_zero)
		BloomSetBits(f.bits, nbits, 0, BLOOM_FILTER_SALT, nhashes);
	for (i = 0; i < state->nslots; i++)
	{
		if (state->slots[i] != 0)
			BloomSetBits(f.bits, nbits, state->slots[i], BLOOM_FILTER_SALT,
						 nhashes);
	}
	PG_RETURN_BYTEA_P(result);
}

/*
 * Combine function of the aggregates: merge state2 into state1, creating
 * state1 in the aggregate context when it is empty.
 */
Datum
bloom_agg_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = BloomAggContext(fcinfo, "bloom_agg_combinefn");
	BloomAggState *state1 = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomAggState *state2 = PG_ARGISNULL(1) ? NULL : (BloomAggState *) PG_GETARG_POINTER(1);
	uint64		i;

	if (state2 == NULL)
	{
		if (state1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state1);
	}
	if (!state2->sized)
		BloomSetFlush(state2);
	if (state1 != NULL && !state1->sized)
		BloomSetFlush(state1);

	if (state1 == NULL)
	{
		state1 = BloomAggStateCreate(aggcxt, state2->elemtype,
									 state2->collation,
									 state2->sized ? BloomFilterCopy(aggcxt, state2->filter) : NULL);
		if (state2->sized)
			PG_RETURN_POINTER(state1);

		/* room for state2's hashes without growing */
		{
			uint64		nslots = BLOOM_SET_INITIAL_SLOTS;

			while (nslots / 2 + nslots / 4 < state2->nused)
				nslots *= 2;
			if (nslots != state1->nslots)
			{
				pfree(state1->slots);
				BloomSetAllocate(state1, nslots);
			}
		}
	}

	if (state1->sized != state2->sized)
		elog(ERROR, "cannot combine bloom_agg states of different kinds");

	if (state1->sized)
		BloomAggStateSetFilter(state1,
							   BloomCombineInto(aggcxt, state1->filter,
												state2->filter, false));
	else
	{
		if (state1->elemtype != state2->elemtype)
			elog(ERROR, "cannot combine bloom_agg states of types %u and %u",
				 state1->elemtype, state2->elemtype);
		/* state2 is a set, or a list from bloom_agg_deserialfn */
		if (state2->has_zero)
			state1->has_zero = true;
		for (i = 0; i < state2->nslots; i++)
		{
			if (state2->slots[i] != 0)
				BloomSetAdd(state1, state2->slots[i]);
		}
		BloomSetFlush(state1);
	}
	PG_RETURN_POINTER(state1);
}

/*
 * Serial function of the aggregates: the state as bytea, for parallel
 * workers; a set of hashes is sent as the hashes alone.
 */
Datum
bloom_agg_serialfn(PG_FUNCTION_ARGS)
{
	BloomAggState *state = (BloomAggState *) PG_GETARG_POINTER(0);
	StringInfoData buf;
	uint64		i;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_serialfn called in non-aggregate context");

	if (!state->sized)
		BloomSetFlush(state);
	pq_begintypsend(&buf);
	pq_sendbyte(&buf, state->sized ? BLOOM_AGG_SERIAL_FILTER : BLOOM_AGG_SERIAL_SET);
	pq_sendint32(&buf, state->elemtype);
	pq_sendint32(&buf, state->collation);
	if (state->sized)
		pq_sendbytes(&buf, VARDATA_ANY(state->filter),
					 VARSIZE_ANY_EXHDR(state->filter));
	else
	{
		uint64	   *out;
		uint64		n = 0;

		pq_sendbyte(&buf, state->has_zero);
		pq_sendint64(&buf, state->nused);
		enlargeStringInfo(&buf, state->nused * sizeof(uint64));
		out = (uint64 *) (buf.data + buf.len);
		for (i = 0; i < state->nslots; i++)
		{
			if (state->slots[i] != 0)
				memcpy(&out[n++], &state->slots[i], sizeof(uint64));
		}
		Assert(n == state->nused);
		buf.len += n * sizeof(uint64);
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * Deserial function of the aggregates: a state from bloom_agg_serialfn's
 * bytes, in the current memory context.
 */
Datum
bloom_agg_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;
	BloomAggState *state;
	int			kind;
	Oid			elemtype;
	Oid			collation;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_deserialfn called in non-aggregate context");

	/* read in place */
	buf.data = VARDATA_ANY(data);
	buf.len = VARSIZE_ANY_EXHDR(data);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	kind = pq_getmsgbyte(&buf);
	elemtype = pq_getmsgint(&buf, 4);
	collation = pq_getmsgint(&buf, 4);

	if (kind == BLOOM_AGG_SERIAL_FILTER)
	{
		int			len = buf.len - buf.cursor;
		bytea	   *filter = palloc(VARHDRSZ + len);

		SET_VARSIZE(filter, VARHDRSZ + len);
		memcpy(VARDATA(filter), pq_getmsgbytes(&buf, len), len);
		state = BloomAggStateCreate(CurrentMemoryContext, elemtype, collation,
									filter);
	}
	else if (kind == BLOOM_AGG_SERIAL_SET)
	{
		bool		has_zero = pq_getmsgbyte(&buf) != 0;
		uint64		n = pq_getmsgint64(&buf);
		if (n > (uint64) (buf.len - buf.cursor) / sizeof(uint64))
			elog(ERROR, "invalid bloom_agg state: " UINT64_FORMAT " hashes announced",
				 n);

		/*
		 * Only bloom_agg_combinefn reads this state: leave the hashes in a
		 * plain list, which it inserts into its own set.
		 */
		state = MemoryContextAllocZero(CurrentMemoryContext,
									   sizeof(BloomAggState));
		state->cxt = CurrentMemoryContext;
		state->elemtype = elemtype;
		state->collation = collation;
		state->has_zero = has_zero;
		state->slots = palloc(Max(n, 1) * sizeof(uint64));
		memcpy(state->slots, pq_getmsgbytes(&buf, (int) (n * sizeof(uint64))),
			   n * sizeof(uint64));
		state->nslots = n;
		state->nused = n;
	}
	else
		elog(ERROR, "invalid bloom_agg state kind %d", kind);
	pq_getmsgend(&buf);

	PG_RETURN_POINTER(state);
}
