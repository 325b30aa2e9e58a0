/*-------------------------------------------------------------------------
 *
 * filter_io.c
 *	  Text and binary input and output of the bloomfilter type, and its
 *	  cast from bytea.
 *
 * Input validates the bytes strictly and resolves a stored type name to the
 * local type.  Output writes the element type's current name, so that a
 * dump taken after the type was renamed restores, and refuses a filter
 * bound to the database that built it.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_io.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include "filter.h"

PG_FUNCTION_INFO_V1(bloomfilter_in);
PG_FUNCTION_INFO_V1(bloomfilter_out);
PG_FUNCTION_INFO_V1(bloomfilter_recv);
PG_FUNCTION_INFO_V1(bloomfilter_send);
PG_FUNCTION_INFO_V1(bloomfilter_from_bytea);

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
	uint64		n = 0;
	size_t		off;

	result[0] = '\\';
	result[1] = 'x';
	for (off = 0; off < len; off += BLOOM_CHUNK_BYTES)
	{
		CHECK_FOR_INTERRUPTS();
		n += hex_encode((const char *) data + off, Min(len - off, BLOOM_CHUNK_BYTES),
						result + 2 + n);
	}
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
