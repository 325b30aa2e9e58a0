/*-------------------------------------------------------------------------
 *
 * filter_core.c
 *	  The bloomfilter type's datum and header: opening, allocating and
 *	  copying filters, sizing new ones, and the checks on a filter's
 *	  element type and home database.
 *
 * A bloomfilter datum is a varlena whose payload is the portable byte
 * format of filter_format.h, so that storing, sending, receiving and
 * casting to bytea all use the same bytes.  Values are hashed with their
 * type's extended hash function (filter_hash.c), and their bits are set and
 * tested with salt 0 by the routines of signature.h that the index uses
 * too.
 *
 * No new filter is bound to one database: a filter of an enum hashes its
 * labels (hash scheme 2, filter_hash.c), and one of any other type whose
 * hash goes through OIDs local to a database is refused.  A filter built
 * before that, which records its home database, is refused everywhere else
 * (it would answer every value as absent there), and refused by the output
 * functions (filter_io.c), so that no dump carries it (see
 * filter_format.h).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_core.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "filter_variant.h"
#include "signature.h"

StaticAssertDecl(BLOOM_FILTER_HASH_SCHEME == BLOOM_HASH_SCHEME,
				 "filter format and signature.h disagree on the hash scheme");
StaticAssertDecl(BLOOM_FILTER_FIRST_UNFIXED_OID == FirstGenbkiObjectId,
				 "filter format must store every non-built-in type by name");
StaticAssertDecl(BLOOM_FILTER_MAX_NAME_LEN == NAMEDATALEN - 1,
				 "filter format type names must fit in NameData");

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

	size_t		off;

	BloomFilterLayoutLayers(&layout);
	size = VARHDRSZ + layout.bits_offset + layout.nbytes;
	datum = (bytea *) MemoryContextAlloc(cxt, size);
	for (off = 0; off < size; off += BLOOM_CHUNK_BYTES)
	{
		CHECK_FOR_INTERRUPTS();
		memset((char *) datum + off, 0, Min(size - off, BLOOM_CHUNK_BYTES));
	}
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
	Size		off;

	SET_VARSIZE(copy, VARHDRSZ + len);
	for (off = 0; off < len; off += BLOOM_CHUNK_BYTES)
	{
		CHECK_FOR_INTERRUPTS();
		memcpy(VARDATA(copy) + off, VARDATA_ANY(datum) + off,
			   Min(len - off, BLOOM_CHUNK_BYTES));
	}
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
 * Choose the number of hash functions and of bits (counters of a counting
 * filter) for capacity values at false-positive rate fpr in a layer of a
 * filter whose routines are v, after checking both; errors if the filter
 * would exceed 256 MB.
 */
void
BloomChooseSizeFor(int64 capacity, double fpr, const BloomVariantRoutine *v,
				   uint64 *nbits, int *nhashes)
{
	double		per_value;
	double		m;
	double		maxcells = (double) BLOOM_FILTER_MAX_NBITS;

	if (!(fpr > 0.0 && fpr < 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false_positive_rate must be between 0 and 1, exclusive"),
				 errhint("Use a rate greater than 0 and less than 1, such as 0.01.")));

	v->bitspervalue(fpr, &per_value, nhashes);
	if (v->cellbits > 1)
		maxcells /= v->cellbits;

	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be greater than zero"),
				 errhint("Use a capacity between 1 and %.0f for a false-positive rate of %g.",
						 floor(maxcells / per_value), fpr)));

	m = ceil(per_value * (double) capacity);
	if (v->blockbits > 1)
		m = ceil(m / v->blockbits) * v->blockbits;
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
