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
 * No new filter is bound to one database: a filter of an enum hashes its
 * labels (hash scheme 2, filter_hash.c), and one of any other type whose
 * hash goes through OIDs local to a database is refused.  A filter built
 * before that, which records its home database, is refused everywhere else
 * (it would answer every value as absent there), and refused by the output
 * functions, so that no dump carries it (see filter_format.h).  The output
 * writes the element type's current name, so that a dump taken after the
 * type was renamed restores.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#ifndef WIN32
#include <sys/mman.h>
#endif

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "filter.h"
#include "signature.h"

StaticAssertDecl(BLOOM_FILTER_HASH_SCHEME == BLOOM_HASH_SCHEME,
				 "filter format and signature.h disagree on the hash scheme");
StaticAssertDecl(BLOOM_FILTER_FIRST_UNFIXED_OID == FirstGenbkiObjectId,
				 "filter format must store every non-built-in type by name");
StaticAssertDecl(BLOOM_FILTER_MAX_NAME_LEN == NAMEDATALEN - 1,
				 "filter format type names must fit in NameData");

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
PG_FUNCTION_INFO_V1(bloom_contains_array_keyed);
PG_FUNCTION_INFO_V1(bloom_contains_any_keyed);
PG_FUNCTION_INFO_V1(bloom_contains_all_keyed);
PG_FUNCTION_INFO_V1(bloom_union);
PG_FUNCTION_INFO_V1(bloom_intersect);
PG_FUNCTION_INFO_V1(bloom_cardinality);
PG_FUNCTION_INFO_V1(bloom_info);

/*
 * Name of a type for messages, even if it no longer exists.
 */
char *
BloomTypeName(Oid typid)
{
	return format_type_extended(typid, -1, FORMAT_TYPE_ALLOW_INVALID);
}

/*
 * Decode the header of a filter datum that was validated when it entered
 * the server; a failure here means the stored value is corrupt.
 */
void
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
	f->data = (uint8 *) VARDATA_ANY(datum);
	f->bits = f->data + f->hdr.bits_offset;
}

/*
 * Allocate a filter with the given header and all bits clear.
 */
bytea *
BloomFilterAllocate(MemoryContext cxt, const BloomFilterHeader *hdr)
{
	BloomFilterHeader layout = *hdr;
	size_t		size;
	bytea	   *datum;

	BloomFilterLayoutLayers(&layout);
	size = VARHDRSZ + layout.bits_offset + layout.nbytes;
	datum = (bytea *) MemoryContextAllocExtended(cxt, size, MCXT_ALLOC_ZERO);
	SET_VARSIZE(datum, size);
	BloomFilterEncodeHeader((uint8 *) VARDATA(datum), &layout);
	return datum;
}

/*
 * Copy a filter datum into cxt, with a 4-byte header so that it can be
 * modified in place.
 */
bytea *
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
void
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
	hdr->nlayers = 1;
	hdr->layers[0].nbits = nbits;
	hdr->layers[0].nhashes = nhashes;
}

/*
 * The current schema and name of type typid, allocated in the current
 * context; false if the type no longer exists.
 */
bool
BloomTypeNames(Oid typid, char **nspname, char **typname)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Form_pg_type typ;
	Oid			nspid;

	if (!HeapTupleIsValid(tup))
		return false;
	typ = (Form_pg_type) GETSTRUCT(tup);
	nspid = typ->typnamespace;
	*typname = pstrdup(NameStr(typ->typname));
	ReleaseSysCache(tup);
	*nspname = get_namespace_name(nspid);
	if (*nspname == NULL)
		elog(ERROR, "cache lookup failed for namespace %u", nspid);
	return true;
}

/*
 * Record the element type of a new filter in a header: by OID, for a type
 * that is not built in also by schema and name (allocated in the current
 * context), with the hash scheme for a type that hashes as hashing says.
 * A type whose values hash by database-local OIDs with no portable form is
 * refused; no home database is recorded.
 */
void
BloomHeaderSetType(BloomFilterHeader *hdr, Oid typid, BloomTypeHashing hashing)
{
	BloomCheckNewType(typid, hashing);
	hdr->elemtype = typid;
	hdr->hash_scheme = BloomSchemeFor(hashing);
	hdr->nspname = hdr->typname = NULL;
	hdr->nspname_len = hdr->typname_len = 0;
	hdr->home_sysid = 0;
	hdr->home_dbid = hdr->home_typid = 0;
	if (typid >= FirstGenbkiObjectId)
	{
		char	   *nspname;
		char	   *typname;

		if (!BloomTypeNames(typid, &nspname, &typname))
			elog(ERROR, "cache lookup failed for type %u", typid);
		hdr->nspname = nspname;
		hdr->nspname_len = strlen(nspname);
		hdr->typname = typname;
		hdr->typname_len = strlen(typname);
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

		/*
		 * A built-in type is stored by OID alone: a filter naming one would
		 * be written with a built-in OID and names, which no reader accepts,
		 * so it is refused here rather than stored unreadable.
		 */
		if (typid < FirstGenbkiObjectId)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("invalid bloom filter: element type \"%s.%s\" is built in, but is named with OID %u",
							nspname, typname, hdr.elemtype),
					 errdetail("Built-in types are recorded by their OID alone, below %u.",
							   (unsigned) FirstGenbkiObjectId)));
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
 * Bits per value and number of hash functions of a filter of the variant
 * flags at false-positive rate fpr.  A plain or counting filter takes k near
 * log2(1/p), which minimizes m, and then the m that makes (1-e^(-kn/m))^k
 * = p.  A blocked filter's rate is worse at equal size (the blocks' loads
 * vary): it takes the least bits per value, over k near that k, for which
 * BloomBlockedRate meets p.
 */
static void
BloomBitsPerValue(double fpr, uint16 flags, double *per_value, int *nhashes)
{
	double		k = rint(-log2(fpr));

	k = Max(k, 1);
	k = Min(k, BLOOM_FILTER_MAX_NHASHES);
	*per_value = -k / log1p(-pow(fpr, 1.0 / k));
	*nhashes = (int) k;

	if (flags & BLOOM_VARIANT_BLOCKED)
	{
		double		best = 0;
		int			bestk = 0;
		int			kk;

		for (kk = Max(1, (int) k - 3); kk <= Min((int) k + 2, BLOOM_FILTER_MAX_NHASHES); kk++)
		{
			double		lo = *per_value,
						hi = *per_value * 4;
			int			iter;

			if (BloomBlockedRate(hi, kk) > fpr)
				continue;
			for (iter = 0; iter < 40; iter++)
			{
				double		mid = (lo + hi) / 2;

				if (BloomBlockedRate(mid, kk) > fpr)
					lo = mid;
				else
					hi = mid;
			}
			if (bestk == 0 || hi < best)
			{
				best = hi;
				bestk = kk;
			}
		}
		if (bestk == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a blocked bloom filter cannot reach false-positive rate %g", fpr),
					 errhint("Use a rate of at least 1e-6 for a blocked filter, or a filter that is not blocked.")));
		*per_value = best;
		*nhashes = bestk;
	}
}

/*
 * Choose the number of hash functions and of bits (counters of a counting
 * filter) for capacity values at false-positive rate fpr in a filter of
 * the variant flags, after checking both; errors if the filter would
 * exceed 256 MB.
 */
void
BloomChooseSizeFor(int64 capacity, double fpr, uint16 flags, uint64 *nbits,
				   int *nhashes)
{
	double		per_value;
	double		m;
	double		maxcells = (double) BLOOM_FILTER_MAX_NBITS;

	if (!(fpr > 0.0 && fpr < 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false_positive_rate must be between 0 and 1, exclusive"),
				 errhint("Use a rate greater than 0 and less than 1, such as 0.01.")));
	if ((flags & BLOOM_VARIANT_BLOCKED) && fpr < 1e-6)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a blocked bloom filter cannot reach false-positive rate %g", fpr),
				 errhint("Use a rate of at least 1e-6 for a blocked filter, or a filter that is not blocked.")));

	BloomBitsPerValue(fpr, flags, &per_value, nhashes);
	if (flags & BLOOM_VARIANT_COUNTING)
		maxcells /= 4;			/* 4 bits a counter */

	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be greater than zero"),
				 errhint("Use a capacity between 1 and %.0f for a false-positive rate of %g.",
						 floor(maxcells / per_value), fpr)));

	m = ceil(per_value * (double) capacity);
	if (flags & BLOOM_VARIANT_BLOCKED)
		m = ceil(m / BLOOM_BLOCK_BITS) * BLOOM_BLOCK_BITS;
	if (!(m <= maxcells))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter for " INT64_FORMAT " values at false-positive rate %g would be larger than 256 MB",
						capacity, fpr),
				 errhint("Use a capacity between 1 and %.0f for this rate, or a larger false-positive rate.",
						 floor(maxcells / per_value))));

	*nbits = (uint64) Max(m, 1.0);
}

/*
 * BloomChooseSizeFor for a plain filter.
 */
void
BloomChooseSize(int64 capacity, double fpr, uint64 *nbits, int *nhashes)
{
	BloomChooseSizeFor(capacity, fpr, 0, nbits, nhashes);
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

/*
 * Where a large filter goes, in the current memory context, so that probes
 * are cheapest: its cells starting on a 64-byte boundary (within the 4-byte
 * alignment a varlena needs), so that a blocked filter's block is one cache
 * line, and on transparent huge pages where the system offers them
 * (madvise), so that a probe of a filter larger than the TLB's reach does
 * not also walk the page tables.  size is the filter's size with its
 * varlena header, lead the offset of its cells from the start of the
 * varlena.  Returns where the varlena is to start and sets *alloc to the
 * chunk to pfree.
 */
static char *
BloomRehomeSpace(Size size, Size lead, void **alloc)
{
	Size		pad = (64 - lead % 64) % 64;
	char	   *buf;
	char	   *start;

	buf = palloc(size + 128);
	/* the cells start at start + lead; put that on a line, rounded to 4 */
	start = (char *) TYPEALIGN(64, buf) + (pad & ~(Size) 3);
#ifdef MADV_HUGEPAGE
	{
		char	   *lo = (char *) TYPEALIGN(BLOOM_HUGE_PAGE_SIZE, start);
		char	   *hi = (char *) TYPEALIGN_DOWN(BLOOM_HUGE_PAGE_SIZE, start + size);

		/* advice only; the pages are not touched yet */
		if (hi > lo)
			(void) madvise(lo, hi - lo, MADV_HUGEPAGE);
	}
#endif
	*alloc = buf;
	return start;
}

/*
 * Move a large detoasted filter to where probes are cheapest
 * (BloomRehomeSpace).  Returns the filter and sets *alloc to the chunk to
 * pfree; a small or undecodable filter stays where it is.
 */
static bytea *
BloomRehome(bytea *datum, void **alloc)
{
	BloomFilterHeader hdr;
	Size		size = VARSIZE(datum);
	char	   *start;

	*alloc = datum;
	if (size < BLOOM_REHOME_MIN_SIZE ||
		BloomFilterDecodeHeader((const uint8 *) VARDATA(datum),
								size - VARHDRSZ, &hdr, false) != BLOOM_FORMAT_OK)
		return datum;

	start = BloomRehomeSpace(size, VARHDRSZ + hdr.bits_offset, alloc);
	memcpy(start, datum, size);
	pfree(datum);
	return (bytea *) start;
}

/*
 * The size of raw's value if it is stored out of line, uncompressed and
 * large (at least BLOOM_REHOME_MIN_SIZE), its TOAST pointer in *tp; else
 * -1, for detoast_attr to read.
 */
static int32
BloomLargeToastSize(struct varlena *raw, struct varatt_external *tp)
{
	int32		attrsize;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return -1;
	VARATT_EXTERNAL_GET_POINTER(*tp, raw);
	attrsize = VARATT_EXTERNAL_GET_EXTSIZE(*tp);
	if (VARATT_EXTERNAL_IS_COMPRESSED(*tp) ||
		(Size) attrsize + VARHDRSZ < BLOOM_REHOME_MIN_SIZE)
		return -1;
	return attrsize;
}

/*
 * Read the whole value of TOAST pointer tp (attrsize bytes) from toastrel
 * straight into the place BloomRehomeSpace gives for lead bytes before the
 * part to align, as detoasting reads it; sets *alloc to the chunk to pfree.
 */
static struct varlena *
BloomFetchToastInPlace(Relation toastrel, const struct varatt_external *tp,
					   int32 attrsize, Size lead, void **alloc)
{
	char	   *start = BloomRehomeSpace(VARHDRSZ + attrsize, lead, alloc);

	SET_VARSIZE(start, VARHDRSZ + attrsize);
	table_relation_fetch_toast_slice(toastrel, tp->va_valueid, attrsize,
									 0, attrsize, (struct varlena *) start);
	return (struct varlena *) start;
}

/*
 * Detoast a filter stored out of line to where probes are cheapest.  A
 * large one stored uncompressed is read from its TOAST table straight into
 * the place BloomRehomeSpace gives, its header first to learn where its
 * cells start: this spares a copy of the whole filter and the memory for
 * it (on a 128 MB filter, most of the time the first probe takes).  Any
 * other goes through detoast_attr and BloomRehome.  Returns the filter and
 * sets *alloc to the chunk to pfree.
 */
static bytea *
BloomDetoastRehomed(struct varlena *raw, void **alloc)
{
	struct varatt_external toast_pointer;
	BloomFilterHeader hdr;
	Relation	toastrel;
	struct varlena *head;
	struct varlena *value;
	int32		attrsize;
	int32		headsize;
	Size		lead = VARHDRSZ;

	attrsize = BloomLargeToastSize(raw, &toast_pointer);
	if (attrsize < 0)
		return BloomRehome((bytea *) detoast_attr(raw), alloc);

	toastrel = table_open(toast_pointer.va_toastrelid, AccessShareLock);

	/*
	 * The header alone: it decodes, up to where the cells start, as long as
	 * it is whole (the check of the filter's length fails, as it must).  A
	 * header that does not decode leaves the cells where they fall; the
	 * whole filter is checked when it is opened.
	 */
	headsize = Min(attrsize, BLOOM_FILTER_MAX_HEADER_SIZE);
	head = (struct varlena *) palloc(VARHDRSZ + headsize);
	SET_VARSIZE(head, VARHDRSZ + headsize);
	table_relation_fetch_toast_slice(toastrel, toast_pointer.va_valueid,
									 attrsize, 0, headsize, head);
	switch (BloomFilterDecodeHeader((const uint8 *) VARDATA(head), headsize,
									&hdr, false))
	{
		case BLOOM_FORMAT_OK:
		case BLOOM_FORMAT_TRUNCATED:
			if (hdr.bits_offset > 0 && hdr.bits_offset <= (Size) attrsize)
				lead += hdr.bits_offset;
			break;
		default:
			break;
	}
	pfree(head);

	value = BloomFetchToastInPlace(toastrel, &toast_pointer, attrsize, lead,
								   alloc);
	table_close(toastrel, AccessShareLock);
	return (bytea *) value;
}

/*
 * Detoast a large value stored out of line and uncompressed (see
 * BloomLargeToastSize) into memory on transparent huge pages
 * (BloomRehomeSpace), as detoast_attr would read it but with a page fault
 * per 2 MB rather than per 4 kB: on a 40 MB array, most of what reading
 * it cost besides the copy.  Returns NULL, leaving it to the caller, for
 * any other value; else sets *alloc to the chunk to pfree.
 */
static struct varlena *
BloomDetoastLarge(struct varlena *raw, void **alloc)
{
	struct varatt_external toast_pointer;
	Relation	toastrel;
	struct varlena *value;
	int32		attrsize;

	attrsize = BloomLargeToastSize(raw, &toast_pointer);
	if (attrsize < 0)
		return NULL;
	toastrel = table_open(toast_pointer.va_toastrelid, AccessShareLock);
	value = BloomFetchToastInPlace(toastrel, &toast_pointer, attrsize, 0, alloc);
	table_close(toastrel, AccessShareLock);
	return value;
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
		pfree(cache->toast_alloc);
		pfree(cache->toast_key);
		cache->toast_filter = NULL;
	}
	cache->toast_open_valid = false;
	oldcxt = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	cache->toast_filter = BloomDetoastRehomed(raw, &cache->toast_alloc);
	cache->toast_key = palloc(keylen);
	memcpy(cache->toast_key, raw, keylen);
	cache->toast_keylen = keylen;
	MemoryContextSwitchTo(oldcxt);
	return cache->toast_filter;
}

/*
 * The filter argument argno, opened: a stored filter that BloomGetFilterArg
 * keeps detoasted is decoded once, not for every probe, and so is one held
 * in memory while its header stays the same; any other is decoded into
 * local.  The result is valid until the next call at this call site.
 */
const BloomFilterData *
BloomOpenFilterArg(FunctionCallInfo fcinfo, int argno, BloomFnCache *cache,
				   BloomFilterData *local)
{
	bytea	   *datum = BloomGetFilterArg(fcinfo, argno, cache);

	if (datum != cache->toast_filter)
	{
		const uint8 *data = (const uint8 *) VARDATA_ANY(datum);
		Size		len = VARSIZE_ANY_EXHDR(datum);

		/*
		 * A filter held in memory (a query's own result, or stored inline)
		 * comes back for every row as well.  The decoded header depends
		 * only on the header's bytes and the length, so a filter with the
		 * same ones reuses it, whatever its cells.
		 */
		if (cache->mem_valid && len == cache->mem_len &&
			memcmp(data, cache->mem_hdr, cache->mem.hdr.bits_offset) == 0)
		{
			BloomFilterData *f = &cache->mem;

			f->datum = datum;
			f->data = (uint8 *) data;
			f->bits = f->data + f->hdr.bits_offset;
			f->hdr.nspname = (const char *) data + BLOOM_FILTER_FIXED_HEADER_SIZE;
			f->hdr.typname = f->hdr.nspname + f->hdr.nspname_len;
			return f;
		}
		BloomFilterOpen(datum, local);
		if (local->hdr.bits_offset > sizeof(cache->mem_hdr))
			return local;
		memcpy(cache->mem_hdr, data, local->hdr.bits_offset);
		cache->mem = *local;
		cache->mem_len = len;
		cache->mem_valid = true;
		return &cache->mem;
	}
	if (!cache->toast_open_valid)
	{
		BloomFilterOpen(datum, &cache->toast_open);
		cache->toast_open_valid = true;
	}
	return &cache->toast_open;
}

/*
 * Error out unless values of type valuetype may be probed in (or, with
 * adding, added to) a filter with element type elemtype.
 */
void
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
 * database, given how its element type hashes (hashing, which the caller
 * knows if it hashes values, else BLOOM_HASH_PORTABLE).  A filter of hash
 * scheme 2 hashes enums by label and may be used anywhere, unless its type
 * (found by name) hashes by OIDs in a way that has no such form.  A filter
 * of scheme 1 with a home database may be used only there, and only while
 * its element type is the type it was built with.  One without may not be
 * used if its element type hashes by OIDs: it was made elsewhere, or for
 * another type of that name.
 */
void
BloomCheckHome(const BloomFilterHeader *hdr, BloomTypeHashing hashing)
{
	if (hdr->elemtype == 0)
		return;

	if (hdr->hash_scheme == BLOOM_FILTER_HASH_SCHEME_LABELS)
	{
		if (hashing == BLOOM_HASH_OIDS)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot use a bloom filter of type %s that hashes enum values by label",
							BloomTypeName(hdr->elemtype)),
					 errdetail("Values of type %s hash by object identifiers (OIDs), which differ from one database to another, and not only through enum values.",
							   BloomTypeName(hdr->elemtype)),
					 errhint("Build the filter from the values cast to text, for example bloom_agg(col::text).")));
		return;
	}

	if (hdr->home_dbid == 0)
	{
		if (hashing != BLOOM_HASH_PORTABLE)
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
BloomCheckCompatible(const BloomFilterHeader *a, const BloomFilterHeader *b,
					 bool intersect)
{
	if (a->elemtype != 0 && b->elemtype != 0 && a->elemtype != b->elemtype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot combine a bloom filter of type %s with a bloom filter of type %s",
						BloomTypeName(a->elemtype), BloomTypeName(b->elemtype))));
	BloomCheckSameVariant(a, b, intersect);
	if (a->key_fingerprint != b->key_fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine keyed bloom filters built with different keys"),
				 errhint("Combine filters built with the same key.")));
	/* an untyped filter has scheme 1 until it gets its type */
	if (a->elemtype != 0 && b->elemtype != 0 && a->hash_scheme != b->hash_scheme)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine a bloom filter of hash scheme %u with a bloom filter of hash scheme %u",
						a->hash_scheme, b->hash_scheme),
				 errdetail("A filter of hash scheme %u hashes enum values by their labels, one of hash scheme %u by their OIDs.",
						   BLOOM_FILTER_HASH_SCHEME_LABELS, BLOOM_FILTER_HASH_SCHEME),
				 errhint("Build the filter of hash scheme %u again: a new filter of type %s hashes enum values by their labels.",
						 BLOOM_FILTER_HASH_SCHEME, BloomTypeName(a->elemtype))));
	BloomCheckHome(a, BLOOM_HASH_PORTABLE);
	BloomCheckHome(b, BLOOM_HASH_PORTABLE);
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
 * Combine filter b into filter a, which is writable, by OR (union) or AND
 * (intersection); returns the result, a itself or a new filter in cxt.
 * The result has the element type of whichever has one, and keeps the
 * capacity and target rate only if both agree on them.
 */
bytea *
BloomCombineInto(MemoryContext cxt, bytea *a, bytea *b, bool intersect)
{
	BloomFilterData fa;
	BloomFilterData fb;
	bool		counting;
	uint32		i;

	BloomFilterOpen(a, &fa);
	BloomFilterOpen(b, &fb);
	BloomCheckCompatible(&fa.hdr, &fb.hdr, intersect);
	counting = (fa.hdr.flags & BLOOM_VARIANT_COUNTING) != 0;

	/*
	 * The result is a copy of b when a has no type yet (b's header has the
	 * type and names) or when b has more layers; a is left alone, as it may
	 * be an aggregate's state, which the executor frees.  Union and
	 * intersection are commutative, so b's cells take a's.
	 */
	if ((fa.hdr.elemtype == 0 && fb.hdr.elemtype != 0) ||
		fb.hdr.nlayers > fa.hdr.nlayers)
	{
		BloomFilterData tmp;

		a = BloomFilterCopy(cxt, b);
		tmp = fa;
		BloomFilterOpen(a, &fa);
		fb = tmp;
	}
	for (i = 0; i < fb.hdr.nlayers; i++)
	{
		CHECK_FOR_INTERRUPTS();
		BloomCombineCells(fa.data + fa.hdr.layers[i].offset,
						  fb.data + fb.hdr.layers[i].offset,
						  fa.hdr.layers[i].nbytes, counting, intersect);
		fa.hdr.layers[i].count += fb.hdr.layers[i].count;
	}

	if (fa.hdr.capacity != fb.hdr.capacity ||
		fa.hdr.target_fpr != fb.hdr.target_fpr)
	{
		/* never for growing filters, which must agree on them */
		fa.hdr.capacity = 0;
		fa.hdr.target_fpr = 0;
	}
	/* the header keeps its size: only sizing and counts change */
	BloomFilterEncodeHeader(fa.data, &fa.hdr);
	return a;
}

/*
 * A writable copy in cxt of the filter in f that has the call site's
 * element type: an untyped filter gets it (and its names) in its header.
 */
bytea *
BloomFilterTyped(MemoryContext cxt, const BloomFilterData *f,
				 BloomFnCache *cache)
{
	BloomFilterHeader hdr;
	bytea	   *out;

	if (f->hdr.elemtype != 0)
		return BloomFilterCopy(cxt, f->datum);

	/* an untyped filter has one layer, all clear */
	hdr = f->hdr;
	BloomHeaderSetType(&hdr, cache->elemtype, cache->hashing);
	out = BloomFilterAllocate(cxt, &hdr);
	return out;
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
 * The bytes that the output functions write for a filter datum, in *len:
 * its stored bytes, but with the element type's current schema and name
 * where they differ from the stored ones (those the type had when the
 * filter got it), so that a dump taken after the type or its schema was
 * renamed reads back; a type that no longer exists keeps its stored names.
 * A filter bound to the database that built it is refused, so that no dump
 * carries a filter that answers wrong wherever it is restored.
 */
static const uint8 *
BloomFilterOutputBytes(bytea *datum, size_t *len)
{
	BloomFilterData f;
	BloomFilterHeader hdr;
	char	   *nspname;
	char	   *typname;
	size_t		hdrsize;
	uint8	   *out;

	BloomFilterOpen(datum, &f);
	*len = VARSIZE_ANY_EXHDR(datum);
	if (f.hdr.home_dbid != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot output a bloom filter of type %s that is bound to the database that built it",
						BloomTypeName(f.hdr.elemtype)),
				 errdetail("The filter hashes values of type %s by object identifiers (OIDs), which differ from one database to another, and would answer wrong in any other.",
						   BloomTypeName(f.hdr.elemtype)),
				 errhint("Build the filter again, from the values cast to text (bloom_agg(col::text)) or, for an enum, from the values themselves, which a new filter hashes by label; the bytes of this one remain readable here as f::bytea.")));
	if (f.hdr.elemtype < FirstGenbkiObjectId ||
		!BloomTypeNames(f.hdr.elemtype, &nspname, &typname) ||
		(strlen(nspname) == f.hdr.nspname_len &&
		 strlen(typname) == f.hdr.typname_len &&
		 memcmp(nspname, f.hdr.nspname, f.hdr.nspname_len) == 0 &&
		 memcmp(typname, f.hdr.typname, f.hdr.typname_len) == 0))
		return f.data;

	hdr = f.hdr;
	hdr.nspname = nspname;
	hdr.nspname_len = strlen(nspname);
	hdr.typname = typname;
	hdr.typname_len = strlen(typname);
	hdrsize = BloomFilterHeaderSize(&hdr);
	*len = hdrsize + f.hdr.nbytes;
	out = palloc(*len);
	BloomFilterEncodeHeader(out, &hdr);
	memcpy(out + hdrsize, f.bits, f.hdr.nbytes);
	return out;
}

/*
 * Text output: "\x" followed by the hex digits of the byte format, with
 * the element type's current name (BloomFilterOutputBytes).
 */
Datum
bloomfilter_out(PG_FUNCTION_ARGS)
{
	bytea	   *datum = PG_GETARG_BYTEA_PP(0);
	size_t		len;
	const uint8 *data = BloomFilterOutputBytes(datum, &len);
	char	   *result = palloc(2 * len + 3);
	uint64		n;

	result[0] = '\\';
	result[1] = 'x';
	n = hex_encode((const char *) data, len, result + 2);
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
 * Binary output: the byte format, with the element type's current name
 * (BloomFilterOutputBytes).
 */
Datum
bloomfilter_send(PG_FUNCTION_ARGS)
{
	bytea	   *datum = PG_GETARG_BYTEA_PP(0);
	size_t		len;
	const uint8 *data = BloomFilterOutputBytes(datum, &len);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (const char *) data, len);
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
	BloomCheckKey(&f.hdr, NULL);
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, true);
	BloomCheckHome(&f.hdr, cache->hashing);

	out = BloomFilterTyped(CurrentMemoryContext, &f, cache);
	BloomFilterOpen(out, &f);
	hash = BloomValueHash(cache, f.hdr.hash_scheme, PG_GETARG_DATUM(1));
	out = BloomFilterAddHash(CurrentMemoryContext, &f, hash);
	PG_RETURN_BYTEA_P(out);
}

/*
 * bloom_contains(filter, value): might the filter contain the value?
 */
Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	BloomFilterData local;
	const BloomFilterData *f;
	uint64		hash;

	f = BloomOpenFilterArg(fcinfo, 0, cache, &local);
	BloomCheckKey(&f->hdr, NULL);
	BloomCheckValueType(f->hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f->hdr, cache->hashing);
	if (f->hdr.elemtype == 0)
		PG_RETURN_BOOL(false);

	hash = BloomValueHash(cache, f->hdr.hash_scheme, PG_GETARG_DATUM(1));
	PG_RETURN_BOOL(BloomFilterTestHash(f, hash));
}

/* What the array forms of bloom_contains compute */
typedef enum BloomArrayProbe
{
	BLOOM_PROBE_EACH,
	BLOOM_PROBE_ANY,
	BLOOM_PROBE_ALL
} BloomArrayProbe;

/*
 * How the array forms hash an element: int4 and int8 (and domains over
 * them) without a function call per element, with what their extended
 * hash functions, hashint4extended and hashint8extended, compute; any
 * other type through its function.
 */
typedef enum BloomArrayHash
{
	BLOOM_ARRAY_HASH_FMGR,
	BLOOM_ARRAY_HASH_INT4,
	BLOOM_ARRAY_HASH_INT8
} BloomArrayHash;

static BloomArrayHash
BloomArrayHashKind(const BloomFnCache *cache)
{
	Oid			fn = cache->typentry->hash_extended_proc_finfo.fn_oid;

	if (fn == F_HASHINT4EXTENDED && cache->elmbyval && cache->elmlen == 4)
		return BLOOM_ARRAY_HASH_INT4;
	if (fn == F_HASHINT8EXTENDED && cache->elmbyval && cache->elmlen == 8)
		return BLOOM_ARRAY_HASH_INT8;
	return BLOOM_ARRAY_HASH_FMGR;
}

static inline uint64
BloomArrayElemHash(BloomFnCache *cache, BloomArrayHash kind, uint16 scheme,
				   Datum value)
{
	switch (kind)
	{
		case BLOOM_ARRAY_HASH_INT4:
			return hash_bytes_uint32_extended((uint32) DatumGetInt32(value),
											  BLOOM_HASH_SEED);
		case BLOOM_ARRAY_HASH_INT8:
			{
				int64		val = DatumGetInt64(value);
				uint32		lohalf = (uint32) val;
				uint32		hihalf = (uint32) (val >> 32);

				lohalf ^= (val >= 0) ? hihalf : ~hihalf;
				return hash_bytes_uint32_extended(lohalf, BLOOM_HASH_SEED);
			}
		case BLOOM_ARRAY_HASH_FMGR:
			break;
	}
	return BloomValueHash(cache, scheme, value);
}

/*
 * Probe each element of the array argument (or the whole array, if the
 * filter holds arrays of that type) and answer as mode asks, with SQL's
 * NULL semantics of = ANY and = ALL for the aggregate answers; under key,
 * or none for an unkeyed filter.
 */
static Datum
BloomContainsArray(FunctionCallInfo fcinfo, BloomArrayProbe mode,
				   const BloomKey *key)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, true);
	void	   *array_alloc = NULL;
	ArrayType  *array;
	BloomFilterData f;
	ArrayMetaState mstate = {0};
	ArrayIterator iterator = NULL;
	bool		direct;
	char	   *ptr;
	BloomArrayHash hashkind;
	Datum		value = (Datum) 0;
	bool		isnull;
	int			ndims;
	int			nelems;
	ArrayType  *result = NULL;
	uint8	   *bitmap = NULL;
	char	   *data = NULL;
	bool		any_null = false;
	uint64		hashes[BLOOM_PROBE_BATCH];
	bool		found[BLOOM_PROBE_BATCH];
	int			nbatch = 0;
	bool		more = true;
	int			i;
	int			j;

	/* a large stored array is read onto huge pages, any other as usual */
	array = (ArrayType *) BloomDetoastLarge((struct varlena *) PG_GETARG_POINTER(1),
											&array_alloc);
	if (array == NULL)
		array = PG_GETARG_ARRAYTYPE_P(1);

	BloomFilterOpen(BloomGetFilterArg(fcinfo, 0, cache), &f);
	BloomCheckKey(&f.hdr, key);

	/* a filter of arrays: the array is one value */
	if (f.hdr.elemtype != 0 && f.hdr.elemtype == cache->arraytype &&
		f.hdr.elemtype != cache->elemtype)
	{
		bool		found;
		uint64		hash;

		BloomCheckHome(&f.hdr, cache->hashing);
		if (f.hdr.hash_scheme == BLOOM_FILTER_HASH_SCHEME_LABELS &&
			cache->hashing == BLOOM_HASH_LABELS)
			hash = BloomLabelHash(cache->arraytype, PointerGetDatum(array));
		else
		{
			if (cache->arrayentry == NULL)
				cache->arrayentry = BloomLookupHash(cache->arraytype);
			hash = BloomHashDatum(&cache->arrayentry->hash_extended_proc_finfo,
								  cache->collation, PointerGetDatum(array));
		}
		if (key != NULL)
			hash = BloomKeyedHash(key, hash);
		found = BloomFilterTestHash(&f, hash);
		if (mode == BLOOM_PROBE_EACH)
		{
			Datum		d = BoolGetDatum(found);

			PG_RETURN_ARRAYTYPE_P(construct_array(&d, 1, BOOLOID, 1, true,
												  TYPALIGN_CHAR));
		}
		PG_RETURN_BOOL(found);
	}
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f.hdr, cache->hashing);

	/*
	 * Walk the array with an iterator, and build the array of answers
	 * directly, rather than through deconstruct_array and
	 * construct_md_array: on a large array each of those is a pass with no
	 * interrupt check, of about a second for 5 million elements on a
	 * loaded machine.
	 */
	ndims = ARR_NDIM(array);
	nelems = ArrayGetNItems(ndims, ARR_DIMS(array));
	if (mode == BLOOM_PROBE_EACH)
	{
		Size		dataoffset;

		if (ndims == 0)
			PG_RETURN_ARRAYTYPE_P(construct_empty_array(BOOLOID));
		/* NULL elements answer NULL: a bitmap only if there are some */
		dataoffset = array_contains_nulls(array) ?
			ARR_OVERHEAD_WITHNULLS(ndims, nelems) : 0;
		result = palloc0((dataoffset != 0 ? dataoffset :
						  ARR_OVERHEAD_NONULLS(ndims)) + nelems);
		result->ndim = ndims;
		result->dataoffset = dataoffset;
		result->elemtype = BOOLOID;
		memcpy(ARR_DIMS(result), ARR_DIMS(array), sizeof(int) * ndims);
		memcpy(ARR_LBOUND(result), ARR_LBOUND(array), sizeof(int) * ndims);
		bitmap = ARR_NULLBITMAP(result);
		data = ARR_DATA_PTR(result);
	}

	/*
	 * An array without NULLs of a fixed-width type is walked by pointer, as
	 * array_iterate would walk it but without a call for every element;
	 * any other with an iterator.
	 */
	direct = !ARR_HASNULL(array) && cache->elmlen > 0;
	ptr = ARR_DATA_PTR(array);
	if (!direct)
	{
		mstate.element_type = ARR_ELEMTYPE(array);
		mstate.typlen = cache->elmlen;
		mstate.typbyval = cache->elmbyval;
		mstate.typalign = cache->elmalign;
		iterator = array_create_iterator(array, 0, &mstate);
	}
	hashkind = BloomArrayHashKind(cache);

	/*
	 * Hash the non-NULL elements in batches, and probe each batch at once
	 * (BloomFilterTestHashes), so that the cache misses of its probes
	 * overlap.  The answers are written in order, as they come.
	 */
	for (i = 0; more; i++)
	{
		if ((i % BLOOM_PROBE_BATCH) == 0)
			CHECK_FOR_INTERRUPTS();
		if (direct)
		{
			more = i < nelems;
			isnull = false;
			if (more)
			{
				value = fetch_att(ptr, cache->elmbyval, cache->elmlen);
				ptr = att_addlength_pointer(ptr, cache->elmlen, ptr);
				ptr = (char *) att_align_nominal(ptr, cache->elmalign);
			}
		}
		else
			more = array_iterate(iterator, &value, &isnull);
		if (more)
		{
			if (isnull)
			{
				any_null = true;
				continue;
			}
			if (bitmap != NULL)
				bitmap[i / 8] |= 1 << (i % 8);
			hashes[nbatch] = f.hdr.elemtype != 0 ?
				BloomArrayElemHash(cache, hashkind, f.hdr.hash_scheme, value) : 0;
			if (key != NULL)
				hashes[nbatch] = BloomKeyedHash(key, hashes[nbatch]);
			nbatch++;
			if (nbatch < BLOOM_PROBE_BATCH)
				continue;
		}
		if (nbatch == 0)
			continue;
		BloomFilterTestHashes(&f, hashes, nbatch, found);
		for (j = 0; j < nbatch; j++)
		{
			if (mode == BLOOM_PROBE_ANY && found[j])
				PG_RETURN_BOOL(true);
			if (mode == BLOOM_PROBE_ALL && !found[j])
				PG_RETURN_BOOL(false);
			if (mode == BLOOM_PROBE_EACH)
				*data++ = found[j] ? 1 : 0;
		}
		nbatch = 0;
	}
	if (!direct)
		array_free_iterator(iterator);
	if (array_alloc != NULL)
		pfree(array_alloc);

	if (mode == BLOOM_PROBE_EACH)
	{
		SET_VARSIZE(result, data - (char *) result);
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
	return BloomContainsArray(fcinfo, BLOOM_PROBE_EACH, NULL);
}

/*
 * bloom_contains_any(filter, array): might the filter contain any element?
 */
Datum
bloom_contains_any(PG_FUNCTION_ARGS)
{
	return BloomContainsArray(fcinfo, BLOOM_PROBE_ANY, NULL);
}

/*
 * bloom_contains_all(filter, array): might the filter contain every
 * element?
 */
Datum
bloom_contains_all(PG_FUNCTION_ARGS)
{
	return BloomContainsArray(fcinfo, BLOOM_PROBE_ALL, NULL);
}

/*
 * The key of a keyed probe: the third argument.
 */
static BloomKey *
BloomKeyArg(FunctionCallInfo fcinfo, BloomKey *key)
{
	BloomKeyFromBytea(PG_GETARG_BYTEA_PP(2), key);
	return key;
}

/*
 * bloom_contains(filter, array, key): for each element, might the keyed
 * filter contain it?
 */
Datum
bloom_contains_array_keyed(PG_FUNCTION_ARGS)
{
	BloomKey	key;

	return BloomContainsArray(fcinfo, BLOOM_PROBE_EACH, BloomKeyArg(fcinfo, &key));
}

/*
 * bloom_contains_any(filter, array, key): might the keyed filter contain
 * any element?
 */
Datum
bloom_contains_any_keyed(PG_FUNCTION_ARGS)
{
	BloomKey	key;

	return BloomContainsArray(fcinfo, BLOOM_PROBE_ANY, BloomKeyArg(fcinfo, &key));
}

/*
 * bloom_contains_all(filter, array, key): might the keyed filter contain
 * every element?
 */
Datum
bloom_contains_all_keyed(PG_FUNCTION_ARGS)
{
	BloomKey	key;

	return BloomContainsArray(fcinfo, BLOOM_PROBE_ALL, BloomKeyArg(fcinfo, &key));
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
	nulls[13] = !(f.hdr.flags & BLOOM_VARIANT_GROWING);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
